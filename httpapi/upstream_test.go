package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/httpapi"
	"github.com/marketplace/marketplace/journal"
	"github.com/marketplace/marketplace/recording"
	"github.com/marketplace/marketplace/storage/memory"
)

// Secrets of a session with the real API, none of which may be recorded.
const (
	realUserToken     = "APP_USR-7311265539467373-120712-8f1e2a9b0c3d4e5f60718293a4b5c6d7-1234567"
	realRefreshToken  = "TG-6752f1a2b3c4d5e6f7a8b9c0-1234567"
	realCode          = "TG-6752f1a2b3c4d5e6f7a8b9c1-1234567"
	realClientSecret  = "Zx8qW3eR5tY7uI9oP1aS2dF4gH6jK8lM"
	newAccessToken    = "APP_USR-7311265539467373-120712-00aa11bb22cc33dd44ee55ff66778899-1234567"
	newRefreshToken   = "TG-6752f1a2b3c4d5e6f7a8b9ff-1234567"
	realIDToken       = "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3In0.c2lnbmF0dXJlLW9mLXRoZS1hcGk"
	realSessionCookie = "ssid=ghy-120712-Qn7PzR4sT6vX8yA0-1234567"
)

// seen is a request as the local upstream received it.
type seen struct {
	Method, Path, RawQuery string
	Header                 http.Header
	Body                   string
}

// localAPI is an httptest server standing in for the public API, with
// answers in its shapes, that remembers what it was sent.
type localAPI struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []seen
}

func newLocalAPI(t *testing.T) *localAPI {
	t.Helper()
	api := &localAPI{}
	api.Server = httptest.NewServer(http.HandlerFunc(api.serve))
	t.Cleanup(api.Close)
	return api
}

func (api *localAPI) serve(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	api.mu.Lock()
	api.reqs = append(api.reqs, seen{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), string(b)})
	api.mu.Unlock()
	h := w.Header()
	h.Set("X-Request-Id", "f3a9c2d1-0b7e-4c55-9d1e-2f8a6b4c3e21")
	h.Set("Date", "Mon, 07 Dec 2026 12:00:00 GMT")
	h.Set("Set-Cookie", realSessionCookie+"; Path=/; HttpOnly")
	h.Set("Content-Type", "application/json;charset=UTF-8")
	switch r.URL.Path {
	case "/oauth/token":
		_, _ = io.WriteString(w, `{"access_token":"`+newAccessToken+`","token_type":"Bearer","expires_in":21600,"scope":"offline_access read write","user_id":1234567,"refresh_token":"`+newRefreshToken+`","id_token":"`+realIDToken+`"}`)
	case "/users/me":
		_, _ = io.WriteString(w, `{"id":1234567,"nickname":"TESTUSER_REAL","site_id":"MLA","country_id":"AR"}`)
	case "/items/MLA1":
		// The API's member order: replayed as body, byte for byte.
		_, _ = io.WriteString(w, `{"id":"MLA1","site_id":"MLA","title":"Real item","price":1500.5,"currency_id":"ARS"}`)
	case "/sites/MLA":
		// Compact with sorted members: replayed as jsonBody.
		h.Set("Cache-Control", "max-age=3600")
		_, _ = io.WriteString(w, `{"default_currency_id":"ARS","id":"MLA","name":"Argentina"}`)
	case "/claims/search":
		_, _ = io.WriteString(w, "{\n  \"paging\": {\"total\": 1, \"offset\": 0, \"limit\": 30},\n  \"data\": [{\"id\": 5000001, \"status\": \"opened\"}]\n}\n")
	case "/visits/items":
		h.Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "MLA1: 42 visits\n")
	case "/answers":
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"question_id":5036111111,"text":"Hola, sí","status":"ACTIVE","date_created":"2026-12-07T09:00:00.000-04:00"}`)
	case "/moved":
		h.Set("Location", "/items/MLA1")
		w.WriteHeader(http.StatusFound)
	case "/big":
		_, _ = w.Write(bytes.Repeat([]byte("x"), 4096))
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"message":"resource not found","error":"not_found","status":404,"cause":[]}`)
	}
}

// got returns the requests the upstream received for path.
func (api *localAPI) got(path string) []seen {
	api.mu.Lock()
	defer api.mu.Unlock()
	var out []seen
	for _, r := range api.reqs {
		if r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

func (api *localAPI) count() int {
	api.mu.Lock()
	defer api.mu.Unlock()
	return len(api.reqs)
}

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// proxyServer is the server over HTTP, with its engine and journal.
type proxyServer struct {
	t   testing.TB
	m   *marketplace.Marketplace
	url string
	jnl *journal.Journal
}

func newProxyServer(t testing.TB, cfg httpapi.Config) *proxyServer {
	t.Helper()
	m, err := marketplace.New(memory.New(), marketplace.Options{Clock: clock.NewManual(testStart)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	cfg.OperatorToken = testOperatorToken
	if cfg.Journal == nil {
		cfg.Journal = journal.New(100)
	}
	srv := httptest.NewServer(httpapi.New(m, checked(t, cfg)))
	t.Cleanup(srv.Close)
	return &proxyServer{t: t, m: m, url: srv.URL, jnl: cfg.Journal}
}

// answer is an answer as a client received it.
type answer struct {
	Status int
	Header http.Header
	Body   []byte
}

func (a answer) obj() map[string]any {
	var m map[string]any
	_ = json.Unmarshal(a.Body, &m)
	return m
}

// send sends a request; headers are name, value pairs.
func fwdSend(t testing.TB, base, method, target, body string, headers ...string) answer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base+target, rd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{res.StatusCode, res.Header, b}
}

func TestUpstream_EmulatedRoutesNeverReachIt(t *testing.T) {
	api := newLocalAPI(t)
	ps := newProxyServer(t, httpapi.Config{Upstream: mustURL(t, api.URL)})
	for _, target := range []string{"/sites/MLA", "/currencies", "/items/MLA1", "/users/me", "/health", "/operator/stubs", "/operator/nothing-here"} {
		fwdSend(t, ps.url, "GET", target, "", "Authorization", "Bearer "+realUserToken)
	}
	fwdSend(t, ps.url, "POST", "/oauth/token", "grant_type=refresh_token&refresh_token="+realRefreshToken,
		"Content-Type", "application/x-www-form-urlencoded")
	if n := api.count(); n != 0 {
		t.Errorf("the upstream received %d requests: %v; want none", n, api.reqs)
	}
}

func TestUpstream_StubOnlyRoutesReachItWithTheCallersAuthorization(t *testing.T) {
	api := newLocalAPI(t)
	ps := newProxyServer(t, httpapi.Config{Upstream: mustURL(t, api.URL+"/")})
	a := fwdSend(t, ps.url, "GET", "/claims/search?status=opened&limit=30", "",
		"Authorization", "Bearer "+realUserToken, "Accept-Encoding", "identity", "X-Format-New", "true")
	got := api.got("/claims/search")
	if len(got) != 1 {
		t.Fatalf("the upstream received %v; want one GET /claims/search", api.reqs)
	}
	r := got[0]
	if r.Method != "GET" || r.RawQuery != "status=opened&limit=30" || r.Header.Get("Authorization") != "Bearer "+realUserToken ||
		r.Header.Get("X-Format-New") != "true" {
		t.Errorf("the upstream received %+v; want the method, the query and the caller's headers", r)
	}
	want := "{\n  \"paging\": {\"total\": 1, \"offset\": 0, \"limit\": 30},\n  \"data\": [{\"id\": 5000001, \"status\": \"opened\"}]\n}\n"
	if a.Status != 200 || string(a.Body) != want {
		t.Errorf("relayed %d %q; want 200 and the upstream's body as it came", a.Status, a.Body)
	}
	if a.Header.Get("X-Request-Id") != "f3a9c2d1-0b7e-4c55-9d1e-2f8a6b4c3e21" || a.Header.Get("Content-Type") != "application/json;charset=UTF-8" {
		t.Errorf("relayed headers %v; want the upstream's", a.Header)
	}

	// A body goes along, and a status other than 200 is relayed as it is.
	a = fwdSend(t, ps.url, "POST", "/seller-promotions/items/MLA1234567", `{"text":"hola"}`,
		"Authorization", "Bearer "+realUserToken, "Content-Type", "application/json")
	posted := api.got("/seller-promotions/items/MLA1234567")
	if len(posted) != 1 || posted[0].Body != `{"text":"hola"}` || posted[0].Method != "POST" {
		t.Errorf("the upstream received %+v; want the POST with its body", posted)
	}
	if a.Status != 404 || a.obj()["error"] != "not_found" {
		t.Errorf("relayed %d %s; want the upstream's 404", a.Status, a.Body)
	}

	// A stub answers before the upstream is asked.
	ps.m.Stubs.Create(t.Context(), []byte(`{"request":{"method":"GET","urlPath":"/visits/items"},"response":{"status":200,"jsonBody":{"stub":true}},"marketplace":{"public":true}}`))
	a = fwdSend(t, ps.url, "GET", "/visits/items?ids=MLA1", "")
	if string(a.Body) != `{"stub":true}` || len(api.got("/visits/items")) != 0 {
		t.Errorf("answered %s, upstream asked %d times; want the stub's answer", a.Body, len(api.got("/visits/items")))
	}

	// A redirect is relayed, not followed.
	a = fwdSend(t, ps.url, "GET", "/moved", "")
	if a.Status != http.StatusFound || a.Header.Get("Location") != "/items/MLA1" || len(api.got("/items/MLA1")) != 0 {
		t.Errorf("relayed %d Location %q; want the 302 as it came", a.Status, a.Header.Get("Location"))
	}

	// The journal marks the forwarded requests.
	entries, _, err := ps.jnl.List(journal.Query{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	forwarded := 0
	for _, e := range entries {
		if e.Forwarded {
			forwarded++
		}
		if e.Path == "/visits/items" && e.Forwarded {
			t.Error("the stub's answer is marked forwarded")
		}
	}
	if forwarded != 3 {
		t.Errorf("%d journal entries marked forwarded; want 3", forwarded)
	}
}

func TestUpstream_AllReachesItForEveryPublicRequestNeverForOperatorOrOperations(t *testing.T) {
	api := newLocalAPI(t)
	ps := newProxyServer(t, httpapi.Config{Upstream: mustURL(t, api.URL), UpstreamAll: true})
	ps.m.Stubs.Create(t.Context(), []byte(`{"request":{"urlPath":"/visits/items"},"response":{"status":200,"body":"stub"},"marketplace":{"public":true}}`))
	for _, c := range []struct{ method, target, want string }{
		{"GET", "/sites/MLA", `{"default_currency_id":"ARS","id":"MLA","name":"Argentina"}`},
		{"GET", "/items/MLA1", `{"id":"MLA1","site_id":"MLA","title":"Real item","price":1500.5,"currency_id":"ARS"}`},
		{"GET", "/users/me", `{"id":1234567,"nickname":"TESTUSER_REAL","site_id":"MLA","country_id":"AR"}`},
		{"GET", "/visits/items?ids=MLA1", "MLA1: 42 visits\n"},
	} {
		a := fwdSend(t, ps.url, c.method, c.target, "", "Authorization", "Bearer "+realUserToken)
		if a.Status != 200 || string(a.Body) != c.want {
			t.Errorf("%s %s: %d %s; want the upstream's answer %s", c.method, c.target, a.Status, a.Body, c.want)
		}
	}
	before := api.count()
	for _, c := range []struct{ method, target string }{
		{"GET", "/health"}, {"GET", "/version"}, {"GET", "/metrics"}, {"GET", "/openapi.json"}, {"POST", "/health"},
		{"GET", "/operator/stubs"}, {"GET", "/operator/recordings/status"}, {"GET", "/operator/unknown"}, {"DELETE", "/operator/clock"},
		{"GET", "/console"}, {"GET", "/favicon.ico"},
	} {
		fwdSend(t, ps.url, c.method, c.target, "", "Authorization", "Bearer "+testOperatorToken)
	}
	if n := api.count() - before; n != 0 {
		t.Errorf("the upstream received %d operator or operations requests; want none", n)
	}
}

func TestUpstream_ItsFailureIsA502InTheErrorShape(t *testing.T) {
	check := func(t *testing.T, a answer, wantIn string) {
		t.Helper()
		m := a.obj()
		if a.Status != http.StatusBadGateway || m["status"] != 502.0 || m["error"] != "bad_gateway" ||
			!strings.Contains(m["message"].(string), wantIn) || m["cause"] == nil {
			t.Errorf("answered %d %s; want 502 bad_gateway in the error shape, saying %q", a.Status, a.Body, wantIn)
		}
		if bytes.Contains(a.Body, []byte("APP_USR")) {
			t.Errorf("the error quotes the token: %s", a.Body)
		}
	}
	t.Run("unreachable", func(t *testing.T) {
		gone := httptest.NewServer(http.NotFoundHandler())
		gone.Close()
		ps := newProxyServer(t, httpapi.Config{Upstream: mustURL(t, gone.URL)})
		check(t, fwdSend(t, ps.url, "GET", "/claims/search?access_token="+realUserToken, ""), "The upstream http://127.0.0.1")
	})
	t.Run("too slow", func(t *testing.T) {
		release := make(chan struct{})
		slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		t.Cleanup(slow.Close)
		t.Cleanup(func() { close(release) })
		ps := newProxyServer(t, httpapi.Config{Upstream: mustURL(t, slow.URL), UpstreamTimeout: 50 * time.Millisecond})
		check(t, fwdSend(t, ps.url, "GET", "/claims/search", ""), "no answer within 50ms")
	})
	t.Run("too large", func(t *testing.T) {
		api := newLocalAPI(t)
		ps := newProxyServer(t, httpapi.Config{Upstream: mustURL(t, api.URL), UpstreamMaxBytes: 4095})
		check(t, fwdSend(t, ps.url, "GET", "/big", ""), "more than 4095 bytes")
		if a := fwdSend(t, ps.url, "GET", "/claims/search", ""); a.Status != 200 {
			t.Errorf("an answer within the bound: %d", a.Status)
		}
	})
}

// session is a session with the real API full of secrets: an
// authorization code and a refresh exchanged for tokens, reads with the
// token in the header and in the query, a write with a JSON body.
var session = []struct {
	method, target, body string
	headers              []string
}{
	{"POST", "/oauth/token", "grant_type=authorization_code&client_id=7311265539467373&client_secret=" + realClientSecret +
		"&code=" + realCode + "&redirect_uri=https%3A%2F%2Fapp.example%2Fcallback",
		[]string{"Content-Type", "application/x-www-form-urlencoded", "Accept", "application/json"}},
	{"POST", "/oauth/token", `{"grant_type":"refresh_token","client_id":"7311265539467373","client_secret":"` + realClientSecret +
		`","refresh_token":"` + realRefreshToken + `"}`, []string{"Content-Type", "application/json"}},
	{"GET", "/users/me", "", []string{"Authorization", "Bearer " + realUserToken, "Cookie", realSessionCookie}},
	{"GET", "/users/me?access_token=" + realUserToken, "", nil},
	{"GET", "/items/MLA1", "", []string{"Authorization", "Bearer " + realUserToken}},
	{"GET", "/sites/MLA", "", []string{"Authorization", "Bearer " + realUserToken}},
	{"GET", "/claims/search?status=opened", "", []string{"Authorization", "Bearer " + realUserToken}},
	{"GET", "/visits/items?ids=MLA1&access_token=" + realUserToken, "", nil},
	{"POST", "/answers", `{"question_id":5036111111,"text":"Hola, sí","access_token":"` + realUserToken + `"}`,
		[]string{"Authorization", "Bearer " + realUserToken, "Content-Type", "application/json", "X-Api-Key", realClientSecret}},
}

func playSession(t *testing.T, base string) []answer {
	t.Helper()
	var out []answer
	for _, r := range session {
		out = append(out, fwdSend(t, base, r.method, r.target, r.body, r.headers...))
	}
	return out
}

func TestRecording_ASessionFullOfSecretsLeavesNoneInTheFolder(t *testing.T) {
	api := newLocalAPI(t)
	dir := t.TempDir()
	rec := mustRecorder(t, dir, false)
	ps := newProxyServer(t, httpapi.Config{Upstream: mustURL(t, api.URL), UpstreamAll: true, Record: rec})
	live := playSession(t, ps.url)
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	// GET /users/me with the token in the header or in the query is one
	// distinct request: the token is no part of its pattern.
	if len(files) != len(session)-1 {
		t.Errorf("%d files; want %d, one per distinct request", len(files), len(session)-1)
	}
	secrets := []string{realUserToken, realRefreshToken, realCode, realClientSecret, newAccessToken, newRefreshToken, realIDToken,
		"ssid=", "ghy-120712", "Bearer", "Authorization", "X-Api-Key", "Set-Cookie", "APP_USR-", "TG-", "eyJ"}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds %q:\n%s", filepath.Base(f), s, b)
			}
		}
	}
	// The folder plays the session back: the tokens the upstream gave
	// are redacted, everything else is as it came.
	replay := newProxyServer(t, httpapi.Config{})
	loadFolder(t, replay, dir)
	for i, a := range playSession(t, replay.url) {
		r := session[i]
		if a.Status != live[i].Status {
			t.Errorf("%s %s replayed %d %s; want %d", r.method, r.target, a.Status, a.Body, live[i].Status)
		}
		if r.target != "/oauth/token" && !bytes.Equal(a.Body, live[i].Body) {
			t.Errorf("%s %s replayed %s; want %s", r.method, r.target, a.Body, live[i].Body)
		}
	}
}

func mustRecorder(t *testing.T, dir string, repeats bool) *recording.Recorder {
	t.Helper()
	r, err := recording.NewRecorder(recording.Options{Dir: dir, Repeats: repeats})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// loadFolder loads the stub mappings of a folder as -stubs does: every
// .json file, in name order.
func loadFolder(t testing.TB, ps *proxyServer, dir string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	slices.Sort(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ps.m.Stubs.Load(t.Context(), b); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
}

func TestUpstream_AForwardedPathKeepsNoTokenInTheJournal(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"MLA1"}`)
	}))
	t.Cleanup(api.Close)
	ps := newProxyServer(t, httpapi.Config{Upstream: mustURL(t, api.URL), UpstreamAll: true})
	// A fixture may give a user a token of any shape.
	const token = "fixture-token-of-any-shape-42"
	if _, _, err := ps.m.Accounts.EnsureUser(t.Context(), token, accounts.NewUser{Nickname: "FIXTURE_USER", SiteID: "MLA"}, nil); err != nil {
		t.Fatal(err)
	}
	// The route's template takes the token for an item id, but no route
	// read it: the upstream answered.
	if a := fwdSend(t, ps.url, "GET", "/items/"+token, ""); a.Status != http.StatusOK {
		t.Fatalf("answered %d; want the upstream's 200", a.Status)
	}
	entries, _, err := ps.jnl.List(journal.Query{Limit: 10})
	if err != nil || len(entries) != 1 {
		t.Fatalf("journal: %v, %v", entries, err)
	}
	if entries[0].Path != "/items/REDACTED" || !entries[0].Forwarded {
		t.Errorf("journal path %q, forwarded %v; want /items/REDACTED, forwarded", entries[0].Path, entries[0].Forwarded)
	}
}
