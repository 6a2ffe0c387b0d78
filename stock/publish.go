package stock

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/storage"
)

// NewItem is the input of Publish and PublishMultiOrigin.
type NewItem struct {
	Title      string `json:"title"`
	CategoryID string `json:"category_id"`
	// Price is an exact decimal greater than 0, with no more decimals than
	// the currency's decimal_places: money.MustParse("350000") or
	// money.FromInt(350000) in Go; a JSON number or a string holding one.
	Price             money.Dec       `json:"price"`
	ListingTypeID     string          `json:"listing_type_id"`
	CurrencyID        string          `json:"currency_id"`
	Condition         string          `json:"condition"`
	Channels          []string        `json:"channels"`
	Thumbnail         string          `json:"thumbnail"`
	AvailableQuantity *int64          `json:"available_quantity"`
	StockLocations    []StockLocation `json:"stock_locations"`
	// CatalogProductID and CatalogListing publish a catalog item: the
	// product must exist in the catalog, be active and be of the seller's
	// site.
	CatalogProductID string `json:"catalog_product_id"`
	CatalogListing   bool   `json:"catalog_listing"`
	// UserProductID, when set, joins an existing user product of the seller
	// instead of starting a new one: the items of one user product share its
	// stock.
	UserProductID string `json:"user_product_id"`
}

// Published is the creation response: the item plus the stock locations it
// was published with (rule 3: later reads of the item leave them out).
type Published struct {
	Item
	StockLocations []StockLocation `json:"stock_locations,omitempty"`
}

// PublishMultiOrigin publishes an item whose stock is split across the
// seller's stores (rules 1 and 2). Only a seller with the
// warehouse_management tag may; available_quantity is refused and
// stock_locations are required. Errors: Invalid (with the spec's messages,
// including "Store not found: <id>" and "Store does not belong to seller:
// <id>"), NotFound (seller).
func (s *Service) PublishMultiOrigin(ctx context.Context, sellerID int64, in NewItem) (Published, error) {
	return s.publish(ctx, sellerID, in, publishing{multiOrigin: true})
}

// Publish publishes a single-origin item with available_quantity. A seller
// with the warehouse_management tag is refused (rule 2). Errors: Invalid,
// NotFound (seller).
func (s *Service) Publish(ctx context.Context, sellerID int64, in NewItem) (Published, error) {
	return s.publish(ctx, sellerID, in, publishing{})
}

// publishing is how an item is published: with stock per store or not, and
// whether it relists a closed item.
type publishing struct {
	multiOrigin bool
	// parent is the closed item being relisted; the new item names it and
	// it is marked relisted in the same transaction.
	parent string
}

func (s *Service) publish(ctx context.Context, sellerID int64, in NewItem, how publishing) (Published, error) {
	multiOrigin := how.multiOrigin
	if err := checkShape(&in, multiOrigin); err != nil {
		return Published{}, err
	}
	clockNow := s.clock.Now()
	now := clockNow.UTC().Format(TimeLayout)
	var out Published
	itemNumber := kv.NewOnceID(s.store, itemSequence)
	userProductNumber := kv.NewOnceID(s.store, userProductSequence)
	// A new user product's number is drawn with the item's.
	numbers := []*kv.OnceID{itemNumber}
	if in.UserProductID == "" {
		numbers = append(numbers, userProductNumber)
	}
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		in := in
		// The numbers of the item, of its user product and of its
		// event go with the seller's read, where the store can.
		ctx := notify.DrawEventNumbers(ctx, tx, 1)
		drawn := kv.DrawOnceLater(ctx, tx, numbers...)
		seller, err := accounts.GetUser(tx, sellerID)
		if err != nil {
			return err
		}
		// What the checks read, named by the seller's site and the
		// input, in one round trip.
		keys := geo.SiteKeys(seller.SiteID, in.CurrencyID)
		for _, l := range in.StockLocations {
			keys = append(keys, accounts.StoreKeys(l.StoreID)...)
		}
		if in.UserProductID != "" {
			keys = append(keys, UserProductKeys(in.UserProductID)...)
		}
		if err := storage.Prefetch(tx, keys...); err != nil {
			return err
		}
		tagged := seller.HasTag(accounts.TagWarehouseManagement)
		switch {
		case tagged && in.AvailableQuantity != nil:
			// Rule 2, on both routes.
			return errFieldsInvalid("available_quantity")
		case multiOrigin && !tagged:
			return errFieldsInvalid("stock_locations").WithCauses(errs.Cause{Code: "seller.not_warehouse_management",
				Message: "User " + strconv.FormatInt(sellerID, 10) + " does not have the warehouse_management tag: publish with POST /items and available_quantity"})
		case !multiOrigin && tagged:
			// Rule 2 without available_quantity: the seller is told where its
			// publications go rather than asked for a field it may not send.
			e := errFieldsRequired("stock_locations")
			if len(in.StockLocations) > 0 {
				e = errFieldsInvalid("stock_locations") // sent, but to the wrong route
			}
			return e.WithCauses(errs.Cause{Code: "seller.warehouse_management",
				Message: "User " + strconv.FormatInt(sellerID, 10) + " has the warehouse_management tag: publish with POST /items/multiwarehouse and stock_locations"})
		case !multiOrigin && len(in.StockLocations) > 0:
			return errFieldsInvalid("stock_locations")
		case !multiOrigin && in.AvailableQuantity == nil:
			return errFieldsRequired("available_quantity")
		case multiOrigin:
			if err := checkLocations(in.StockLocations, errFieldsRequired("stock_locations")); err != nil {
				return err
			}
		}
		if err := checkCategory(seller.SiteID, in.CategoryID); err != nil {
			return err
		}
		if err := checkCatalogProduct(tx, seller.SiteID, in); err != nil {
			return err
		}
		site, err := checkCurrency(tx, seller.SiteID, &in)
		if err != nil {
			return err
		}
		if err := checkPricePlaces(tx, in.Price, in.CurrencyID); err != nil {
			return err
		}
		// Where the store draws at once rather than with a read, the
		// input is checked before anything is drawn.
		if err := drawn(); err != nil {
			return err
		}
		up, err := s.userProductFor(ctx, tx, seller, in.UserProductID, multiOrigin, userProductNumber)
		if err != nil {
			return err
		}
		joined := up
		joined.Locations = slices.Clone(up.Locations)
		if multiOrigin {
			if err := applyLocations(tx, &up, sellerID, in.StockLocations); err != nil {
				return err
			}
		} else {
			up.PlainQuantity = *in.AvailableQuantity
		}
		if in.UserProductID != "" {
			// Joining writes the user product's stock: the version moves so
			// that a PUT based on an older read is refused.
			up.Version++
		}
		n, err := itemNumber.Get(ctx)
		if err != nil {
			return err
		}
		n += firstItemNumber - 1
		price := json.Number(in.Price.String())
		it := Item{
			ID: seller.SiteID + strconv.FormatUint(n, 10), SiteID: seller.SiteID, SellerID: sellerID,
			Title: in.Title, CategoryID: in.CategoryID, Price: price, BasePrice: price,
			CurrencyID: in.CurrencyID, ListingTypeID: in.ListingTypeID, Condition: in.Condition,
			Channels: in.Channels, Status: StatusActive, SubStatus: []string{}, UserProductID: up.ID, Thumbnail: in.Thumbnail,
			DateCreated: now, LastUpdated: now,
		}
		if how.parent != "" {
			if err := markRelisted(tx, how.parent, it.ID); err != nil {
				return err
			}
			parent := how.parent
			it.ParentItemID = &parent
		}
		if in.CatalogProductID != "" {
			cp := in.CatalogProductID
			it.CatalogProductID, it.CatalogListing = &cp, in.CatalogListing
		}
		it.Permalink = permalink(it, site)
		if err := putUserProduct(tx, up); err != nil {
			return err
		}
		if err := putItem(tx, it); err != nil {
			return err
		}
		if err := tx.Set(userProductItemKey(up.ID, it.ID), nil); err != nil {
			return err
		}
		it.AvailableQuantity = up.Quantity()
		if err := s.itemChanged(ctx, tx, Item{}, it); err != nil {
			return err
		}
		if in.UserProductID != "" {
			if err := s.quantityChanged(ctx, tx, joined, up, clockNow, nil, it.ID); err != nil {
				return err
			}
		}
		out = Published{Item: it}
		if multiOrigin {
			for _, l := range up.Locations {
				l.Type = ""
				out.StockLocations = append(out.StockLocations, l)
			}
		}
		return nil
	})
	return out, err
}

// userProductFor returns the user product a new item belongs to: a new one,
// numbered from number, or the seller's existing one named by joinID.
func (s *Service) userProductFor(ctx context.Context, tx storage.Tx, seller accounts.User, joinID string, multiOrigin bool, number *kv.OnceID) (UserProduct, error) {
	if joinID == "" {
		upn, err := number.Get(ctx)
		if err != nil {
			return UserProduct{}, err
		}
		upn += firstUserProductNumber - 1
		return UserProduct{ID: seller.SiteID + "U" + strconv.FormatUint(upn, 10), UserID: seller.ID,
			SiteID: seller.SiteID, Version: 1, MultiOrigin: multiOrigin, Locations: []StockLocation{}}, nil
	}
	up, err := getUserProduct(tx, joinID)
	if errs.Is(err, errs.NotFound) || (err == nil && up.UserID != seller.ID) {
		// Another seller's user product is reported as unknown: its existence
		// is not the caller's business.
		return UserProduct{}, errs.Invalidf("Invalid user_product_id: %s. It must be a user product of the seller", joinID)
	}
	if err != nil {
		return UserProduct{}, err
	}
	if up.MultiOrigin != multiOrigin {
		return UserProduct{}, errs.Invalidf("Invalid user_product_id: %s. Its stock is of the other kind (multi-origin or single-origin)", joinID)
	}
	return up, nil
}
