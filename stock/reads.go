package stock

import (
	"context"
	"slices"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/paging"
	"github.com/marketplace/marketplace/storage"
)

// MaxMultiget is how many ids one multiget may ask for, as in the public
// API; the rule is the one users' multiget follows.
const MaxMultiget = accounts.MaxMultiget

// ItemResult is the answer for one id of a multiget: the item, or the error
// the by-id lookup gives for that id.
type ItemResult struct {
	ID   string
	Item Item
	Err  error
}

// Items returns the items of ids in the order asked, from one snapshot; an
// unknown id gets its not-found error in its place, and a repeated id is
// answered each time. Errors: Invalid (no id, or more than MaxMultiget).
func (s *Service) Items(ctx context.Context, ids []string) ([]ItemResult, error) {
	if err := accounts.CheckMultiget(ids); err != nil {
		return nil, err
	}
	out := make([]ItemResult, len(ids))
	err := s.store.View(ctx, func(tx storage.Tx) error {
		for i, id := range ids {
			it, err := GetItem(tx, id)
			if err != nil && !errs.Is(err, errs.NotFound) {
				return err
			}
			out[i] = ItemResult{ID: id, Item: it, Err: err}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SellerItemsQuery filters and pages a seller's items.
type SellerItemsQuery struct {
	// Status keeps the items in that status (active, paused or closed).
	Status string
	// SKU keeps the items with that seller SKU. Items carry no SKU yet, so
	// a SKU matches nothing.
	SKU    string
	Offset int
	Limit  int
}

// SellerItems is a page of a seller's item ids.
type SellerItems struct {
	SellerID int64
	Results  []string
	Total    int
}

var itemStatuses = []string{StatusActive, StatusPaused, StatusClosed}

// SellerItems returns the ids of the seller's items, in id order (the order
// of publication), filtered and paged. Only the seller sees them, as in the
// public API. The total is a count kept beside the seller's lists (all its
// items, and those of each status), and the page the list's keys up to its
// end: the same cost at a thousand items as at a hundred thousand. Errors: Forbidden (another user's items), Invalid (unknown
// status, negative paging).
func (s *Service) SellerItems(ctx context.Context, caller, sellerID int64, q SellerItemsQuery) (SellerItems, error) {
	if caller != sellerID {
		return SellerItems{}, errs.Forbiddenf("The items of user %d can only be searched with that user's token", sellerID)
	}
	if q.Status != "" && !slices.Contains(itemStatuses, q.Status) {
		return SellerItems{}, errs.Invalidf("Invalid status: %s. Valid values are: %s, %s, %s", q.Status, itemStatuses[0], itemStatuses[1], itemStatuses[2])
	}
	if err := paging.Check(q.Offset, q.Limit); err != nil {
		return SellerItems{}, err
	}
	out := SellerItems{SellerID: sellerID, Results: []string{}}
	if q.SKU != "" {
		return out, nil
	}
	err := s.store.View(ctx, func(tx storage.Tx) error {
		var err error
		out.Results, out.Total, err = sellerPage(tx, sellerID, q.Status, q.Offset, q.Limit)
		return err
	})
	if err != nil {
		return SellerItems{}, err
	}
	return out, nil
}
