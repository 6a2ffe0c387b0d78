// Package refimport applies imported reference documents: records of the
// kinds that the reference packages (geo, fees, catalog) own, upserted all or
// nothing. A document too big for one storage transaction is written in
// batches under a journal of the values it replaces, which undoes the batches
// when the import fails, and undoes an import cut short by a crash once its
// lease runs out, in whichever process finds it.
package refimport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/marketplace/marketplace/errs"
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

// ImportJSON reads a Document from r and imports it.
func (im *Importer) ImportJSON(ctx context.Context, r io.Reader) (Result, error) {
	var doc Document
	dec := json.NewDecoder(r)
	if err := dec.Decode(&doc); err != nil {
		return Result{}, errs.Invalidf("Malformed reference document: %v", err)
	}
	return im.Import(ctx, doc)
}
