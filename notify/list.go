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
		it := tx.Iterate(storage.Prefix(prefix))
		defer it.Close()
		for ; it.Valid(); it.Next() {
			if total >= q.Offset && len(page) < q.Limit {
				app, err := getApp(tx, keycodec.Read(it.Key()[len(prefix):]).Int())
				if err != nil {
					return err
				}
				page = append(page, app)
			}
			total++
		}
		return nil
	})
	if err != nil {
		return nil, 0, wrapInternal(err, "list applications")
	}
	return page, total, nil
}
