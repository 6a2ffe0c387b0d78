package accounts

import (
	"context"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/paging"
	"github.com/marketplace/marketplace/storage"
)

// Users returns a page of every user, in id order (the order of
// registration), and how many users there are. It is the operator's view of
// the store: there is no such list in the public API. Errors: Invalid (a
// window outside the paging rule).
func (s *Service) Users(ctx context.Context, p paging.Page) ([]User, int, error) {
	if err := p.Check(); err != nil {
		return nil, 0, err
	}
	var page []User
	total := 0
	err := s.store.View(ctx, func(tx storage.Tx) error {
		page, total = []User{}, 0
		it := tx.Iterate(storage.Prefix(keycodec.New("acc/user")))
		defer it.Close()
		for ; it.Valid(); it.Next() {
			// Only the users of the window are decoded; the rest are
			// counted by their keys.
			if total >= p.Offset && len(page) < p.Limit {
				b, err := it.Value()
				if err != nil {
					return errs.Internalf(err, "read user")
				}
				u, err := decodeUser(b)
				if err != nil {
					return errs.Internalf(err, "decode user")
				}
				page = append(page, u)
			}
			total++
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return page, total, nil
}

// UserStores lists the stores of owner that match q, as the operator sees
// them: the same list as SearchStores gives the owner itself. Errors:
// NotFound (no such user), Invalid.
func (s *Service) UserStores(ctx context.Context, owner int64, q StoreQuery) ([]Store, int, error) {
	return s.SearchStores(ctx, owner, owner, q)
}
