package stock

import (
	"context"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/storage"
)

// RelistInput is the body of a relist: the new item's price, listing type
// and stock. Price and listing type default to the closed item's. A
// seller without warehouse_management sends quantity; one with it sends
// stock_locations, as on publication.
type RelistInput struct {
	Price          *money.Dec      `json:"price"`
	Quantity       *int64          `json:"quantity"`
	ListingTypeID  string          `json:"listing_type_id"`
	StockLocations []StockLocation `json:"stock_locations"`
}

// Relist publishes a closed item again, once: a new item with a new id,
// the closed item's title, category, currency, condition, channels and
// catalog product, parent_item_id naming the closed item, and its own user
// product and stock. Only the item's seller may. Errors: NotFound,
// Forbidden, Invalid ("Item <id> is not closed...", "Item <id> was already
// relisted as <id>", the publication's rules).
func (s *Service) Relist(ctx context.Context, caller int64, id string, in RelistInput) (Published, error) {
	var parent Item
	var tagged bool
	err := s.store.View(ctx, func(tx storage.Tx) error {
		var err error
		if parent, err = getItemRecord(tx, id); err != nil {
			return err
		}
		if parent.SellerID != caller {
			return errs.Forbiddenf("The caller is not the seller of item %s", id)
		}
		if err := checkRelistable(parent); err != nil {
			return err
		}
		seller, err := accounts.GetUser(tx, caller)
		if err != nil {
			return err
		}
		tagged = seller.HasTag(accounts.TagWarehouseManagement)
		return nil
	})
	if err != nil {
		return Published{}, err
	}
	switch {
	case tagged && in.Quantity != nil:
		return Published{}, errFieldsInvalid("quantity")
	case !tagged && len(in.StockLocations) > 0:
		return Published{}, errFieldsInvalid("stock_locations")
	case !tagged && in.Quantity == nil:
		return Published{}, errFieldsRequired("quantity")
	case in.Quantity != nil && (*in.Quantity < 0 || *in.Quantity > MaxQuantity):
		return Published{}, errs.Invalidf("Invalid quantity: %d. It must be between 0 and %d", *in.Quantity, MaxQuantity)
	}
	next := NewItem{Title: parent.Title, CategoryID: parent.CategoryID, ListingTypeID: parent.ListingTypeID,
		CurrencyID: parent.CurrencyID, Condition: parent.Condition, Channels: parent.Channels,
		Thumbnail: parent.Thumbnail, AvailableQuantity: in.Quantity, StockLocations: in.StockLocations,
		CatalogListing: parent.CatalogListing}
	if parent.CatalogProductID != nil {
		next.CatalogProductID = *parent.CatalogProductID
	}
	if in.ListingTypeID != "" {
		next.ListingTypeID = in.ListingTypeID
	}
	if in.Price != nil {
		next.Price = *in.Price
	} else if next.Price, err = money.Parse(string(parent.Price)); err != nil {
		return Published{}, errs.Internalf(err, "item %s price", id)
	}
	return s.publish(ctx, caller, next, publishing{multiOrigin: tagged, parent: id})
}

func checkRelistable(it Item) error {
	if it.Status != StatusClosed {
		return errs.Invalidf("Item %s is not closed: only a closed item can be relisted", it.ID)
	}
	if it.RelistedAs != "" {
		return errs.Invalidf("Item %s was already relisted as %s", it.ID, it.RelistedAs)
	}
	return nil
}

// markRelisted records, in the relist's transaction, that closed item id
// was relisted as newID; a concurrent relist of the same item meets the
// mark and is refused.
func markRelisted(tx storage.Tx, id, newID string) error {
	it, err := getItemRecord(tx, id)
	if err != nil {
		return err
	}
	if err := checkRelistable(it); err != nil {
		return err
	}
	it.RelistedAs = newID
	return putItem(tx, it)
}
