package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/julienschmidt/httprouter"
	"github.com/matryer/is"

	"github.com/marketplace/marketplace/catalog"
)

// keysOf returns the sorted keys of an object.
func keysOf(o map[string]any) []string {
	var ks []string
	for k := range o {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	sort.Strings(out)
	return out
}

func TestCatalogRoutes_AreReadWithoutATokenButABadTokenIs401(t *testing.T) {
	ts := newTestServer(t)
	for _, path := range []string{"/sites/MLA/domains", "/catalog_domains/MLA-CELLPHONES/products", "/products/MLA27172677"} {
		t.Run(path, func(t *testing.T) {
			is.New(t).Equal(ts.do("GET", path, "", nil).Status, http.StatusOK)
			wantError(t, ts.do("GET", path, "APP_USR-nope", nil), http.StatusUnauthorized, "Invalid access token")
		})
	}
}

func TestGetSiteDomains_KnownSiteWithoutDomainsIsAnEmptyArray(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	u := ts.mustUser("MLA")
	d, err := catalog.BuiltinDataset()
	is.NoErr(err)
	with := map[string]bool{}
	for _, r := range d.Records {
		var head struct{ ID string }
		is.NoErr(json.Unmarshal(r.Data, &head))
		if r.Kind == catalog.KindDomain {
			with[head.ID[:3]] = true
		}
	}
	sites, err := ts.m.Geo.Sites(context.Background())
	is.NoErr(err)
	for _, site := range sites {
		if with[site.ID] {
			continue
		}
		res := ts.do("GET", "/sites/"+site.ID+"/domains", u.Token, nil)
		is.Equal(res.Status, 200)
		is.Equal(string(res.Raw), "[]\n")
		return
	}
	t.Skip("every known site has domains in the embedded dataset")
}

func TestGetSiteDomains(t *testing.T) {
	ts := newTestServer(t)
	u := ts.mustUser("MLA")
	cases := []struct {
		name       string
		site       string
		wantStatus int
		wantMsg    string
		wantLen    int
		wantFirst  map[string]any
	}{
		{"MLAListsItsDomainsInIDOrder", "MLA", 200, "", 12, map[string]any{"id": "MLA-3D_PRINTERS", "name": "Impresoras 3D"}},
		{"MLBNamesArePortuguese", "MLB", 200, "", 12, map[string]any{"id": "MLB-3D_PRINTERS", "name": "Impressoras 3D"}},
		{"UnknownSiteIs404", "XYZ", 404, "Site not found: XYZ", 0, nil},
		{"LowerCaseSiteIs404", "mla", 404, "Site not found: mla", 0, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			res := ts.do("GET", "/sites/"+tc.site+"/domains", u.Token, nil)
			if tc.wantStatus != 200 {
				wantError(t, res, tc.wantStatus, tc.wantMsg)
				return
			}
			is.Equal(res.Status, 200)
			is.Equal(res.Header.Get("Content-Type"), "application/json; charset=utf-8")
			arr := res.Arr()
			is.True(arr != nil) // the body is an array, also when empty
			is.Equal(len(arr), tc.wantLen)
			var ids []string
			for _, d := range arr {
				o := d.(map[string]any)
				is.Equal(keysOf(o), []string{"id", "name"}) // exactly {id, name}
				is.True(strings.HasPrefix(o["id"].(string), tc.site+"-"))
				ids = append(ids, o["id"].(string))
			}
			is.Equal(ids, sortedCopy(ids))
			if tc.wantFirst != nil {
				is.Equal(arr[0], tc.wantFirst)
			}
		})
	}
}

func TestGetDomainProducts(t *testing.T) {
	ts := newTestServer(t)
	u := ts.mustUser("MLA")
	listKeys := []string{"attributes", "children_ids", "domain_id", "id", "images", "last_updated", "name"}

	t.Run("ListShapeWithExactFields", func(t *testing.T) {
		is := is.New(t)
		res := ts.do("GET", "/catalog_domains/MLA-CELLPHONES/products", u.Token, nil)
		is.Equal(res.Status, 200)
		is.Equal(res.Header.Get("X-Total-Count"), "11")
		arr := res.Arr()
		is.Equal(len(arr), 11)
		var ids []string
		for _, e := range arr {
			o := e.(map[string]any)
			is.Equal(keysOf(o), listKeys)
			is.Equal(o["domain_id"], "MLA-CELLPHONES")
			ids = append(ids, o["id"].(string))
		}
		is.Equal(ids, sortedCopy(ids)) // product id order
		var a15 map[string]any
		for _, e := range arr {
			if e.(map[string]any)["id"] == "MLA27172677" {
				a15 = e.(map[string]any)
			}
		}
		is.Equal(a15["name"], "Samsung Galaxy A15 128 GB 4 GB RAM")
		is.Equal(a15["children_ids"], []any{"MLA27172678", "MLA27172679", "MLA27172680"})
		is.Equal(a15["last_updated"], "2025-10-14T18:03:11.000Z")
		is.Equal(a15["attributes"].([]any)[0], map[string]any{"id": "BRAND", "name": "Marca", "value_id": "206", "value_name": "Samsung"})
		imgs := a15["images"].([]any)
		is.Equal(len(imgs), 3)
		img := imgs[0].(map[string]any)
		is.Equal(keysOf(img), []string{"id", "url"})
		is.Equal(img["url"], "https://http2.mlstatic.com/D_NQ_NP_"+img["id"].(string)+"-F.jpg")
	})

	t.Run("InactiveProductIsListedWithoutImages", func(t *testing.T) {
		is := is.New(t)
		res := ts.do("GET", "/catalog_domains/MLA-CELLPHONES/products", u.Token, nil)
		found := false
		for _, e := range res.Arr() {
			if o := e.(map[string]any); o["id"] == "MLA9652753" {
				found = true
				is.Equal(o["images"], []any{})
			}
		}
		is.True(found)
	})

	t.Run("LimitAndOffsetPage", func(t *testing.T) {
		is := is.New(t)
		all := ts.do("GET", "/catalog_domains/MLA-CELLPHONES/products", u.Token, nil).Arr()
		res := ts.do("GET", "/catalog_domains/MLA-CELLPHONES/products?limit=3&offset=2", u.Token, nil)
		is.Equal(res.Status, 200)
		is.Equal(res.Header.Get("X-Total-Count"), "11")
		is.Equal(res.Arr(), all[2:5])
		res = ts.do("GET", "/catalog_domains/MLA-CELLPHONES/products?offset=50", u.Token, nil)
		is.Equal(res.Status, 200)
		is.Equal(res.Arr(), []any{}) // past the end: an empty array, not null
	})

	errCases := []struct {
		name, path, msg string
		status          int
	}{
		{"UnknownDomainIs404", "/catalog_domains/MLA-SPACESHIPS/products", "Domain not found: MLA-SPACESHIPS", 404},
		{"MalformedDomainIs404", "/catalog_domains/CELLPHONES/products", "Domain not found: CELLPHONES", 404},
		{"NegativeLimitIs400", "/catalog_domains/MLA-CELLPHONES/products?limit=-1", "Invalid limit: -1. It must be a non-negative integer", 400},
		{"LimitOverMaximumIs400", "/catalog_domains/MLA-CELLPHONES/products?limit=1001", "Invalid limit: 1001. The maximum is 1000", 400},
		{"NonNumericOffsetIs400", "/catalog_domains/MLA-CELLPHONES/products?offset=x", "Invalid offset: x. It must be a non-negative integer", 400},
	}
	for _, tc := range errCases {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, ts.do("GET", tc.path, u.Token, nil), tc.status, tc.msg)
		})
	}
}

// byIDKeys are the fields of the spec's "Catalog product by id" table.
var byIDKeys = sortedCopy([]string{"id", "status", "domain_id", "permalink", "name", "buy_box_winner", "pickers",
	"pictures", "main_features", "attributes", "short_description", "parent_id", "children_ids"})

func TestGetProduct_HasEveryFieldOfTheByIDTable(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	u := ts.mustUser("MLA")
	res := ts.do("GET", "/products/MLA27172678", u.Token, nil)
	is.Equal(res.Status, 200)
	o := res.Obj()
	is.Equal(keysOf(o), byIDKeys)
	is.Equal(o["id"], "MLA27172678")
	is.Equal(o["status"], "active")
	is.Equal(o["domain_id"], "MLA-CELLPHONES")
	is.Equal(o["permalink"], "https://www.mercadolibre.com.ar/samsung-galaxy-a15-128-gb-4-gb-ram-azul-oscuro/p/MLA27172678")
	is.Equal(o["name"], "Samsung Galaxy A15 128 GB 4 GB RAM Azul oscuro")
	is.Equal(o["buy_box_winner"], nil)
	is.Equal(o["parent_id"], "MLA27172677")
	is.Equal(o["children_ids"], []any{})
	is.Equal(o["short_description"].(map[string]any)["type"], "plaintext")
	is.True(strings.HasPrefix(o["short_description"].(map[string]any)["content"].(string), "Con el Samsung Galaxy A15"))

	pics := o["pictures"].([]any)
	is.Equal(len(pics), 3)
	pic := pics[0].(map[string]any)
	is.Equal(keysOf(pic), []string{"id", "max_height", "max_width", "suggested_for_picker", "url"})
	is.Equal(pic["suggested_for_picker"], []any{"COLOR"})
	is.Equal(pic["max_width"], float64(1200))

	pickers := o["pickers"].([]any)
	is.Equal(len(pickers), 1)
	pk := pickers[0].(map[string]any)
	is.Equal(keysOf(pk), []string{"picker_id", "picker_name", "products"})
	is.Equal(pk["picker_id"], "COLOR")
	opts := pk["products"].([]any)
	is.Equal(len(opts), 3)
	first := opts[0].(map[string]any)
	is.Equal(keysOf(first), []string{"permalink", "picker_label", "picture_id", "product_id", "tags", "thumbnail"})
	is.Equal(first["product_id"], "MLA27172678")
	is.Equal(first["picker_label"], "Azul oscuro")
	is.Equal(first["picture_id"], pic["id"]) // the option shows the product's own first picture
	is.Equal(first["tags"], []any{})
	is.Equal(opts[2].(map[string]any)["tags"], []any{"disabled"}) // the inactive sibling is disabled

	feats := o["main_features"].([]any)
	is.Equal(feats[0], map[string]any{"text": "Memoria RAM: 4 GB.", "type": "key_value", "metadata": map[string]any{"key": "RAM", "value": "4 GB"}})
	for _, a := range o["attributes"].([]any) {
		is.Equal(keysOf(a.(map[string]any)), []string{"id", "name", "value_id", "value_name"})
	}
}

func TestGetProduct_ParentListsChildrenAndBuyBoxWinner(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	u := ts.mustUser("MLA")
	o := ts.do("GET", "/products/MLA27172677", u.Token, nil).Obj()
	is.Equal(o["parent_id"], "")
	is.Equal(o["children_ids"], []any{"MLA27172678", "MLA27172679", "MLA27172680"})
	is.Equal(o["buy_box_winner"], map[string]any{"item_id": "MLA1466352977", "category_id": "MLA1055", "seller_id": float64(241014637),
		"price": float64(299999), "currency_id": "ARS", "condition": "new", "listing_type_id": "gold_pro"})
}

func TestGetProduct_InactiveHasNullPicturesPickersFeaturesAndEmptyShortDescription(t *testing.T) {
	ts := newTestServer(t)
	u := ts.mustUser("MLA")
	for _, id := range []string{"MLA9652753", "MLA27172680", "MLB15149561"} {
		t.Run(id, func(t *testing.T) {
			is := is.New(t)
			res := ts.do("GET", "/products/"+id, u.Token, nil)
			is.Equal(res.Status, 200)
			o := res.Obj()
			is.Equal(keysOf(o), byIDKeys) // null fields are present, not left out
			is.Equal(o["status"], "inactive")
			is.Equal(o["pictures"], nil)
			is.Equal(o["pickers"], nil)
			is.Equal(o["main_features"], nil)
			is.Equal(o["short_description"], map[string]any{"type": "", "content": ""})
			is.True(len(o["attributes"].([]any)) > 0) // the sheet itself stays
			is.True(bytes.Contains(res.Raw, []byte(`"pictures":null,"main_features":null`)))
		})
	}
}

func TestGetProduct_UnknownProductIs404(t *testing.T) {
	ts := newTestServer(t)
	u := ts.mustUser("MLA")
	for _, id := range []string{"MLA1", "MLA-CELLPHONES", "xyz", "MLA27172677%00"} {
		t.Run(id, func(t *testing.T) {
			res := ts.do("GET", "/products/"+id, u.Token, nil)
			wantError(t, res, 404, "")
			if msg := res.Obj()["message"].(string); !strings.HasPrefix(msg, "Product not found: ") {
				t.Fatalf("message = %q", msg)
			}
		})
	}
}

func TestImportReference_ProductImportedThroughTheOperatorRouteIsReadBack(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	u := ts.mustUser("MLA")
	doc := map[string]any{"records": []any{
		map[string]any{"kind": "domain", "data": map[string]any{"id": "MLA-DRONES", "name": "Drones"}},
		map[string]any{"kind": "product", "data": map[string]any{
			"id": "MLA30000001", "domain_id": "MLA-DRONES", "name": "Drone DJI Mini 4 Pro",
			"attributes":        []any{map[string]any{"id": "BRAND", "name": "Marca", "value_id": "6730", "value_name": "DJI"}},
			"pictures":          []any{map[string]any{"id": "612345-MLA30000001_112026", "url": "https://http2.mlstatic.com/D_NQ_NP_612345-MLA30000001_112026-F.jpg", "max_width": 1200, "max_height": 900}},
			"main_features":     []any{map[string]any{"text": "Peso de 249 g.", "metadata": map[string]any{"key": "WEIGHT", "value": "249 g"}}},
			"short_description": map[string]any{"content": "Drone plegable con cámara 4K."},
		}},
		map[string]any{"kind": "product", "data": map[string]any{
			"id": "MLA30000002", "domain_id": "MLA-DRONES", "name": "Drone DJI Mini 4 Pro Fly More", "parent_id": "MLA30000001",
			"status": "inactive", "last_updated": "2026-02-01T10:00:00Z"}},
	}}
	res := ts.do("PUT", "/operator/reference", testOperatorToken, doc)
	is.Equal(res.Status, 200)
	is.Equal(res.Obj()["imported"], map[string]any{"domain": float64(1), "product": float64(2)})

	res = ts.do("GET", "/products/MLA30000001", u.Token, nil)
	is.Equal(res.Status, 200)
	o := res.Obj()
	is.Equal(keysOf(o), byIDKeys)
	is.Equal(o["name"], "Drone DJI Mini 4 Pro")
	is.Equal(o["status"], "active")                                           // default status
	is.Equal(o["permalink"], "https://www.mercadolibre.com.ar/p/MLA30000001") // default permalink
	is.Equal(o["children_ids"], []any{"MLA30000002"})
	is.Equal(o["main_features"], []any{map[string]any{"text": "Peso de 249 g.", "type": "key_value", "metadata": map[string]any{"key": "WEIGHT", "value": "249 g"}}})
	is.Equal(o["short_description"], map[string]any{"type": "plaintext", "content": "Drone plegable con cámara 4K."})
	is.Equal(o["pictures"].([]any)[0].(map[string]any)["suggested_for_picker"], []any{})

	domains := ts.do("GET", "/sites/MLA/domains", u.Token, nil).Arr()
	is.True(slices.ContainsFunc(domains, func(d any) bool { return d.(map[string]any)["id"] == "MLA-DRONES" }))
	list := ts.do("GET", "/catalog_domains/MLA-DRONES/products", u.Token, nil).Arr()
	is.Equal(len(list), 2)
	is.Equal(list[0].(map[string]any)["last_updated"], "2026-03-04T15:00:00.000Z") // the engine's clock when none is given
	is.Equal(list[1].(map[string]any)["last_updated"], "2026-02-01T10:00:00.000Z")
}

func TestImportReference_InvalidProductIs400AndChangesNothing(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	u := ts.mustUser("MLA")
	doc := map[string]any{"records": []any{
		map[string]any{"kind": "domain", "data": map[string]any{"id": "MLA-DRONES", "name": "Drones"}},
		map[string]any{"kind": "product", "data": map[string]any{"id": "MLA30000001", "domain_id": "MLA-DRONES"}},
	}}
	res := ts.do("PUT", "/operator/reference", testOperatorToken, doc)
	wantError(t, res, 400, "Record 1 (product): The fields [name] are required for requested call")
	wantError(t, ts.do("GET", "/catalog_domains/MLA-DRONES/products", u.Token, nil), 404, "Domain not found: MLA-DRONES")
	wantError(t, ts.do("GET", "/products/MLA30000001", u.Token, nil), 404, "Product not found: MLA30000001")
	is.Equal(len(ts.do("GET", "/sites/MLA/domains", u.Token, nil).Arr()), 12)
}

// BenchmarkGetProduct measures GET /products/:product_id through the whole
// HTTP stack (router, token check, storage read, JSON encoding) beside a bare
// httprouter handler that writes the same bytes, in the same run.
func BenchmarkGetProduct(b *testing.B) {
	ts := newTestServer(b)
	u := ts.mustUser("MLA")
	const path = "/products/MLA27172677"
	first := ts.do("GET", path, u.Token, nil)
	if first.Status != 200 {
		b.Fatalf("status %d", first.Status)
	}
	body := first.Raw
	bare := httprouter.New()
	bare.GET("/products/:product_id", func(w http.ResponseWriter, _ *http.Request, _ httprouter.Params) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
	})
	run := func(b *testing.B, h http.Handler) {
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("Authorization", "Bearer "+u.Token)
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != 200 || rec.Body.Len() != len(body) {
				b.Fatalf("answer %d of %d bytes", rec.Code, rec.Body.Len())
			}
		}
	}
	b.Run("stack", func(b *testing.B) { run(b, ts.handler) })
	b.Run("bare", func(b *testing.B) { run(b, bare) })
}
