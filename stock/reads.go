package stock

import (
	"context"
	"slices"
	"strings"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/fees"
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
		if err := prefetchItems(tx, ids); err != nil {
			return err
		}
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

// MaxSellerItemsLimit is the largest page of the seller's item search, as
// in the public API (the house's lists allow paging.MaxLimit).
const MaxSellerItemsLimit = 100

// SellerItemsQuery filters, orders and pages a seller's items.
type SellerItemsQuery struct {
	// Status keeps the items in that status (active, paused or closed).
	Status string
	// ListingTypeID keeps the items of that listing type (one of
	// fees.ListingTypeIDs).
	ListingTypeID string
	// SKU keeps the items with that seller SKU. Items carry no SKU yet, so
	// a SKU matches nothing.
	SKU string
	// Tags keeps the items that carry every tag named. Items carry no tags
	// yet, so a tag matches nothing.
	Tags []string
	// Sort is one of SellerSorts' ids; "" is DefaultSellerSort.
	Sort   string
	Offset int
	Limit  int
}

// SellerItems is a page of a seller's item ids.
type SellerItems struct {
	SellerID int64
	// Sort is the order applied.
	Sort    string
	Results []string
	Total   int
}

var itemStatuses = []string{StatusActive, StatusPaused, StatusClosed}

// SellerItems returns the ids of the seller's items, filtered by status and
// listing type, in the order asked (DefaultSellerSort when none), paged.
// Only the seller sees them, as in the public API. Every combination of
// filters and order is read from one list of the seller kept sorted beside
// the items (keys.go), with its total from the list's count: no item
// record is read, and at most offset+limit keys, whatever the number of
// the seller's items. Errors: Forbidden (another user's items), Invalid
// (unknown status, listing type or order, negative paging, a limit above
// MaxSellerItemsLimit).
func (s *Service) SellerItems(ctx context.Context, caller, sellerID int64, q SellerItemsQuery) (SellerItems, error) {
	if caller != sellerID {
		return SellerItems{}, errs.Forbiddenf("The items of user %d can only be searched with that user's token", sellerID)
	}
	if q.Status != "" && !slices.Contains(itemStatuses, q.Status) {
		return SellerItems{}, errs.Invalidf("Invalid status: %s. Valid values are: %s", q.Status, strings.Join(itemStatuses, ", "))
	}
	if q.ListingTypeID != "" && !fees.IsListingType(q.ListingTypeID) {
		return SellerItems{}, errs.Invalidf("Invalid listing_type_id: %s. Valid values are: %s", q.ListingTypeID, strings.Join(fees.ListingTypeIDs, ", "))
	}
	if q.Sort == "" {
		q.Sort = DefaultSellerSort
	}
	if _, _, ok := sellerSortWalk(q.Sort); !ok {
		ids := make([]string, len(SellerSorts))
		for i, o := range SellerSorts {
			ids[i] = o.ID
		}
		return SellerItems{}, errs.Invalidf("Invalid orders: %s. Valid values are: %s", q.Sort, strings.Join(ids, ", "))
	}
	if err := (paging.Page{Offset: q.Offset, Limit: q.Limit}).CheckMax(MaxSellerItemsLimit); err != nil {
		return SellerItems{}, err
	}
	out := SellerItems{SellerID: sellerID, Sort: q.Sort, Results: []string{}}
	if q.SKU != "" || len(q.Tags) > 0 {
		return out, nil
	}
	err := s.store.View(ctx, func(tx storage.Tx) error {
		var err error
		out.Results, out.Total, err = sellerSortedPage(tx, sellerID, q.Status, q.ListingTypeID, q.Sort, q.Offset, q.Limit)
		return err
	})
	if err != nil {
		return SellerItems{}, err
	}
	return out, nil
}
