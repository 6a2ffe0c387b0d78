package stock

import (
	"context"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/paging"
	"github.com/marketplace/marketplace/storage"
)

// SellerItemList is a page of a seller's items, whole, for the operator.
type SellerItemList struct {
	Results []Item
	Total   int
}

// SellerItemsOf returns a page of the items of seller, whole (with the
// available quantity of their user product), in id order (the order of
// publication). It is the operator's view: SellerItems gives only the ids,
// and only to the seller. Errors: NotFound (no such user), Invalid (a window
// outside the paging rule). Its total is the seller's count and its page
// the seller's list up to the page's end (see SellerItems).
func (s *Service) SellerItemsOf(ctx context.Context, sellerID int64, p paging.Page) (SellerItemList, error) {
	if err := p.Check(); err != nil {
		return SellerItemList{}, err
	}
	var out SellerItemList
	err := s.store.View(ctx, func(tx storage.Tx) error {
		out = SellerItemList{Results: []Item{}}
		// The seller, its count and its list's window in one round trip,
		// the items in one more, their user products in a third.
		if err := storage.Prefetch(tx, append(accounts.UserKeys(sellerID), sellerTotalKeys(sellerID, "", "")...)...); err != nil {
			return err
		}
		prefix := sellerItemsPrefix(sellerID)
		window := openSellerWindow(tx, prefix, false, p.Offset, p.Limit)
		defer window.Close()
		if _, err := accounts.GetUser(tx, sellerID); err != nil {
			return err
		}
		total, err := sellerTotal(tx, sellerID, "", "")
		if err != nil {
			return err
		}
		out.Total = total
		if p.Offset >= total || p.Limit == 0 {
			return nil
		}
		ids, err := readSellerWindow(window, prefix, p.Offset, p.Limit, readListedID)
		if err != nil {
			return err
		}
		if err := prefetchItems(tx, ids); err != nil {
			return err
		}
		for _, id := range ids {
			item, err := GetItem(tx, id)
			if err != nil {
				return err
			}
			out.Results = append(out.Results, item)
		}
		return nil
	})
	if err != nil {
		return SellerItemList{}, err
	}
	return out, nil
}
