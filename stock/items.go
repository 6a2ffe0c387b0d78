// Package stock holds items and their multi-origin stock: publication (plain
// or across a seller's warehouses), the user products that group items and
// carry the quantity per store, and the optimistic version that guards every
// stock replacement.
package stock

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"marketplace/accounts"
	"marketplace/clock"
	"marketplace/errs"
	"marketplace/geo"
	"marketplace/storage"
)

// Item statuses an owner can set.
const (
	StatusActive = "active"
	StatusPaused = "paused"
	StatusClosed = "closed"
)

// LocationTypeSellerWarehouse is the only stock location type of the spec.
const LocationTypeSellerWarehouse = "seller_warehouse"

// TimeLayout is how item dates are written.
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"

// Item is a listing. Price is kept as the exact decimal text it was given.
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
	DateCreated       string      `json:"date_created"`
	LastUpdated       string      `json:"last_updated"`
}

// StockLocation is one store's entry of a user product's stock.
type StockLocation struct {
	Type          string `json:"type,omitempty"`
	StoreID       string `json:"store_id"`
	NetworkNodeID string `json:"network_node_id"`
	Quantity      int64  `json:"quantity"`
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

func (s *Service) runHooks(ctx context.Context, tx storage.Tx, before, after Item) error {
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
	var it Item
	err := storage.GetJSON(tx, itemKey(id), &it)
	if errors.Is(err, storage.ErrNotFound) {
		return Item{}, errs.NotFoundf("Item with id %s not found", id)
	}
	if err != nil {
		return Item{}, errs.Internalf(err, "read item %s", id)
	}
	up, err := getUserProduct(tx, it.UserProductID)
	if err != nil {
		return Item{}, err
	}
	it.AvailableQuantity = up.Quantity()
	return it, nil
}

// Item returns one item. Errors: NotFound.
func (s *Service) Item(ctx context.Context, id string) (Item, error) {
	var it Item
	err := s.store.View(ctx, func(tx storage.Tx) error {
		var err error
		it, err = GetItem(tx, id)
		return err
	})
	return it, err
}

func getUserProduct(tx storage.Tx, id string) (UserProduct, error) {
	var up UserProduct
	err := storage.GetJSON(tx, userProductKey(id), &up)
	if errors.Is(err, storage.ErrNotFound) {
		return UserProduct{}, errs.NotFoundf("User product not found: %s", id)
	}
	if err != nil {
		return UserProduct{}, errs.Internalf(err, "read user product %s", id)
	}
	return up, nil
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
	AvailableQuantity *int64          `json:"available_quantity"`
	StockLocations    []StockLocation `json:"stock_locations"`
	// UserProductID, when set, joins an existing user product of the seller.
	UserProductID string `json:"user_product_id"`
}

// Published is the creation response: the item plus the stock locations it
// was published with (rule 3: later reads of the item leave them out).
type Published struct {
	Item
	StockLocations []StockLocation `json:"stock_locations"`
}

// PublishMultiOrigin publishes an item whose stock is split across the
// seller's stores. Errors: Invalid (with the spec's messages), NotFound.
func (s *Service) PublishMultiOrigin(ctx context.Context, sellerID int64, in NewItem) (Published, error) {
	if in.AvailableQuantity != nil {
		return Published{}, errs.WithCode(errs.Invalid, "bad_request", "The fields [available_quantity] are invalid for requested call")
	}
	if len(in.StockLocations) == 0 {
		return Published{}, errs.WithCode(errs.Invalid, "bad_request", "The fields [stock_locations] are required for requested call")
	}
	return s.publish(ctx, sellerID, in, true)
}

// Publish publishes a single-origin item with available_quantity. A seller
// with the warehouse_management tag is refused (rule 2). Errors: Invalid,
// NotFound.
func (s *Service) Publish(ctx context.Context, sellerID int64, in NewItem) (Published, error) {
	if len(in.StockLocations) > 0 {
		return Published{}, errs.Invalidf("The fields [stock_locations] are invalid for requested call")
	}
	if in.AvailableQuantity == nil {
		return Published{}, errs.Invalidf("The fields [available_quantity] are required for requested call")
	}
	return s.publish(ctx, sellerID, in, false)
}

func (s *Service) publish(ctx context.Context, sellerID int64, in NewItem, multiOrigin bool) (Published, error) {
	if strings.TrimSpace(in.Title) == "" {
		return Published{}, errs.Invalidf("The fields [title] are required for requested call")
	}
	now := s.clock.Now()
	var out Published
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		seller, err := accounts.GetUser(tx, sellerID)
		if err != nil {
			return err
		}
		tagged := seller.HasTag(accounts.TagWarehouseManagement)
		if tagged && !multiOrigin {
			return errs.WithCode(errs.Invalid, "bad_request", "The fields [available_quantity] are invalid for requested call")
		}
		n, err := storage.NextSeq(tx, itemSeqKey(), firstItemNumber)
		if err != nil {
			return err
		}
		it := Item{
			ID: seller.SiteID + strconv.FormatUint(n, 10), SiteID: seller.SiteID, SellerID: sellerID,
			Title: in.Title, CategoryID: in.CategoryID, Price: in.Price, BasePrice: in.Price,
			CurrencyID: in.CurrencyID, ListingTypeID: in.ListingTypeID, Condition: in.Condition,
			Channels: in.Channels, Status: StatusActive,
			DateCreated: now.UTC().Format(TimeLayout), LastUpdated: now.UTC().Format(TimeLayout),
		}
		upn, err := storage.NextSeq(tx, userProductSeqKey(), firstUserProductNumber)
		if err != nil {
			return err
		}
		up := UserProduct{ID: seller.SiteID + "U" + strconv.FormatUint(upn, 10), UserID: sellerID, SiteID: seller.SiteID, Version: 1, MultiOrigin: multiOrigin}
		var locs []StockLocation
		if multiOrigin {
			for _, l := range in.StockLocations {
				st, err := accounts.GetStore(tx, l.StoreID)
				if err != nil {
					return errs.Invalidf("Store not found: %s", l.StoreID)
				}
				if st.OwnerID() != sellerID {
					return errs.Invalidf("Store does not belong to seller: %s", l.StoreID)
				}
				nn := l.NetworkNodeID
				if nn == "" {
					nn = st.NetworkNodeID
				}
				up.Locations = append(up.Locations, StockLocation{Type: LocationTypeSellerWarehouse, StoreID: l.StoreID, NetworkNodeID: nn, Quantity: l.Quantity})
				locs = append(locs, StockLocation{StoreID: l.StoreID, NetworkNodeID: nn, Quantity: l.Quantity})
			}
		} else {
			up.PlainQuantity = *in.AvailableQuantity
		}
		it.UserProductID = up.ID
		it.AvailableQuantity = up.Quantity()
		if err := storage.SetJSON(tx, userProductKey(up.ID), up); err != nil {
			return err
		}
		if err := storage.SetJSON(tx, itemKey(it.ID), it); err != nil {
			return err
		}
		if err := tx.Set(userProductItemKey(up.ID, it.ID), nil); err != nil {
			return err
		}
		if err := tx.Set(sellerItemKey(sellerID, it.ID), nil); err != nil {
			return err
		}
		if err := s.runHooks(ctx, tx, Item{}, it); err != nil {
			return err
		}
		out = Published{Item: it, StockLocations: locs}
		return nil
	})
	return out, err
}

// ItemUpdate is the input of UpdateItem; nil fields are left as they are.
type ItemUpdate struct {
	Status *string      `json:"status"`
	Price  *json.Number `json:"price"`
}

// UpdateItem changes an item's status or price; only its seller may.
// Errors: NotFound, Forbidden, Invalid.
func (s *Service) UpdateItem(ctx context.Context, caller int64, id string, in ItemUpdate) (Item, error) {
	now := s.clock.Now()
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
			switch *in.Status {
			case StatusActive, StatusPaused, StatusClosed:
			default:
				return errs.Invalidf("Invalid status: %s. Valid values are: [active, paused, closed]", *in.Status)
			}
			if before.Status == StatusClosed && *in.Status != StatusClosed {
				return errs.Invalidf("Item %s is closed and cannot change status", id)
			}
			after.Status = *in.Status
		}
		if in.Price != nil {
			after.Price = *in.Price
		}
		after.LastUpdated = now.UTC().Format(TimeLayout)
		stored := after
		stored.AvailableQuantity = 0
		if err := storage.SetJSON(tx, itemKey(id), stored); err != nil {
			return err
		}
		if err := s.runHooks(ctx, tx, before, after); err != nil {
			return err
		}
		out = after
		return nil
	})
	return out, err
}

var _ = time.Time{}
