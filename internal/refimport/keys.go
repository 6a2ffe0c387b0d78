package refimport

import (
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/storage/schema"
)

// Keys of the import journal (namespace "ref"):
//
//	ref/import/pending          -> while a batched import is applied or undone: its id,
//	                               the holder of its lease and when the lease runs out
//	                               (see pendingImport)
//	ref/import/undo/<id>/<seq>  -> undoEntry: a key import <id> wrote and its value before
//
// Import ids come from the store's sequence Sequence (before sequences, from
// the counter ref/import/seq: see LegacyCounters).

// Sequence is the store sequence of import ids: reference data's, which a
// reset of the marketplace's state leaves where it is.
const Sequence = "imports"

func importPendingKey() []byte { return keycodec.New("ref/import/pending") }

func importUndoPrefix() []byte { return keycodec.New("ref/import/undo") }

func importUndoIDPrefix(id uint64) []byte { return keycodec.Key(importUndoPrefix()).Uint(id) }

// LegacyCounters is the counter that import ids came from before the store's
// sequences: ref/import/seq, now the sequence Sequence.
func LegacyCounters() []schema.LegacyCounter {
	return []schema.LegacyCounter{{Key: keycodec.New("ref/import/seq"), Sequence: Sequence, First: 1}}
}
