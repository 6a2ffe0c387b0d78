package marketplace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"marketplace/errs"
	"marketplace/storage"
)

// referenceData is implemented by the packages that hold reference data
// (geo, fees, catalog): the embedded dataset and imported records.
type referenceData interface {
	LoadBuiltin(ctx context.Context) error
	UpsertRecord(tx storage.Tx, kind string, data json.RawMessage) (bool, error)
}

func (m *Marketplace) referencePackages() []referenceData {
	return []referenceData{m.Geo, m.Fees, m.Catalog}
}

// loadBuiltinReference loads each package's embedded dataset (a package skips
// a version it has already loaded). The reference services date what they
// answer and import (stop_time, undated conversion ratios) by the engine's
// clock, which they are given first.
func (m *Marketplace) loadBuiltinReference(ctx context.Context) error {
	m.Geo.UseClock(m.Clock)
	m.Fees.UseClock(m.Clock)
	if err := m.recoverImport(ctx); err != nil {
		return fmt.Errorf("undo an interrupted reference import: %w", err)
	}
	for _, p := range m.referencePackages() {
		if err := p.LoadBuiltin(ctx); err != nil {
			return fmt.Errorf("load reference data: %w", err)
		}
	}
	return nil
}

// ReferenceDocument is the import format: a list of records, each of a kind
// that one reference package owns (see docs/reference-data.md).
type ReferenceDocument struct {
	Records []ReferenceRecord `json:"records"`
}

// ReferenceRecord is one imported record.
type ReferenceRecord struct {
	Kind string          `json:"kind"`
	Data json.RawMessage `json:"data"`
}

// ImportResult counts the records imported, by kind.
type ImportResult struct {
	Imported map[string]int `json:"imported"`
	Total    int            `json:"total"`
}

// ImportReference upserts every record of doc, all or nothing. A document
// that fits in one storage transaction is written in one. A larger one (the
// Badger backend commits at most about 9.6 MB per transaction) is written in
// batches, each journaling the values it replaces; when a batch fails, the
// batches already written are undone from the journal, and a journal left
// by a crash is undone when the engine next opens. While a batched import
// runs, readers may see its first batches. Errors: Invalid (unknown kind, bad
// record), Conflict (another batched import is being applied).
func (m *Marketplace) ImportReference(ctx context.Context, doc ReferenceDocument) (ImportResult, error) {
	if len(doc.Records) == 0 {
		return ImportResult{}, errs.Invalidf("The fields [records] are required for requested call")
	}
	if !forceImportBatches {
		res, err := m.importBatch(ctx, doc.Records, 0, nil)
		if !errors.Is(err, storage.ErrTooBig) {
			if err != nil {
				return ImportResult{}, err
			}
			return res, nil
		}
	}
	return m.importInBatches(ctx, doc.Records)
}

// forceImportBatches makes every import take the batched path, so that tests
// on the memory backend (which has no size limit) exercise it.
var forceImportBatches = false

// importBatchBytes bounds the record data of one batch; a batch that is still
// too big for the backend is split in halves.
var importBatchBytes = 1 << 20

// importBatch upserts recs (whose first record is number first of the
// document) in one transaction. With a journal, every key written is recorded
// with its previous value first.
func (m *Marketplace) importBatch(ctx context.Context, recs []ReferenceRecord, first int, j *importJournal) (ImportResult, error) {
	var res ImportResult
	var attempt *journalTx
	err := m.store.Update(ctx, func(tx storage.Tx) error {
		res = ImportResult{Imported: map[string]int{}}
		if j != nil {
			attempt = j.begin(tx)
			tx = attempt
		}
		for i, rec := range recs {
			handled := false
			for _, p := range m.referencePackages() {
				ok, err := p.UpsertRecord(tx, rec.Kind, rec.Data)
				if err != nil {
					if de := errs.As(err); de != nil && de.Kind == errs.Invalid {
						return errs.Invalidf("Record %d (%s): %s", first+i, rec.Kind, de.Message)
					}
					return err
				}
				if ok {
					handled = true
					break
				}
			}
			if !handled {
				return errs.Invalidf("Record %d: unknown kind %q", first+i, rec.Kind)
			}
			res.Imported[rec.Kind]++
			res.Total++
		}
		return nil
	})
	if err != nil {
		return ImportResult{}, err
	}
	if j != nil {
		j.commit(attempt)
	}
	return res, nil
}

// importInBatches writes recs in batches under a journal (see
// ImportReference).
func (m *Marketplace) importInBatches(ctx context.Context, recs []ReferenceRecord) (ImportResult, error) {
	importNumber := storage.NewOnceID(m.store, importSequence)
	var id uint64
	if err := m.store.Update(ctx, func(tx storage.Tx) error {
		if _, err := tx.Get(importPendingKey()); err == nil {
			return errs.Conflictf("Another reference import is being applied; try again when it ends")
		} else if !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		var err error
		if id, err = importNumber.Get(ctx); err != nil {
			return err
		}
		return tx.Set(importPendingKey(), storage.NewKeyRaw().Uint(id))
	}); err != nil {
		return ImportResult{}, err
	}
	j := &importJournal{id: id, seen: map[string]struct{}{}}
	total := ImportResult{Imported: map[string]int{}}
	fail := func(err error) (ImportResult, error) {
		if rerr := m.rollbackImport(context.WithoutCancel(ctx), id); rerr != nil {
			return ImportResult{}, errors.Join(err, fmt.Errorf("undo the partial import: %w", rerr))
		}
		return ImportResult{}, err
	}
	for start := 0; start < len(recs); {
		end, size := start, 0
		for end < len(recs) && (end == start || size+len(recs[end].Data) <= importBatchBytes) {
			size += len(recs[end].Data)
			end++
		}
		for {
			res, err := m.importBatch(ctx, recs[start:end], start, j)
			if errors.Is(err, storage.ErrTooBig) {
				if end-start > 1 {
					end = start + (end-start)/2
					continue
				}
				err = errs.Invalidf("Record %d (%s): the record is too big to store", start, recs[start].Kind)
			}
			if err != nil {
				return fail(err)
			}
			for k, n := range res.Imported {
				total.Imported[k] += n
			}
			total.Total += res.Total
			break
		}
		start = end
	}
	// Deleting the pending mark commits the import; its journal, and any
	// other left by an earlier import cut short while cleaning up, is then
	// garbage.
	if err := m.store.Update(context.WithoutCancel(ctx), func(tx storage.Tx) error {
		return tx.Delete(importPendingKey())
	}); err != nil {
		return fail(err)
	}
	_ = m.clearImportJournal(context.WithoutCancel(ctx))
	return total, nil
}

// Keys of the import journal (namespace "ref"):
//
//	ref/import/pending          -> id of the batched import being applied, while it is
//	ref/import/undo/<id>/<seq>  -> undoEntry: a key import <id> wrote and its value before
//
// Import ids come from the store's importSequence.
const importSequence = "imports"

func importPendingKey() []byte { return storage.NewKey("ref/import/pending") }

func importUndoPrefix() []byte { return storage.NewKey("ref/import/undo") }

func importUndoIDPrefix(id uint64) []byte { return storage.Key(importUndoPrefix()).Uint(id) }

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
	id   uint64
	seen map[string]struct{}
	seq  uint64
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
	if err := storage.SetJSON(t.Tx, storage.Key(importUndoIDPrefix(t.j.id)).Uint(t.seq), e); err != nil {
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
// drops the pending mark.
func (m *Marketplace) rollbackImport(ctx context.Context, id uint64) error {
	for {
		done := false
		err := m.store.Update(ctx, func(tx storage.Tx) error {
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
func (m *Marketplace) clearImportJournal(ctx context.Context) error {
	for {
		n := 0
		err := m.store.Update(ctx, func(tx storage.Tx) error {
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

// recoverImport undoes a batched import that a crash interrupted.
func (m *Marketplace) recoverImport(ctx context.Context) error {
	pending, id := false, uint64(0)
	if err := m.store.View(ctx, func(tx storage.Tx) error {
		b, err := tx.Get(importPendingKey())
		if err == nil {
			r := storage.ReadKey(b)
			pending, id = true, r.Uint()
			return r.Err()
		}
		if errors.Is(err, storage.ErrNotFound) {
			return nil
		}
		return err
	}); err != nil {
		return err
	}
	if !pending {
		return nil
	}
	return m.rollbackImport(ctx, id)
}

// ImportReferenceJSON reads a ReferenceDocument from r and imports it.
func (m *Marketplace) ImportReferenceJSON(ctx context.Context, r io.Reader) (ImportResult, error) {
	var doc ReferenceDocument
	dec := json.NewDecoder(r)
	if err := dec.Decode(&doc); err != nil {
		return ImportResult{}, errs.Invalidf("Malformed reference document: %v", err)
	}
	return m.ImportReference(ctx, doc)
}
