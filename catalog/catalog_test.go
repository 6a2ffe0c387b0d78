package catalog_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/catalog"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/internal/teststore"
	"github.com/marketplace/marketplace/storage"
)

var ctx = context.Background()

// newService returns a catalog over an empty store, on the wall clock.
func newService(t testing.TB) (*catalog.Service, storage.Store) {
	t.Helper()
	return newServiceAt(t, clock.Wall{})
}

// newServiceAt returns a catalog over an empty store, on clk.
func newServiceAt(t testing.TB, clk clock.Clock) (*catalog.Service, storage.Store) {
	t.Helper()
	st := teststore.New(t)
	return catalog.New(st, clk, geo.New(st, clk)), st
}

// newPropertyService is newService for one iteration of a property test:
// the iteration closes it with the returned function before it ends.
func newPropertyService(t *rapid.T, owner testing.TB) (*catalog.Service, storage.Store, func()) {
	st, done := teststore.Open(t, owner)
	return catalog.New(st, clock.Wall{}, geo.New(st, clock.Wall{})), st, done
}

// newLoaded returns a catalog with the embedded dataset loaded.
func newLoaded(t testing.TB) *catalog.Service {
	t.Helper()
	s, _ := newService(t)
	if err := s.LoadBuiltin(ctx); err != nil {
		t.Fatalf("load builtin: %v", err)
	}
	return s
}

func rec(kind string, data any) catalog.DatasetRecord {
	b, err := json.Marshal(data)
	if err != nil {
		panic(err)
	}
	return catalog.DatasetRecord{Kind: kind, Data: b}
}

// importRecords upserts records in one transaction, as an import does.
func importRecords(s *catalog.Service, st storage.Store, recs ...catalog.DatasetRecord) error {
	return st.Update(ctx, func(tx storage.Tx) error {
		for _, r := range recs {
			ok, err := s.UpsertRecord(tx, r.Kind, r.Data)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("kind %s not handled", r.Kind)
			}
		}
		return nil
	})
}

func domainRec(id, name string) catalog.DatasetRecord {
	return rec(catalog.KindDomain, map[string]any{"id": id, "name": name})
}

func productRec(fields map[string]any) catalog.DatasetRecord {
	base := map[string]any{"id": "MLA900001", "domain_id": "MLA-CELLPHONES", "name": "Phone",
		"last_updated": "2026-01-02T03:04:05.000Z"}
	for k, v := range fields {
		if v == nil {
			delete(base, k)
			continue
		}
		base[k] = v
	}
	return rec(catalog.KindProduct, base)
}

func TestLoadBuiltin_LoadsEveryRecordOfTheEmbeddedDataset(t *testing.T) {
	is := is.New(t)
	s := newLoaded(t)
	d, err := catalog.BuiltinDataset()
	is.NoErr(err)
	is.True(d.Version >= 1) // the dataset is versioned
	var domains, products int
	for _, r := range d.Records {
		var head struct{ ID, Name string }
		is.NoErr(json.Unmarshal(r.Data, &head))
		switch r.Kind {
		case catalog.KindDomain:
			domains++
			ds, err := s.Domains(ctx, head.ID[:3])
			is.NoErr(err)
			found := false
			for _, x := range ds {
				found = found || (x == catalog.Domain{ID: head.ID, Name: head.Name})
			}
			is.True(found) // every embedded domain is listed by its site
		case catalog.KindProduct:
			products++
			p, err := s.Product(ctx, head.ID)
			is.NoErr(err)
			is.Equal(p.Name, head.Name)
		default:
			t.Fatalf("unexpected kind %q in the embedded dataset", r.Kind)
		}
	}
	is.True(domains >= 7*10) // at least ten domains for each of the seven main sites
	is.True(products >= 20)
	v, err := s.LoadedVersion(ctx)
	is.NoErr(err)
	is.Equal(v, d.Version)
}

func TestEmbeddedDataset_DomainNamePartIsSharedByEverySite(t *testing.T) {
	is := is.New(t)
	s := newLoaded(t)
	sites := []string{"MLA", "MLB", "MLM", "MLC", "MCO", "MLU", "MPE"}
	names := map[string]int{}
	for _, site := range sites {
		ds, err := s.Domains(ctx, site)
		is.NoErr(err)
		for _, d := range ds {
			prefix, name, ok := strings.Cut(d.ID, "-")
			is.True(ok)            // id is <site_prefix>-<DOMAIN_NAME>
			is.Equal(prefix, site) // the prefix is the site's
			is.True(d.Name != "")
			names[name]++
		}
	}
	for name, n := range names {
		if n != len(sites) {
			t.Errorf("domain name %s is on %d sites, want all %d", name, n, len(sites))
		}
	}
}

func TestEmbeddedDataset_ProductsAreLinkedAndSomeAreInactive(t *testing.T) {
	is := is.New(t)
	s := newLoaded(t)
	d, err := catalog.BuiltinDataset()
	is.NoErr(err)
	var inactive, withChildren, withBuyBox int
	for _, r := range d.Records {
		if r.Kind != catalog.KindProduct {
			continue
		}
		var head struct{ ID string }
		is.NoErr(json.Unmarshal(r.Data, &head))
		p, err := s.Product(ctx, head.ID)
		is.NoErr(err)
		is.True(strings.HasPrefix(p.DomainID, p.ID[:3]+"-")) // product and domain share the site
		is.True(strings.HasPrefix(p.Permalink, "https://"))
		if p.Status == catalog.StatusInactive {
			inactive++
		}
		if len(p.BuyBoxWinner) > 0 && string(p.BuyBoxWinner) != "null" {
			withBuyBox++
		}
		if len(p.ChildrenIDs) > 0 {
			withChildren++
		}
		for _, c := range p.ChildrenIDs {
			child, err := s.Product(ctx, c)
			is.NoErr(err)
			is.Equal(child.ParentID, p.ID) // children_ids and parent_id agree
		}
		if p.ParentID != "" {
			_, err := s.Product(ctx, p.ParentID)
			is.NoErr(err) // every parent exists
		}
		for _, pk := range p.Pickers {
			for _, pp := range pk.Products {
				_, err := s.Product(ctx, pp.ProductID)
				is.NoErr(err) // every picker option is a product
			}
		}
	}
	is.True(inactive >= 2)
	is.True(withChildren >= 3)
	is.True(withBuyBox >= 1)
}

func TestLoadDataset_SameVersionIsNotLoadedTwiceAndNewerReplaces(t *testing.T) {
	is := is.New(t)
	s, _ := newService(t)
	v1 := catalog.Dataset{Version: 1, Records: []catalog.DatasetRecord{domainRec("MLA-CELLPHONES", "Celulares")}}
	is.NoErr(s.LoadDataset(ctx, v1))
	again := catalog.Dataset{Version: 1, Records: []catalog.DatasetRecord{domainRec("MLA-CELLPHONES", "Teléfonos")}}
	is.NoErr(s.LoadDataset(ctx, again))
	ds, err := s.Domains(ctx, "MLA")
	is.NoErr(err)
	is.Equal(ds, []catalog.Domain{{ID: "MLA-CELLPHONES", Name: "Celulares"}}) // same version skipped

	v2 := catalog.Dataset{Version: 2, Records: []catalog.DatasetRecord{domainRec("MLA-CELLPHONES", "Celulares y smartphones")}}
	is.NoErr(s.LoadDataset(ctx, v2))
	ds, err = s.Domains(ctx, "MLA")
	is.NoErr(err)
	is.Equal(ds, []catalog.Domain{{ID: "MLA-CELLPHONES", Name: "Celulares y smartphones"}}) // newer version loaded

	is.NoErr(s.LoadDataset(ctx, v1)) // an older dataset never downgrades
	ds, err = s.Domains(ctx, "MLA")
	is.NoErr(err)
	is.Equal(ds[0].Name, "Celulares y smartphones")
	v, err := s.LoadedVersion(ctx)
	is.NoErr(err)
	is.Equal(v, uint64(2))
}

func TestLoadDataset_ImportedRecordsSurviveANewerDataset(t *testing.T) {
	is := is.New(t)
	s, st := newService(t)
	is.NoErr(s.LoadDataset(ctx, catalog.Dataset{Version: 1, Records: []catalog.DatasetRecord{
		domainRec("MLA-CELLPHONES", "Celulares"), productRec(nil)}}))
	is.NoErr(importRecords(s, st, productRec(map[string]any{"name": "My phone"}), domainRec("MLA-TABLETS", "Mis tablets")))

	is.NoErr(s.LoadDataset(ctx, catalog.Dataset{Version: 2, Records: []catalog.DatasetRecord{
		domainRec("MLA-CELLPHONES", "Celulares y smartphones"), domainRec("MLA-TABLETS", "Tablets"),
		productRec(map[string]any{"name": "Phone v2"})}}))

	p, err := s.Product(ctx, "MLA900001")
	is.NoErr(err)
	is.Equal(p.Name, "My phone") // the imported product is kept
	ds, err := s.Domains(ctx, "MLA")
	is.NoErr(err)
	is.Equal(ds, []catalog.Domain{{ID: "MLA-CELLPHONES", Name: "Celulares y smartphones"}, {ID: "MLA-TABLETS", Name: "Mis tablets"}})
}

func TestLoadDataset_AnInvalidRecordLoadsNothing(t *testing.T) {
	is := is.New(t)
	s, _ := newService(t)
	err := s.LoadDataset(ctx, catalog.Dataset{Version: 1, Records: []catalog.DatasetRecord{
		domainRec("MLA-CELLPHONES", "Celulares"), productRec(map[string]any{"domain_id": "MLA-NOPE"})}})
	is.True(err != nil)
	ds, err := s.Domains(ctx, "MLA")
	is.NoErr(err)
	is.Equal(len(ds), 0) // the valid domain of the failed dataset was not written
	v, err := s.LoadedVersion(ctx)
	is.NoErr(err)
	is.Equal(v, uint64(0))
}

func TestProduct_InactiveHasNullPicturesPickersFeaturesAndEmptyShortDescription(t *testing.T) {
	is := is.New(t)
	s, st := newService(t)
	full := map[string]any{
		"status":            "inactive",
		"pictures":          []any{map[string]any{"id": "1-MLA1_012024", "url": "https://http2.mlstatic.com/D_NQ_NP_1-F.jpg", "max_width": 500, "max_height": 500}},
		"pickers":           []any{map[string]any{"picker_id": "COLOR", "picker_name": "Color", "products": []any{}}},
		"main_features":     []any{map[string]any{"text": "Memoria: 64 GB.", "type": "key_value", "metadata": map[string]any{"key": "INTERNAL_MEMORY", "value": "64 GB"}}},
		"short_description": map[string]any{"type": "plaintext", "content": "A phone."},
		"attributes":        []any{map[string]any{"id": "BRAND", "name": "Marca", "value_id": "206", "value_name": "Samsung"}},
	}
	is.NoErr(importRecords(s, st, domainRec("MLA-CELLPHONES", "Celulares"), productRec(full)))
	p, err := s.Product(ctx, "MLA900001")
	is.NoErr(err)
	is.Equal(p.Status, "inactive")
	is.True(p.Pictures == nil)
	is.True(p.Pickers == nil)
	is.True(p.MainFeatures == nil)
	is.Equal(p.ShortDescription, catalog.ShortDescription{Type: "", Content: ""})
	is.Equal(len(p.Attributes), 1) // attributes stay

	full["status"] = "active" // the stored sheet comes back once the product is active again
	is.NoErr(importRecords(s, st, productRec(full)))
	p, err = s.Product(ctx, "MLA900001")
	is.NoErr(err)
	is.Equal(len(p.Pictures), 1)
	is.Equal(len(p.Pickers), 1)
	is.Equal(len(p.MainFeatures), 1)
	is.Equal(p.ShortDescription, catalog.ShortDescription{Type: "plaintext", Content: "A phone."})
}

func TestProduct_ActiveProductAnswersArraysNotNull(t *testing.T) {
	is := is.New(t)
	s, st := newService(t)
	is.NoErr(importRecords(s, st, domainRec("MLA-CELLPHONES", "Celulares"), productRec(nil)))
	p, err := s.Product(ctx, "MLA900001")
	is.NoErr(err)
	b, err := json.Marshal(p)
	is.NoErr(err)
	want := `{"id":"MLA900001","status":"active","domain_id":"MLA-CELLPHONES","permalink":"https://www.mercadolibre.com.ar/p/MLA900001","name":"Phone","buy_box_winner":null,"pickers":[],"pictures":[],"main_features":[],"attributes":[],"short_description":{"type":"","content":""},"parent_id":"","children_ids":[]}`
	is.Equal(string(b), want)
}

func TestProduct_UnknownOrMalformedIDIsNotFound(t *testing.T) {
	s := newLoaded(t)
	for _, id := range []string{"MLA1", "MLA", "mla27172677", "MLA-CELLPHONES", "", "MLA1\x00"} {
		_, err := s.Product(ctx, id)
		if !errs.Is(err, errs.NotFound) {
			t.Fatalf("Product(%q) = %v, want NotFound", id, err)
		}
		if de := errs.As(err); de.Message != "Product not found: "+id {
			t.Fatalf("message = %q", de.Message)
		}
	}
}

func TestDomains_UnknownSiteIsNotFoundAndKnownSiteWithoutDomainsIsEmpty(t *testing.T) {
	is := is.New(t)
	s := newLoaded(t)
	_, err := s.Domains(ctx, "XXX")
	is.True(errs.Is(err, errs.NotFound))
	is.Equal(errs.As(err).Message, "Site not found: XXX")
	_, err = s.Domains(ctx, "mla")
	is.True(errs.Is(err, errs.NotFound)) // site ids are upper case
	site := siteWithoutDomains(t, geo.New(teststore.New(t), clock.Wall{}))
	ds, err := s.Domains(ctx, site) // a site geo knows, with no domain in the dataset
	is.NoErr(err)
	is.Equal(ds, []catalog.Domain{})
}

// siteWithoutDomains returns a site that g knows and the embedded dataset has
// no domain for.
func siteWithoutDomains(t *testing.T, g *geo.Service) string {
	t.Helper()
	d, err := catalog.BuiltinDataset()
	if err != nil {
		t.Fatal(err)
	}
	with := map[string]bool{}
	for _, r := range d.Records {
		if r.Kind == catalog.KindDomain {
			var head struct{ ID string }
			if err := json.Unmarshal(r.Data, &head); err != nil {
				t.Fatal(err)
			}
			with[head.ID[:3]] = true
		}
	}
	sites, err := g.Sites(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, site := range sites {
		if !with[site.ID] {
			return site.ID
		}
	}
	t.Skip("every known site has domains in the embedded dataset")
	return ""
}

func TestDomains_ImportedSiteUnknownToGeoIsListed(t *testing.T) {
	is := is.New(t)
	s, st := newService(t)
	is.NoErr(importRecords(s, st, domainRec("MRD-CELLPHONES", "Celulares")))
	ds, err := s.Domains(ctx, "MRD")
	is.NoErr(err)
	is.Equal(ds, []catalog.Domain{{ID: "MRD-CELLPHONES", Name: "Celulares"}})
}

func TestDomainProducts_UnknownDomainIsNotFound(t *testing.T) {
	s := newLoaded(t)
	for _, id := range []string{"MLA-NOPE", "CELLPHONES", "MLA-", "mla-CELLPHONES"} {
		_, err := s.DomainProducts(ctx, id, 50, 0)
		if !errs.Is(err, errs.NotFound) || errs.As(err).Message != "Domain not found: "+id {
			t.Fatalf("DomainProducts(%q) = %v, want NotFound with its message", id, err)
		}
	}
}

func TestDomainProducts_InactiveProductIsListedWithoutImages(t *testing.T) {
	is := is.New(t)
	s := newLoaded(t)
	page, err := s.DomainProducts(ctx, "MLA-CELLPHONES", 1000, 0)
	is.NoErr(err)
	seen := false
	for _, p := range page.Products {
		if p.ID == "MLA9652753" { // the inactive Moto G6
			seen = true
			is.Equal(p.Images, []catalog.Image{})
		}
	}
	is.True(seen)
}

func TestProduct_ChildrenIDsFollowTheChildrensParentID(t *testing.T) {
	is := is.New(t)
	s, st := newService(t)
	is.NoErr(importRecords(s, st, domainRec("MLA-CELLPHONES", "Celulares"),
		productRec(map[string]any{"id": "MLA100"}), productRec(map[string]any{"id": "MLA200"}),
		productRec(map[string]any{"id": "MLA102", "parent_id": "MLA100"}),
		productRec(map[string]any{"id": "MLA101", "parent_id": "MLA100", "children_ids": []string{"MLA999"}})))
	p, err := s.Product(ctx, "MLA100")
	is.NoErr(err)
	is.Equal(p.ChildrenIDs, []string{"MLA101", "MLA102"}) // in id order, derived from parent_id
	c, err := s.Product(ctx, "MLA101")
	is.NoErr(err)
	is.Equal(c.ChildrenIDs, []string{}) // an imported children_ids is not taken as given

	is.NoErr(importRecords(s, st, productRec(map[string]any{"id": "MLA102", "parent_id": "MLA200"})))
	p, err = s.Product(ctx, "MLA100")
	is.NoErr(err)
	is.Equal(p.ChildrenIDs, []string{"MLA101"}) // a moved child leaves its old parent
	p, err = s.Product(ctx, "MLA200")
	is.NoErr(err)
	is.Equal(p.ChildrenIDs, []string{"MLA102"})
}

func TestUpsertProduct_MissingLastUpdatedTakesTheClockTime(t *testing.T) {
	is := is.New(t)
	s, st := newServiceAt(t, clock.NewManual(time.Date(2026, 3, 4, 15, 0, 0, 123e6, time.UTC)))
	is.NoErr(importRecords(s, st, domainRec("MLA-CELLPHONES", "Celulares"), productRec(map[string]any{"last_updated": nil})))
	page, err := s.DomainProducts(ctx, "MLA-CELLPHONES", 50, 0)
	is.NoErr(err)
	is.Equal(page.Products[0].LastUpdated, "2026-03-04T15:00:00.123Z")

	is.NoErr(importRecords(s, st, productRec(map[string]any{"last_updated": "2026-01-02T00:04:05-03:00"})))
	page, err = s.DomainProducts(ctx, "MLA-CELLPHONES", 50, 0)
	is.NoErr(err)
	is.Equal(page.Products[0].LastUpdated, "2026-01-02T03:04:05.000Z") // written in UTC
}

func TestUpsertRecord_UnknownKindIsLeftToOtherPackages(t *testing.T) {
	is := is.New(t)
	s, st := newService(t)
	is.NoErr(st.Update(ctx, func(tx storage.Tx) error {
		ok, err := s.UpsertRecord(tx, "currency", json.RawMessage(`{"id":"ARS"}`))
		is.NoErr(err)
		is.True(!ok)
		return nil
	}))
}

func TestUpsertRecord_InvalidRecordsAreRejectedWithClearErrors(t *testing.T) {
	pic := func(url string, w int) []any {
		return []any{map[string]any{"id": "1-MLA1_012024", "url": url, "max_width": w, "max_height": 10}}
	}
	cases := []struct {
		name string
		rec  catalog.DatasetRecord
		want string
	}{
		{"DomainWithoutID", domainRec("", "Celulares"), "The fields [id] are required for requested call"},
		{"DomainIDWithoutSite", domainRec("CELLPHONES", "Celulares"), `The fields [id] are invalid for requested call: "CELLPHONES" is not of the form <SITE_ID>-<DOMAIN_NAME> (e.g. MLA-CELLPHONES)`},
		{"DomainIDLowerCase", domainRec("MLA-cellphones", "Celulares"), `The fields [id] are invalid for requested call: "MLA-cellphones" is not of the form <SITE_ID>-<DOMAIN_NAME> (e.g. MLA-CELLPHONES)`},
		{"DomainWithoutName", domainRec("MLA-TABLETS", "  "), "The fields [name] are required for requested call"},
		{"DomainNull", catalog.DatasetRecord{Kind: "domain", Data: json.RawMessage(`null`)}, "The fields [data] are required for requested call"},
		{"DomainWrongType", catalog.DatasetRecord{Kind: "domain", Data: json.RawMessage(`{"id":7}`)}, "The fields [id] are invalid for requested call"},
		{"ProductWithoutID", productRec(map[string]any{"id": nil}), "The fields [id] are required for requested call"},
		{"ProductIDNotSiteAndDigits", productRec(map[string]any{"id": "MLA-12"}), `The fields [id] are invalid for requested call: "MLA-12" is not a site id followed by digits (e.g. MLA15149561)`},
		{"ProductWithoutName", productRec(map[string]any{"name": ""}), "The fields [name] are required for requested call"},
		{"ProductUnknownStatus", productRec(map[string]any{"status": "paused"}), `The fields [status] are invalid for requested call: "paused" is neither active nor inactive`},
		{"ProductWithoutDomain", productRec(map[string]any{"domain_id": nil}), "The fields [domain_id] are required for requested call"},
		{"ProductUnknownDomain", productRec(map[string]any{"domain_id": "MLA-TABLETS"}), "The fields [domain_id] are invalid for requested call: domain MLA-TABLETS does not exist; import it first"},
		{"ProductDomainOfAnotherSite", productRec(map[string]any{"domain_id": "MLB-CELLPHONES"}), "The fields [domain_id] are invalid for requested call: domain MLB-CELLPHONES is not of the product's site MLA"},
		{"ProductBadPermalink", productRec(map[string]any{"permalink": "www.example.com/p"}), "The fields [permalink] are invalid for requested call: not an http or https URL"},
		{"ProductOwnParent", productRec(map[string]any{"parent_id": "MLA900001"}), "The fields [parent_id] are invalid for requested call: a product cannot be its own parent"},
		{"ProductParentOfAnotherSite", productRec(map[string]any{"parent_id": "MLB900001"}), "The fields [parent_id] are invalid for requested call: parent MLB900001 is not of the product's site MLA"},
		{"ProductBuyBoxNotObject", productRec(map[string]any{"buy_box_winner": "yes"}), "The fields [buy_box_winner] are invalid for requested call: must be null or an object"},
		{"ProductAttributeWithoutID", productRec(map[string]any{"attributes": []any{map[string]any{"name": "Marca"}}}), "The fields [attributes[0].id] are required for requested call"},
		{"ProductPictureBadURL", productRec(map[string]any{"pictures": pic("ftp://x/y.jpg", 10)}), "The fields [pictures[0].url] are invalid for requested call: not an http or https URL"},
		{"ProductPictureNegativeSize", productRec(map[string]any{"pictures": pic("https://x/y.jpg", -1)}), "The fields [pictures[0]] are invalid for requested call: max_width and max_height must not be negative"},
		{"ProductPickerWithoutName", productRec(map[string]any{"pickers": []any{map[string]any{"picker_id": "COLOR"}}}), "The fields [pickers[0].picker_name] are required for requested call"},
		{"ProductPickerOptionBadID", productRec(map[string]any{"pickers": []any{map[string]any{"picker_id": "COLOR", "picker_name": "Color", "products": []any{map[string]any{"product_id": "x"}}}}}), `The fields [pickers[0].products[0].product_id] are invalid for requested call: "x" is not a product id`},
		{"ProductFeatureWithoutText", productRec(map[string]any{"main_features": []any{map[string]any{"type": "key_value"}}}), "The fields [main_features[0].text] are required for requested call"},
		{"ProductBadLastUpdated", productRec(map[string]any{"last_updated": "yesterday"}), "The fields [last_updated] are invalid for requested call: not an ISO 8601 timestamp such as 2026-03-04T15:00:00.000Z"},
		{"ProductPicturesNotArray", productRec(map[string]any{"pictures": "none"}), "The fields [pictures] are invalid for requested call"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			s, st := newService(t)
			is.NoErr(importRecords(s, st, domainRec("MLA-CELLPHONES", "Celulares")))
			err := importRecords(s, st, tc.rec)
			is.True(errs.Is(err, errs.Invalid)) // bad input is Invalid
			is.Equal(errs.As(err).Message, tc.want)
			page, err := s.DomainProducts(ctx, "MLA-CELLPHONES", 50, 0)
			is.NoErr(err)
			is.Equal(page.Total, 0) // nothing was written
			ds, err := s.Domains(ctx, "MLA")
			is.NoErr(err)
			is.Equal(len(ds), 1)
		})
	}
}

// encodeLikeHTTP encodes v as the HTTP answers do.
func encodeLikeHTTP(t interface{ Fatalf(string, ...any) }, v any) string {
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatalf("encode: %v", err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

func TestProductJSON_IsTheEncodedProductForEveryEmbeddedProduct(t *testing.T) {
	s := newLoaded(t)
	d, err := catalog.BuiltinDataset()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range d.Records {
		if r.Kind != catalog.KindProduct {
			continue
		}
		var head struct{ ID string }
		if err := json.Unmarshal(r.Data, &head); err != nil {
			t.Fatal(err)
		}
		p, err := s.Product(ctx, head.ID)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.ProductJSON(ctx, head.ID)
		if err != nil {
			t.Fatal(err)
		}
		if want := encodeLikeHTTP(t, p); string(got) != want {
			t.Fatalf("ProductJSON(%s) =\n%s\nwant\n%s", head.ID, got, want)
		}
	}
	if _, err := s.ProductJSON(ctx, "MLA1"); !errs.Is(err, errs.NotFound) || errs.As(err).Message != "Product not found: MLA1" {
		t.Fatalf("ProductJSON(MLA1) = %v, want NotFound", err)
	}
}
