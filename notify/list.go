package notify

import (
	"context"

	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/paging"
	"github.com/marketplace/marketplace/storage"
)

// AppQuery selects and pages applications.
type AppQuery struct {
	// OwnerUserID keeps the applications of that user; 0 keeps all.
	OwnerUserID int64
	Offset      int
	Limit       int
}

// Applications returns a page of the applications that match q, in id
// order, and how many match. Errors: Invalid (a window outside the paging
// rule).
func (s *Service) Applications(ctx context.Context, q AppQuery) ([]Application, int, error) {
	if err := paging.Check(q.Offset, q.Limit); err != nil {
		return nil, 0, err
	}
	var page []Application
	total := 0
	err := s.store.View(ctx, func(tx storage.Tx) error {
		page, total = []Application{}, 0
		// An owner's applications have an index of their own; the whole
		// list is the records themselves.
		prefix := appPrefix()
		if q.OwnerUserID != 0 {
			prefix = ownerAppsPrefix(q.OwnerUserID)
		}
		// The page's ids first, then their records in one round trip.
		var ids []int64
		it := tx.Iterate(storage.Prefix(prefix))
		for ; it.Valid(); it.Next() {
			if total >= q.Offset && len(ids) < q.Limit {
				ids = append(ids, keycodec.Read(it.Key()[len(prefix):]).Int())
			}
			total++
		}
		it.Close()
		keys := make([][]byte, len(ids))
		for i, id := range ids {
			keys[i] = appKey(id)
		}
		if err := storage.Prefetch(tx, keys...); err != nil {
			return err
		}
		for _, id := range ids {
			app, err := getApp(tx, id)
			if err != nil {
				return err
			}
			page = append(page, app)
		}
		return nil
	})
	if err != nil {
		return nil, 0, wrapInternal(err, "list applications")
	}
	return page, total, nil
}
