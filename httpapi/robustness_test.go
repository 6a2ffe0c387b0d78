package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/httpapi"
	"github.com/marketplace/marketplace/storage/badger"
	"github.com/marketplace/marketplace/storage/memory"
)

// errorLog records the error-level lines of a server's log: an internal
// error or a recovered panic is logged there even when the answer is not a
// 500 (a panic after the status was written).
type errorLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *errorLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *errorLog) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *errorLog) WithGroup(string) slog.Handler            { return l }
func (l *errorLog) Handle(_ context.Context, r slog.Record) error {
	if r.Level < slog.LevelError {
		return nil
	}
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	l.mu.Lock()
	l.lines = append(l.lines, b.String())
	l.mu.Unlock()
	return nil
}

func (l *errorLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.lines
	l.lines = nil
	return out
}

// robustWorld is a test server seeded with one of everything the routes
// act on: a tagged seller with stores, a plain seller, a buyer, items of
// both kinds, questions (one answered) and an application.
type robustWorld struct {
	*testServer
	server              *httpapi.Server
	log                 *errorLog
	tagged, plain, buyr user
	stores              []string
	multiItem, plainItm string
	userProduct         string
	question, answered  int64
	appID               int64
	// seed is the snapshot of the world as seeded.
	seed int64
}

// onlyMessageFindings says whether every finding of a CheckResponse
// problem is an error message the document does not list. Random input
// reaches messages built from parts of itself that the document's message
// templates need not foresee; the random tests hold answers to their shape,
// fields, statuses and codes, and the named tests hold them to the listed
// messages.
func onlyMessageFindings(problem string) bool {
	_, findings, ok := strings.Cut(problem, " against the document: ")
	if !ok {
		return false
	}
	findings, _, _ = strings.Cut(findings, "\nbody: ")
	if !strings.HasPrefix(findings, "drift: $.message:") {
		return false
	}
	return strings.Count(findings, "drift: ") == strings.Count(findings, "drift: $.message:")
}

func newRobustWorld(t testing.TB) *robustWorld {
	t.Helper()
	clk := clock.NewManual(testStart)
	m, err := marketplace.New(memory.New(), marketplace.Options{Clock: clk})
	if err != nil {
		t.Fatalf("new marketplace: %v", err)
	}
	t.Cleanup(func() { _ = m.Close() })
	log := &errorLog{}
	cfg := checked(t, httpapi.Config{OperatorToken: testOperatorToken, ManualClock: clk, Logger: slog.New(log)})
	if check := cfg.CheckResponse; check != nil {
		cfg.CheckResponse = func(problem string) {
			if !onlyMessageFindings(problem) {
				check(problem)
			}
		}
	}
	h := httpapi.New(m, cfg)
	w := &robustWorld{testServer: &testServer{t: t, m: m, clock: clk, handler: h}, server: h, log: log}
	w.tagged, w.stores = w.mustSeller(2)
	w.plain = w.mustUser("MLA", "normal")
	w.buyr = w.mustUser("MLA", "normal")
	w.multiItem, w.userProduct = w.mustMultiItem(w.tagged.Token, w.stores[0], 3, w.stores[1], 4)
	w.plainItm = w.mustPlainItem(w.plain.Token, "Mate de calabaza", 900, 5)
	w.question = w.ask(w.buyr, w.plainItm, "Is it cured?")
	w.answered = w.ask(w.buyr, w.multiItem, "Which sizes?")
	if res := w.do("POST", "/answers", w.tagged.Token, map[string]any{"question_id": w.answered, "text": "All of them"}); res.Status != http.StatusOK {
		t.Fatalf("answer: %d %s", res.Status, res.Raw)
	}
	w.appID = int64(w.mustApplication(w.tagged.ID, "https://example.com/cb")["id"].(float64))
	if lines := log.take(); len(lines) > 0 {
		t.Fatalf("seeding logged errors: %v", lines)
	}
	snap, err := m.CreateSnapshot(context.Background(), "robust world")
	if err != nil {
		t.Fatalf("snapshot of the world: %v", err)
	}
	w.seed = snap.ID
	return w
}

// reseed puts the world back after a request replaced the state (a reset,
// a restore), so that the requests that follow still find its records.
func (w *robustWorld) reseed(t *rapid.T, req robustRequest, code int) {
	path, _, _ := strings.Cut(req.target, "?")
	if code >= 300 || req.method != http.MethodPost || (path != "/operator/reset" && !strings.HasSuffix(path, "/restore")) {
		return
	}
	// The world's snapshot may have been deleted by a request before.
	if err := w.m.RestoreSnapshot(context.Background(), w.seed); err != nil && !errs.Is(err, errs.NotFound) {
		t.Fatalf("reseed: %v", err)
	}
}

func (w *robustWorld) ask(u user, item, text string) int64 {
	w.t.Helper()
	res := w.do("POST", "/questions", u.Token, map[string]any{"text": text, "item_id": item})
	if res.Status != http.StatusCreated {
		w.t.Fatalf("ask: %d %s", res.Status, res.Raw)
	}
	return int64(res.Obj()["id"].(float64))
}

// route is one registered route: its path pattern, the query parameters
// and body fields it reads (nested fields as "parent.child").
type route struct {
	method, path string
	query        []string
	fields       []string
}

// allRoutes lists every route of the route table (routes.go), with what
// each reads; TestRobustness_EveryRouteIsListed keeps it complete.
var allRoutes = []route{
	{"GET", "/health", nil, nil},
	{"HEAD", "/health", nil, nil},
	{"GET", "/ready", nil, nil},
	{"HEAD", "/ready", nil, nil},
	{"GET", "/version", nil, nil},
	{"HEAD", "/version", nil, nil},
	{"GET", "/openapi.json", nil, nil},
	{"GET", "/metrics", nil, nil},
	{"GET", "/users/:user_id", nil, nil},
	{"GET", "/users/:user_id/stores/search", []string{"tags", "limit", "offset"}, nil},
	{"POST", "/operator/users", nil, []string{"nickname", "site_id", "country_id", "first_name", "last_name", "gender", "tags"}},
	{"GET", "/operator/users/:user_id", nil, nil},
	{"POST", "/operator/users/:user_id/tokens", nil, nil},
	{"DELETE", "/operator/users/:user_id/tokens", nil, nil},
	{"POST", "/operator/tokens/revoke", nil, []string{"access_token"}},
	{"PUT", "/operator/users/:user_id/tags", nil, []string{"tags"}},
	{"POST", "/operator/users/:user_id/stores", nil, []string{"id", "description", "status", "tags", "network_node_id",
		"location", "location.address_line", "location.street_number", "location.latitude", "location.city", "location.zip_code"}},
	{"PUT", "/operator/reference", nil, []string{"records", "records.kind", "records.data"}},
	// stock
	{"POST", "/items", nil, newItemFields},
	{"POST", "/items/:item_id", nil, newItemFields},
	{"POST", "/items/:item_id/relist", nil, []string{"price", "quantity", "listing_type_id", "stock_locations", "stock_locations.store_id", "stock_locations.quantity"}},
	{"GET", "/orders/:order_id", []string{"seller", "buyer", "order.status", "item", "q", "tags", "tags.not", "mediations.status", "order.date_created.from", "order.date_created.to", "order.date_closed.from", "order.date_last_updated.to", "sort"}, nil},
	{"GET", "/packs/:pack_id", nil, nil},
	{"GET", "/shipments/:shipment_id", nil, nil},
	{"GET", "/shipments/:shipment_id/history", nil, nil},
	{"GET", "/shipment_statuses", nil, nil},
	{"POST", "/operator/orders", nil, []string{"buyer_id", "item_id", "quantity", "store_id", "status"}},
	{"GET", "/operator/orders", []string{"seller", "buyer", "order.status", "item", "q", "tags", "sort"}, nil},
	{"GET", "/operator/orders/:order_id", nil, nil},
	{"POST", "/operator/orders/:order_id/payments", nil, []string{"status"}},
	{"POST", "/operator/orders/:order_id/cancel", nil, nil},
	{"PUT", "/operator/shipments/:shipment_id/status", nil, []string{"status", "substatus"}},
	{"GET", "/items/:item_id", nil, nil},
	{"PUT", "/items/:item_id", nil, []string{"status", "price", "title", "available_quantity"}},
	{"GET", "/user-products/:user_product_id/stock", nil, nil},
	{"PUT", "/user-products/:user_product_id/stock/type/seller_warehouse", nil, []string{"locations", "locations.store_id", "locations.network_node_id", "locations.quantity", "locations.type"}},
	{"GET", "/sites/:site_id/search", []string{"q", "sort", "limit", "offset"}, nil},
	// questions
	{"GET", "/questions/:question_id", []string{"api_version", "item", "item_id", "seller_id", "seller", "status", "from",
		"sort_fields", "sort_types", "limit", "offset", "totalDivisions", "division"}, nil},
	{"POST", "/questions", nil, []string{"text", "item_id"}},
	{"DELETE", "/questions/:question_id", nil, nil},
	{"POST", "/answers", nil, []string{"question_id", "text"}},
	{"POST", "/my/questions/hidden", nil, []string{"question_ids"}},
	{"PUT", "/operator/questions/:question_id", nil, []string{"status", "answer_status"}},
	{"POST", "/users/:user_id/questions_blacklist", nil, []string{"user_id"}},
	{"GET", "/users/:user_id/questions_blacklist", []string{"limit", "offset"}, nil},
	{"DELETE", "/users/:user_id/questions_blacklist/:blocked_id", nil, nil},
	{"GET", "/users/:user_id/questions/response_time", nil, nil},
	// reference
	{"GET", "/sites/:site_id/listing_prices", []string{"price", "quantity", "listing_type_id", "category_id", "currency_id"}, nil},
	{"GET", "/sites/:site_id/listing_prices/:listing_type_id", []string{"price", "quantity", "category_id", "currency_id"}, nil},
	{"GET", "/classified_locations/countries", nil, nil},
	{"GET", "/classified_locations/countries/:country_id", nil, nil},
	{"GET", "/classified_locations/states/:state_id", nil, nil},
	{"GET", "/classified_locations/cities/:city_id", nil, nil},
	{"GET", "/currencies", nil, nil},
	{"GET", "/currencies/:currency_id", nil, nil},
	{"GET", "/currency_conversions/search", []string{"from", "to"}, nil},
	{"GET", "/countries/:country_id/zip_codes/:zip_code", nil, nil},
	{"GET", "/country/:country_id/zip_codes/search_between", []string{"zip_code_from", "zip_code_to", "limit", "offset"}, nil},
	// catalog
	{"GET", "/sites/:site_id/domains", nil, nil},
	{"GET", "/catalog_domains/:domain_id/products", []string{"limit", "offset"}, nil},
	{"GET", "/products/:product_id", nil, nil},
	// notifications
	{"POST", "/operator/applications", nil, []string{"name", "owner_user_id", "callback_url", "topics", "redirect_uris"}},
	{"GET", "/operator/applications/:app_id", nil, nil},
	{"PUT", "/operator/applications/:app_id", nil, []string{"callback_url", "topics", "redirect_uris"}},
	{"GET", "/operator/applications/:app_id/deliveries", []string{"limit", "offset"}, nil},
	{"GET", "/missed_feeds", []string{"app_id", "topic", "limit", "offset"}, nil},
	// OAuth
	{"GET", "/authorization", authorizationQuery, nil},
	{"POST", "/authorization", authorizationQuery, nil},
	{"POST", "/oauth/token", tokenFields, tokenFields},
	{"POST", "/operator/authorizations", nil, []string{"client_id", "user_id", "redirect_uri", "code_challenge", "code_challenge_method"}},
	{"POST", "/operator/applications/:app_id/secret", nil, nil},
	{"POST", "/users/:user_id", nil, []string{"site_id"}},
	// clock
	{"GET", "/operator/clock", nil, nil},
	{"PUT", "/operator/clock", nil, []string{"now"}},
	// faults, journal, redelivery. The rule fields are left out, so that
	// the random bodies never make a rule that faults the answers checked
	// next.
	{"POST", "/operator/faults", nil, nil},
	{"GET", "/operator/faults", nil, nil},
	{"DELETE", "/operator/faults", nil, nil},
	{"GET", "/operator/faults/:fault_id", nil, nil},
	{"DELETE", "/operator/faults/:fault_id", nil, nil},
	{"POST", "/operator/stubs", nil, nil},
	{"GET", "/operator/stubs", nil, nil},
	{"DELETE", "/operator/stubs", nil, nil},
	{"GET", "/operator/stubs/:stub_id", nil, nil},
	{"DELETE", "/operator/stubs/:stub_id", nil, nil},
	// The recording's fields are left out too, so that no random body
	// starts forwarding the requests checked next to a random upstream.
	{"POST", "/operator/recordings/start", nil, nil},
	{"GET", "/operator/recordings/status", nil, nil},
	{"POST", "/operator/recordings/stop", nil, nil},
	{"POST", "/operator/recordings/snapshot", nil, nil},
	{"POST", "/operator/requests/count", nil, nil},
	{"POST", "/operator/requests/find", nil, nil},
	{"GET", "/operator/requests", []string{"method", "route", "status", "user_id", "limit", "offset"}, nil},
	{"DELETE", "/operator/requests", nil, nil},
	{"POST", "/operator/applications/:app_id/deliveries/:delivery_id/redeliver", nil, nil},
	// reset, snapshots, fixtures
	{"POST", "/operator/reset", []string{"demo", "clock"}, nil},
	{"POST", "/operator/snapshots", nil, []string{"name"}},
	{"GET", "/operator/snapshots", nil, nil},
	{"POST", "/operator/snapshots/:snapshot_id/restore", []string{"clock"}, nil},
	{"DELETE", "/operator/snapshots/:snapshot_id", nil, nil},
	{"PUT", "/operator/fixtures", nil, []string{"users", "users.name", "users.nickname", "users.site_id", "users.tokens"}},
	// operator lists
	{"GET", "/operator/users", []string{"limit", "offset"}, nil},
	{"GET", "/operator/users/:user_id/stores", []string{"tags", "limit", "offset"}, nil},
	{"GET", "/operator/items", []string{"seller_id", "limit", "offset"}, nil},
	{"GET", "/operator/applications", []string{"owner_user_id", "limit", "offset"}, nil},
	// public reads
	{"GET", "/sites", nil, nil},
	{"GET", "/sites/:site_id", nil, nil},
	{"GET", "/sites/:site_id/categories", nil, nil},
	{"GET", "/categories/:category_id", nil, nil},
	{"GET", "/items", []string{"ids"}, nil},
	{"GET", "/users", []string{"ids"}, nil},
	{"GET", "/users/:user_id/items/search", []string{"status", "listing_type_id", "sku", "seller_sku", "tags", "orders", "limit", "offset"}, nil},
}

var authorizationQuery = []string{"response_type", "client_id", "redirect_uri", "state", "code_challenge", "code_challenge_method"}

var tokenFields = []string{"grant_type", "client_id", "client_secret", "code", "redirect_uri", "code_verifier", "refresh_token"}

var newItemFields = []string{"title", "category_id", "price", "listing_type_id", "currency_id", "condition", "channels",
	"thumbnail", "available_quantity", "catalog_product_id", "catalog_listing", "user_product_id",
	"stock_locations", "stock_locations.store_id", "stock_locations.quantity", "stock_locations.network_node_id"}

// hostileStrings are values that have broken parsers before: huge and
// negative numbers, exponents, unicode, escapes, the names that share a
// position with a parameter.
var hostileStrings = []string{
	"", "0", "-1", "1", "-0", "+1", "1.5", "1e3", "9223372036854775807", "9223372036854775808",
	"-9223372036854775808", "99999999999999999999999999", "0x10", " 1", "1 ", "NaN", "Inf", "null", "true",
	"search", "me", "ñandú", "日本語", "🙂", "a/b", "..", "%", "%zz", "\x00", "\u202e", "<script>", "' OR 1=1 --",
	"MLA", "MLB", "ARS", "AR", "BR-SP", "gold_special", "free", "MLA1055", "active", "paused", "closed",
	"UNANSWERED", "ANSWERED", "BANNED", "DELETED", "DISABLED", "questions", "items", "date_created", "ASC", "DESC",
	"price_asc", "price_desc", "relevance", "2026-03-05T12:00:00Z", "2026-03-04T15:00:00.000000001Z", "1900-01-01T00:00:00Z",
	"9999-12-31T23:59:59Z", "1000", "1001", "4", "5", "stock_location", "warehouse_management", "normal",
}

// pathValue draws a path parameter: an id of the world, or a hostile value.
func (w *robustWorld) pathValue(t *rapid.T, label string) string {
	known := []string{
		strconv.FormatInt(w.tagged.ID, 10), strconv.FormatInt(w.plain.ID, 10), strconv.FormatInt(w.buyr.ID, 10),
		w.multiItem, w.plainItm, w.userProduct, w.stores[0],
		strconv.FormatInt(w.question, 10), strconv.FormatInt(w.answered, 10), strconv.FormatInt(w.appID, 10),
	}
	return rapid.OneOf(rapid.SampledFrom(known), rapid.SampledFrom(hostileStrings),
		rapid.StringN(0, 40, -1)).Draw(t, label)
}

// buildPath fills the route's parameters and escapes each one.
func (w *robustWorld) buildPath(t *rapid.T, rt route) string {
	if rt.method == "POST" && rt.path == "/items/:item_id" && rapid.IntRange(0, 3).Draw(t, "publish_by_name") > 0 {
		// The route serves POST /items/multiwarehouse by name: the drawn
		// requests mostly publish there, where the rules are.
		return "/items/multiwarehouse"
	}
	segs := strings.Split(rt.path, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, ":") {
			segs[i] = url.PathEscape(w.pathValue(t, s))
		}
	}
	return strings.Join(segs, "/")
}

// rawQuery draws a query string, well-formed or not, over the route's
// parameters and a few every route may see.
func rawQuery(t *rapid.T, rt route) string {
	names := append([]string{"limit", "offset", "api_version", "x"}, rt.query...)
	n := rapid.IntRange(0, 6).Draw(t, "query_params")
	var parts []string
	for i := 0; i < n; i++ {
		switch rapid.IntRange(0, 5).Draw(t, "query_form") {
		case 0:
			parts = append(parts, rapid.SampledFrom([]string{"%", "%zz", "=", "==", "&", ";", "a=b=c", "limit", "offset=", "\x7f"}).Draw(t, "malformed"))
		case 1:
			parts = append(parts, url.QueryEscape(rapid.SampledFrom(names).Draw(t, "name"))+"="+rapid.SampledFrom([]string{"%", "%zz", "%00", "+", "%2C%2C"}).Draw(t, "raw_value"))
		default:
			v := rapid.OneOf(rapid.SampledFrom(hostileStrings), rapid.StringN(0, 20, -1)).Draw(t, "value")
			parts = append(parts, url.QueryEscape(rapid.SampledFrom(names).Draw(t, "name"))+"="+url.QueryEscape(v))
		}
	}
	return strings.Join(parts, "&")
}

// jsonValue writes a random JSON value of at most depth levels; the numbers
// include ones no Go number type holds.
func jsonValue(t *rapid.T, b *bytes.Buffer, depth int) {
	max := 7
	if depth <= 0 {
		max = 4
	}
	switch rapid.IntRange(0, max).Draw(t, "json_kind") {
	case 0:
		b.WriteString("null")
	case 1:
		b.WriteString(rapid.SampledFrom([]string{"true", "false"}).Draw(t, "bool"))
	case 2:
		b.WriteString(rapid.SampledFrom([]string{"0", "-1", "1", "3", "1.5", "-0", "1e400", "-1e400", "1e-400",
			"9223372036854775807", "9223372036854775808", "-9223372036854775809", "123456789012345678901234567890",
			"0.1", "100000000", "2.0"}).Draw(t, "number"))
	case 3:
		s := rapid.OneOf(rapid.SampledFrom(hostileStrings), rapid.String()).Draw(t, "string")
		enc, _ := json.Marshal(s)
		b.Write(enc)
	case 4:
		n := rapid.SampledFrom([]int{1000, 70000}).Draw(t, "huge_string")
		b.WriteString(`"` + strings.Repeat("ñ", n) + `"`)
	case 5, 6:
		b.WriteByte('[')
		for i, n := 0, rapid.IntRange(0, 3).Draw(t, "array_len"); i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			jsonValue(t, b, depth-1)
		}
		b.WriteByte(']')
	case 7:
		b.WriteByte('{')
		for i, n := 0, rapid.IntRange(0, 3).Draw(t, "object_len"); i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			enc, _ := json.Marshal(rapid.SampledFrom(hostileStrings).Draw(t, "key"))
			b.Write(enc)
			b.WriteByte(':')
			jsonValue(t, b, depth-1)
		}
		b.WriteByte('}')
	}
}

// fieldValue writes a value for field: a plausible one of the world, an
// object or array of the nested fields, or any JSON value.
func (w *robustWorld) fieldValue(t *rapid.T, b *bytes.Buffer, field string, fields []string) {
	var children []string
	for _, f := range fields {
		if c, ok := strings.CutPrefix(f, field+"."); ok {
			children = append(children, c)
		}
	}
	switch rapid.IntRange(0, 3).Draw(t, "field_form") {
	case 0:
		if len(children) > 0 {
			b.WriteByte('[')
			w.object(t, b, children)
			b.WriteByte(']')
			return
		}
		v := w.pathValue(t, "field_string")
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && rapid.Bool().Draw(t, "as_number") {
			b.WriteString(strconv.FormatInt(n, 10))
			return
		}
		enc, _ := json.Marshal(v)
		b.Write(enc)
	case 1:
		if len(children) > 0 {
			w.object(t, b, children)
			return
		}
		fallthrough
	default:
		jsonValue(t, b, 2)
	}
}

// object writes an object holding a random subset of fields.
func (w *robustWorld) object(t *rapid.T, b *bytes.Buffer, fields []string) {
	var top []string
	for _, f := range fields {
		if !strings.Contains(f, ".") {
			top = append(top, f)
		}
	}
	b.WriteByte('{')
	n := 0
	for _, f := range top {
		if !rapid.Bool().Draw(t, "has_"+f) {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		enc, _ := json.Marshal(f)
		b.Write(enc)
		b.WriteByte(':')
		w.fieldValue(t, b, f, fields)
	}
	b.WriteByte('}')
}

// body draws a request body: nothing, an object of the route's fields,
// another JSON value, deep nesting, broken JSON or more than the limit.
func (w *robustWorld) body(t *rapid.T, rt route) []byte {
	var b bytes.Buffer
	// Small draws are the likely ones: a valid body with a few changes.
	switch rapid.IntRange(0, 9).Draw(t, "body_form") {
	case 9:
		return nil
	case 8:
		jsonValue(t, &b, 3)
	case 7:
		d := rapid.SampledFrom([]int{100, 10001}).Draw(t, "depth")
		nest := rapid.SampledFrom([][2]string{{"[", "]"}, {`{"a":`, "}"}}).Draw(t, "nesting")
		b.WriteString(strings.Repeat(nest[0], d) + "1" + strings.Repeat(nest[1], d))
	case 6:
		b.WriteString(rapid.SampledFrom([]string{"{", "}", "{}{}", "{} x", `{"a":}`, "nul", "\xff\xfe", `{"price":01}`,
			`{"text":"\ud800"}`, "\x00", " ", `"`, `{"a":1,"a":2}`, "[1,]"}).Draw(t, "broken"))
	case 0, 1, 2:
		if tpl := w.template(rt); tpl != nil {
			return w.mutate(t, tpl)
		}
		w.object(t, &b, append([]string{"id", "user_id"}, rt.fields...))
	case 5:
		if rapid.IntRange(0, 9).Draw(t, "oversized") == 9 {
			b.WriteString(`{"title":"` + strings.Repeat("x", 1<<20) + `"}`)
			break
		}
		fallthrough
	default:
		fields := append([]string{"id", "user_id"}, rt.fields...)
		w.object(t, &b, fields)
	}
	return b.Bytes()
}

// template returns a valid body for the write routes with rules behind
// them, so that mutations of it reach those rules.
func (w *robustWorld) template(rt route) map[string]any {
	item := map[string]any{"title": "Mate", "category_id": "MLA1055", "price": 1000, "listing_type_id": "gold_special",
		"currency_id": "ARS", "condition": "new", "channels": []any{"marketplace"}}
	switch rt.path {
	case "/items":
		item["available_quantity"] = 3
		return item
	case "/operator/orders":
		return map[string]any{"buyer_id": w.buyr.ID, "item_id": w.multiItem, "quantity": 1, "status": "payment_required"}
	case "/items/:item_id/relist":
		return map[string]any{"price": 1300, "listing_type_id": "gold_special", "stock_locations": []any{map[string]any{"store_id": w.stores[0], "quantity": 2}}}
	}
	if rt.method == "POST" && rt.path == "/items/:item_id" {
		item["stock_locations"] = []any{map[string]any{"store_id": w.stores[0], "quantity": 2}}
		return item
	}
	switch rt.path {
	case "/items/:item_id":
		return map[string]any{"title": "Mate nuevo", "price": 1200, "status": "paused", "available_quantity": 2}
	case "/user-products/:user_product_id/stock/type/seller_warehouse":
		return map[string]any{"locations": []any{map[string]any{"store_id": w.stores[1], "quantity": 5}}}
	case "/questions":
		return map[string]any{"text": "Does it ship?", "item_id": w.multiItem}
	case "/answers":
		return map[string]any{"question_id": w.question, "text": "Yes"}
	case "/my/questions/hidden":
		return map[string]any{"question_ids": []any{w.question}}
	case "/operator/questions/:question_id":
		return map[string]any{"status": "BANNED", "answer_status": "BANNED"}
	case "/users/:user_id/questions_blacklist":
		return map[string]any{"user_id": w.buyr.ID}
	case "/operator/users":
		return map[string]any{"nickname": "NEW_USER", "site_id": "MLA", "first_name": "A", "last_name": "B", "tags": []any{"normal"}}
	case "/operator/users/:user_id/tags":
		return map[string]any{"tags": []any{"normal", "warehouse_management"}}
	case "/operator/users/:user_id/stores":
		return map[string]any{"description": "d", "tags": []any{"stock_location"},
			"location": map[string]any{"address_line": "Calle 1", "city": "Buenos Aires", "state": "Capital Federal", "country": "Argentina", "zip_code": "1000"}}
	case "/operator/reference":
		return map[string]any{"records": []any{map[string]any{"kind": "currency",
			"data": map[string]any{"id": "ZZZ", "symbol": "Z", "description": "Zed", "decimal_places": 2}}}}
	case "/operator/applications":
		return map[string]any{"name": "App", "owner_user_id": w.tagged.ID, "callback_url": "https://example.com/cb", "topics": []any{"questions"}}
	case "/operator/applications/:app_id":
		return map[string]any{"callback_url": "https://example.com/other", "topics": []any{"questions", "items"}}
	case "/operator/clock":
		return map[string]any{"now": "2026-03-04T16:00:00Z"}
	case "/operator/snapshots":
		return map[string]any{"name": "before"}
	case "/operator/fixtures":
		return map[string]any{"users": []any{map[string]any{"name": "fx", "nickname": "FX", "site_id": "MLA",
			"tokens": []any{"APP_USR-fixture-token-000000001"}}}}
	}
	return nil
}

// mutate encodes tpl after replacing, deleting or keeping one field at
// each level, down into nested objects and arrays.
func (w *robustWorld) mutate(t *rapid.T, tpl map[string]any) []byte {
	var b bytes.Buffer
	var write func(v any, depth int)
	write = func(v any, depth int) {
		switch v := v.(type) {
		case map[string]any:
			b.WriteByte('{')
			n := 0
			for _, k := range sortedKeys(v) {
				// Small draws are the likely ones: keeping the field.
				op := rapid.IntRange(0, 11).Draw(t, "mutate_"+k)
				if op == 11 {
					continue
				}
				if n > 0 {
					b.WriteByte(',')
				}
				n++
				enc, _ := json.Marshal(k)
				b.Write(enc)
				b.WriteByte(':')
				if op == 10 {
					jsonValue(t, &b, 2)
				} else {
					write(v[k], depth+1)
				}
			}
			b.WriteByte('}')
		case []any:
			b.WriteByte('[')
			for i, e := range v {
				if i > 0 {
					b.WriteByte(',')
				}
				write(e, depth+1)
			}
			b.WriteByte(']')
		default:
			enc, _ := json.Marshal(v)
			b.Write(enc)
		}
	}
	write(tpl, 0)
	return b.Bytes()
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// robustRequest is one drawn request.
type robustRequest struct {
	method, target string
	body           []byte
	headers        map[string]string
}

func (w *robustWorld) request(t *rapid.T) robustRequest {
	rt := rapid.SampledFrom(allRoutes).Draw(t, "route")
	req := robustRequest{method: rt.method, headers: map[string]string{}}
	if rapid.IntRange(0, 19).Draw(t, "other_method") == 0 {
		req.method = rapid.SampledFrom([]string{"GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "FOO"}).Draw(t, "method")
	}
	req.target = w.buildPath(t, rt)
	if q := rawQuery(t, rt); q != "" {
		req.target += "?" + q
	}
	req.body = w.body(t, rt)
	switch rapid.IntRange(0, 9).Draw(t, "auth_form") {
	case 0:
	case 1:
		req.headers["Authorization"] = rapid.SampledFrom([]string{"Bearer", "Bearer ", "Basic abc", "bearer " + w.buyr.Token,
			"Bearer garbage", "Bearer APP_USR-0-0", "Bearer " + strings.Repeat("z", 5000)}).Draw(t, "odd_auth")
	case 2:
		sep := "?"
		if strings.Contains(req.target, "?") {
			sep = "&"
		}
		req.target += sep + "access_token=" + url.QueryEscape(rapid.SampledFrom([]string{w.buyr.Token, testOperatorToken, "", "%"}).Draw(t, "query_token"))
	case 3:
		req.headers["Authorization"] = "Bearer " + rapid.SampledFrom([]string{testOperatorToken, w.tagged.Token, w.plain.Token, w.buyr.Token}).Draw(t, "any_token")
	default:
		// The token the route is for, most of the time, so that requests
		// get past authentication to the rules.
		tok := rapid.SampledFrom([]string{w.tagged.Token, w.plain.Token, w.buyr.Token}).Draw(t, "user_token")
		if strings.HasPrefix(rt.path, "/operator/") {
			tok = testOperatorToken
		}
		req.headers["Authorization"] = "Bearer " + tok
	}
	switch rapid.IntRange(0, 3).Draw(t, "x_version_form") {
	case 0:
	case 1:
		req.headers["x-version"] = rapid.SampledFrom(hostileStrings).Draw(t, "x_version")
	default:
		req.headers["x-version"] = strconv.Itoa(rapid.IntRange(-1, 5).Draw(t, "x_version_int"))
	}
	if rapid.Bool().Draw(t, "content_type") {
		req.headers["Content-Type"] = rapid.SampledFrom([]string{"application/json", "text/plain", "application/json; charset=latin1"}).Draw(t, "content_type_value")
	}
	return req
}

// serve sends req and returns the raw answer.
func (w *robustWorld) serve(req robustRequest) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, "/", bytes.NewReader(req.body))
	r.Method = req.method
	u, err := url.Parse(req.target)
	if err != nil {
		// A malformed query is the point: keep it raw.
		path, query, _ := strings.Cut(req.target, "?")
		u = &url.URL{Path: path, RawQuery: query}
	}
	r.URL, r.RequestURI = u, req.target
	for k, v := range req.headers {
		r.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	w.handler.ServeHTTP(rec, r)
	return rec
}

// checkAnswer asserts the API's promise for one answer: no 500, JSON
// content type, and a non-2xx answer in the exact error shape.
func checkAnswer(rec *httptest.ResponseRecorder, log *errorLog) error {
	if lines := log.take(); len(lines) > 0 {
		return fmt.Errorf("server logged errors: %v", lines)
	}
	if rec.Code >= 500 {
		return fmt.Errorf("status %d: %s", rec.Code, rec.Body.Bytes())
	}
	// The authorization page is the one route that answers HTML, or
	// redirects the browser to the client.
	if ct := rec.Header().Get("Content-Type"); strings.HasPrefix(ct, "text/html") || rec.Code == http.StatusFound {
		if rec.Code == http.StatusFound && rec.Header().Get("Location") == "" {
			return fmt.Errorf("302 without a Location")
		}
		return nil
	}
	if rec.Code == http.StatusNoContent {
		// Reset, restore and deletions answer 204 with no body at all.
		if rec.Body.Len() > 0 {
			return fmt.Errorf("status 204 with a body: %q", rec.Body.Bytes())
		}
		return nil
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return fmt.Errorf("Content-Type = %q, want application/json", ct)
	}
	if !json.Valid(rec.Body.Bytes()) {
		return fmt.Errorf("status %d: answer is not JSON: %q", rec.Code, rec.Body.Bytes())
	}
	if rec.Code >= 200 && rec.Code < 300 {
		return nil
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		return fmt.Errorf("status %d: error body is not an object: %s", rec.Code, rec.Body.Bytes())
	}
	var e struct {
		Message *string `json:"message"`
		Error   *string `json:"error"`
		Status  *int    `json:"status"`
		Cause   *[]any  `json:"cause"`
	}
	// The returns' routes answer the spec's variant C ({code, error,
	// message, cause: null}) and the messages' blocked sends variant B
	// ({status_code, code, message}, or with a cause string and an error):
	// the public API's own shapes for those routes.
	if err, ok := otherErrorShape(rec.Code, body); ok {
		return err
	}
	// The token endpoint adds OAuth 2's error_description.
	keys := len(body)
	if _, ok := body["error_description"]; ok {
		keys--
	}
	if keys != 4 || json.Unmarshal(rec.Body.Bytes(), &e) != nil ||
		e.Message == nil || e.Error == nil || e.Status == nil || e.Cause == nil || *e.Cause == nil {
		return fmt.Errorf("status %d: error body is not {message, error, status, cause}: %s", rec.Code, rec.Body.Bytes())
	}
	if *e.Status != rec.Code {
		return fmt.Errorf("status %d but body status %d: %s", rec.Code, *e.Status, rec.Body.Bytes())
	}
	if *e.Message == "" || *e.Error == "" {
		return fmt.Errorf("status %d: empty message or error code: %s", rec.Code, rec.Body.Bytes())
	}
	return nil
}

// otherErrorShape checks an error body in the spec's variants B and C,
// reporting false when body is in neither.
func otherErrorShape(status int, body map[string]json.RawMessage) (error, bool) {
	var c struct {
		Code    *int    `json:"code"`
		Error   *string `json:"error"`
		Message *string `json:"message"`
	}
	if len(body) == 4 && string(body["cause"]) == "null" && json.Unmarshal(mustJSON(body), &c) == nil && c.Code != nil {
		if *c.Code != status || c.Error == nil || c.Message == nil || *c.Error == "" || *c.Message == "" {
			return fmt.Errorf("status %d: a variant C body that does not say so: %s", status, mustJSON(body)), true
		}
		return nil, true
	}
	var b struct {
		StatusCode *int    `json:"status_code"`
		Code       *string `json:"code"`
		Error      *string `json:"error"`
		Message    *string `json:"message"`
	}
	if _, ok := body["status_code"]; ok && json.Unmarshal(mustJSON(body), &b) == nil {
		if b.StatusCode == nil || *b.StatusCode != status || b.Message == nil || *b.Message == "" || (b.Code == nil && b.Error == nil) {
			return fmt.Errorf("status %d: a variant B body that does not say so: %s", status, mustJSON(body)), true
		}
		return nil, true
	}
	return nil, false
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// snapshot reads what the write routes can change, as the operator and as
// each user sees it.
func (w *robustWorld) snapshot() string {
	var b strings.Builder
	get := func(path, token string) {
		rec := w.serve(robustRequest{method: "GET", target: path, headers: map[string]string{"Authorization": "Bearer " + token}})
		fmt.Fprintf(&b, "%s %d %s\n", path, rec.Code, rec.Body.Bytes())
	}
	for _, u := range []user{w.tagged, w.plain, w.buyr} {
		get(fmt.Sprintf("/operator/users/%d", u.ID), testOperatorToken)
		get(fmt.Sprintf("/users/%d/stores/search", u.ID), u.Token)
		get(fmt.Sprintf("/users/%d/questions_blacklist", u.ID), u.Token)
		get(fmt.Sprintf("/questions/search?seller_id=%d&api_version=4", u.ID), u.Token)
	}
	get("/items/"+w.multiItem, w.buyr.Token)
	get("/items/"+w.plainItm, w.buyr.Token)
	get("/user-products/"+w.userProduct+"/stock", w.tagged.Token)
	get("/sites/MLA/search?limit=1000", w.buyr.Token)
	get(fmt.Sprintf("/questions/%d", w.question), w.buyr.Token)
	get(fmt.Sprintf("/questions/%d", w.answered), w.buyr.Token)
	get(fmt.Sprintf("/operator/applications/%d", w.appID), testOperatorToken)
	get("/operator/clock", testOperatorToken)
	get("/currencies", w.buyr.Token)
	get("/sites/MLA/listing_prices?price=1000", w.buyr.Token)
	return b.String()
}

// TestRobustness_NoInputGivesA500AndErrorsKeepTheirShape sends random
// requests, valid-looking and hostile, to every route and checks each
// answer: never a 500 or a logged panic, always JSON, errors in the
// {message, error, status, cause} shape with the HTTP status; a refused
// write leaves everything the routes can read unchanged.
func TestRobustness_NoInputGivesA500AndErrorsKeepTheirShape(t *testing.T) {
	w := newRobustWorld(t)
	rapid.Check(t, func(t *rapid.T) {
		for i, n := 0, rapid.IntRange(1, 5).Draw(t, "requests"); i < n; i++ {
			req := w.request(t)
			write := req.method != http.MethodGet
			var before string
			if write {
				before = w.snapshot()
			}
			rec := w.serve(req)
			if err := checkAnswer(rec, w.log); err != nil {
				t.Fatalf("%s %s (x-version %q, body %.300q): %v", req.method, req.target, req.headers["x-version"], req.body, err)
			}
			w.reseed(t, req, rec.Code)
			if write && rec.Code >= 400 {
				if after := w.snapshot(); after != before {
					t.Fatalf("%s %s refused with %d changed state:\nbefore:\n%s\nafter:\n%s", req.method, req.target, rec.Code, before, after)
				}
			}
		}
	})
}

// TestRobustness_EveryRouteIsListed fails when the robustness test's route
// list and the registered routes differ: each listed route reaches a handler
// (not the router's 404 or 405), and the list is the set of routes the
// server registers.
func TestRobustness_EveryRouteIsListed(t *testing.T) {
	w := newRobustWorld(t)
	for _, rt := range allRoutes {
		path := strings.NewReplacer(":user_id", "1", ":item_id", "x", ":user_product_id", "x", ":site_id", "MLA",
			":question_id", "1", ":blocked_id", "1", ":order_id", "1", ":pack_id", "1", ":shipment_id", "1", ":listing_type_id", "x", ":country_id", "AR", ":state_id", "x",
			":city_id", "x", ":currency_id", "x", ":zip_code", "x", ":domain_id", "x", ":product_id", "x", ":app_id", "1", ":snapshot_id", "1",
			":category_id", "x").Replace(rt.path)
		rec := w.serve(robustRequest{method: rt.method, target: path})
		var body struct{ Error string }
		_ = json.Unmarshal(rec.Body.Bytes(), &body)
		if body.Error == "not_found" && rec.Code == http.StatusNotFound && strings.Contains(rec.Body.String(), "Resource ") ||
			body.Error == "method_not_allowed" {
			t.Errorf("%s %s is listed but not routed: %s", rt.method, rt.path, rec.Body.Bytes())
		}
	}
	// The list and the router's own registrations are the same set.
	listed := map[httpapi.Route]bool{}
	for _, rt := range allRoutes {
		listed[httpapi.Route{Method: rt.method, Path: rt.path}] = true
	}
	registered := map[httpapi.Route]bool{}
	for _, rt := range w.server.Routes() {
		registered[rt] = true
		if !listed[rt] {
			t.Errorf("%s %s is registered but not in the robustness list", rt.Method, rt.Path)
		}
	}
	for rt := range listed {
		if !registered[rt] {
			t.Errorf("%s %s is listed but not registered", rt.Method, rt.Path)
		}
	}
}

// TestRobustness_RefusedWriteChangesNothing sends each write route a request
// it must refuse, some of them valid in part (a good location before a bad
// one, a good title beside a bad status), and compares what the read routes
// answer before and after.
func TestRobustness_RefusedWriteChangesNothing(t *testing.T) {
	w := newRobustWorld(t)
	up := "/user-products/" + w.userProduct + "/stock/type/seller_warehouse"
	cases := []struct {
		name, method, path, token string
		body                      string
		headers                   []string
	}{
		{"PutStockStaleVersion", "PUT", up, w.tagged.Token, `{"locations":[{"store_id":"` + w.stores[0] + `","quantity":99}]}`, []string{"x-version", "99"}},
		{"PutStockNegativeQuantity", "PUT", up, w.tagged.Token, `{"locations":[{"store_id":"` + w.stores[0] + `","quantity":-1}]}`, []string{"x-version", "0"}},
		{"PutStockUnknownStoreAfterAGoodOne", "PUT", up, w.tagged.Token, `{"locations":[{"store_id":"` + w.stores[0] + `","quantity":7},{"store_id":"nope","quantity":1}]}`, []string{"x-version", "0"}},
		{"PutItemByAnotherSeller", "PUT", "/items/" + w.plainItm, w.tagged.Token, `{"title":"Mine now","price":1}`, nil},
		{"PutItemBadStatusWithGoodTitle", "PUT", "/items/" + w.plainItm, w.plain.Token, `{"title":"Mate nuevo","status":"exploded"}`, nil},
		{"PublishWithHugeQuantity", "POST", "/items", w.plain.Token, `{"title":"x","category_id":"MLA1055","price":10,"listing_type_id":"gold_special","currency_id":"ARS","available_quantity":1e400}`, nil},
		{"AskOwnItem", "POST", "/questions", w.plain.Token, `{"text":"Mine?","item_id":"` + w.plainItm + `"}`, nil},
		{"AnswerOthersQuestion", "POST", "/answers", w.plain.Token, fmt.Sprintf(`{"question_id":%d,"text":"x"}`, w.answered), nil},
		{"HideWithOneUnknownID", "POST", "/my/questions/hidden", w.plain.Token, fmt.Sprintf(`{"question_ids":[%d,999999]}`, w.question), nil},
		{"BlockForAnotherSeller", "POST", fmt.Sprintf("/users/%d/questions_blacklist", w.tagged.ID), w.plain.Token, fmt.Sprintf(`{"user_id":%d}`, w.buyr.ID), nil},
		{"SetTagsNotAList", "PUT", fmt.Sprintf("/operator/users/%d/tags", w.plain.ID), testOperatorToken, `{"tags":"warehouse_management"}`, nil},
		{"ImportWithOneBadRecord", "PUT", "/operator/reference", testOperatorToken, `{"records":[{"kind":"currency","data":{"id":"ZZZ","symbol":"Z","description":"Zed","decimal_places":2}},{"kind":"nope","data":{}}]}`, nil},
		{"UpdateApplicationBadURL", "PUT", fmt.Sprintf("/operator/applications/%d", w.appID), testOperatorToken, `{"callback_url":"not a url","topics":[]}`, nil},
		{"ClockBackwards", "PUT", "/operator/clock", testOperatorToken, `{"now":"2000-01-01T00:00:00Z"}`, nil},
		{"ModerateBadStatus", "PUT", fmt.Sprintf("/operator/questions/%d", w.question), testOperatorToken, `{"status":"EXPLODED"}`, nil},
		{"DeleteQuestionOfAnother", "DELETE", fmt.Sprintf("/questions/%d", w.question), w.tagged.Token, "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := w.snapshot()
			headers := map[string]string{"Authorization": "Bearer " + c.token}
			for i := 0; i+1 < len(c.headers); i += 2 {
				headers[c.headers[i]] = c.headers[i+1]
			}
			rec := w.serve(robustRequest{method: c.method, target: c.path, body: []byte(c.body), headers: headers})
			if err := checkAnswer(rec, w.log); err != nil {
				t.Fatal(err)
			}
			if rec.Code < 400 {
				t.Fatalf("status %d, want a refusal: %s", rec.Code, rec.Body.Bytes())
			}
			if after := w.snapshot(); after != before {
				t.Fatalf("refused with %d, yet state changed:\nbefore:\n%s\nafter:\n%s", rec.Code, before, after)
			}
		})
	}
}

// TestOptions_AnswersJSONWithTheAllowedMethods is the regression test of
// OPTIONS, which the router answered with an empty body and no Content-Type.
func TestOptions_AnswersJSONWithTheAllowedMethods(t *testing.T) {
	ts := newTestServer(t)
	for _, c := range []struct {
		path  string
		allow []any
	}{
		// POST: the route that serves POST /items/multiwarehouse by name
		// holds the position, as POST /users/{id} does for test_user.
		{"/items/MLA1", []any{"GET", "OPTIONS", "POST", "PUT"}},
		{"/health", []any{"GET", "HEAD", "OPTIONS"}},
	} {
		res := ts.do("OPTIONS", c.path, "", nil)
		if res.Status != http.StatusOK {
			t.Fatalf("OPTIONS %s: status %d, want 200", c.path, res.Status)
		}
		if ct := res.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
			t.Fatalf("OPTIONS %s: Content-Type %q", c.path, ct)
		}
		if got := res.Obj()["allow"]; !reflect.DeepEqual(got, c.allow) {
			t.Fatalf("OPTIONS %s: allow %v, want %v", c.path, got, c.allow)
		}
		if got := res.Header.Get("Allow"); got != strings.Join(anyStrings(c.allow), ", ") {
			t.Fatalf("OPTIONS %s: Allow header %q", c.path, got)
		}
	}
	wantError(t, ts.do("OPTIONS", "/nope", "", nil), http.StatusNotFound, "Resource OPTIONS /nope not found")
}

func anyStrings(v []any) []string {
	out := make([]string, len(v))
	for i, s := range v {
		out[i] = s.(string)
	}
	return out
}

// TestRobustness_HugeIdentifiersOnBadgerAreRefusedNot500 sends identifiers
// longer than Badger's key limit (65000 bytes), in bodies, paths and queries:
// the memory store has no such limit, so the property test cannot see a
// storage error turned into a 500.
func TestRobustness_HugeIdentifiersOnBadgerAreRefusedNot500(t *testing.T) {
	st, err := badger.Open(t.TempDir(), badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewManual(testStart)
	m, err := marketplace.New(st, marketplace.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	log := &errorLog{}
	ts := &testServer{t: t, m: m, clock: clk, handler: httpapi.New(m, checked(t, httpapi.Config{OperatorToken: testOperatorToken, ManualClock: clk, Logger: slog.New(log)}))}
	w := &robustWorld{testServer: ts, log: log}
	seller, stores := ts.mustSeller(1)
	item, up := ts.mustMultiItem(seller.Token, stores[0], 2)
	big := strings.Repeat("a", 70000)
	for _, c := range []struct{ m, p, tok, body string }{
		{"POST", "/operator/users", testOperatorToken, `{"nickname":"` + big + `","site_id":"MLA","first_name":"a","last_name":"b"}`},
		{"POST", fmt.Sprintf("/operator/users/%d/stores", seller.ID), testOperatorToken, `{"id":"` + big + `","description":"d","tags":["stock_location"]}`},
		{"PUT", fmt.Sprintf("/operator/users/%d/tags", seller.ID), testOperatorToken, `{"tags":["` + big + `"]}`},
		{"PUT", "/operator/reference", testOperatorToken, `{"records":[{"kind":"currency","data":{"id":"` + big + `","symbol":"Z","description":"Zed","decimal_places":2}}]}`},
		{"POST", "/questions", seller.Token, `{"text":"x","item_id":"` + big + `"}`},
		{"POST", "/items/multiwarehouse", seller.Token, `{"title":"Mate","category_id":"MLA1055","price":10,"listing_type_id":"gold_special","currency_id":"ARS","stock_locations":[{"store_id":"` + big + `","quantity":1}]}`},
		{"POST", "/items/multiwarehouse", seller.Token, `{"title":"Mate","category_id":"MLA1055","price":10,"listing_type_id":"gold_special","currency_id":"ARS","user_product_id":"` + big + `","stock_locations":[{"store_id":"` + stores[0] + `","quantity":1}]}`},
		{"POST", "/items/multiwarehouse", seller.Token, `{"title":"` + big + `","category_id":"MLA1055","price":10,"listing_type_id":"gold_special","currency_id":"ARS","stock_locations":[{"store_id":"` + stores[0] + `","quantity":1}]}`},
		{"PUT", "/items/" + item, seller.Token, `{"title":"` + big + `"}`},
		{"PUT", "/user-products/" + up + "/stock/type/seller_warehouse", seller.Token, `{"locations":[{"store_id":"` + big + `","quantity":1}]}`},
		{"GET", "/items/" + big[:60000], seller.Token, ""},
		{"POST", "/operator/applications", testOperatorToken, fmt.Sprintf(`{"name":"%s","owner_user_id":%d,"callback_url":"https://example.com/x","topics":["questions"]}`, big, seller.ID)},
		{"POST", "/operator/applications", testOperatorToken, fmt.Sprintf(`{"name":"a","owner_user_id":%d,"callback_url":"https://example.com/%s","topics":["questions"]}`, seller.ID, big)},
	} {
		rec := w.serve(robustRequest{method: c.m, target: c.p, body: []byte(c.body), headers: bearer(c.tok, "x-version", "0")})
		if err := checkAnswer(rec, log); err != nil {
			t.Errorf("%s %.60s %.60s: %v", c.m, c.p, c.body, err)
		}
		if rec.Code < 400 {
			t.Errorf("%s %.60s %.60s: status %d, want a refusal", c.m, c.p, c.body, rec.Code)
		}
	}
}
