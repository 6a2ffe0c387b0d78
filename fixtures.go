package marketplace

import (
	"context"
	"errors"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/fixtures"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
)

// rollbackSnapshot is the snapshot id under which LoadFixtures keeps the
// state it may have to put back; listed snapshots start at 1.
const rollbackSnapshot = 0

// LoadFixtures creates the records of a fixtures document (see package
// fixtures), all or nothing: when a record is refused, the state is put
// back as it was before the call. Loading a document again creates nothing
// new. It holds every request out while it runs, like Reset. Errors:
// Invalid naming the record and field at fault; the storage's.
func (m *Marketplace) LoadFixtures(ctx context.Context, d fixtures.Document) (fixtures.Result, error) {
	if err := d.Validate(); err != nil {
		return fixtures.Result{}, err
	}
	var res fixtures.Result
	var loadErr error
	err := m.replaceState(ctx, func(ctx context.Context) error {
		backup := storage.Prefix(snapshotDataPrefix(rollbackSnapshot))
		if err := kv.DeleteRange(ctx, m.store, backup); err != nil {
			return err
		}
		seqs, err := m.copyState(ctx, rollbackSnapshot)
		if err != nil {
			return err
		}
		res, loadErr = fixtures.Load(ctx, fixtures.Services{
			Store: m.store, Accounts: m.Accounts, Stock: m.Stock, Questions: m.Questions, Sales: m.Sales, Notify: m.Notify, Stubs: m.Stubs,
			Messages: m.Messages, Claims: m.Claims, Feedback: m.Feedback, Notes: m.Notes,
		}, d)
		if loadErr != nil {
			if err := m.putState(ctx, rollbackSnapshot, seqs); err != nil {
				return errors.Join(loadErr, err)
			}
		}
		return kv.DeleteRange(ctx, m.store, backup)
	})
	if err != nil {
		// Also when the undoing failed: the state is then not what it was.
		return fixtures.Result{}, errs.Internalf(err, "Loading fixtures failed")
	}
	if loadErr != nil {
		return fixtures.Result{}, loadErr
	}
	return res, nil
}
