package refimport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
)

// undoEntry is one journaled key: its value before the import, or Absent.
type undoEntry struct {
	Key    []byte `json:"k"`
	Value  []byte `json:"v,omitempty"`
	Absent bool   `json:"absent,omitempty"`
}

// importJournal is the state of a batched import between its batches: the
// keys already journaled (only the value before the first write is kept) and
// the next journal sequence number.
type importJournal struct {
	lease importLeaseHolder
	seen  map[string]struct{}
	seq   uint64
}

// begin wraps tx for one attempt of a batch; an attempt that does not commit
// leaves the journal as it was.
func (j *importJournal) begin(tx storage.Tx) *journalTx {
	return &journalTx{Tx: tx, j: j, fresh: map[string]struct{}{}, seq: j.seq}
}

// commit takes in what a committed attempt journaled.
func (j *importJournal) commit(t *journalTx) {
	for k := range t.fresh {
		j.seen[k] = struct{}{}
	}
	j.seq = t.seq
}

// journalTx records the previous value of every key before its first write.
type journalTx struct {
	storage.Tx
	j     *importJournal
	fresh map[string]struct{}
	seq   uint64
}

func (t *journalTx) record(key []byte) error {
	k := string(key)
	if _, ok := t.j.seen[k]; ok {
		return nil
	}
	if _, ok := t.fresh[k]; ok {
		return nil
	}
	e := undoEntry{Key: key}
	old, err := t.Tx.Get(key)
	switch {
	case err == nil:
		e.Value = old
	case errors.Is(err, storage.ErrNotFound):
		e.Absent = true
	default:
		return err
	}
	if err := kv.SetJSON(t.Tx, keycodec.Key(importUndoIDPrefix(t.j.lease.id)).Uint(t.seq), e); err != nil {
		return err
	}
	t.seq++
	t.fresh[k] = struct{}{}
	return nil
}

func (t *journalTx) Set(key, value []byte) error {
	if err := t.record(key); err != nil {
		return err
	}
	return t.Tx.Set(key, value)
}

func (t *journalTx) Delete(key []byte) error {
	if err := t.record(key); err != nil {
		return err
	}
	return t.Tx.Delete(key)
}

// undoChunk bounds the journal entries handled per transaction.
const undoChunk = 2000

// rollbackImport restores every key journaled by import id, newest entry
// first, a chunk per transaction (each restore and the removal of its entry
// commit together, so a rollback cut short resumes where it stopped), then
// drops the pending mark. It holds the import's lease, renewed with each
// chunk; when another engine has taken the lease over (this one stalled
// past it), it leaves the rest to that engine.
func (im *Importer) rollbackImport(ctx context.Context, lease importLeaseHolder) error {
	id := lease.id
	for {
		// Each chunk is undone in its own transaction, so stopping between
		// them leaves the rest of the journal for the next Recover or
		// Watch.
		if err := ctx.Err(); err != nil {
			return err
		}
		done := false
		err := im.store.Update(ctx, func(tx storage.Tx) error {
			if err := renewImportLease(tx, lease); err != nil {
				return err
			}
			type entry struct {
				key []byte
				e   undoEntry
			}
			var batch []entry
			p := importUndoIDPrefix(id)
			it := tx.Iterate(storage.Range{Start: p, End: storage.PrefixEnd(p), Reverse: true})
			for ; it.Valid() && len(batch) < undoChunk; it.Next() {
				b, err := it.Value()
				if err != nil {
					it.Close()
					return err
				}
				var e undoEntry
				if err := json.Unmarshal(b, &e); err != nil {
					it.Close()
					return fmt.Errorf("decode import journal: %w", err)
				}
				batch = append(batch, entry{key: bytes.Clone(it.Key()), e: e})
			}
			it.Close()
			for _, en := range batch {
				var err error
				if en.e.Absent {
					err = tx.Delete(en.e.Key)
				} else {
					err = tx.Set(en.e.Key, en.e.Value)
				}
				if err != nil {
					return err
				}
				if err := tx.Delete(en.key); err != nil {
					return err
				}
			}
			if len(batch) < undoChunk {
				done = true
				return tx.Delete(importPendingKey())
			}
			return nil
		})
		if errors.Is(err, errLeaseLost) {
			return nil
		}
		if err != nil {
			return err
		}
		if done {
			return nil
		}
	}
}

// clearImportJournal deletes the journals of committed imports, unless
// another import has started since.
func (im *Importer) clearImportJournal(ctx context.Context) error {
	for {
		n := 0
		err := im.store.Update(ctx, func(tx storage.Tx) error {
			var keys [][]byte
			if _, err := tx.Get(importPendingKey()); err == nil {
				// Another import started since: its journal is not garbage.
				return nil
			} else if !errors.Is(err, storage.ErrNotFound) {
				return err
			}
			it := tx.Iterate(storage.Prefix(importUndoPrefix()))
			for ; it.Valid() && len(keys) < undoChunk; it.Next() {
				keys = append(keys, bytes.Clone(it.Key()))
			}
			it.Close()
			n = len(keys)
			for _, k := range keys {
				if err := tx.Delete(k); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil || n < undoChunk {
			return err
		}
	}
}
