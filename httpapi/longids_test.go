package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/httpapi"
	"github.com/marketplace/marketplace/internal/pgtest"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/badger"
	"github.com/marketplace/marketplace/storage/memory"
	"github.com/marketplace/marketplace/storage/postgres"
)

// longIDLengths are the lengths of the ids sent: short ones, one beyond
// the 256 bytes of a path id, both sides of PostgreSQL's key cap (2,048 bytes
// with the key's prefix), and up to 60,000 bytes, near Badger's 65,000.
var longIDLengths = []int{1, 10, 100, 300, 1000, 2047, 2048, 2049, 2100, 4096, 10000, 60000}

// longIDForms make an id of a given length: digits (a numeric id, or the
// number of a site-prefixed one), letters, and the shape of an item id.
var longIDForms = []struct {
	name string
	make func(n int) string
}{
	{"digits", func(n int) string { return strings.Repeat("7", n) }},
	{"letters", func(n int) string { return strings.Repeat("x", n) }},
	{"site-prefixed", func(n int) string {
		if n <= 3 {
			return "MLA"[:n]
		}
		return "MLA" + strings.Repeat("1", n-3)
	}},
}

// maxRequestLogLine bounds the request log line, whatever the path's length.
const maxRequestLogLine = 1024

// lineLog records every line of a server's log with its formatted length.
type lineLog struct {
	mu    sync.Mutex
	lines []logLine
}

type logLine struct {
	level slog.Level
	msg   string
	text  string
}

func (l *lineLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *lineLog) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *lineLog) WithGroup(string) slog.Handler            { return l }
func (l *lineLog) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "level=%s msg=%s", r.Level, r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	l.mu.Lock()
	l.lines = append(l.lines, logLine{level: r.Level, msg: r.Message, text: b.String()})
	l.mu.Unlock()
	return nil
}

func (l *lineLog) take() []logLine {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.lines
	l.lines = nil
	return out
}

// longIDWorld is a server with one of everything the routes name: a seller
// with stores, items of both kinds, a buyer, a question, a sale and an
// application, so that every parameter but the long one names something
// that exists.
type longIDWorld struct {
	*testServer
	log    *lineLog
	seller user
	buyer  user
	// valid is a value of each path parameter that names something of
	// the world (or at least has the parameter's format).
	valid map[string]string
	// lengths are the lengths of the ids sent (longIDLengths).
	lengths []int
}

func newLongIDWorld(t *testing.T, st storage.Store) *longIDWorld {
	t.Helper()
	clk := clock.NewManual(testStart)
	m, err := marketplace.New(st, marketplace.Options{Clock: clk})
	if err != nil {
		t.Fatalf("new marketplace: %v", err)
	}
	t.Cleanup(func() { _ = m.Close() })
	log := &lineLog{}
	// The answers are not checked against the OpenAPI document here: ten
	// thousand answers of up to 60 KB took the validator most of a minute,
	// and the robustness tests check answers of every route against it.
	h := httpapi.New(m, httpapi.Config{OperatorToken: testOperatorToken, ManualClock: clk, Logger: slog.New(log)})
	w := &longIDWorld{testServer: &testServer{t: t, m: m, clock: clk, handler: h}, log: log, lengths: longIDLengths}
	seller, stores := w.mustSeller(2)
	w.seller = seller
	w.buyer = w.mustUser("MLA", "normal")
	item, up := w.mustMultiItem(seller.Token, stores[0], 5, stores[1], 4)
	plain := w.mustPlainItem(w.mustUser("MLA", "normal").Token, "Mate de calabaza", 900, 5)
	res := w.do("POST", "/questions", w.buyer.Token, map[string]any{"text": "Is it cured?", "item_id": plain})
	if res.Status != http.StatusCreated {
		t.Fatalf("ask: %d %s", res.Status, res.Raw)
	}
	question := idString(res.Obj()["id"])
	sale := w.mustSale(map[string]any{"buyer_id": w.buyer.ID, "item_id": plain, "quantity": 1})
	app := idString(w.mustApplication(seller.ID, "https://example.com/cb")["id"])
	w.valid = map[string]string{
		"user_id": fmt.Sprint(seller.ID), "blocked_id": fmt.Sprint(w.buyer.ID),
		"item_id": item, "user_product_id": up, "site_id": "MLA",
		"order_id": sale.id, "pack_id": sale.pack, "shipment_id": sale.shipment,
		"question_id": question, "listing_type_id": "gold_special",
		"country_id": "AR", "state_id": "AR-C", "city_id": "TUxBQ0NBUGZlZG1sYQ", "currency_id": "ARS", "zip_code": "1000",
		"domain_id": "MLA-CELLPHONES", "product_id": "MLA15149561", "category_id": "MLA1055",
		"app_id": app, "delivery_id": "1", "fault_id": "1", "stub_id": "5c7c6a1e-2a4b-4c1d-9f0e-1a2b3c4d5e6f", "snapshot_id": "1",
		"store_id": stores[0],
		// After the sale: ids of the right form that name nothing, so
		// that a route answers its 404 for them as for a long one.
		"message_id": "fd1d2e37ad004ede9e0bf25d1215002d", "attachment_id": "1_5946e4c4-168a-45fd-945e-b8f0c306c58d.png",
		"message_ids": "fd1d2e37ad004ede9e0bf25d1215002d", "claim_id": "5000000001", "return_id": "57000001",
		"reason_id": "PDD9549", "filename": "1_7ed98ebb-03f7-4818-943b-8b4d12a3aaa7.jpg", "file_name": "1_abc.png",
		"feedback_id": "5040000000001", "side": "sale", "note_id": "681bace17c69893ae6558c52",
	}
	w.log.take()
	return w
}

// longIDRequest is one request of the test; key names it the same way on
// every backend.
type longIDRequest struct {
	key          string
	method, path string
	token        string
	body         string
	// pathID is set when the long id is in the path, where the route
	// must answer 404 or 400 once the id is longer than any id.
	pathID bool
	length int
}

// longIDQueries are the query parameters that carry ids, by route; {id} is
// the long id.
var longIDQueries = map[string][]string{
	"GET /items":                                          {"ids={id}", "ids=MLA1,{id}"},
	"GET /users":                                          {"ids={id}"},
	"GET /questions/:question_id":                         {"api_version=4&item={id}", "api_version=4&seller_id={id}", "api_version=4&item_id={id}"},
	"GET /orders/:order_id":                               {"seller={seller}&item={id}", "buyer={id}", "seller={id}"},
	"GET /operator/orders":                                {"seller={id}", "item={id}", "buyer={id}"},
	"GET /operator/items":                                 {"seller_id={id}"},
	"GET /operator/applications":                          {"owner_user_id={id}"},
	"GET /operator/users/:user_id/stores":                 {"tags={id}"},
	"GET /users/:user_id/items/search":                    {"sku={id}", "seller_sku={id}", "listing_type_id={id}", "status={id}"},
	"GET /users/:user_id/stores/search":                   {"tags={id}"},
	"GET /sites/:site_id/search":                          {"q={id}"},
	"GET /sites/:site_id/listing_prices":                  {"price=10&listing_type_id={id}", "price=10&category_id={id}", "price=10&currency_id={id}"},
	"GET /sites/:site_id/listing_prices/:listing_type_id": {"price=10&category_id={id}", "price=10&currency_id={id}"},
	"GET /currency_conversions/search":                    {"from={id}&to=ARS", "from=ARS&to={id}"},
	"GET /country/:country_id/zip_codes/search_between":   {"zip_code_from={id}&zip_code_to=9999", "zip_code_from=1000&zip_code_to={id}"},
	"GET /missed_feeds":                                   {"app_id={id}"},
	"GET /operator/requests":                              {"user_id={id}", "route={id}"},
	"GET /authorization":                                  {"response_type=code&client_id={id}&redirect_uri=https://example.com/cb"},
}

// longIDBodies are request bodies that carry ids, by route; "{id}" is the
// long id as a JSON string and {num} as a JSON number (a number no Go
// integer holds, for the ids the API writes as numbers).
var longIDBodies = map[string][]string{
	"POST /operator/users":                 {`{"nickname":"LONGID","site_id":"{id}","first_name":"a","last_name":"b"}`, `{"nickname":"LONGID","site_id":"MLA","country_id":"{id}","first_name":"a","last_name":"b"}`},
	"POST /operator/users/:user_id/stores": {`{"id":"{id}","description":"d","tags":["stock_location"]}`, `{"description":"d","network_node_id":"{id}"}`},
	"POST /operator/tokens/revoke":         {`{"access_token":"{id}"}`},
	"PUT /operator/users/:user_id/tags":    {`{"tags":["{id}"]}`},
	"PUT /operator/reference": {`{"records":[{"kind":"currency","data":{"id":"{id}","symbol":"Z","description":"Zed","decimal_places":2}}]}`,
		`{"records":[{"kind":"category","data":{"id":"{id}","name":"Fundas","parent_id":"MLA1055"}}]}`,
		`{"records":[{"kind":"category","data":{"id":"MLA999001","name":"Fundas","parent_id":"{id}"}}]}`},
	"POST /items": {`{"title":"Mate","category_id":"{id}","price":10,"listing_type_id":"gold_special","currency_id":"ARS","available_quantity":1}`,
		`{"title":"Mate","category_id":"MLA1055","price":10,"listing_type_id":"{id}","currency_id":"ARS","available_quantity":1}`,
		`{"title":"Mate","category_id":"MLA1055","price":10,"listing_type_id":"gold_special","currency_id":"{id}","available_quantity":1}`,
		`{"title":"Mate","category_id":"MLA1055","price":10,"listing_type_id":"gold_special","currency_id":"ARS","available_quantity":1,"catalog_product_id":"{id}"}`},
	"POST /items/:item_id": {`{"title":"Mate","category_id":"MLA1055","price":10,"listing_type_id":"gold_special","currency_id":"ARS","stock_locations":[{"store_id":"{id}","quantity":1}]}`,
		`{"title":"Mate","category_id":"MLA1055","price":10,"listing_type_id":"gold_special","currency_id":"ARS","user_product_id":"{id}","stock_locations":[{"store_id":"{store}","quantity":1}]}`,
		`{"title":"Mate","category_id":"MLA1055","price":10,"listing_type_id":"gold_special","currency_id":"ARS","stock_locations":[{"network_node_id":"{id}","quantity":1}]}`},
	"PUT /items/:item_id": {`{"title":"Mate nuevo"}`, `{"status":"{id}"}`},
	"POST /items/:item_id/relist": {`{"price":10,"quantity":1,"listing_type_id":"{id}"}`,
		`{"price":10,"listing_type_id":"gold_special","stock_locations":[{"store_id":"{id}","quantity":1}]}`},
	"PUT /user-products/:user_product_id/stock/type/seller_warehouse": {`{"locations":[{"store_id":"{id}","quantity":1}]}`,
		`{"locations":[{"network_node_id":"{id}","quantity":1}]}`, `{"locations":[{"store_id":"{store}","quantity":1}]}`},
	"POST /operator/orders": {`{"buyer_id":{buyer},"item_id":"{id}","quantity":1}`, `{"buyer_id":{num},"item_id":"MLA1","quantity":1}`,
		`{"buyer_id":{buyer},"item_id":"{item}","quantity":1,"store_id":"{id}"}`},
	"POST /operator/orders/:order_id/payments":    {`{"status":"approved"}`},
	"PUT /operator/shipments/:shipment_id/status": {`{"status":"shipped"}`},
	"POST /questions":                          {`{"text":"Is it new?","item_id":"{id}"}`},
	"POST /answers":                            {`{"question_id":{num},"text":"Yes"}`, `{"question_id":"{id}","text":"Yes"}`},
	"POST /my/questions/hidden":                {`{"question_ids":[{num}]}`},
	"PUT /operator/questions/:question_id":     {`{"status":"ACTIVE"}`},
	"POST /users/:user_id/questions_blacklist": {`{"user_id":{num}}`, `{"user_id":"{id}"}`},
	"POST /operator/applications":              {`{"name":"a","owner_user_id":{num},"callback_url":"https://example.com/x","topics":["questions"]}`},
	"PUT /operator/applications/:app_id":       {`{"callback_url":"https://example.com/y","topics":["questions"]}`},
	"POST /operator/authorizations":            {`{"client_id":"{id}","user_id":{seller},"redirect_uri":"https://example.com/cb"}`, `{"client_id":"{app}","user_id":{num},"redirect_uri":"https://example.com/cb"}`},
	"POST /oauth/token": {`{"grant_type":"authorization_code","client_id":"{id}","client_secret":"x","code":"x","redirect_uri":"https://example.com/cb"}`,
		`{"grant_type":"authorization_code","client_id":"{app}","client_secret":"x","code":"{id}","redirect_uri":"https://example.com/cb"}`,
		`{"grant_type":"refresh_token","client_id":"{app}","client_secret":"x","refresh_token":"{id}"}`},
	"POST /users/:user_id":          {`{"site_id":"{id}"}`},
	"POST /operator/requests/count": {`{"user_id":{num}}`},
	"POST /operator/requests/find":  {`{"user_id":{num}}`},
}

// requests builds every request of the test for one route.
func (w *longIDWorld) requests(t *testing.T, rt httpapi.Route) []longIDRequest {
	t.Helper()
	routeKey := rt.Method + " " + rt.Path
	tokens := []struct{ name, token string }{{"anonymous", ""}, {"seller", w.seller.Token}}
	if strings.HasPrefix(rt.Path, "/operator/") {
		tokens[1] = struct{ name, token string }{"operator", testOperatorToken}
	}
	fill := func(s, id string) string {
		return strings.NewReplacer("{id}", id, "{num}", digitsOf(id), "{seller}", w.valid["user_id"], "{buyer}", fmt.Sprint(w.buyer.ID),
			"{store}", w.valid["store_id"], "{item}", w.valid["item_id"], "{app}", w.valid["app_id"]).Replace(s)
	}
	pathWith := func(param, id string) string {
		segs := strings.Split(rt.Path, "/")
		for i, s := range segs {
			if name, ok := strings.CutPrefix(s, ":"); ok {
				v, known := w.valid[name]
				if !known {
					t.Fatalf("%s: no value for the path parameter %s: add one to the world", routeKey, name)
				}
				if name == param {
					v = id
				}
				segs[i] = v
			}
		}
		return strings.Join(segs, "/")
	}
	var params []string
	for _, s := range strings.Split(rt.Path, "/") {
		if name, ok := strings.CutPrefix(s, ":"); ok {
			params = append(params, name)
		}
	}
	bodies := longIDBodies[routeKey]
	plainBody := ""
	if len(bodies) > 0 {
		// The long id in the path, with a body the route would accept
		// around it.
		plainBody = fill(bodies[0], "x")
	} else if rt.Method == http.MethodPost || rt.Method == http.MethodPut {
		plainBody = "{}"
	}
	var out []longIDRequest
	for _, n := range w.lengths {
		for _, form := range longIDForms {
			id := form.make(n)
			for _, tok := range tokens {
				add := func(variant, path, body string, pathID bool) {
					out = append(out, longIDRequest{
						key:    fmt.Sprintf("%s %s [%s] %s %d %s", rt.Method, rt.Path, variant, form.name, n, tok.name),
						method: rt.Method, path: path, token: tok.token, body: body, pathID: pathID, length: n,
					})
				}
				for _, p := range params {
					add("path "+p, pathWith(p, id), plainBody, true)
				}
				for i, q := range longIDQueries[routeKey] {
					add(fmt.Sprintf("query %d", i), pathWith("", "")+"?"+fill(q, id), plainBody, false)
				}
				for i, b := range bodies {
					add(fmt.Sprintf("body %d", i), pathWith("", ""), fill(b, id), false)
				}
			}
		}
	}
	return out
}

// digitsOf is id as a JSON number: its digits, or 1 followed by as many
// zeros as it has bytes.
func digitsOf(id string) string {
	if strings.Trim(id, "0123456789") == "" && id != "" && id[0] != '0' {
		return id
	}
	return "1" + strings.Repeat("0", len(id)-1)
}

// longIDAnswer is what a request was answered, compared across backends.
type longIDAnswer struct {
	status int
	code   string
}

// serveLongIDs sends every request of every route of the route table to w
// and checks each answer; it returns the answers by request key.
func serveLongIDs(t *testing.T, w *longIDWorld, routes []httpapi.Route) map[string]longIDAnswer {
	t.Helper()
	answers := map[string]longIDAnswer{}
	// A failure is reported once per route, place of the id and kind of
	// failure, with the number of requests it met.
	type failure struct {
		first string
		n     int
	}
	failures := map[string]*failure{}
	var order []string
	var kind, place string
	fail := func(format string, args ...any) {
		k := place + " " + kind
		if f := failures[k]; f != nil {
			f.n++
			return
		}
		failures[k] = &failure{first: fmt.Sprintf(format, args...), n: 1}
		order = append(order, k)
	}
	for _, rt := range routes {
		for _, req := range w.requests(t, rt) {
			place, _, _ = strings.Cut(req.key, "]")
			r := httptest.NewRequest(req.method, req.path, strings.NewReader(req.body))
			if req.token != "" {
				r.Header.Set("Authorization", "Bearer "+req.token)
			}
			if req.body != "" {
				r.Header.Set("Content-Type", "application/json")
			}
			rec := httptest.NewRecorder()
			w.handler.ServeHTTP(rec, r)
			if err := checkAnswer(rec, &errorLog{}); err != nil {
				kind = "answer"
				fail("%s: %v", req.key, shorten(err.Error()))
			}
			for _, l := range w.log.take() {
				switch {
				case l.level >= slog.LevelError:
					kind = "error logged"
					fail("%s: logged %s", req.key, shorten(l.text))
				case l.msg == "request" && len(l.text) > maxRequestLogLine:
					kind = "log line"
					fail("%s: a request log line of %d bytes, more than %d: %s", req.key, len(l.text), maxRequestLogLine, shorten(l.text))
				}
			}
			var body struct{ Error string }
			_ = json.Unmarshal(rec.Body.Bytes(), &body)
			answers[req.key] = longIDAnswer{status: rec.Code, code: body.Error}
			// Longer than any id the API hands out or accepts (geo ids have
			// at most 64 bytes, domain names 120): the id names nothing.
			if req.pathID && req.token != "" && req.length >= 1000 && rec.Code != http.StatusNotFound && rec.Code != http.StatusBadRequest {
				kind = "status"
				fail("%s: status %d, want 404 or 400 for an id of %d bytes: %s", req.key, rec.Code, req.length, shorten(rec.Body.String()))
			}
		}
	}
	for _, k := range order {
		f := failures[k]
		t.Errorf("%s (%d requests like it)", f.first, f.n)
	}
	return answers
}

// shorten keeps the start of a long text for a failure message.
func shorten(s string) string {
	if len(s) > 300 {
		return fmt.Sprintf("%s... (%d bytes)", s[:300], len(s))
	}
	return s
}

// TestLongIDs_EveryRouteAnswers404Or400OnEveryBackendWithABoundedLogLine
// sends ids of every length, from 1 byte to 60,000, digits, letters and
// site-prefixed, in each path parameter of every route of the route table,
// in the query parameters and body fields that carry ids, anonymously and
// with the token the route needs, on memory, Badger and PostgreSQL. No
// answer is a 5xx or logs an error; every error is in the error shape; an
// id of 1,000 bytes or more in the path is a 404 or a 400; each request's
// log line stays under 1 KiB; and every backend answers every request with
// the same status and error code as memory. (PostgreSQL refused keys over
// 2,048 bytes with an error, so such an id was a 500 there.)
func TestLongIDs_EveryRouteAnswers404Or400OnEveryBackendWithABoundedLogLine(t *testing.T) {
	backends := []struct {
		name string
		open func(t *testing.T) storage.Store
	}{
		{"memory", func(*testing.T) storage.Store { return memory.New() }},
		{"badger", func(t *testing.T) storage.Store {
			st, err := badger.Open(t.TempDir(), badger.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return st
		}},
		{"postgres", func(t *testing.T) storage.Store {
			// Skipped with one line where PostgreSQL is not installed,
			// failed under CI=true (pgtest).
			url := pgtest.Start(t).NewDatabase(t)
			st, err := postgres.Open(context.Background(), url, postgres.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return st
		}},
	}
	lengths := longIDLengths
	if testing.Short() {
		lengths = []int{1, 2049, 60000}
	}
	var want map[string]longIDAnswer
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			w := newLongIDWorld(t, b.open(t))
			w.lengths = lengths
			routes := w.handler.(*httpapi.Server).Routes()
			checkLongIDTables(t, routes)
			got := serveLongIDs(t, w, routes)
			if want == nil {
				want = got
				return
			}
			differ := 0
			for key, a := range want {
				if g, ok := got[key]; ok && g != a {
					if differ++; differ <= 20 {
						t.Errorf("%s: %d %s on %s, %d %s on memory", key, g.status, g.code, b.name, a.status, a.code)
					}
				}
			}
			if differ > 20 {
				t.Errorf("... and %d more answers differ from memory's", differ-20)
			}
		})
	}
}

// checkLongIDTables fails when the query or body tables name a route that
// the route table does not hold, so that a renamed route is not silently
// left out.
func checkLongIDTables(t *testing.T, routes []httpapi.Route) {
	t.Helper()
	known := map[string]bool{}
	for _, rt := range routes {
		known[rt.Method+" "+rt.Path] = true
	}
	for _, table := range []map[string][]string{longIDQueries, longIDBodies} {
		for key := range table {
			if !known[key] {
				t.Errorf("%s is in the long-id tables but not in the route table", key)
			}
		}
	}
}

// TestLongIDs_AnOverlongPathIDIsA404ThatDoesNotQuoteItAndTheLogLineSaysWhatWasCut:
// an id of a record longer than any id is answered 404 without the id in
// the answer, after authentication (anonymous on a user's route is still a
// 401); a number that long stays its route's 400; and the request log line
// keeps the start of the path with the number of bytes left out.
func TestLongIDs_AnOverlongPathIDIsA404ThatDoesNotQuoteItAndTheLogLineSaysWhatWasCut(t *testing.T) {
	w := newLongIDWorld(t, memory.New())
	id := "MLA" + strings.Repeat("1", 60000)

	res := w.do("GET", "/items/"+id, "", nil)
	wantError(t, res, http.StatusNotFound, "Resource not found: the item_id has 60003 bytes, and no id has more than 256")
	if res.Obj()["error"] != "not_found" || len(res.Raw) > 300 {
		t.Fatalf("answer of %d bytes: %.300s", len(res.Raw), res.Raw)
	}
	var line string
	for _, l := range w.log.take() {
		if l.msg == "request" {
			line = l.text
		}
	}
	wantPath := "path=/items/" + id[:256-len("/items/")] + "...(59754 more bytes) "
	if !strings.Contains(line, wantPath) {
		t.Fatalf("request log line %q; want it to hold %q", shorten(line), shorten(wantPath))
	}

	// At the edge of the bound the route's own answer, which quotes the id.
	edge := "MLA" + strings.Repeat("1", 253)
	wantError(t, w.do("GET", "/items/"+edge, "", nil), http.StatusNotFound, "Item with id "+edge+" not found")

	wantError(t, w.do("GET", "/user-products/"+id+"/stock", "", nil), http.StatusUnauthorized, "")
	wantError(t, w.do("GET", "/user-products/"+id+"/stock", w.seller.Token, nil), http.StatusNotFound,
		"Resource not found: the user_product_id has 60003 bytes, and no id has more than 256")
	wantError(t, w.do("GET", "/users/"+strings.Repeat("7", 60000), "", nil), http.StatusBadRequest, "")
}
