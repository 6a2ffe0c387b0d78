package marketplace

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/marketplace/marketplace/internal/refimport"
)

// referenceData is implemented by the packages that hold reference data
// (geo, fees, catalog): the embedded dataset and imported records.
type referenceData interface {
	LoadBuiltin(ctx context.Context) error
	refimport.Package
}

func (m *Marketplace) referencePackages() []referenceData {
	return []referenceData{m.Geo, m.Fees, m.Catalog}
}

// referenceImporter is the importer of the engine's store over its reference
// packages. It holds no state of its own (an import's journal and lease are
// in the store), so one is made for each use.
func (m *Marketplace) referenceImporter() *refimport.Importer {
	return refimport.New(m.store, m.Logger, m.Geo, m.Fees, m.Catalog)
}

// loadBuiltinReference loads each package's embedded dataset (a package skips
// a version it has already loaded).
func (m *Marketplace) loadBuiltinReference(ctx context.Context) error {
	if err := m.referenceImporter().Recover(ctx); err != nil {
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

// ImportReference upserts every record of doc, all or nothing; a document
// too big for one storage transaction is written in batches under a journal
// that undoes them if the import fails or is cut short (see
// docs/reference-data.md). Errors: Invalid (unknown kind, bad record),
// Conflict (another batched import is being applied, or this one ran out of
// its lease and another engine undid it).
func (m *Marketplace) ImportReference(ctx context.Context, doc ReferenceDocument) (ImportResult, error) {
	// The importer's types have the same fields; converting here keeps the
	// import format in this package's API and the importer internal.
	recs := make([]refimport.Record, len(doc.Records))
	for i, r := range doc.Records {
		recs[i] = refimport.Record(r)
	}
	res, err := m.referenceImporter().Import(ctx, refimport.Document{Records: recs})
	return ImportResult(res), err
}

// ImportReferenceJSON reads a ReferenceDocument from r and imports it.
func (m *Marketplace) ImportReferenceJSON(ctx context.Context, r io.Reader) (ImportResult, error) {
	res, err := m.referenceImporter().ImportJSON(ctx, r)
	return ImportResult(res), err
}

// watchImports undoes, until ctx ends, the batched imports whose lease runs
// out.
func (m *Marketplace) watchImports(ctx context.Context) error {
	return m.referenceImporter().Watch(ctx)
}
