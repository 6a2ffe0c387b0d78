package refimport

import (
	"context"
	"testing"
	"time"
)

// SmallBatches makes every import of the test take the batched path, with
// batches of at most size bytes of record data, as a document too big for
// one transaction would; the memory backend has no size limit to force it.
func SmallBatches(t testing.TB, size int) {
	t.Helper()
	force, was := forceImportBatches, importBatchBytes
	forceImportBatches, importBatchBytes = true, size
	t.Cleanup(func() { forceImportBatches, importBatchBytes = force, was })
}

// WithLease sets the lease of batched imports for the test.
func WithLease(t testing.TB, d time.Duration) {
	t.Helper()
	was := importLease
	importLease = d
	t.Cleanup(func() { importLease = was })
}

// Lease is the lease of batched imports.
func Lease() time.Duration { return importLease }

// JournalPrefixes are the key prefixes of the import journal.
func JournalPrefixes() [][]byte { return [][]byte{importUndoPrefix(), importPendingKey()} }

// ErrLeaseLost is what an importer that another engine took the lease from
// returns.
var ErrLeaseLost = errLeaseLost

// ImportInOneTransaction upserts recs in one transaction, without a journal,
// as Import first tries to.
func ImportInOneTransaction(ctx context.Context, im *Importer, recs []Record) error {
	_, err := im.importBatch(ctx, recs, 0, nil)
	return err
}
