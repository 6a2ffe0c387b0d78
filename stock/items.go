// Package stock holds items and their multi-origin stock: publication (plain
// or across a seller's warehouses), the user products that group items and
// carry the quantity per store, the optimistic version that guards every
// stock replacement, and the word index behind site search.
package stock

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"marketplace/accounts"
	"marketplace/catalog"
	"marketplace/clock"
	"marketplace/errs"
	"marketplace/fees"
	"marketplace/geo"
	"marketplace/storage"
)

// Item statuses an owner can set.
const (
	StatusActive = "active"
	StatusPaused = "paused"
	StatusClosed = "closed"
)

// Item conditions accepted on publication.
const (
	ConditionNew          = "new"
	ConditionUsed         = "used"
	ConditionNotSpecified = "not_specified"
)

// LocationTypeSellerWarehouse is the only stock location type of the spec.
const LocationTypeSellerWarehouse = "seller_warehouse"

// TimeLayout is how item dates are written.
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"

// Limits of the item fields.
const (
	// MaxTitleLength is the public API's usual max_title_length.
	MaxTitleLength = 60
	// MaxQuantity bounds one quantity (a store's, or a plain item's), so that
	// the sum over every store of a user product cannot overflow.
	MaxQuantity = 1_000_000_000
)

// Item is a listing. Price is kept as the exact decimal text it was given
// (normalized: no leading zeros, no trailing fractional zeros).
type Item struct {
	ID                string      `json:"id"`
	SiteID            string      `json:"site_id"`
	SellerID          int64       `json:"seller_id"`
	Title             string      `json:"title"`
	CategoryID        string      `json:"category_id"`
	Price             json.Number `json:"price"`
	BasePrice         json.Number `json:"base_price"`
	CurrencyID        string      `json:"currency_id"`
	ListingTypeID     string      `json:"listing_type_id"`
	Condition         string      `json:"condition"`
	Channels          []string    `json:"channels"`
	Status            string      `json:"status"`
	UserProductID     string      `json:"user_product_id"`
	AvailableQuantity int64       `json:"available_quantity"`
	Permalink         string      `json:"permalink"`
	Thumbnail         string      `json:"thumbnail"`
	DateCreated       string      `json:"date_created"`
	LastUpdated       string      `json:"last_updated"`
	// CatalogProductID is the catalog product a catalog item is published
	// on (rule 1); null for a traditional item, as in the public API.
	CatalogProductID *string `json:"catalog_product_id"`
	CatalogListing   bool    `json:"catalog_listing"`
}

// StockLocation is one store's entry of a user product's stock.
type StockLocation struct {
	Type          string `json:"type,omitempty"`
	StoreID       string `json:"store_id"`
	NetworkNodeID string `json:"network_node_id"`
	Quantity      int64  `json:"quantity"`

	// noQuantity marks an entry decoded from JSON without a quantity (or
	// with a null one). The spec makes only network_node_id optional when
	// writing; taking an absent quantity as 0 would silently empty a store.
	noQuantity bool
}

// UnmarshalJSON decodes an entry and records whether it carried a quantity.
func (l *StockLocation) UnmarshalJSON(b []byte) error {
	type plain StockLocation
	var aux struct {
		plain
		Quantity *int64 `json:"quantity"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	*l = StockLocation(aux.plain)
	if aux.Quantity == nil {
		l.noQuantity = true
	} else {
		l.Quantity = *aux.Quantity
	}
	return nil
}

// UserProduct groups items of one seller and carries their stock. A plain
// (single-origin) user product has no locations and keeps its quantity in
// PlainQuantity.
type UserProduct struct {
	ID            string          `json:"id"`
	UserID        int64           `json:"user_id"`
	SiteID        string          `json:"site_id"`
	Version       int64           `json:"version"`
	MultiOrigin   bool            `json:"multi_origin"`
	PlainQuantity int64           `json:"plain_quantity,omitempty"`
	Locations     []StockLocation `json:"locations"`
}

// Quantity is the user product's total stock.
func (up UserProduct) Quantity() int64 {
	if !up.MultiOrigin {
		return up.PlainQuantity
	}
	var n int64
	for _, l := range up.Locations {
		n += l.Quantity
	}
	return n
}

// ItemHook is called inside the transaction that changes an item, with the
// item before (zero for a new item) and after. Higher packages register hooks
// so that their rules follow item changes atomically (questions closes the
// unanswered questions of a closed item). A hook's error aborts the change.
type ItemHook func(ctx context.Context, tx storage.Tx, before, after Item) error

// Service publishes items and manages their stock.
type Service struct {
	store storage.Store
	clock clock.Clock
	geo   *geo.Service
	hooks []ItemHook
}

// New returns the stock service.
func New(store storage.Store, clk clock.Clock, g *geo.Service) *Service {
	return &Service{store: store, clock: clk, geo: g}
}

// OnItemChange registers a hook. Register hooks before serving requests.
func (s *Service) OnItemChange(h ItemHook) { s.hooks = append(s.hooks, h) }

// itemChanged keeps the search index in step with the item and runs the
// hooks, in the transaction of the change.
func (s *Service) itemChanged(ctx context.Context, tx storage.Tx, before, after Item) error {
	if err := reindex(tx, before, after); err != nil {
		return err
	}
	for _, h := range s.hooks {
		if err := h(ctx, tx, before, after); err != nil {
			return err
		}
	}
	return nil
}

// GetItem reads an item inside another package's transaction, with its
// available quantity taken from its user product. Errors: NotFound.
func GetItem(tx storage.Tx, id string) (Item, error) {
	it, err := getItemRecord(tx, id)
	if err != nil {
		return Item{}, err
	}
	up, err := getUserProduct(tx, it.UserProductID)
	if err != nil {
		return Item{}, err
	}
	it.AvailableQuantity = up.Quantity()
	return it, nil
}

// Item returns one item, without stock locations (rule 3). Errors: NotFound.
func (s *Service) Item(ctx context.Context, id string) (Item, error) {
	var it Item
	err := s.store.View(ctx, func(tx storage.Tx) error {
		var err error
		it, err = GetItem(tx, id)
		return err
	})
	return it, err
}

// NewItem is the input of Publish and PublishMultiOrigin.
type NewItem struct {
	Title             string          `json:"title"`
	CategoryID        string          `json:"category_id"`
	Price             json.Number     `json:"price"`
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

func errFieldsRequired(field string) *errs.Error {
	return errs.WithCode(errs.Invalid, "bad_request", "The fields ["+field+"] are required for requested call")
}

func errFieldsInvalid(field string) *errs.Error {
	return errs.WithCode(errs.Invalid, "bad_request", "The fields ["+field+"] are invalid for requested call")
}

// PublishMultiOrigin publishes an item whose stock is split across the
// seller's stores (rules 1 and 2). Only a seller with the
// warehouse_management tag may; available_quantity is refused and
// stock_locations are required. Errors: Invalid (with the spec's messages,
// including "Store not found: <id>" and "Store does not belong to seller:
// <id>"), NotFound (seller).
func (s *Service) PublishMultiOrigin(ctx context.Context, sellerID int64, in NewItem) (Published, error) {
	return s.publish(ctx, sellerID, in, true)
}

// Publish publishes a single-origin item with available_quantity. A seller
// with the warehouse_management tag is refused (rule 2). Errors: Invalid,
// NotFound (seller).
func (s *Service) Publish(ctx context.Context, sellerID int64, in NewItem) (Published, error) {
	return s.publish(ctx, sellerID, in, false)
}

// checkShape validates what needs no stored data.
func checkShape(in *NewItem, multiOrigin bool) error {
	in.Title = strings.TrimSpace(in.Title)
	if in.Title == "" {
		return errFieldsRequired("title")
	}
	if n := utf8.RuneCountInString(in.Title); n > MaxTitleLength {
		return errs.Invalidf("The field [title] must be at most %d characters; it has %d", MaxTitleLength, n)
	}
	if in.CategoryID == "" {
		return errFieldsRequired("category_id")
	}
	if in.Price == "" {
		return errFieldsRequired("price")
	}
	price, err := ParsePrice(in.Price)
	if err != nil {
		return err
	}
	in.Price = price.Number()
	if in.ListingTypeID == "" {
		return errFieldsRequired("listing_type_id")
	}
	if !fees.IsListingType(in.ListingTypeID) {
		return errs.Invalidf("Invalid listing_type_id: %s. Valid values are: [%s]", in.ListingTypeID, strings.Join(fees.ListingTypeIDs, ", "))
	}
	switch in.Condition {
	case "":
		in.Condition = ConditionNew
	case ConditionNew, ConditionUsed, ConditionNotSpecified:
	default:
		return errs.Invalidf("Invalid condition: %s. Valid values are: [new, used, not_specified]", in.Condition)
	}
	if len(in.Channels) == 0 {
		in.Channels = []string{"marketplace"}
	}
	for _, c := range in.Channels {
		if c != "marketplace" && c != "mshops" {
			return errs.Invalidf("Invalid channel: %s. Valid values are: [marketplace, mshops]", c)
		}
	}
	if len(in.Thumbnail) > 500 {
		return errs.Invalidf("The field [thumbnail] must be at most 500 characters")
	}
	if q := in.AvailableQuantity; !multiOrigin && q != nil && (*q < 0 || *q > MaxQuantity) {
		return errs.Invalidf("Invalid available_quantity: %d. It must be between 0 and %d", *q, MaxQuantity)
	}
	return nil
}

// checkLocations validates stock entries: at least one, each with a store,
// no store twice, quantities in range. missing is the error for an empty
// list, which differs between publication and the stock PUT.
func checkLocations(locs []StockLocation, missing error) error {
	if len(locs) == 0 {
		return missing
	}
	seen := make(map[string]bool, len(locs))
	for _, l := range locs {
		if strings.TrimSpace(l.StoreID) == "" {
			return errs.Invalidf("Store cannot be null or empty")
		}
		if seen[l.StoreID] {
			return errs.Invalidf("Store listed more than once: %s", l.StoreID)
		}
		seen[l.StoreID] = true
		if l.noQuantity {
			return errs.Invalidf("Quantity is required for store %s", l.StoreID)
		}
		if l.Quantity < 0 || l.Quantity > MaxQuantity {
			return errs.Invalidf("Invalid quantity for store %s: %d. It must be between 0 and %d", l.StoreID, l.Quantity, MaxQuantity)
		}
	}
	return nil
}

// checkStore applies the spec's store rules for seller in tx and returns the
// store.
func checkStore(tx storage.Tx, sellerID int64, storeID string) (accounts.Store, error) {
	st, err := accounts.GetStore(tx, storeID)
	if errs.Is(err, errs.NotFound) {
		return accounts.Store{}, errs.Invalidf("Store not found: %s", storeID)
	}
	if err != nil {
		return accounts.Store{}, err
	}
	if st.OwnerID() != sellerID {
		return accounts.Store{}, errs.Invalidf("Store does not belong to seller: %s", storeID)
	}
	if !st.IsStockLocation() {
		return accounts.Store{}, errs.Invalidf("Store is not configured to be a stock location")
	}
	return st, nil
}

// applyLocations writes the sent quantities into up: a listed store gets the
// sent quantity, a store left out keeps its own, a new store is added. An
// empty network_node_id keeps the known one, or takes the store's.
func applyLocations(tx storage.Tx, up *UserProduct, sellerID int64, locs []StockLocation) error {
	for _, l := range locs {
		st, err := checkStore(tx, sellerID, l.StoreID)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(up.Locations, func(x StockLocation) bool { return x.StoreID == l.StoreID })
		if i < 0 {
			up.Locations = append(up.Locations, StockLocation{Type: LocationTypeSellerWarehouse, StoreID: l.StoreID, NetworkNodeID: st.NetworkNodeID})
			i = len(up.Locations) - 1
		}
		if l.NetworkNodeID != "" {
			up.Locations[i].NetworkNodeID = l.NetworkNodeID
		}
		up.Locations[i].Quantity = l.Quantity
	}
	return nil
}

// checkCurrency reads the site inside the Update's tx: a View of its own
// would need a second connection while the Update holds one, which a pool
// of one never has.
func checkCurrency(tx storage.Tx, siteID string, in *NewItem) (geo.Site, error) {
	site, err := geo.GetSite(tx, siteID)
	if err != nil {
		return geo.Site{}, err
	}
	if in.CurrencyID == "" {
		in.CurrencyID = site.DefaultCurrencyID
		return site, nil
	}
	valid := site.CurrencyIDs()
	if slices.Contains(valid, in.CurrencyID) {
		return site, nil
	}
	return geo.Site{}, errs.Invalidf("Invalid currency_id: %s. Valid values for site %s are: [%s]", in.CurrencyID, siteID, strings.Join(valid, ", "))
}

func checkCategory(siteID, categoryID string) error {
	rest, ok := strings.CutPrefix(categoryID, siteID)
	if !ok || rest == "" || len(rest) > 12 || strings.Trim(rest, "0123456789") != "" {
		return errs.Invalidf("Invalid category_id: %s. A category id of site %s is %s followed by digits, such as %s1055", categoryID, siteID, siteID, siteID)
	}
	return nil
}

// checkCatalogProduct applies the catalog item rules: catalog_listing needs
// a catalog_product_id, which must name an active product of the site.
func checkCatalogProduct(tx storage.Tx, siteID string, in NewItem) error {
	if in.CatalogProductID == "" {
		if in.CatalogListing {
			return errFieldsRequired("catalog_product_id")
		}
		return nil
	}
	p, err := catalog.GetProduct(tx, in.CatalogProductID)
	if errs.Is(err, errs.NotFound) || (err == nil && !strings.HasPrefix(p.ID, siteID)) {
		return errs.Invalidf("Invalid catalog_product_id: %s. It must be a catalog product of site %s", in.CatalogProductID, siteID)
	}
	if err != nil {
		return err
	}
	if p.Status != "active" {
		return errs.Invalidf("Invalid catalog_product_id: %s. The catalog product is inactive", in.CatalogProductID)
	}
	return nil
}

func (s *Service) publish(ctx context.Context, sellerID int64, in NewItem, multiOrigin bool) (Published, error) {
	if err := checkShape(&in, multiOrigin); err != nil {
		return Published{}, err
	}
	now := s.clock.Now().UTC().Format(TimeLayout)
	var out Published
	itemNumber := storage.NewOnceID(s.store, itemSequence)
	userProductNumber := storage.NewOnceID(s.store, userProductSequence)
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		in := in
		seller, err := accounts.GetUser(tx, sellerID)
		if err != nil {
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
		up, err := s.userProductFor(ctx, tx, seller, in.UserProductID, multiOrigin, userProductNumber)
		if err != nil {
			return err
		}
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
		it := Item{
			ID: seller.SiteID + strconv.FormatUint(n, 10), SiteID: seller.SiteID, SellerID: sellerID,
			Title: in.Title, CategoryID: in.CategoryID, Price: in.Price, BasePrice: in.Price,
			CurrencyID: in.CurrencyID, ListingTypeID: in.ListingTypeID, Condition: in.Condition,
			Channels: in.Channels, Status: StatusActive, UserProductID: up.ID, Thumbnail: in.Thumbnail,
			DateCreated: now, LastUpdated: now,
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
		if err := tx.Set(sellerItemKey(sellerID, it.ID), nil); err != nil {
			return err
		}
		it.AvailableQuantity = up.Quantity()
		if err := s.itemChanged(ctx, tx, Item{}, it); err != nil {
			return err
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
func (s *Service) userProductFor(ctx context.Context, tx storage.Tx, seller accounts.User, joinID string, multiOrigin bool, number *storage.OnceID) (UserProduct, error) {
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

// ItemUpdate is the input of UpdateItem; nil fields are left as they are.
type ItemUpdate struct {
	Status *string      `json:"status"`
	Price  *json.Number `json:"price"`
	Title  *string      `json:"title"`
	// AvailableQuantity replaces the stock of a single-origin item's user
	// product (shared by the items that joined it).
	AvailableQuantity *int64 `json:"available_quantity"`
}

// UpdateItem changes an item's status, price, title or, for a single-origin
// item, available_quantity; only its seller may. A closed item stays
// closed. The stock of a multi-origin item is written per store through
// PutStock, so available_quantity is refused for it (rule 2). Errors:
// NotFound, Forbidden, Invalid.
func (s *Service) UpdateItem(ctx context.Context, caller int64, id string, in ItemUpdate) (Item, error) {
	if in.Status == nil && in.Price == nil && in.Title == nil && in.AvailableQuantity == nil {
		return Item{}, errs.Invalidf("Nothing to update: send at least one of the fields [status, price, title, available_quantity]")
	}
	if q := in.AvailableQuantity; q != nil && (*q < 0 || *q > MaxQuantity) {
		return Item{}, errs.Invalidf("Invalid available_quantity: %d. It must be between 0 and %d", *q, MaxQuantity)
	}
	if in.Status != nil {
		switch *in.Status {
		case StatusActive, StatusPaused, StatusClosed:
		default:
			return Item{}, errs.Invalidf("Invalid status: %s. Valid values are: [active, paused, closed]", *in.Status)
		}
	}
	var price json.Number
	if in.Price != nil {
		p, err := ParsePrice(*in.Price)
		if err != nil {
			return Item{}, err
		}
		price = p.Number()
	}
	var title string
	if in.Title != nil {
		title = strings.TrimSpace(*in.Title)
		if title == "" {
			return Item{}, errs.Invalidf("The field [title] cannot be empty")
		}
		if n := utf8.RuneCountInString(title); n > MaxTitleLength {
			return Item{}, errs.Invalidf("The field [title] must be at most %d characters; it has %d", MaxTitleLength, n)
		}
	}
	now := s.clock.Now().UTC().Format(TimeLayout)
	var out Item
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		before, err := GetItem(tx, id)
		if err != nil {
			return err
		}
		if before.SellerID != caller {
			return errs.Forbiddenf("The caller is not the seller of item %s", id)
		}
		after := before
		if in.Status != nil {
			if before.Status == StatusClosed && *in.Status != StatusClosed {
				return errs.Invalidf("Item %s is closed and cannot change status", id)
			}
			after.Status = *in.Status
		}
		if in.Price != nil {
			// base_price is the price before promotions; with no promotions
			// in the engine it follows the price, as the public API shows.
			after.Price, after.BasePrice = price, price
		}
		if in.Title != nil {
			after.Title = title
		}
		if in.AvailableQuantity != nil {
			up, err := getUserProduct(tx, before.UserProductID)
			if err != nil {
				return err
			}
			if up.MultiOrigin {
				return errFieldsInvalid("available_quantity").WithCauses(errs.Cause{Code: "item.multi_origin",
					Message: "Item " + id + " has stock per store: write it with PUT /user-products/" + up.ID + "/stock/type/seller_warehouse"})
			}
			// A quantity write like any other: the version moves.
			up.PlainQuantity = *in.AvailableQuantity
			up.Version++
			if err := putUserProduct(tx, up); err != nil {
				return err
			}
			after.AvailableQuantity = up.Quantity()
		}
		after.LastUpdated = now
		if err := putItem(tx, after); err != nil {
			return err
		}
		if err := s.itemChanged(ctx, tx, before, after); err != nil {
			return err
		}
		out = after
		return nil
	})
	return out, err
}

// permalink is the item's public page, in the public API's form
// https://articulo.<domain>/MLA-1400000001-title-words-_JM, on the site's
// domain.
func permalink(it Item, site geo.Site) string {
	domain := site.WebDomain()
	num := strings.TrimPrefix(it.ID, it.SiteID)
	slug := strings.Join(tokens(it.Title), "-")
	if slug != "" {
		slug += "-"
	}
	return "https://articulo." + domain + "/" + it.SiteID + "-" + num + "-" + slug + "_JM"
}
