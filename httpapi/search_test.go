package httpapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/stock"
)

func (ts *testServer) mustPlainItem(token, title string, price float64, qty int) string {
	ts.t.Helper()
	res := ts.do("POST", "/items", token, with(itemBody(), "title", title, "price", price, "available_quantity", qty))
	if res.Status != http.StatusCreated {
		ts.t.Fatalf("publish: %d %s", res.Status, res.Raw)
	}
	return res.Obj()["id"].(string)
}

func ids(res response) []any {
	var out []any
	for _, r := range res.Obj()["results"].([]any) {
		out = append(out, r.(map[string]any)["id"])
	}
	return out
}

func TestSiteSearch_EnvelopeAndResultFields(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	seller, stores := ts.mustSeller(1)
	id, up := ts.mustMultiItem(seller.Token, stores[0], 4)
	res := ts.do("GET", "/sites/MLA/search?q=NINO", seller.Token, nil)
	is.Equal(res.Status, 200)
	is.Equal(res.Body, map[string]any{
		"site_id": "MLA", "query": "NINO",
		"paging": map[string]any{"total": float64(1), "offset": float64(0), "limit": float64(50)},
		"results": []any{map[string]any{
			"id": id, "site_id": "MLA", "title": "Zapatillas Running Niño", "price": 1500.5, "currency_id": "ARS",
			"available_quantity": float64(4), "condition": "new", "listing_type_id": "gold_special",
			"permalink": "https://articulo.mercadolibre.com.ar/MLA-" + id[3:] + "-zapatillas-running-nino-_JM",
			"thumbnail": "", "seller": map[string]any{"id": float64(seller.ID)}, "category_id": "MLA1055",
			"user_product_id": up, "catalog_product_id": nil, "catalog_listing": false,
		}},
		"sort": map[string]any{"id": "relevance", "name": "More relevant"},
		"available_sorts": []any{
			map[string]any{"id": "price_asc", "name": "Lower price"},
			map[string]any{"id": "price_desc", "name": "Higher price"},
		},
		"filters": []any{}, "available_filters": []any{},
	})
}

func TestSiteSearch_PagingAndSorts(t *testing.T) {
	ts := newTestServer(t)
	seller := ts.mustUser("MLA")
	var all []any
	for i, p := range []float64{500, 100, 300, 200, 400} {
		all = append(all, ts.mustPlainItem(seller.Token, fmt.Sprintf("Mate número %d", i), p, 1))
	}
	cases := []struct {
		name  string
		query string
		total float64
		want  []any
		sort  string
	}{
		{"LimitThreeGivesAtMostThree", "q=mate&limit=3", 5, all[:3], "relevance"},
		{"OffsetMovesTheLowerBound", "q=mate&limit=3&offset=3", 5, all[3:], "relevance"},
		{"OffsetPastTheEnd", "q=mate&offset=9", 5, nil, "relevance"},
		{"LimitZeroGivesOnlyTheTotal", "q=mate&limit=0", 5, nil, "relevance"},
		{"PriceAscending", "q=mate&sort=price_asc", 5, []any{all[1], all[3], all[2], all[4], all[0]}, "price_asc"},
		{"PriceDescending", "q=mate&sort=price_desc&limit=2", 5, []any{all[0], all[4]}, "price_desc"},
		{"AccentsIgnored", "q=NUMERO+3", 1, []any{all[3]}, "relevance"},
		{"NoMatch", "q=bombilla", 0, nil, "relevance"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			res := ts.do("GET", "/sites/MLA/search?"+c.query, seller.Token, nil)
			is.Equal(res.Status, 200)
			is.Equal(res.Obj()["paging"].(map[string]any)["total"], c.total)
			is.Equal(ids(res), c.want)
			is.Equal(res.Obj()["sort"].(map[string]any)["id"], c.sort)
			is.Equal(len(res.Obj()["available_sorts"].([]any)), 2)
		})
	}
}

func TestSiteSearch_Errors(t *testing.T) {
	ts := newTestServer(t)
	u := ts.mustUser("MLA")
	cases := []struct {
		name   string
		path   string
		token  string
		status int
		msg    string
	}{
		{"UnknownSite", "/sites/XYZ/search?q=a", u.Token, 404, "Site not found: XYZ"},
		{"UnknownSort", "/sites/MLA/search?sort=newest", u.Token, 400, "Invalid sort: newest. Valid values are: [relevance, price_asc, price_desc]"},
		{"NegativeLimit", "/sites/MLA/search?limit=-1", u.Token, 400, "Invalid limit: -1. It must be a non-negative integer"},
		{"LimitTooLarge", "/sites/MLA/search?limit=1001", u.Token, 400, "Invalid limit: 1001. The maximum is 1000"},
		{"TextOffset", "/sites/MLA/search?offset=x", u.Token, 400, "Invalid offset: x. It must be a non-negative integer"},
		{"BadToken", "/sites/MLA/search?q=a", "APP_USR-nope", 401, "Invalid access token"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, ts.do("GET", c.path, c.token, nil), c.status, c.msg)
		})
	}
}

// BenchmarkSiteSearch searches 100,000 items (10,000 with -short) through
// the whole HTTP stack, beside a bare httprouter handler writing the same
// bytes in the same run. Titles mix a rare word (1 item in 1,000), a
// frequent one (1 in 10) and words every item shares. A query of several
// words costs about the postings of its rarest word; one of a single word
// (or none) reads its total and its page, whatever its number of matches.
func BenchmarkSiteSearch(b *testing.B) {
	n := 100_000
	if testing.Short() {
		n = 10_000
	}
	ts := newTestServer(b)
	seller := ts.mustUser("MLA")
	colors := []string{"rojo", "azul", "verde", "negro", "blanco", "gris", "rosa", "amarillo", "violeta", "marrón"}
	for i := 0; i < n; i++ {
		title := fmt.Sprintf("Remera algodón %s talle %d", colors[i%10], i%100)
		if i%1000 == 0 {
			title += " edición limitada"
		}
		qty := int64(1)
		_, err := ts.m.Stock.Publish(b.Context(), seller.ID, stock.NewItem{Title: title, CategoryID: "MLA1055",
			Price: money.FromInt(int64(100 + i%997)), ListingTypeID: "gold_special", AvailableQuantity: &qty})
		if err != nil {
			b.Fatal(err)
		}
	}
	for _, q := range []struct{ name, query string }{
		{"rare", "q=edicion+limitada"},
		{"frequent", "q=remera+rojo"},
		{"frequent_price_asc", "q=remera+rojo&sort=price_asc"},
		{"every_item", "q=remera+algodon"},
		{"one_word_frequent", "q=rojo"},
		{"one_word_every_item", "q=remera"},
		{"one_word_every_item_price_desc", "q=remera&sort=price_desc"},
		{"one_word_every_item_offset_1000", "q=remera&offset=1000"},
		{"empty_query_price_asc", "sort=price_asc"},
	} {
		path := "/sites/MLA/search?" + q.query
		get := func(int) *http.Request {
			r := httptest.NewRequest("GET", path, nil)
			r.Header.Set("Authorization", "Bearer "+seller.Token)
			return r
		}
		rec := httptest.NewRecorder()
		ts.handler.ServeHTTP(rec, get(0))
		baseline := bare("GET", "/sites/:site_id/search", rec.Body.Bytes(), "")
		b.Run(q.name+"/bare", func(b *testing.B) { serveLoop(b, baseline, get) })
		b.Run(q.name+"/api", func(b *testing.B) { serveLoop(b, ts.handler, get) })
	}
}
