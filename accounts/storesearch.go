package accounts

import (
	"context"
	"slices"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/paging"
	"github.com/marketplace/marketplace/storage"
)

// StoreQuery selects a user's stores.
type StoreQuery struct {
	// Tags keeps the stores that carry every one of these tags.
	Tags   []string
	Offset int
	Limit  int
}

// SearchStores lists the stores of owner that match q, for caller. Only the
// owner may list its stores. Returns the page and the total number of matches.
// Errors: Forbidden, NotFound.
func (s *Service) SearchStores(ctx context.Context, caller, owner int64, q StoreQuery) ([]Store, int, error) {
	if err := paging.Check(q.Offset, q.Limit); err != nil {
		return nil, 0, err
	}
	if caller != owner {
		return nil, 0, errs.Forbiddenf("The caller is not allowed to list the stores of user %d", owner)
	}
	page := []Store{}
	total := 0
	err := s.store.View(ctx, func(tx storage.Tx) error {
		// The list is opened before the user is read, and the stores
		// it names are read together: two round trips on a backend at
		// network distance.
		it := tx.Iterate(storage.Prefix(userStorePrefix(owner)))
		defer it.Close()
		if _, err := GetUser(tx, owner); err != nil {
			return err
		}
		prefixLen := len(userStorePrefix(owner))
		var ids []string
		for ; it.Valid(); it.Next() {
			ids = append(ids, keycodec.Read(it.Key()[prefixLen:]).Str())
		}
		if err := storage.Prefetch(tx, StoreKeys(ids...)...); err != nil {
			return err
		}
		for _, id := range ids {
			st, err := GetStore(tx, id)
			if err != nil {
				return err
			}
			if !hasAll(st.Tags, q.Tags) {
				continue
			}
			if total >= q.Offset && len(page) < q.Limit {
				page = append(page, st)
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

func hasAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}
