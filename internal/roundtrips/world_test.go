package roundtrips

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/httpapi"
	"github.com/marketplace/marketplace/internal/pgproxy"
	"github.com/marketplace/marketplace/internal/pgtest"
	"github.com/marketplace/marketplace/journal"
	"github.com/marketplace/marketplace/metrics"
	"github.com/marketplace/marketplace/storage/postgres"
)

// operatorToken is the operator token of the test's server.
const operatorToken = "roundtrips-operator-token-0123456789"

// user is a user created through the operator API.
type user struct {
	ID    int64
	Token string
}

// sale is an order placed through the operator API, with its pack and
// shipment.
type sale struct {
	id, pack, shipment string
}

// world is the server under test, on PostgreSQL through the counting
// proxy, with one of everything the routes act on.
type world struct {
	t       testing.TB
	m       *marketplace.Marketplace
	handler http.Handler
	server  *httpapi.Server
	proxy   *pgproxy.Proxy

	seller, plain, buyer user
	stores               []string
	multiItem, up        string
	plainItem            string
	// buyItem is a multi-origin item with stock for every purchase.
	buyItem            string
	question, answered string
	app                oauthApp
	sale               sale
	snapshot           string

	names atomic.Int64
}

// oauthApp is an application with a redirect URI, for the OAuth routes.
type oauthApp struct {
	ID, ClientID, Secret string
}

const appRedirect = "http://127.0.0.1:9/callback"

// newWorld opens the marketplace on a fresh database reached through the
// proxy, as marketplaced serves it by default (the request journal and the
// metrics on), but without Start: the background work (notification
// delivery, leases, polls of faults and stubs) would add round trips at
// moments no request chooses. The proxy then sees only what the requests
// ask.
func newWorld(t testing.TB) *world {
	t.Helper()
	dbURL := pgtest.NewDatabase(t)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatalf("database URL: %v", err)
	}
	p, err := pgproxy.Start(u.Host)
	if err != nil {
		t.Fatalf("proxy: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	u.Host = p.Addr()
	cfg, err := pgxpool.ParseConfig(u.String())
	if err != nil {
		t.Fatalf("pool config: %v", err)
	}
	// pgxpool pings a connection that has been idle for a second before it
	// lends it out: a round trip that depends on the time between
	// requests, not on the route. Under load no connection idles that
	// long; here it would make the counts depend on the machine's speed.
	cfg.ShouldPing = func(context.Context, pgxpool.ShouldPingParams) bool { return false }
	// No ROLLBACK of a lingering View falls between two requests, and no
	// ping of the connection that listens for changes (the servers'
	// memory of tokens listens) falls anywhere.
	st, err := postgres.OpenConfig(context.Background(), cfg, postgres.Options{ViewLinger: time.Hour, ListenPing: time.Hour})
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	// The wall clock, as marketplaced runs by default. A manual clock on
	// a shared store is read from the database before every request and
	// polled ten times a second (sharedclock.go), which would count in
	// every figure.
	m, err := marketplace.New(st, marketplace.Options{})
	if err != nil {
		t.Fatalf("new marketplace: %v", err)
	}
	t.Cleanup(func() {
		_ = m.Close()
		_ = st.Close()
	})
	met := metrics.New()
	met.Engine(m)
	h := httpapi.New(m, httpapi.Config{OperatorToken: operatorToken,
		Journal: journal.New(journal.DefaultSize), Metrics: met})
	w := &world{t: t, m: m, handler: h, server: h, proxy: p}
	w.seed()
	return w
}

// seed creates the world's records through the API.
func (w *world) seed() {
	w.t.Helper()
	w.seller = w.mustUser("normal", "warehouse_management")
	w.stores = []string{w.mustStore(w.seller.ID), w.mustStore(w.seller.ID)}
	w.plain = w.mustUser("normal")
	w.buyer = w.mustUser("normal")
	w.multiItem, w.up = w.mustMultiItem()
	w.plainItem = w.mustPlainItem()
	b := w.multiItemBody()
	b["stock_locations"] = []any{map[string]any{"store_id": w.stores[0], "quantity": 1000}}
	w.buyItem = w.must(201, "POST", "/items/multiwarehouse", w.seller.Token, b).obj()["id"].(string)
	w.question = w.mustAsk(w.buyer, w.plainItem)
	w.answered = w.mustAsk(w.buyer, w.multiItem)
	w.must(200, "POST", "/answers", w.seller.Token, map[string]any{"question_id": num(w.answered), "text": "All of them"})
	w.app = w.mustApp(w.seller.ID)
	w.sale = w.mustSale(map[string]any{"buyer_id": w.buyer.ID, "item_id": w.plainItem, "quantity": 1})
	// The background work computes response times; the test runs
	// without it.
	if err := w.m.ResponseTimes.Refresh(context.Background()); err != nil {
		w.t.Fatalf("refresh response times: %v", err)
	}
	snap := w.must(201, "POST", "/operator/snapshots", operatorToken, map[string]any{"name": "world"})
	w.snapshot = idString(snap.obj()["id"])
}

// name returns a name no other call returns.
func (w *world) name(prefix string) string {
	return fmt.Sprintf("%s_%d", prefix, w.names.Add(1))
}

func (w *world) mustUser(tags ...string) user {
	w.t.Helper()
	res := w.must(201, "POST", "/operator/users", operatorToken, map[string]any{
		"nickname": w.name("USER"), "site_id": "MLA", "first_name": "Test", "last_name": "User", "tags": tags})
	return user{ID: int64(res.obj()["id"].(float64)), Token: res.obj()["access_token"].(string)}
}

func (w *world) mustStore(userID int64) string {
	w.t.Helper()
	res := w.must(201, "POST", fmt.Sprintf("/operator/users/%d/stores", userID), operatorToken, storeBody())
	return res.obj()["id"].(string)
}

func storeBody() map[string]any {
	return map[string]any{"description": "warehouse", "tags": []string{"stock_location"},
		"location": map[string]any{"address_line": "Calle 1 100", "city": "Buenos Aires", "state": "Capital Federal",
			"country": "Argentina", "zip_code": "1000"}}
}

func itemBody() map[string]any {
	return map[string]any{"title": "Zapatillas Running Niño", "category_id": "MLA1055", "price": 1500.5,
		"listing_type_id": "gold_special", "currency_id": "ARS", "condition": "new", "channels": []string{"marketplace"}}
}

// multiItemBody is a multi-origin item with 5 units in each of the
// seller's stores.
func (w *world) multiItemBody() map[string]any {
	b := itemBody()
	b["stock_locations"] = []any{map[string]any{"store_id": w.stores[0], "quantity": 5},
		map[string]any{"store_id": w.stores[1], "quantity": 4}}
	return b
}

func plainItemBody() map[string]any {
	b := itemBody()
	b["title"], b["available_quantity"] = "Mate de calabaza", 1000
	return b
}

func (w *world) mustMultiItem() (string, string) {
	w.t.Helper()
	res := w.must(201, "POST", "/items/multiwarehouse", w.seller.Token, w.multiItemBody())
	return res.obj()["id"].(string), res.obj()["user_product_id"].(string)
}

func (w *world) mustPlainItem() string {
	w.t.Helper()
	return w.must(201, "POST", "/items", w.plain.Token, plainItemBody()).obj()["id"].(string)
}

func (w *world) mustAsk(u user, item string) string {
	w.t.Helper()
	res := w.must(201, "POST", "/questions", u.Token, map[string]any{"text": w.name("Is it cured? Q"), "item_id": item})
	return idString(res.obj()["id"])
}

func (w *world) mustApp(owner int64) oauthApp {
	w.t.Helper()
	res := w.must(201, "POST", "/operator/applications", operatorToken, map[string]any{
		"name": "My app", "owner_user_id": owner, "callback_url": "https://example.com/notifications",
		"topics": []string{"questions"}, "redirect_uris": []string{appRedirect}})
	o := res.obj()
	return oauthApp{ID: idString(o["id"]), ClientID: idString(o["client_id"]), Secret: fmt.Sprint(o["client_secret"])}
}

func (w *world) mustSale(body map[string]any) sale {
	w.t.Helper()
	o := w.must(201, "POST", "/operator/orders", operatorToken, body).obj()
	return sale{id: idString(o["id"]), pack: idString(o["pack_id"]), shipment: idString(o["shipping"].(map[string]any)["id"])}
}

// mustCode asks the operator route for an authorization code of the
// seller for the world's application.
func (w *world) mustCode() string {
	w.t.Helper()
	res := w.must(201, "POST", "/operator/authorizations", operatorToken, map[string]any{
		"client_id": num(w.app.ClientID), "user_id": w.seller.ID, "redirect_uri": appRedirect})
	return res.obj()["code"].(string)
}

// idString writes a JSON id (a number or a string) as a path writes it.
func idString(v any) string {
	if f, ok := v.(float64); ok {
		return strconv.FormatInt(int64(f), 10)
	}
	return fmt.Sprint(v)
}

// num is a decimal id as a JSON number.
func num(id string) int64 {
	n, _ := strconv.ParseInt(id, 10, 64)
	return n
}

// request is one request to the server.
type request struct {
	method, target, token string
	// body is nil, a string sent as it is, or a value sent as JSON.
	body    any
	headers map[string]string
}

// response is one answer.
type response struct {
	status int
	header http.Header
	raw    []byte
}

func (r response) obj() map[string]any {
	var o map[string]any
	_ = json.Unmarshal(r.raw, &o)
	return o
}

// serve sends r to the handler, in this goroutine: when it returns, every
// round trip of the request has been made.
func (w *world) serve(r request) response {
	w.t.Helper()
	var rd io.Reader
	switch b := r.body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			w.t.Fatalf("encode body: %v", err)
		}
		rd = bytes.NewReader(enc)
	}
	req := httptest.NewRequest(r.method, r.target, rd)
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range r.headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	w.handler.ServeHTTP(rec, req)
	return response{status: rec.Code, header: rec.Header(), raw: rec.Body.Bytes()}
}

// must sends a request of the setup and fails the test unless it gets
// status.
func (w *world) must(status int, method, target, token string, body any) response {
	w.t.Helper()
	res := w.serve(request{method: method, target: target, token: token, body: body})
	if res.status != status {
		w.t.Fatalf("%s %s: %d, want %d: %s", method, target, res.status, status, res.raw)
	}
	return res
}
