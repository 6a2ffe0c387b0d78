package httpapi_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/marketplace/marketplace/fixtures"
	"github.com/marketplace/marketplace/httpapi"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/marketplacetest"
	"github.com/marketplace/marketplace/storage"
)

// namesAPath is the part of a refusal that names the path at fault.
var namesAPath = regexp.MustCompile(`it could match (a path under )?/`)

// errorMessage is the message of an answer in the error shape.
func errorMessage(t *testing.T, body string) string {
	t.Helper()
	var e struct {
		Message string `json:"message"`
		Status  int    `json:"status"`
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Status != 400 {
		t.Fatalf("not a 400 in the error shape: %s", body)
	}
	return e.Message
}

func TestStubs_NoStubMayTakeAnOperatorConsoleOrOperationsRoute(t *testing.T) {
	srv := marketplacetest.NewServer(t)
	own := httpapi.OwnRoutes()
	if len(own) < 60 || !containsPath(own, "/health") || !containsPath(own, "/console/app.js") || !containsPath(own, "/operator/stubs/1") {
		t.Fatalf("own routes from the route table: %v", own)
	}
	for _, rt := range own {
		quoted := regexp.QuoteMeta(rt.Path)
		forms := []struct{ kind, value string }{
			{"url", rt.Path},
			{"urlPath", rt.Path},
			{"urlPathPattern", quoted},
			{"urlPathPattern", quoted + ".*"},
			{"urlPattern", quoted + `(\?.*)?`},
		}
		if i := strings.LastIndex(rt.Path, "/"); i > 0 {
			forms = append(forms, struct{ kind, value string }{"urlPathTemplate", rt.Path[:i] + "/{x}"})
		}
		for _, f := range forms {
			v, _ := json.Marshal(f.value)
			st, body := postStub(t, srv, `{"request": {"method": "`+rt.Method+`", "`+f.kind+`": `+string(v)+`},
				"response": {"status": 200}, "marketplace": {"override": true, "public": true}}`)
			if st != 400 {
				t.Errorf("%s %s as %s %s: %d %s", rt.Method, rt.Path, f.kind, f.value, st, body)
				continue
			}
			if msg := errorMessage(t, body); !namesAPath.MatchString(msg) || !strings.Contains(msg, "request."+f.kind) {
				t.Errorf("%s %s as %s: the message names no path: %s", rt.Method, rt.Path, f.kind, msg)
			}
		}
	}
	if _, _, body := send(t, srv, "GET", "/operator/stubs", srv.OperatorToken, ""); !strings.Contains(body, `"total":0`) {
		t.Fatalf("a refused stub was kept: %s", body)
	}
}

func containsPath(rs []httpapi.Route, path string) bool {
	for _, r := range rs {
		if r.Path == path {
			return true
		}
	}
	return false
}

// The stubs that took the operator's routes before the rule.
func TestStubs_TheOperatorRoutesStayTheOperatorsWhateverStubIsAsked(t *testing.T) {
	srv := marketplacetest.NewServer(t)
	id := srv.Stub(t, `{"request": {"urlPath": "/v1/claims"}, "response": {"status": 200}}`)
	for _, mapping := range []string{
		`{"request": {"urlPathPattern": "/operator/stubs.*"}, "response": {"status": 200}, "marketplace": {"override": true}}`,
		`{"request": {"urlPathPattern": "/operator/.*"}, "response": {"status": 200}, "marketplace": {"public": true}}`,
		`{"request": {"method": "DELETE", "urlPathTemplate": "/operator/stubs/{id}"}, "response": {"status": 200}, "marketplace": {"override": true}}`,
		`{"request": {"urlPattern": ".*"}, "response": {"status": 200}, "marketplace": {"override": true, "public": true}}`,
		`{"request": {"method": "POST", "urlPath": "/operator/reset"}, "response": {"status": 204}, "marketplace": {"override": true}}`,
	} {
		if st, body := postStub(t, srv, mapping); st != 400 || !namesAPath.MatchString(errorMessage(t, body)) {
			t.Errorf("%s: %d %s", mapping, st, body)
		}
	}
	if st, _, _ := send(t, srv, "GET", "/operator/users/1", "", ""); st != 401 {
		t.Errorf("an anonymous caller on an operator route: %d", st)
	}
	if st, _, _ := send(t, srv, "DELETE", "/operator/stubs/"+id, srv.OperatorToken, ""); st != 200 {
		t.Errorf("the operator could not delete a stub: %d", st)
	}
}

// An old store, a snapshot or a server of an earlier version may hold a
// mapping that could take the server's own routes: it is listed and can be
// deleted, it answers the paths of the API it matches, and never one of the
// server's own.
func TestStubs_AStoredStubThatCouldTakeAnOwnRouteNeverAnswersIt(t *testing.T) {
	srv := marketplacetest.NewServer(t)
	m := srv.Marketplace
	id := "0d3f9a52-7c1e-4a8e-9a55-4f3c1f0e2b11"
	raw := `{"seq": 1, "mapping": {"id": "` + id + `", "request": {"urlPathPattern": ".*"},
		"response": {"status": 418, "body": "stub"}, "marketplace": {"override": true, "public": true}}}`
	// The key of stubs/keys.go, as a store written before the rule has it.
	key := keycodec.Key(keycodec.New("stb/map")).Str(id)
	if err := m.Store().Update(context.Background(), func(tx storage.Tx) error { return tx.Set(key, []byte(raw)) }); err != nil {
		t.Fatal(err)
	}
	m.Stubs.Invalidate()
	if st, _, body := send(t, srv, "GET", "/v1/claims", "", ""); st != 418 || body != "stub" {
		t.Fatalf("the kept stub on a path of the API: %d %s", st, body)
	}
	cases := []struct {
		method, path, token string
		want                int
	}{
		{"GET", "/health", "", 200},
		{"GET", "/version", "", 200},
		{"GET", "/console", "", 200},
		{"GET", "/operator/users/1", "", 401},
		{"GET", "/operator/no-such-route", srv.OperatorToken, 404},
		{"PATCH", "/operator/stubs", srv.OperatorToken, 405},
		{"GET", "/operator/stubs/" + id, srv.OperatorToken, 200},
	}
	for _, c := range cases {
		if st, _, body := send(t, srv, c.method, c.path, c.token, ""); st != c.want || body == "stub" {
			t.Errorf("%s %s: %d %s, want %d from the server", c.method, c.path, st, body, c.want)
		}
	}
	if st, _, body := send(t, srv, "DELETE", "/operator/stubs/"+id, srv.OperatorToken, ""); st != 200 {
		t.Fatalf("delete the kept stub: %d %s", st, body)
	}
	if st, _, _ := send(t, srv, "GET", "/v1/claims", srv.Seller.Token, ""); st != 404 {
		t.Fatalf("after its deletion: %d", st)
	}
}

func TestStubs_AFixturesDocumentsStubOnAnOwnRouteIsRefusedAndNothingLoads(t *testing.T) {
	doc := `{"users": [{"name": "ana", "nickname": "ANA", "site_id": "MLA"}],
		"stubs": [{"request": {"urlPathPattern": "/operator/.*"}, "response": {"status": 200}, "marketplace": {"public": true}}]}`
	// Started without NewServer's check of answers against the OpenAPI
	// document, whose list of the fixtures' messages is not this test's.
	srv, err := marketplacetest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	st, _, body := send(t, srv, "PUT", "/operator/fixtures", srv.OperatorToken, doc, "Content-Type", "application/json")
	if msg := errorMessage(t, body); st != 400 || !strings.Contains(msg, "stubs[0]") || !strings.Contains(msg, "a path under /operator/") {
		t.Fatalf("fixtures: %d %s", st, body)
	}
	if _, _, body := send(t, srv, "GET", "/operator/stubs", srv.OperatorToken, ""); !strings.Contains(body, `"total":0`) {
		t.Fatalf("stubs: %s", body)
	}
	// marketplacetest's own fixtures go through the same check.
	var d fixtures.Document
	d, err = fixtures.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if s, err := marketplacetest.Start(marketplacetest.WithFixtures(d)); err == nil || !strings.Contains(err.Error(), "/operator/") {
		if s != nil {
			s.Close()
		}
		t.Fatalf("marketplacetest with the document: %v", err)
	}
	if _, err := srv.Marketplace.Stubs.Create(context.Background(), []byte(`{"request": {"urlPath": "/metrics"}, "response": {}}`)); err == nil {
		t.Fatal("Stubs.Create (marketplacetest's Stub) took /metrics")
	}
}

// The bodies and the JSONPath of the reports that burnt a core for a
// minute per request.
func TestStubs_TheReportedJSONPathAttacksAreRefusedOrAnsweredWithinTheBound(t *testing.T) {
	srv := marketplacetest.NewServer(t)
	st, body := postStub(t, srv, `{"request": {"method": "POST", "urlPath": "/v1/hooks", "bodyPatterns": [{"matchesJsonPath": "$..[?(@..a)]"}]},
		"response": {"status": 200}, "marketplace": {"public": true}}`)
	if msg := errorMessage(t, body); st != 400 || !strings.Contains(msg, "request.bodyPatterns[0].matchesJsonPath") {
		t.Fatalf("the reported JSONPath: %d %s", st, body)
	}
	srv.Stub(t, `{"request": {"method": "POST", "urlPath": "/v1/hooks", "bodyPatterns": [{"matchesJsonPath": "$..[?(@.a)]"}]}, "response": {"status": 200}}`)
	srv.Stub(t, `{"request": {"method": "POST", "urlPath": "/v1/open", "bodyPatterns": [{"matchesJsonPath": "$..a"}]},
		"response": {"status": 200}, "marketplace": {"public": true}}`)
	bodies := []string{
		strings.Repeat("[", 9990) + `{"a":1}` + strings.Repeat("]", 9990),
		strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000),
	}
	for i, b := range bodies {
		// Not public: the anonymous caller is refused before the body is read.
		if st, _, body := send(t, srv, "POST", "/v1/hooks", "", b); st != 401 {
			t.Errorf("body %d, anonymous: %d %s", i, st, body)
		}
		// Public: nested beyond what the JSON matchers read, it is no JSON
		// to them, and the stub does not match.
		if st, _, body := send(t, srv, "POST", "/v1/open", "", b); st != 404 {
			t.Errorf("body %d, public: %d %s", i, st, body)
		}
	}
	if st, _, body := send(t, srv, "POST", "/v1/open", "", `{"x":[{"a":1}]}`); st != 200 {
		t.Errorf("a body within the bounds: %d %s", st, body)
	}
}
