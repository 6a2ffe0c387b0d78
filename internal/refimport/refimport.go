// Package refimport applies imported reference documents: records of the
// kinds that the reference packages (geo, fees, catalog) own, upserted all or
// nothing. A document too big for one storage transaction is written in
// batches under a journal of the values it replaces, which undoes the batches
// when the import fails, and undoes an import cut short by a crash once its
// lease runs out, in whichever process finds it.
package refimport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
)

// Package is a reference package as an import sees it: it upserts, in tx,
// the records of the kinds it owns, and reports false for any other kind.
type Package interface {
	UpsertRecord(tx storage.Tx, kind string, data json.RawMessage) (bool, error)
}

// Importer applies reference documents to a store, over the reference
// packages that own their kinds. It keeps no state between calls: the
// journal and the lease of a batched import live in the store, so that any
// process on the store can undo an import that another one left.
type Importer struct {
	store  storage.Store
	pkgs   []Package
	logger *slog.Logger
}

// New returns the importer of store over pkgs, asked in order for each
// record's kind; logger (nil: none) hears of the imports it undoes.
func New(store storage.Store, logger *slog.Logger, pkgs ...Package) *Importer {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Importer{store: store, pkgs: pkgs, logger: logger}
}

// Document is the import format: a list of records, each of a kind
// that one reference package owns (see docs/reference-data.md).
type Document struct {
	Records []Record `json:"records"`
}

// Record is one imported record.
type Record struct {
	Kind string          `json:"kind"`
	Data json.RawMessage `json:"data"`
}

// Result counts the records imported, by kind.
type Result struct {
	Imported map[string]int `json:"imported"`
	Total    int            `json:"total"`
}

// Import upserts every record of doc, all or nothing. A document that fits
// in one storage transaction is written in one. A larger one (the Badger
// backend commits at most about 9.6 MB per transaction) is written in
// batches, each journaling the values it replaces; when a batch fails, the
// batches already written are undone from the journal. An import cut short
// by a crash is undone by the first engine on the store to find its lease
// run out (see importLease): at open (Recover), when an import starts, or in
// the engine's background work (Watch). While a batched import runs, readers
// may see its first batches. Errors: Invalid (unknown kind, bad record), Conflict (another
// batched import is being applied, or this one ran out of its lease and
// another engine undid it).
func (im *Importer) Import(ctx context.Context, doc Document) (Result, error) {
	if len(doc.Records) == 0 {
		return Result{}, errs.Invalidf("The fields [records] are required for requested call")
	}
	if !forceImportBatches {
		res, err := im.importBatch(ctx, doc.Records, 0, nil)
		if !errors.Is(err, storage.ErrTooBig) {
			if err != nil {
				return Result{}, err
			}
			return res, nil
		}
	}
	return im.importInBatches(ctx, doc.Records)
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
func (im *Importer) importBatch(ctx context.Context, recs []Record, first int, j *importJournal) (Result, error) {
	var res Result
	var attempt *journalTx
	err := im.store.Update(ctx, func(tx storage.Tx) error {
		res = Result{Imported: map[string]int{}}
		if j != nil {
			if err := renewImportLease(tx, j.lease); err != nil {
				return err
			}
			attempt = j.begin(tx)
			tx = attempt
		}
		for i, rec := range recs {
			handled := false
			for _, p := range im.pkgs {
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
		return Result{}, err
	}
	if j != nil {
		j.commit(attempt)
	}
	return res, nil
}

// importInBatches writes recs in batches under a journal (see
// Import).
func (im *Importer) importInBatches(ctx context.Context, recs []Record) (Result, error) {
	if _, err := im.undoAbandonedImport(ctx); err != nil {
		return Result{}, fmt.Errorf("undo an interrupted reference import: %w", err)
	}
	importNumber := kv.NewOnceID(im.store, Sequence)
	lease := importLeaseHolder{holder: newLeaseHolder()}
	if err := im.store.Update(ctx, func(tx storage.Tx) error {
		if _, found, err := readPendingImport(tx); err != nil {
			return err
		} else if found {
			return errs.Conflictf("Another reference import is being applied; try again when it ends")
		}
		var err error
		if lease.id, err = importNumber.Get(ctx); err != nil {
			return err
		}
		return writePendingImport(tx, lease)
	}); err != nil {
		return Result{}, err
	}
	j := &importJournal{lease: lease, seen: map[string]struct{}{}}
	total := Result{Imported: map[string]int{}}
	fail := func(err error) (Result, error) {
		if rerr := im.rollbackImport(context.WithoutCancel(ctx), lease); rerr != nil {
			return Result{}, errors.Join(err, fmt.Errorf("undo the partial import: %w", rerr))
		}
		return Result{}, err
	}
	for start := 0; start < len(recs); {
		end, size := start, 0
		for end < len(recs) && (end == start || size+len(recs[end].Data) <= importBatchBytes) {
			size += len(recs[end].Data)
			end++
		}
		for {
			res, err := im.importBatch(ctx, recs[start:end], start, j)
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
	if err := im.store.Update(context.WithoutCancel(ctx), func(tx storage.Tx) error {
		if err := renewImportLease(tx, lease); err != nil {
			return err
		}
		return tx.Delete(importPendingKey())
	}); err != nil {
		return fail(err)
	}
	_ = im.clearImportJournal(context.WithoutCancel(ctx))
	return total, nil
}

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

// ImportJSON reads a Document from r and imports it.
func (im *Importer) ImportJSON(ctx context.Context, r io.Reader) (Result, error) {
	var doc Document
	dec := json.NewDecoder(r)
	if err := dec.Decode(&doc); err != nil {
		return Result{}, errs.Invalidf("Malformed reference document: %v", err)
	}
	return im.Import(ctx, doc)
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
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		if _, err := im.undoAbandonedImport(ctx); err != nil && ctx.Err() == nil {
			im.logger.Error("undo an interrupted reference import", "err", err)
		}
	}
}
