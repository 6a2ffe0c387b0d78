package drift_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/marketplace/marketplace/drift"
	"github.com/marketplace/marketplace/marketplacetest"
)

// recorded is one exchange as a test records it from the engine.
type recorded struct {
	Method, Path string
	Status       int
	ContentType  string
	Body         string
}

// exchange sends one request to srv and records it.
func exchange(t *testing.T, srv *marketplacetest.Server, token, method, path string, body any) recorded {
	t.Helper()
	res, err := srv.Client(token).Do(context.Background(), method, path, body)
	if err != nil {
		t.Fatal(err)
	}
	return recorded{Method: method, Path: path, Status: res.Status, ContentType: res.Header.Get("Content-Type"), Body: string(res.Body)}
}

// engineExchanges drives the engine through the public routes a client
// uses most, answers and errors both.
func engineExchanges(t *testing.T) []recorded {
	srv := marketplacetest.NewServer(t)
	seller, buyer := srv.Seller.Token, srv.Buyer.Token
	var out []recorded
	add := func(r recorded) recorded {
		out = append(out, r)
		return r
	}
	item := add(exchange(t, srv, seller, "POST", "/items/multiwarehouse", map[string]any{
		"title": "Red mug", "category_id": "MLA1055", "price": 1500, "currency_id": "ARS", "listing_type_id": "gold_special",
		"stock_locations": []map[string]any{{"store_id": srv.Seller.Stores[0].ID, "quantity": 4}}}))
	if item.Status != 201 {
		t.Fatalf("publish: %d %s", item.Status, item.Body)
	}
	var it struct {
		ID            string `json:"id"`
		UserProductID string `json:"user_product_id"`
	}
	if err := json.Unmarshal([]byte(item.Body), &it); err != nil {
		t.Fatal(err)
	}
	add(exchange(t, srv, "", "GET", "/items/"+it.ID, nil))
	add(exchange(t, srv, "", "GET", "/items/MLA999", nil))
	add(exchange(t, srv, seller, "GET", "/user-products/"+it.UserProductID+"/stock", nil))
	add(exchange(t, srv, "", "GET", "/sites/MLA/search?q=mug", nil))
	add(exchange(t, srv, "", "GET", "/users/"+fmt.Sprint(srv.Seller.ID), nil))
	add(exchange(t, srv, "", "GET", "/sites/MLA/listing_prices?price=1500", nil))
	add(exchange(t, srv, "", "GET", "/sites/MLX/listing_prices?price=1500", nil))
	add(exchange(t, srv, buyer, "POST", "/questions", map[string]any{"text": "Does it come in blue?", "item_id": it.ID}))
	add(exchange(t, srv, "", "GET", "/questions/search?item="+it.ID, nil))
	add(exchange(t, srv, "", "GET", "/questions/search", nil))
	add(exchange(t, srv, "bad-token", "GET", "/users/me", nil))
	add(exchange(t, srv, "", "GET", "/classified_locations/countries/AR", nil))
	add(exchange(t, srv, "", "GET", "/currencies/ARS", nil))
	return out
}

func jsonBody(r recorded) bool { return strings.Contains(r.ContentType, "json") }

// writeMappings writes each exchange as a WireMock mapping file under
// dir/mappings, the JSON bodies inline and the others in dir/__files, as
// WireMock's recorder lays them out.
func writeMappings(t *testing.T, dir string, rs []recorded) {
	t.Helper()
	for _, sub := range []string{"mappings", "__files"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i, r := range rs {
		resp := map[string]any{"status": r.Status, "headers": map[string]string{"Content-Type": r.ContentType}}
		if jsonBody(r) && i%2 == 0 {
			resp["jsonBody"] = json.RawMessage(r.Body)
		} else {
			name := fmt.Sprintf("body-%d.json", i)
			mustWrite(t, filepath.Join(dir, "__files", name), r.Body)
			resp["bodyFileName"] = name
		}
		m := map[string]any{"id": fmt.Sprintf("00000000-0000-0000-0000-%012d", i), "persistent": true, "insertionIndex": i,
			"request": map[string]any{"url": r.Path, "method": r.Method}, "response": resp}
		mustWrite(t, filepath.Join(dir, "mappings", fmt.Sprintf("m-%03d.json", i)), string(mustJSON(t, m)))
	}
}

// mappingList is the exchanges as one {"mappings": [...]} document, the
// shape of WireMock's GET /__admin/mappings.
func mappingList(t *testing.T, rs []recorded) string {
	t.Helper()
	var ms []any
	for _, r := range rs {
		ms = append(ms, map[string]any{"request": map[string]any{"urlPath": strings.Split(r.Path, "?")[0], "method": r.Method},
			"response": map[string]any{"status": r.Status, "body": r.Body, "headers": map[string]any{"Content-Type": []string{r.ContentType}}}})
	}
	return string(mustJSON(t, map[string]any{"mappings": ms, "meta": map[string]any{"total": len(ms)}}))
}

// har is the exchanges as a HAR 1.2 log, as a browser exports it.
func har(t *testing.T, rs []recorded) string {
	t.Helper()
	var es []any
	for _, r := range rs {
		es = append(es, map[string]any{
			"startedDateTime": "2026-03-04T12:00:00.000Z", "time": 12,
			"request": map[string]any{"method": r.Method, "url": "https://api.mercadolibre.com" + r.Path, "httpVersion": "HTTP/1.1",
				"headers": []any{}, "queryString": []any{}, "cookies": []any{}, "headersSize": -1, "bodySize": 0},
			"response": map[string]any{"status": r.Status, "statusText": "", "httpVersion": "HTTP/1.1", "cookies": []any{},
				"headers": []any{map[string]string{"name": "content-type", "value": r.ContentType}},
				"content": map[string]any{"size": len(r.Body), "mimeType": r.ContentType, "text": r.Body}, "redirectURL": "", "headersSize": -1, "bodySize": len(r.Body)},
			"cache": map[string]any{}, "timings": map[string]any{"send": 0, "wait": 10, "receive": 2},
		})
	}
	return string(mustJSON(t, map[string]any{"log": map[string]any{"version": "1.2", "creator": map[string]any{"name": "test", "version": "1"},
		"pages": []any{}, "entries": es}}))
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func run(t *testing.T, paths ...string) *drift.Report {
	t.Helper()
	c, err := drift.Engine()
	if err != nil {
		t.Fatal(err)
	}
	tl := drift.NewTally(c)
	tl.Read(paths...)
	return tl.Report()
}

func text(t *testing.T, r *drift.Report) string {
	t.Helper()
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestDrift_TheEnginesOwnExchangesDoNotDrift(t *testing.T) {
	rs := engineExchanges(t)
	dir := t.TempDir()
	writeMappings(t, filepath.Join(dir, "wiremock"), rs)
	mustWrite(t, filepath.Join(dir, "list.json"), mappingList(t, rs))
	mustWrite(t, filepath.Join(dir, "browser.har"), har(t, rs))

	r := run(t, dir)
	if r.Drifted() || len(r.Unread) > 0 || len(r.Skipped) > 0 {
		t.Fatalf("the engine's own exchanges drift:\n%s", text(t, r))
	}
	if want := 3 * len(rs); r.Exchanges != want || r.Emulated != want {
		t.Errorf("exchanges %d, emulated %d; want %d of each:\n%s", r.Exchanges, r.Emulated, want, text(t, r))
	}
	if r.Files != len(rs)+2 {
		t.Errorf("files %d, want %d (the mappings, the list, the HAR file; not the bodies in __files)", r.Files, len(rs)+2)
	}
}

// seed returns a copy of the JSON object body with change applied.
func seed(t *testing.T, body string, change func(map[string]any)) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatal(err)
	}
	change(m)
	return string(mustJSON(t, m))
}

func TestDrift_EachSeededDifferenceIsReportedAtItsRouteAndPath(t *testing.T) {
	rs := engineExchanges(t)
	find := func(method, prefix string, status int) recorded {
		for _, r := range rs {
			if r.Method == method && strings.HasPrefix(r.Path, prefix) && r.Status == status {
				return r
			}
		}
		t.Fatalf("no exchange %s %s %d", method, prefix, status)
		return recorded{}
	}
	item := find("GET", "/items/MLA1", 200)
	missing := find("GET", "/items/MLA999", 404)
	user := find("GET", "/users/", 200)
	for _, tc := range []struct {
		name       string
		ex         recorded
		route      string
		status     int
		kind       drift.Kind
		path       string
		wantInText string
	}{
		{"an extra field", with(item, seed(t, item.Body, func(m map[string]any) { m["shipping"] = map[string]any{"logistic_type": "fulfillment"} })),
			"GET /items/{item_id}", 200, drift.Extra, "$.shipping", "$.shipping: a field ours never sends"},
		{"an extra field in an object", with(user, seed(t, user.Body, func(m map[string]any) { m["address"] = map[string]any{"city": "x"} })),
			"GET /users/{user_id}", 200, drift.Extra, "$.address", "$.address: a field ours never sends"},
		{"a changed type", with(item, seed(t, item.Body, func(m map[string]any) { m["price"] = "1500.00" })),
			"GET /items/{item_id}", 200, drift.Type, "$.price", "$.price: the type is string, ours number"},
		{"a changed type in an array", with(item, seed(t, item.Body, func(m map[string]any) { m["channels"] = []any{1} })),
			"GET /items/{item_id}", 200, drift.Type, "$.channels[*]", "$.channels[*]: the type is integer, ours string"},
		{"a missing required field", with(user, seed(t, user.Body, func(m map[string]any) { delete(m, "nickname") })),
			"GET /users/{user_id}", 200, drift.Missing, "$.nickname", "$.nickname: a required field is missing"},
		{"an undocumented status", recorded{Method: "GET", Path: item.Path, Status: 418, ContentType: "application/json", Body: `{}`},
			"GET /items/{item_id}", 418, drift.Status, "", "418 status: a status the route never answers"},
		{"another error code", with(missing, seed(t, missing.Body, func(m map[string]any) { m["error"] = "item_not_found" })),
			"GET /items/{item_id}", 404, drift.ErrorCode, "$.error", `$.error: the error code "item_not_found" is not ours for this status (ours: not_found)`},
		{"another message", with(missing, seed(t, missing.Body, func(m map[string]any) { m["message"] = "Item MLA999 not found" })),
			"GET /items/{item_id}", 404, drift.ErrorMessage, "$.message", `$.message: the message "Item MLA999 not found" is none of ours`},
	} {
		for _, format := range []string{"mapping", "har"} {
			t.Run(tc.name+" in a "+format, func(t *testing.T) {
				dir := t.TempDir()
				// The exchange among the engine's own, which do not drift.
				all := append(append([]recorded(nil), rs...), tc.ex)
				if format == "har" {
					mustWrite(t, filepath.Join(dir, "recording.har"), har(t, all))
				} else {
					writeMappings(t, dir, all)
				}
				r := run(t, dir)
				if !r.Drifted() || r.Differing != 1 {
					t.Fatalf("differing %d, want 1:\n%s", r.Differing, text(t, r))
				}
				var got []string
				found := false
				for _, rt := range r.Routes {
					for _, d := range rt.Differences {
						got = append(got, fmt.Sprintf("%s %s %d %s %s", rt.Method, rt.Path, d.Status, d.Kind, d.Path))
						if rt.Method+" "+rt.Path == tc.route && d.Status == tc.status && d.Kind == tc.kind && d.Path == tc.path && d.Exchanges == 1 {
							found = true
						}
					}
				}
				if !found || len(got) != 1 {
					t.Errorf("differences %q, want only %s %d %s %s", got, tc.route, tc.status, tc.kind, tc.path)
				}
				if out := text(t, r); !strings.Contains(out, tc.route+": 1 of ") || !strings.Contains(out, tc.wantInText) {
					t.Errorf("the summary does not say %q at %s:\n%s", tc.wantInText, tc.route, out)
				}
			})
		}
	}
}

func with(r recorded, body string) recorded {
	r.Body = body
	return r
}

func TestDrift_RoutesNotEmulatedAreCountedAsCandidatesForStubs(t *testing.T) {
	dir := t.TempDir()
	ex := func(path string) recorded {
		return recorded{Method: "GET", Path: path, Status: 200, ContentType: "application/json", Body: `{"id":"x"}`}
	}
	mustWrite(t, filepath.Join(dir, "a.har"), har(t, []recorded{ex("/items/MLA1/description"), ex("/items/MLA2/description"),
		ex("/claims/search?status=opened"), ex("/items/MLA3/description")}))
	r := run(t, dir)
	if r.Drifted() {
		t.Errorf("routes the engine does not emulate are drift:\n%s", text(t, r))
	}
	if len(r.NotEmulated) != 2 || r.NotEmulated[0].Path != "/items/{id}/description" || r.NotEmulated[0].Exchanges != 3 ||
		r.NotEmulated[1].Path != "/claims/search" || r.NotEmulated[1].Exchanges != 1 {
		t.Errorf("not emulated %+v, want /items/{id}/description 3 times, then /claims/search once", r.NotEmulated)
	}
	if r.NotEmulated[0].Example.Entry != 1 {
		t.Errorf("the example is entry %d, want the first, 1", r.NotEmulated[0].Example.Entry)
	}
}

func TestDrift_ALiteralPathWinsOverAParameter(t *testing.T) {
	c, err := drift.Engine()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ method, url, want string }{
		{"GET", "/questions/search?item=MLA1", "GET /questions/search"},
		{"GET", "/questions/123", "GET /questions/{question_id}"},
		{"POST", "/items/multiwarehouse", "POST /items/multiwarehouse"},
		{"GET", "https://api.mercadolibre.com/items/MLA1?attributes=id", "GET /items/{item_id}"},
		{"GET", "/orders/search?seller=1", "GET /orders/search"},
	} {
		r, _, ok := c.Check(drift.Exchange{Method: tc.method, URL: tc.url, Status: 200, NoBody: true})
		if !ok || r.String() != tc.want {
			t.Errorf("%s %s: route %s (%v), want %s", tc.method, tc.url, r, ok, tc.want)
		}
	}
}

func TestDrift_ExchangesThatCannotBeCheckedAreCountedApart(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "pattern.json"), `{"request":{"method":"GET","urlPathPattern":"/items/MLA[0-9]+"},"response":{"status":200,"jsonBody":{"id":1}}}`)
	mustWrite(t, filepath.Join(dir, "any.json"), `{"request":{"method":"ANY","url":"/items/MLA1"},"response":{"status":200}}`)
	mustWrite(t, filepath.Join(dir, "aborted.har"), har(t, []recorded{{Method: "GET", Path: "/items/MLA1", Status: 0}}))
	r := run(t, dir)
	if r.Drifted() || r.Emulated != 0 {
		t.Errorf("exchanges that cannot be placed were checked:\n%s", text(t, r))
	}
	var reasons []string
	for _, s := range r.Skipped {
		reasons = append(reasons, s.Reason)
	}
	if strings.Join(reasons, "; ") != "it matches every method; its URL is a regular expression; no answer was recorded" {
		t.Errorf("skipped for %q", reasons)
	}
}

func TestDrift_AFileThatIsNoRecordingIsListedUnread(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "notes.json"), `{"hello": "world"}`)
	mustWrite(t, filepath.Join(dir, "broken.har"), `{"log": {"entries": [{"request": `)
	mustWrite(t, filepath.Join(dir, "README.md"), `not read at all`)
	r := run(t, dir, filepath.Join(dir, "missing.har"))
	if len(r.Unread) != 3 {
		t.Fatalf("unread %+v, want notes.json, broken.har and missing.har", r.Unread)
	}
	if r.Files != 2 {
		t.Errorf("files %d, want 2: a folder's other files are not recordings", r.Files)
	}
}

// A body the contract declares JSON that is not: a proxy's error page, a
// truncated answer.
func TestDrift_AnAnswerThatIsNotJSONIsReported(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "a.har"), har(t, []recorded{
		{Method: "GET", Path: "/items/MLA1", Status: 200, ContentType: "text/html", Body: "<html>"},
		{Method: "GET", Path: "/items/MLA1", Status: 200, ContentType: "application/json", Body: `{"id":`},
	}))
	r := run(t, dir)
	if len(r.Routes) != 1 || len(r.Routes[0].Differences) != 2 || r.Routes[0].Differences[0].Kind != drift.Body {
		t.Errorf("routes %+v, want two body differences on GET /items/{item_id}", r.Routes)
	}
}

// benchExchanges are answers of the engine to the routes clients use most,
// one in ten with a field the engine does not send.
func benchExchanges(b *testing.B) []recorded {
	item := `{"id":"MLA1400000001","site_id":"MLA","seller_id":100000001,"title":"Red mug","category_id":"MLA1055","price":1500,` +
		`"base_price":1500,"currency_id":"ARS","listing_type_id":"gold_special","condition":"new","channels":["marketplace"],` +
		`"status":"active","sub_status":[],"user_product_id":"MLAU300000001","available_quantity":4,"sold_quantity":0,` +
		`"permalink":"https://articulo.mercadolibre.com.ar/MLA-1400000001","thumbnail":"https://http2.mlstatic.com/x.jpg",` +
		`"date_created":"2026-03-04T12:00:00.000-03:00","last_updated":"2026-03-04T12:00:00.000-03:00","catalog_product_id":null,` +
		`"catalog_listing":false,"parent_item_id":null}`
	drifted := strings.TrimSuffix(item, "}") + `,"shipping":{"logistic_type":"fulfillment"}}`
	return []recorded{
		{Method: "GET", Path: "/items/MLA1400000001", Status: 200, ContentType: "application/json", Body: item},
		{Method: "GET", Path: "/items/MLA1400000001", Status: 200, ContentType: "application/json", Body: drifted},
		{Method: "GET", Path: "/items/MLA999", Status: 404, ContentType: "application/json", Body: `{"message":"Item with id MLA999 not found","error":"not_found","status":404,"cause":[]}`},
		{Method: "GET", Path: "/currencies/ARS", Status: 200, ContentType: "application/json", Body: `{"id":"ARS","description":"Peso argentino","symbol":"$","decimal_places":2}`},
		{Method: "GET", Path: "/items/MLA1/description", Status: 200, ContentType: "application/json", Body: `{"plain_text":"x"}`},
	}
}

// BenchmarkTally_ReadMappingFiles reads b.N exchanges, one mapping file
// each, as -record and WireMock write them; see docs/recording.md, "Cost",
// for the command's time and memory on 100,000.
func BenchmarkTally_ReadMappingFiles(b *testing.B) {
	ex := benchExchanges(b)
	dir := b.TempDir()
	for i := range b.N {
		r := ex[i%len(ex)]
		if r.Body == ex[1].Body && i%10 != 1 {
			r = ex[0]
		}
		m := fmt.Sprintf(`{"request":{"method":%q,"url":%q},"response":{"status":%d,"headers":{"Content-Type":%q},"body":%s}}`,
			r.Method, r.Path, r.Status, r.ContentType, strconvQuote(r.Body))
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("m-%07d.json", i)), []byte(m), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	c, err := drift.Engine()
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	tl := drift.NewTally(c)
	tl.Read(dir)
	b.StopTimer()
	if r := tl.Report(); r.Exchanges != b.N || len(r.Unread) > 0 {
		b.Fatalf("read %d exchanges of %d, unread %v", r.Exchanges, b.N, r.Unread)
	}
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
