package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/matryer/is"
)

func TestConsole_PageAndAssetsAreServedWithoutATokenAndWithoutExternalSources(t *testing.T) {
	ts := newTestServer(t)
	for _, c := range []struct{ path, contentType, contains string }{
		{"/console", "text/html; charset=utf-8", `<script src="/console/console.js"`},
		{"/console/", "text/html; charset=utf-8", `<title>Marketplace console</title>`},
		{"/console/index.html", "text/html; charset=utf-8", `id="signin-form"`},
		{"/console/console.js", "text/javascript; charset=utf-8", `sessionStorage`},
		{"/console/console.css", "text/css; charset=utf-8", `body {`},
	} {
		t.Run(c.path, func(t *testing.T) {
			is := is.New(t)
			res := ts.page(c.path)
			is.Equal(res.Code, http.StatusOK)
			is.Equal(res.Header().Get("Content-Type"), c.contentType)
			body := res.Body.String()
			is.True(strings.Contains(body, c.contains))
			csp := res.Header().Get("Content-Security-Policy")
			is.True(strings.HasPrefix(csp, "default-src 'self';"))                             // the page reaches its own server only
			is.True(!strings.Contains(body, "http://") && !strings.Contains(body, "https://")) // no external source
		})
	}
}

func TestConsole_OrdersScreenAndItemStatusAreInTheServedAssets(t *testing.T) {
	ts := newTestServer(t)
	for _, c := range []struct {
		path     string
		contains []string
	}{
		// The page: the tab, the seller's pick list, the purchase form
		// with its pick lists, the orders table and the items' sold column.
		{"/console/index.html", []string{`data-screen="orders"`, `id="screen-orders"`, `<select id="orders-seller"`,
			`id="purchase-form"`, `<select id="purchase-buyer"`, `<select id="purchase-item"`, `id="purchase-quantity"`,
			`<select id="purchase-store"`, `<option>payment_required</option>`, `id="orders-table"`, `<th>Sold</th>`}},
		// The script: the routes it calls and the item fields it shows.
		{"/console/console.js", []string{"screens.orders", `"/operator/orders?"`, `"/operator/orders"`, "/payments`",
			"/cancel`", "/operator/shipments/${id}/status`", `"/shipment_statuses"`, `"allowed_next_status"`,
			"it.sold_quantity", "it.sub_status"}},
	} {
		t.Run(c.path, func(t *testing.T) {
			res := ts.page(c.path)
			if res.Code != http.StatusOK {
				t.Fatalf("status %d", res.Code)
			}
			body := res.Body.String()
			for _, want := range c.contains {
				if !strings.Contains(body, want) {
					t.Errorf("%s lacks %s", c.path, want)
				}
			}
		})
	}
}

func TestConsole_UnknownAssetGetsTheErrorBody(t *testing.T) {
	ts := newTestServer(t)
	wantError(t, ts.do("GET", "/console/nope.js", "", nil), http.StatusNotFound, "Resource GET /console/nope.js not found")
	wantError(t, ts.do("GET", "/console/../go.mod", "", nil), http.StatusNotFound, "")
	wantError(t, ts.do("POST", "/console", "", nil), http.StatusMethodNotAllowed, "Method POST not allowed on /console")
}

func TestConsole_IsNotAnAPIRouteAndIsNeverFaulted(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	// A rule on every route leaves the console alone, so that the page
	// that removes faults always loads.
	res := ts.operator("POST", "/operator/faults", map[string]any{"status": 503})
	is.Equal(res.Status, http.StatusCreated)
	is.Equal(ts.do("GET", "/users/1", "", nil).Status, http.StatusServiceUnavailable) // the rule acts on the API
	is.Equal(ts.page("/console").Code, http.StatusOK)
	is.Equal(ts.page("/console/console.js").Code, http.StatusOK)
}

func TestFavicon_IsAnsweredWith204AndNotJournaled(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	for range 3 {
		is.Equal(ts.page("/favicon.ico").Code, http.StatusNoContent) // no icon, no 404
	}
	is.Equal(ts.do("GET", "/sites", "", nil).Status, http.StatusOK)
	res := ts.operator("GET", "/operator/requests", nil)
	is.Equal(res.Status, http.StatusOK)
	var got struct {
		Results []struct{ Path string } `json:"results"`
	}
	is.NoErr(json.Unmarshal(res.Raw, &got))
	is.Equal(len(got.Results), 1)           // only the API request
	is.Equal(got.Results[0].Path, "/sites") // the favicon left no entry
}

// page gets path without a token and keeps the answer as it is: the
// console's answers are not JSON.
func (ts *testServer) page(path string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	ts.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec
}
