package marketplace

import (
	"context"
	"encoding/json"
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

// ImportReference upserts every record of doc in one transaction: either all
// of them are written or none. Errors: Invalid (unknown kind, bad record).
func (m *Marketplace) ImportReference(ctx context.Context, doc ReferenceDocument) (ImportResult, error) {
	if len(doc.Records) == 0 {
		return ImportResult{}, errs.Invalidf("The fields [records] are required for requested call")
	}
	res := ImportResult{Imported: map[string]int{}}
	err := m.store.Update(ctx, func(tx storage.Tx) error {
		res = ImportResult{Imported: map[string]int{}}
		for i, rec := range doc.Records {
			handled := false
			for _, p := range m.referencePackages() {
				ok, err := p.UpsertRecord(tx, rec.Kind, rec.Data)
				if err != nil {
					if de := errs.As(err); de != nil && de.Kind == errs.Invalid {
						return errs.Invalidf("Record %d (%s): %s", i, rec.Kind, de.Message)
					}
					return err
				}
				if ok {
					handled = true
					break
				}
			}
			if !handled {
				return errs.Invalidf("Record %d: unknown kind %q", i, rec.Kind)
			}
			res.Imported[rec.Kind]++
			res.Total++
		}
		return nil
	})
	if err != nil {
		return ImportResult{}, err
	}
	return res, nil
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
