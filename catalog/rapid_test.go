package catalog_test

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/catalog"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/storage"
)

// TestDomainProducts_AnyLimitAndOffsetWalkEveryProductOnceInOrder pages a
// domain with a drawn limit and checks that the pages, joined, are every
// product exactly once in id order, and that any window is the model's slice.
func TestDomainProducts_AnyLimitAndOffsetWalkEveryProductOnceInOrder(t *testing.T) {
	owner := t
	rapid.Check(t, func(t *rapid.T) {
		s, st, done := newPropertyService(t, owner)
		defer done()
		recs := []catalog.DatasetRecord{domainRec("MLA-CELLPHONES", "Celulares"), domainRec("MLA-TABLETS", "Tablets")}
		nums := rapid.SliceOfDistinct(rapid.IntRange(1, 5000), rapid.ID[int]).Draw(t, "product_numbers")
		var want []string
		for i, n := range nums {
			id := fmt.Sprintf("MLA%d", n)
			domain := "MLA-CELLPHONES"
			if i%3 == 2 { // products of another domain must not leak into the walk
				domain = "MLA-TABLETS"
			} else {
				want = append(want, id)
			}
			recs = append(recs, productRec(map[string]any{"id": id, "domain_id": domain}))
		}
		slices.Sort(want)
		if err := importRecords(s, st, recs...); err != nil {
			t.Fatalf("import: %v", err)
		}
		limit := rapid.IntRange(1, len(want)+3).Draw(t, "limit")
		var got []string
		for offset := 0; ; offset += limit {
			page, err := s.DomainProducts(ctx, "MLA-CELLPHONES", limit, offset)
			if err != nil {
				t.Fatalf("page at %d: %v", offset, err)
			}
			if page.Total != len(want) {
				t.Fatalf("total = %d, want %d", page.Total, len(want))
			}
			if len(page.Products) > limit {
				t.Fatalf("page of %d products for limit %d", len(page.Products), limit)
			}
			for _, p := range page.Products {
				got = append(got, p.ID)
			}
			if offset+limit >= page.Total {
				break
			}
		}
		if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("walk = %v, want %v", got, want)
		}

		wl := rapid.IntRange(0, len(want)+3).Draw(t, "window_limit")
		wo := rapid.IntRange(0, len(want)+3).Draw(t, "window_offset")
		page, err := s.DomainProducts(ctx, "MLA-CELLPHONES", wl, wo)
		if err != nil {
			t.Fatalf("window: %v", err)
		}
		lo, hi := min(wo, len(want)), min(wo+wl, len(want))
		var ids []string
		for _, p := range page.Products {
			ids = append(ids, p.ID)
		}
		if !slices.Equal(ids, want[lo:hi]) {
			t.Fatalf("window limit %d offset %d = %v, want %v", wl, wo, ids, want[lo:hi])
		}
	})
}

// modelProduct is what the model knows of one product.
type modelProduct struct {
	domain, parent, status string
	imported               bool
}

// catalogMachine drives imports and newer embedded datasets against a plain
// map, checking the derived indexes: a domain's product list, children_ids,
// and that imported records survive newer datasets.
type catalogMachine struct {
	s       *catalog.Service
	st      storage.Store
	version uint64
	model   map[string]modelProduct
}

var (
	machineIDs     = []string{"MLA7", "MLA10", "MLA100", "MLA11", "MLA2"}
	machineDomains = []string{"MLA-CELLPHONES", "MLA-TABLETS"}
)

func (m *catalogMachine) drawProduct(t *rapid.T) (string, modelProduct) {
	id := rapid.SampledFrom(machineIDs).Draw(t, "id")
	mp := modelProduct{
		domain: rapid.SampledFrom(machineDomains).Draw(t, "domain"),
		status: rapid.SampledFrom([]string{"active", "inactive"}).Draw(t, "status"),
	}
	if rapid.Bool().Draw(t, "has_parent") {
		mp.parent = rapid.SampledFrom(machineIDs).Draw(t, "parent")
		if mp.parent == id {
			mp.parent = ""
		}
	}
	return id, mp
}

func (mp modelProduct) record(id string) catalog.DatasetRecord {
	return productRec(map[string]any{"id": id, "domain_id": mp.domain, "parent_id": mp.parent, "status": mp.status})
}

func (m *catalogMachine) Import(t *rapid.T) {
	id, mp := m.drawProduct(t)
	if err := importRecords(m.s, m.st, mp.record(id)); err != nil {
		t.Fatalf("import %s: %v", id, err)
	}
	mp.imported = true
	m.model[id] = mp
}

func (m *catalogMachine) ImportInvalid(t *rapid.T) {
	id, mp := m.drawProduct(t)
	mp.parent = id // its own parent: refused, and nothing of the record is written
	if err := importRecords(m.s, m.st, mp.record(id)); !errs.Is(err, errs.Invalid) {
		t.Fatalf("import of a self-parented product = %v, want Invalid", err)
	}
}

func (m *catalogMachine) LoadNewerDataset(t *rapid.T) {
	id, mp := m.drawProduct(t)
	m.version++
	d := catalog.Dataset{Version: m.version, Records: []catalog.DatasetRecord{mp.record(id)}}
	if err := m.s.LoadDataset(ctx, d); err != nil {
		t.Fatalf("load dataset %d: %v", m.version, err)
	}
	if old, ok := m.model[id]; !ok || !old.imported {
		m.model[id] = mp
	}
}

func (m *catalogMachine) LoadSameDatasetAgain(t *rapid.T) {
	if m.version == 0 {
		t.Skip("no dataset loaded yet")
	}
	id, mp := m.drawProduct(t)
	d := catalog.Dataset{Version: m.version, Records: []catalog.DatasetRecord{mp.record(id)}}
	if err := m.s.LoadDataset(ctx, d); err != nil {
		t.Fatalf("reload dataset %d: %v", m.version, err)
	}
}

func (m *catalogMachine) Check(t *rapid.T) {
	for _, dom := range machineDomains {
		var want []string
		for id, mp := range m.model {
			if mp.domain == dom {
				want = append(want, id)
			}
		}
		slices.Sort(want)
		page, err := m.s.DomainProducts(ctx, dom, 1000, 0)
		if err != nil {
			t.Fatalf("list %s: %v", dom, err)
		}
		var got []string
		for _, p := range page.Products {
			got = append(got, p.ID)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("products of %s = %v, want %v", dom, got, want)
		}
	}
	for _, id := range machineIDs {
		mp, ok := m.model[id]
		p, err := m.s.Product(ctx, id)
		if !ok {
			if !errs.Is(err, errs.NotFound) {
				t.Fatalf("product %s = %v, want NotFound", id, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("product %s: %v", id, err)
		}
		if p.DomainID != mp.domain || p.ParentID != mp.parent || p.Status != mp.status {
			t.Fatalf("product %s = domain %s parent %q status %s, want %+v", id, p.DomainID, p.ParentID, p.Status, mp)
		}
		raw, err := m.s.ProductJSON(ctx, id)
		if err != nil {
			t.Fatalf("product json %s: %v", id, err)
		}
		if want := encodeLikeHTTP(t, p); string(raw) != want {
			t.Fatalf("product json %s = %s, want %s", id, raw, want)
		}
		if (p.Status == "inactive") != (p.Pictures == nil) {
			t.Fatalf("product %s: status %s with pictures %v", id, p.Status, p.Pictures)
		}
		want := []string{}
		for cid, c := range m.model {
			if c.parent == id {
				want = append(want, cid)
			}
		}
		slices.Sort(want)
		if !slices.Equal(p.ChildrenIDs, want) {
			t.Fatalf("children of %s = %v, want %v", id, p.ChildrenIDs, want)
		}
	}
}

func TestCatalog_ImportsAndNewerDatasetsKeepIndexesAndImportedRecords(t *testing.T) {
	owner := t
	rapid.Check(t, func(t *rapid.T) {
		s, st, done := newPropertyService(t, owner)
		defer done()
		if err := importRecords(s, st, domainRec("MLA-CELLPHONES", "Celulares"), domainRec("MLA-TABLETS", "Tablets")); err != nil {
			t.Fatalf("domains: %v", err)
		}
		m := &catalogMachine{s: s, st: st, model: map[string]modelProduct{}}
		t.Repeat(rapid.StateMachineActions(m))
	})
}
