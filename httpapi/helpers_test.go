package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/httpapi"
	"github.com/marketplace/marketplace/storage/memory"
)

// testOperatorToken is the operator token of every test server.
const testOperatorToken = "test-operator-token-0123456789"

// testServer is the engine on the memory store behind the HTTP adapter, with a
// manual clock set to a fixed time.
type testServer struct {
	t       testing.TB
	m       *marketplace.Marketplace
	clock   *clock.Manual
	handler http.Handler
}

// testStart is the manual clock's start: a Wednesday, 12:00 in Buenos Aires.
var testStart = time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC)

func newTestServer(t testing.TB) *testServer {
	t.Helper()
	clk := clock.NewManual(testStart)
	m, err := marketplace.New(memory.New(), marketplace.Options{Clock: clk})
	if err != nil {
		t.Fatalf("new marketplace: %v", err)
	}
	t.Cleanup(func() { _ = m.Close() })
	h := httpapi.New(m, checked(t, httpapi.Config{OperatorToken: testOperatorToken, ManualClock: clk}))
	return &testServer{t: t, m: m, clock: clk, handler: h}
}

// response is one answer: status, headers and the body both raw and decoded
// (into any: objects become map[string]any, numbers float64).
type response struct {
	Status int
	Header http.Header
	Raw    []byte
	Body   any
}

// Obj returns the body as an object.
func (r response) Obj() map[string]any {
	m, _ := r.Body.(map[string]any)
	return m
}

// Arr returns the body as an array.
func (r response) Arr() []any {
	a, _ := r.Body.([]any)
	return a
}

// do sends a request; body may be nil, a string (sent as is) or a value
// encoded as JSON; token "" sends none.
func (ts *testServer) do(method, path, token string, body any, headers ...string) response {
	ts.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			ts.t.Fatalf("encode body: %v", err)
		}
		rd = bytes.NewReader(enc)
	}
	req := httptest.NewRequest(method, path, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	ts.handler.ServeHTTP(rec, req)
	res := response{Status: rec.Code, Header: rec.Header(), Raw: rec.Body.Bytes()}
	if len(res.Raw) > 0 {
		if err := json.Unmarshal(res.Raw, &res.Body); err != nil {
			ts.t.Fatalf("%s %s: answer is not JSON: %v: %s", method, path, err, res.Raw)
		}
	}
	return res
}

// user is a user created through the operator API.
type user struct {
	ID    int64
	Token string
}

// operatorAPI is what the setup helpers need of a server, in process
// (testServer) or over HTTP (liveServer): calls to the operator routes.
type operatorAPI interface {
	tb() testing.TB
	operator(method, path string, body any) response
}

func (ts *testServer) tb() testing.TB { return ts.t }

func (ts *testServer) operator(method, path string, body any) response {
	ts.t.Helper()
	return ts.do(method, path, testOperatorToken, body)
}

// mustUser creates a user on site with tags and returns its id and token.
func (ts *testServer) mustUser(site string, tags ...string) user {
	ts.t.Helper()
	return createUser(ts, site, tags...)
}

func createUser(s operatorAPI, site string, tags ...string) user {
	s.tb().Helper()
	if tags == nil {
		tags = []string{}
	}
	res := s.operator("POST", "/operator/users", map[string]any{
		"nickname": fmt.Sprintf("USER_%d", time.Now().UnixNano()), "site_id": site,
		"first_name": "Test", "last_name": "User", "tags": tags,
	})
	if res.Status != http.StatusCreated {
		s.tb().Fatalf("create user: %d %s", res.Status, res.Raw)
	}
	return user{ID: int64(res.Obj()["id"].(float64)), Token: res.Obj()["access_token"].(string)}
}

// mustSeller creates an MLA seller with warehouse_management and n stores
// tagged stock_location; it returns the seller and the store ids.
func (ts *testServer) mustSeller(n int) (user, []string) {
	ts.t.Helper()
	u := ts.mustUser("MLA", "normal", "warehouse_management")
	var stores []string
	for i := 0; i < n; i++ {
		stores = append(stores, ts.mustStore(u.ID, "stock_location"))
	}
	return u, stores
}

// mustStore creates a store of userID with tags and returns its id.
func (ts *testServer) mustStore(userID int64, tags ...string) string {
	ts.t.Helper()
	if tags == nil {
		tags = []string{}
	}
	res := ts.do("POST", fmt.Sprintf("/operator/users/%d/stores", userID), testOperatorToken, map[string]any{
		"description": "warehouse", "tags": tags,
		"location": map[string]any{"address_line": "Calle 1 100", "city": "Buenos Aires", "state": "Capital Federal", "country": "Argentina", "zip_code": "1000"},
	})
	if res.Status != http.StatusCreated {
		ts.t.Fatalf("create store: %d %s", res.Status, res.Raw)
	}
	return res.Obj()["id"].(string)
}

// wantError checks that res is an error answer with status and message.
func wantError(t testing.TB, res response, status int, message string) {
	t.Helper()
	if res.Status != status {
		t.Fatalf("status = %d, want %d; body %s", res.Status, status, res.Raw)
	}
	o := res.Obj()
	if o == nil {
		t.Fatalf("error body is not an object: %s", res.Raw)
	}
	if message != "" && o["message"] != message {
		t.Fatalf("message = %q, want %q", o["message"], message)
	}
	if int(o["status"].(float64)) != status {
		t.Fatalf("body status = %v, want %d", o["status"], status)
	}
	if _, ok := o["error"].(string); !ok {
		t.Fatalf("body has no error code: %s", res.Raw)
	}
	if c, ok := o["cause"].([]any); !ok || c == nil {
		t.Fatalf("body cause is not an array: %s", res.Raw)
	}
}

// checked returns cfg with every answer checked against the OpenAPI
// document: an answer that breaks it fails the test t.
//
// A fuzz target's server is shared by its inputs, where only the input's
// own *testing.T may fail: there the answers are left unchecked (the
// robustness property tests send the same inputs, checked). Benchmarks are
// left unchecked too: they measure the server, not the validator.
func checked(t testing.TB, cfg httpapi.Config) httpapi.Config {
	switch t.(type) {
	case *testing.F, *testing.B:
		return cfg
	}
	cfg.CheckResponse = func(problem string) { t.Error(problem) }
	return cfg
}
