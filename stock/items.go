package stock

import (
	"context"
	"encoding/json"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/storage"
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
	ID            string      `json:"id"`
	SiteID        string      `json:"site_id"`
	SellerID      int64       `json:"seller_id"`
	Title         string      `json:"title"`
	CategoryID    string      `json:"category_id"`
	Price         json.Number `json:"price"`
	BasePrice     json.Number `json:"base_price"`
	CurrencyID    string      `json:"currency_id"`
	ListingTypeID string      `json:"listing_type_id"`
	Condition     string      `json:"condition"`
	Channels      []string    `json:"channels"`
	Status        string      `json:"status"`
	// SubStatus says why an item is in its status: ["out_of_stock"] on an
	// item that its user product's running out paused.
	SubStatus         []string `json:"sub_status"`
	UserProductID     string   `json:"user_product_id"`
	AvailableQuantity int64    `json:"available_quantity"`
	// SoldQuantity is the units of the item's paid orders that were not
	// cancelled.
	SoldQuantity int64  `json:"sold_quantity"`
	Permalink    string `json:"permalink"`
	Thumbnail    string `json:"thumbnail"`
	DateCreated  string `json:"date_created"`
	LastUpdated  string `json:"last_updated"`
	// CatalogProductID is the catalog product a catalog item is published
	// on (rule 1); null for a traditional item, as in the public API.
	CatalogProductID *string `json:"catalog_product_id"`
	CatalogListing   bool    `json:"catalog_listing"`
	// ParentItemID is the closed item this one relists; null otherwise.
	ParentItemID *string `json:"parent_item_id"`
	// RelistedAs is the item that relisted this closed one: an item is
	// relisted once.
	RelistedAs string `json:"-"`
}

// SubStatusOutOfStock is the sub-status of an item paused because its user
// product has no units left.
const SubStatusOutOfStock = "out_of_stock"

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

// prefetchItems tells tx that the items of ids are about to be read with
// GetItem: a backend at network distance reads the items in one round trip
// and their user products in one more, rather than two per item.
func prefetchItems(tx storage.Tx, ids []string) error {
	if _, ok := tx.(storage.Prefetcher); !ok || len(ids) == 0 {
		return nil
	}
	keys := make([][]byte, 0, len(ids))
	for _, id := range ids {
		if id != "" {
			keys = append(keys, itemKey(id))
		}
	}
	if err := storage.Prefetch(tx, keys...); err != nil {
		return errs.Internalf(err, "read items")
	}
	keys = keys[:0]
	for _, id := range ids {
		b, err := tx.Get(itemKey(id))
		if err != nil {
			// GetItem reports it.
			continue
		}
		if it, err := decodeItem(b); err == nil && it.UserProductID != "" {
			keys = append(keys, userProductKey(it.UserProductID))
		}
	}
	if err := storage.Prefetch(tx, keys...); err != nil {
		return errs.Internalf(err, "read user products")
	}
	return nil
}

// GetItemWithoutStock reads item id inside tx as GetItem does, but not its
// user product: AvailableQuantity is 0. For rules that need only the
// item's own fields (status, seller, site), such as asking a question:
// one read fewer, and no read of a key that every stock change writes.
// Errors: NotFound.
func GetItemWithoutStock(tx storage.Tx, id string) (Item, error) {
	return getItemRecord(tx, id)
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
