package stock

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/internal/textcheck"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/storage"
)

// ItemUpdate is the input of UpdateItem; nil fields are left as they are.
type ItemUpdate struct {
	Status *string `json:"status"`
	// Price is checked as on publication, against the item's currency.
	Price *money.Dec `json:"price"`
	Title *string    `json:"title"`
	// AvailableQuantity replaces the stock of a single-origin item's user
	// product (shared by the items that joined it).
	AvailableQuantity *int64 `json:"available_quantity"`
}

// UpdateItem changes an item's status, price, title or, for a single-origin
// item, available_quantity; only its seller may. A closed item stays
// closed (it is relisted instead, Relist). The title cannot change once
// the item has sales. An item asked to be active with no units is paused
// as out_of_stock; a quantity change moves the status of every item of the
// user product (an item left with none is paused as out_of_stock, one
// paused that way is active again when units come back). The stock of a
// multi-origin item is written per store through PutStock, so
// available_quantity is refused for it (rule 2). Errors: NotFound,
// Forbidden, Invalid.
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
		if err := checkPriceShape(*in.Price); err != nil {
			return Item{}, err
		}
		price = json.Number(in.Price.String())
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
		if err := textcheck.Line("title", title); err != nil {
			return Item{}, err
		}
	}
	now := s.clock.Now()
	stamp := now.UTC().Format(TimeLayout)
	var out Item
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		// At network distance: the item with its event's number, then its
		// user product with its currency and site, then the counts the
		// change moves, then the commit.
		ctx := notify.DrawEventNumbers(ctx, tx, 1)
		before, err := getItemRecord(tx, id)
		if err != nil {
			return err
		}
		if err := storage.Prefetch(tx, append(geo.SiteKeys(before.SiteID, before.CurrencyID), userProductKey(before.UserProductID))...); err != nil {
			return err
		}
		stockOf, err := getUserProduct(tx, before.UserProductID)
		if err != nil {
			return err
		}
		before.AvailableQuantity = stockOf.Quantity()
		if before.SellerID != caller {
			return errs.Forbiddenf("The caller is not the seller of item %s", id)
		}
		after := before
		after.SubStatus = slices.Clone(before.SubStatus)
		if in.Status != nil && before.Status == StatusClosed && *in.Status != StatusClosed {
			return errs.Invalidf("Item %s is closed and cannot change status", id)
		}
		if in.Price != nil {
			if err := checkPricePlaces(tx, *in.Price, before.CurrencyID); err != nil {
				return err
			}
			// base_price is the price before promotions; with no promotions
			// in the engine it follows the price, as the public API shows.
			after.Price, after.BasePrice = price, price
		}
		if in.Title != nil && title != before.Title {
			if before.SoldQuantity > 0 {
				return errs.WithCode(errs.Invalid, "bad_request", "The title of item "+id+" cannot change: the item has sales").
					WithCauses(errs.Cause{Code: "item.title.not_modifiable", Message: "The title cannot be modified once the item has sales (sold_quantity > 0)"})
			}
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
			// A quantity write like any other: the version moves, and the
			// other items of the user product follow it.
			prev := up
			up.PlainQuantity = *in.AvailableQuantity
			up.Version++
			if err := putUserProduct(tx, up); err != nil {
				return err
			}
			if err := s.quantityChanged(ctx, tx, prev, up, now, nil, id); err != nil {
				return err
			}
			after.AvailableQuantity = up.Quantity()
			followQuantity(&after, after.AvailableQuantity)
		}
		if before.Status == StatusClosed && (in.Price != nil || in.Title != nil || in.AvailableQuantity != nil) {
			// Closed is final: a closed item is relisted, not edited.
			return errs.Invalidf("Item %s is closed and cannot change: relist it with POST /items/%s/relist", id, id)
		}
		if in.Status != nil {
			setStatus(&after, *in.Status, after.AvailableQuantity)
		}
		if sameItem(before, after) {
			// Nothing the item's JSON shows changed: no write, no event.
			out = before
			return nil
		}
		after.LastUpdated = stamp
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

// sameItem reports whether an update left every field it may change as it
// was.
func sameItem(a, b Item) bool {
	return a.Status == b.Status && slices.Equal(a.SubStatus, b.SubStatus) && a.Price == b.Price &&
		a.BasePrice == b.BasePrice && a.Title == b.Title && a.AvailableQuantity == b.AvailableQuantity &&
		a.SoldQuantity == b.SoldQuantity
}
