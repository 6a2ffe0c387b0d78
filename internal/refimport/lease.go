package refimport

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/retrylog"
	"github.com/marketplace/marketplace/storage"
)

// Recover undoes, at open, a batched import that a crash
// interrupted, once its lease has run out. A live lease is another
// process's import under way (servers sharing a database), or a crash too
// recent to tell from one: Watch undoes it if the lease runs out.
func (im *Importer) Recover(ctx context.Context) error {
	live, err := im.undoAbandonedImport(ctx)
	if live {
		im.logger.Info("a reference import is being applied by another process; it is undone if its lease runs out",
			"lease", importLease)
	}
	return err
}

// importLease is how long a batched import, or the undoing of one, holds
// the pending mark without writing to it: the holder renews the lease with
// each batch or undo chunk, which take far less. An engine that finds the
// lease run out takes it over and undoes the import; the holder it took it
// from fails at its next write. A crashed import and one that another
// process (a server sharing the database, `marketplaced import`) is
// applying leave the same pending mark: only the lease tells them apart.
//
// Leases are measured on the wall clock, not the engine's: they are about
// processes being alive, which a manual clock (one per process) cannot
// tell. The servers' clocks must agree to well within the lease.
var importLease = 30 * time.Second

// errLeaseLost stops an import, or the undoing of one, whose lease another
// engine took over.
var errLeaseLost = errs.Conflictf("The reference import stalled past its lease and another process undid it; import the document again")

// importLeaseHolder is a batched import as its holder knows it: the
// import's id and the random number that the holder wrote into the pending
// mark, which tells it whether the mark is still its own.
type importLeaseHolder struct {
	id, holder uint64
}

// newLeaseHolder draws a holder: never 0, the holder of the marks written
// before leases.
func newLeaseHolder() uint64 { return rand.Uint64() | 1 }

// pendingImport is the value of the pending mark.
type pendingImport struct {
	importLeaseHolder
	expires time.Time
}

// readPendingImport reads the pending mark. A mark written before leases
// (the id alone) has a holder of 0 and an expired lease: only one process
// could open those stores.
func readPendingImport(tx storage.Tx) (pendingImport, bool, error) {
	b, err := tx.Get(importPendingKey())
	if errors.Is(err, storage.ErrNotFound) {
		return pendingImport{}, false, nil
	}
	if err != nil {
		return pendingImport{}, false, err
	}
	r := keycodec.Read(b)
	var p pendingImport
	p.id = r.Uint()
	if r.Err() == nil && len(r.Rest()) > 0 {
		p.holder = r.Uint()
		p.expires = time.Unix(0, r.Int())
	}
	if r.Err() != nil {
		return pendingImport{}, false, fmt.Errorf("corrupt pending import mark")
	}
	return p, true, nil
}

// writePendingImport writes the mark of lease, running importLease from now.
func writePendingImport(tx storage.Tx, lease importLeaseHolder) error {
	return tx.Set(importPendingKey(), keycodec.Raw().Uint(lease.id).Uint(lease.holder).
		Int(time.Now().Add(importLease).UnixNano()))
}

// renewImportLease checks in tx that lease still holds the pending mark
// and extends it; errLeaseLost when another engine has taken it over, or
// has finished undoing the import.
func renewImportLease(tx storage.Tx, lease importLeaseHolder) error {
	p, found, err := readPendingImport(tx)
	if err != nil {
		return err
	}
	if !found || p.importLeaseHolder != lease {
		return errLeaseLost
	}
	return writePendingImport(tx, lease)
}

// undoAbandonedImport undoes the batched import whose pending mark has an
// expired lease, after taking the lease over, so that its holder, if it is
// still alive, stops. It reports whether it found a live lease instead.
func (im *Importer) undoAbandonedImport(ctx context.Context) (live bool, err error) {
	// Most of the time there is no mark: a read-only look costs less, and
	// does not conflict with the holder's renewals.
	var seen pendingImport
	found := false
	if err := im.store.View(ctx, func(tx storage.Tx) (err error) {
		seen, found, err = readPendingImport(tx)
		return err
	}); err != nil || !found {
		return false, err
	}
	if time.Now().Before(seen.expires) {
		return true, nil
	}
	lease := importLeaseHolder{id: seen.id, holder: newLeaseHolder()}
	taken := false
	err = im.store.Update(ctx, func(tx storage.Tx) error {
		p, found, err := readPendingImport(tx)
		taken, live = false, false
		if err != nil || !found {
			return err
		}
		if p.importLeaseHolder != seen.importLeaseHolder || !p.expires.Equal(seen.expires) {
			// Renewed or taken over since the look.
			live = true
			return nil
		}
		taken = true
		return writePendingImport(tx, lease)
	})
	if err != nil || !taken {
		return live, err
	}
	im.logger.Warn("undoing a reference import interrupted by a crash or stalled past its lease", "import", lease.id)
	return false, im.rollbackImport(ctx, lease)
}

// Watch undoes, until ctx ends, the batched imports whose lease
// runs out: an importer that dies while this engine runs leaves its first
// batches visible only for about a lease.
func (im *Importer) Watch(ctx context.Context) error {
	t := time.NewTicker(max(importLease/2, time.Millisecond))
	defer t.Stop()
	// The next tick tries again: an outage of the store is a warning, once.
	log := retrylog.New(im.logger, "undo an interrupted reference import", time.Now)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		if _, err := im.undoAbandonedImport(ctx); ctx.Err() == nil {
			log.Report(err)
		}
	}
}
