package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/httpapi"
	"github.com/marketplace/marketplace/marketplacetest"
	"github.com/marketplace/marketplace/storage/badger"
)

// send makes one request over HTTP and returns the status, the headers and
// the body as they came, whatever they are.
func send(t *testing.T, srv *marketplacetest.Server, method, path, token, body string, headers ...string) (int, http.Header, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b)
}

func postStub(t *testing.T, srv *marketplacetest.Server, mapping string) (int, string) {
	t.Helper()
	st, _, body := send(t, srv, "POST", "/operator/stubs", srv.OperatorToken, mapping, "Content-Type", "application/json")
	return st, body
}

func TestStubs_WireMockDocumentedExamplesLoadAndAnswerAsWireMockDocuments(t *testing.T) {
	srv := marketplacetest.NewServer(t)
	files, _ := filepath.Glob("testdata/wiremock/*.json")
	if len(files) < 5 {
		t.Fatalf("mapping files: %v", files)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if st, body := postStub(t, srv, string(b)); st != 201 {
			t.Fatalf("%s: %d %s", f, st, body)
		}
	}
	tok := srv.Seller.Token
	check := func(method, path, body string, wantStatus int, wantBody string, headers ...string) {
		t.Helper()
		st, h, got := send(t, srv, method, path, tok, body, headers...)
		if st != wantStatus || (wantBody != "" && got != wantBody) {
			t.Fatalf("%s %s = %d %q (%v), want %d %q", method, path, st, got, h, wantStatus, wantBody)
		}
	}
	check("GET", "/some/thing", "", 200, "Hello, world!")
	if _, h, _ := send(t, srv, "GET", "/some/thing", tok, ""); h.Get("Content-Type") != "text/plain" {
		t.Fatalf("Content-Type = %q", h.Get("Content-Type"))
	}
	check("GET", "/some/thing?x=1", "", 404, "") // url is the path and the query
	check("GET", "/api/specific-resource", "", 200, "")
	check("GET", "/api/other", "", 401, "")
	check("PUT", "/everything?search_term=WireMock", `{"total_results": 4, "things": [{"name": "RequiredThing"}]}`, 200, "", "Accept", "application/json")
	check("PUT", "/everything?search_term=WireMock", `{"total_results": 5, "things": [{"name": "RequiredThing"}]}`, 404, "", "Accept", "application/json")
	check("PUT", "/everything?search_term=WireMock", `{"total_results": 4, "things": [{"name": "RequiredThing"}]}`, 404, "", "Accept", "text/html")
	check("GET", "/contacts/12/addresses/99", "", 200, `{"address":"99","contact":"12"}`)
	check("GET", "/body", "", 200, `{"arbitrary_json":[1,2,3]}`)
	check("POST", "/templated?q=hola", `{"name":"Ana"}`, 200, "POST /templated?q=hola templated hola Ana")
	req, _ := http.NewRequest("GET", srv.URL+"/fault", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := http.DefaultClient.Do(req)
	if err == nil {
		_, err = io.ReadAll(res.Body)
		res.Body.Close()
	}
	if err == nil {
		t.Fatal("a malformed chunk reached the client as an answer")
	}

	st, _, body := send(t, srv, "GET", "/operator/stubs", srv.OperatorToken, "")
	var list struct {
		Mappings []map[string]any    `json:"mappings"`
		Meta     struct{ Total int } `json:"meta"`
	}
	if err := json.Unmarshal([]byte(body), &list); err != nil || st != 200 || list.Meta.Total != len(files) || len(list.Mappings) != len(files) {
		t.Fatalf("list: %d %s", st, body)
	}
	st, _, body = send(t, srv, "GET", "/operator/stubs/8c5db8b0-2db4-4ad7-a99f-38c9b00da3f7", srv.OperatorToken, "")
	if st != 200 || !strings.Contains(body, `"metadata":{"tags":["one","two"]}`) {
		t.Fatalf("get keeps the metadata as is: %d %s", st, body)
	}
	if st, _, _ := send(t, srv, "DELETE", "/operator/stubs/8c5db8b0-2db4-4ad7-a99f-38c9b00da3f7", srv.OperatorToken, ""); st != 200 {
		t.Fatalf("delete: %d", st)
	}
	check("GET", "/body", "", 404, "")
	if st, _, body := send(t, srv, "DELETE", "/operator/stubs", srv.OperatorToken, ""); st != 200 || body != `{"deleted":`+itoa(len(files)-1)+"}\n" {
		t.Fatalf("delete all: %d %s", st, body)
	}
	check("GET", "/some/thing", "", 404, "")
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestStubs_AMappingWithAnUnknownFieldIs400NamingItAndStoresNothing(t *testing.T) {
	srv := marketplacetest.NewServer(t)
	st, body := postStub(t, srv, `{"request": {"urlPath": "/x", "headers": {"Accept": {"equalToXml": "<a/>"}}}, "response": {"status": 200}}`)
	if st != 400 || !strings.Contains(body, "request.headers.Accept.equalToXml") {
		t.Fatalf("%d %s", st, body)
	}
	if st, _, _ := send(t, srv, "GET", "/x", srv.Seller.Token, "", "Accept", "<a/>"); st != 404 {
		t.Fatalf("a refused mapping answered: %d", st)
	}
	if st, _, _ := send(t, srv, "POST", "/operator/stubs", srv.Seller.Token, `{"request":{},"response":{}}`); st != 403 {
		t.Fatalf("a user's token made a stub: %d", st)
	}
}

func TestStubs_AStubAnswersOnlyWhatNoRouteServesUnlessItOverrides(t *testing.T) {
	srv := marketplacetest.NewServer(t)
	tok := srv.Seller.Token
	srv.Stub(t, `{"request": {"method": "GET", "urlPath": "/users/me"}, "response": {"status": 500}}`)
	srv.Stub(t, `{"request": {"method": "DELETE", "urlPath": "/users/me"}, "response": {"status": 202}}`)
	if st, _, _ := send(t, srv, "GET", "/users/me", tok, ""); st != 200 {
		t.Fatalf("an ordinary stub took an emulated route: %d", st)
	}
	if st, _, _ := send(t, srv, "DELETE", "/users/me", tok, ""); st != 202 {
		t.Fatalf("a stub did not answer a method no route serves: %d", st)
	}
	id := srv.Stub(t, `{"request": {"method": "GET", "urlPath": "/missed_feeds"}, "response": {"status": 503, "jsonBody": {"message": "down"}}, "marketplace": {"override": true}}`)
	if st, _, body := send(t, srv, "GET", "/missed_feeds", tok, ""); st != 503 || body != `{"message":"down"}` {
		t.Fatalf("the override did not answer: %d %s", st, body)
	}
	// GET /missed_feeds is a user's route: its authentication holds.
	if st, _, _ := send(t, srv, "GET", "/missed_feeds", "", ""); st != 401 {
		t.Fatalf("an override skipped the route's authentication: %d", st)
	}
	if err := srv.Marketplace.Stubs.Delete(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	if st, _, _ := send(t, srv, "GET", "/missed_feeds", tok, ""); st == 503 {
		t.Fatalf("the route is not back: %d", st)
	}
}

func TestStubs_AStubbedRequestNeedsAValidTokenUnlessPublic(t *testing.T) {
	srv := marketplacetest.NewServer(t)
	srv.Stub(t, `{"request": {"urlPath": "/claims/search"}, "response": {"status": 200, "jsonBody": {"data": []}}}`)
	srv.Stub(t, `{"request": {"urlPath": "/visits"}, "response": {"status": 200}, "marketplace": {"public": true}}`)
	cases := []struct {
		path, token string
		want        int
	}{
		{"/claims/search", "", 401},
		{"/claims/search", "APP_USR-not-a-token-of-anyone", 401},
		{"/claims/search", srv.Seller.Token, 200},
		{"/visits", "", 200},
	}
	for _, c := range cases {
		if st, _, body := send(t, srv, "GET", c.path, c.token, ""); st != c.want {
			t.Errorf("GET %s with %q = %d %s, want %d", c.path, c.token, st, body, c.want)
		}
	}
}

func TestStubs_TimesAnswersThatManyRequestsThenTheMissIsA404(t *testing.T) {
	srv := marketplacetest.NewServer(t)
	srv.Stub(t, `{"request": {"urlPath": "/x"}, "response": {"status": 200}, "marketplace": {"times": 2, "public": true}}`)
	for i, want := range []int{200, 200, 404} {
		if st, _, _ := send(t, srv, "GET", "/x", "", ""); st != want {
			t.Fatalf("request %d: %d, want %d", i+1, st, want)
		}
	}
}

func TestStubs_ResetClearsThemAndASnapshotKeepsThem(t *testing.T) {
	srv := marketplacetest.NewServer(t)
	ctx := context.Background()
	srv.Stub(t, `{"request": {"urlPath": "/x"}, "response": {"status": 200}, "marketplace": {"public": true, "override": true}}`)
	snap, err := srv.Marketplace.CreateSnapshot(ctx, "with a stub")
	if err != nil {
		t.Fatal(err)
	}
	if st, _, _ := send(t, srv, "POST", "/operator/reset", srv.OperatorToken, ""); st != 204 {
		t.Fatalf("reset: %d", st)
	}
	if st, _, _ := send(t, srv, "GET", "/x", "", ""); st != 404 {
		t.Fatalf("a stub outlived the reset: %d", st)
	}
	if st, _, _ := send(t, srv, "POST", "/operator/snapshots/"+itoa(int(snap.ID))+"/restore", srv.OperatorToken, ""); st != 204 {
		t.Fatalf("restore: %d", st)
	}
	if st, _, _ := send(t, srv, "GET", "/x", "", ""); st != 200 {
		t.Fatalf("the snapshot did not keep the stub: %d", st)
	}
}

func TestStubs_EachWireFaultIsTheErrorARealNetworkGivesTheClient(t *testing.T) {
	srv := marketplacetest.NewServer(t)
	for _, c := range []struct {
		kind string
		want func(error) bool
	}{
		{"CONNECTION_RESET_BY_PEER", func(err error) bool { return errors.Is(err, syscall.ECONNRESET) }},
		{"EMPTY_RESPONSE", func(err error) bool { return errors.Is(err, io.EOF) }},
		{"MALFORMED_RESPONSE_CHUNK", func(err error) bool {
			return err != nil && strings.Contains(err.Error(), "invalid byte in chunk length")
		}},
		{"RANDOM_DATA_THEN_CLOSE", func(err error) bool { return err != nil && strings.Contains(err.Error(), "malformed HTTP response") }},
		{"MALFORMED_JSON", func(err error) bool {
			var syntax *json.SyntaxError
			return errors.As(err, &syntax) || errors.Is(err, io.ErrUnexpectedEOF)
		}},
	} {
		srv.Stub(t, `{"request": {"urlPath": "/f/`+c.kind+`"}, "response": {"fault": "`+c.kind+`"}, "marketplace": {"public": true}}`)
		// A client of its own per fault: no connection is reused, so the
		// transport does not retry on another.
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		res, err := client.Get(srv.URL + "/f/" + c.kind)
		if err == nil {
			var b []byte
			b, err = io.ReadAll(res.Body)
			res.Body.Close()
			if err == nil {
				var v any
				err = json.Unmarshal(b, &v)
			}
		}
		if !c.want(err) {
			t.Errorf("%s: err = %v", c.kind, err)
		}
	}
}

func TestVerification_CountAndFindMatchMethodPathHeadersAndBody(t *testing.T) {
	srv := marketplacetest.NewServer(t)
	tok := srv.Seller.Token
	send(t, srv, "POST", "/answers", tok, `{"question_id": 1, "text": "Sí, hacemos envío"}`, "Content-Type", "application/json", "X-Version", "3")
	send(t, srv, "POST", "/answers", tok, `{"question_id": 2, "text": "No"}`, "Content-Type", "application/json", "X-Version", "2")
	send(t, srv, "POST", "/oauth/token", "", "grant_type=refresh_token&refresh_token=TG-abc-123&client_secret=s3cr3t", "Content-Type", "application/x-www-form-urlencoded")
	pattern := `{"method": "POST", "urlPath": "/answers", "headers": {"X-Version": {"equalTo": "3"}},
		"bodyPatterns": [{"matchesJsonPath": {"expression": "$.text", "contains": "envío"}}]}`
	if n := srv.CountRequests(t, pattern); n != 1 {
		t.Fatalf("count = %d, want 1", n)
	}
	st, _, body := send(t, srv, "POST", "/operator/requests/count", srv.OperatorToken, `{"request": `+pattern+`}`)
	if st != 200 || body != "{\"count\":1}\n" {
		t.Fatalf("count over HTTP: %d %s", st, body)
	}
	st, _, body = send(t, srv, "POST", "/operator/requests/find", srv.OperatorToken, `{"method": "POST", "urlPath": "/answers"}`)
	var found struct {
		Requests []struct {
			Body    string              `json:"body"`
			Headers map[string][]string `json:"headers"`
		} `json:"requests"`
	}
	if err := json.Unmarshal([]byte(body), &found); err != nil || st != 200 || len(found.Requests) != 2 {
		t.Fatalf("find: %d %s", st, body)
	}
	if found.Requests[0].Body != `{"question_id": 2, "text": "No"}` || found.Requests[0].Headers["Authorization"][0] != "REDACTED" {
		t.Fatalf("newest first, credentials redacted: %+v", found.Requests[0])
	}
	token := srv.FindRequests(t, `{"urlPath": "/oauth/token"}`)
	if len(token) != 1 || strings.Contains(token[0].Body, "TG-abc") || strings.Contains(token[0].Body, "s3cr3t") {
		t.Fatalf("a secret reached the journal: %+v", token)
	}
	if st, _, body := send(t, srv, "POST", "/operator/requests/count", srv.OperatorToken, `{"method": "POST", "bodyPatterns": [{"equalToXml": "<a/>"}]}`); st != 400 {
		t.Fatalf("an unknown matcher: %d %s", st, body)
	}
}

func TestStubs_AFixturesDocumentsStubsAnswerAndAReloadAddsNone(t *testing.T) {
	srv := marketplacetest.NewServer(t)
	doc := `{"stubs": [{"request": {"method": "GET", "urlPath": "/v1/payments/7"},
		"response": {"status": 200, "jsonBody": {"id": 7, "status": "approved"}}, "marketplace": {"public": true}}]}`
	for range 2 {
		st, _, body := send(t, srv, "PUT", "/operator/fixtures", srv.OperatorToken, doc, "Content-Type", "application/json")
		if st != 200 || !strings.Contains(body, `"stubs":["`) {
			t.Fatalf("fixtures: %d %s", st, body)
		}
	}
	if st, _, body := send(t, srv, "GET", "/v1/payments/7", "", ""); st != 200 || body != `{"id":7,"status":"approved"}` {
		t.Fatalf("stubbed answer: %d %q", st, body)
	}
	_, _, body := send(t, srv, "GET", "/operator/stubs", srv.OperatorToken, "")
	if !strings.Contains(body, `"total":1`) {
		t.Fatalf("two loads of one document: %s", body)
	}
}

func TestStubs_AnEmptyListIsAnEmptyArrayAlsoAfterDeletingAll(t *testing.T) {
	srv := marketplacetest.NewServer(t)
	want := `{"mappings":[],"meta":{"total":0}}` + "\n"
	if st, _, body := send(t, srv, "GET", "/operator/stubs", srv.OperatorToken, ""); st != 200 || body != want {
		t.Fatalf("no stub yet: %d %s", st, body)
	}
	srv.Stub(t, `{"request": {"urlPath": "/x"}, "response": {"status": 200}}`)
	if st, _, body := send(t, srv, "DELETE", "/operator/stubs", srv.OperatorToken, ""); st != 200 || body != `{"deleted":1}`+"\n" {
		t.Fatalf("delete all: %d %s", st, body)
	}
	if st, _, body := send(t, srv, "GET", "/operator/stubs", srv.OperatorToken, ""); st != 200 || body != want {
		t.Fatalf("after deleting all: %d %s", st, body)
	}
	if st, _, body := send(t, srv, "POST", "/operator/requests/find", srv.OperatorToken, `{"urlPath": "/nothing/asked"}`); st != 200 || body != `{"requests":[]}`+"\n" {
		t.Fatalf("a find of nothing: %d %s", st, body)
	}
}

func TestStubs_AnInformationalStatusIsRefusedWith400(t *testing.T) {
	srv := marketplacetest.NewServer(t)
	for _, st := range []string{"101", "103", "199"} {
		code, body := postStub(t, srv, `{"request": {"urlPath": "/x`+st+`"}, "response": {"status": `+st+`}, "marketplace": {"public": true}}`)
		if code != 400 || !strings.Contains(body, "response.status") || !strings.Contains(body, `"status":400`) {
			t.Errorf("status %s: %d %s", st, code, body)
		}
	}
}

func TestStubs_TheAnswerCarriesTheBodysTrueLengthWhateverTheMappingSays(t *testing.T) {
	srv := marketplacetest.NewServer(t)
	cases := []struct{ name, headers, body, want string }{
		{"a length too short", `{"Content-Length": "3"}`, `"body": "hello"`, "hello"},
		{"a length too long", `{"content-length": "99"}`, `"body": "hello"`, "hello"},
		{"a length that is no number", `{"Content-Length": "abc"}`, `"body": "hello"`, "hello"},
		{"a transfer coding", `{"Transfer-Encoding": "gzip"}`, `"body": "hello"`, "hello"},
		{"a template's body", `{"Content-Length": "2"}`, `"body": "{{request.path}}", "transformers": ["response-template"]`, "/len/a-template-s-body"},
		// Beyond the server's buffer, net/http would chunk an answer whose
		// length it was not told.
		{"a body beyond the write buffer", `{"Content-Length": "1"}`, `"body": "` + strings.Repeat("a", 10000) + `"`, strings.Repeat("a", 10000)},
	}
	for _, c := range cases {
		path := "/len/" + strings.NewReplacer(" ", "-", "'", "-").Replace(c.name)
		if st, body := postStub(t, srv, `{"request": {"urlPath": "`+path+`"}, "response": {"status": 200, "headers": `+c.headers+`, `+c.body+`}, "marketplace": {"public": true}}`); st != 201 {
			t.Fatalf("%s: %d %s", c.name, st, body)
		}
		client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
		res, err := client.Get(srv.URL + path)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || string(b) != c.want || res.ContentLength != int64(len(c.want)) || len(res.TransferEncoding) != 0 {
			t.Errorf("%s: body %q (%v), length %d, transfer coding %v; want %q with its length", c.name, b, err, res.ContentLength, res.TransferEncoding, c.want)
		}
	}
}

func TestStubs_AnOverrideKeptOnBadgerAnswersTheFirstRequestAfterARestart(t *testing.T) {
	dir := t.TempDir()
	serve := func(do func(h http.Handler)) {
		st, err := badger.Open(dir, badger.Options{})
		if err != nil {
			t.Fatal(err)
		}
		m, err := marketplace.New(st, marketplace.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		defer m.Close()
		do(httpapi.New(m, httpapi.Config{OperatorToken: testOperatorToken}))
	}
	req := func(h http.Handler, method, path, token, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	serve(func(h http.Handler) {
		w := req(h, "POST", "/operator/stubs", testOperatorToken,
			`{"request": {"urlPath": "/sites"}, "response": {"status": 503}, "marketplace": {"override": true, "public": true}}`)
		if w.Code != 201 {
			t.Fatalf("create: %d %s", w.Code, w.Body)
		}
	})
	serve(func(h http.Handler) {
		if w := req(h, "GET", "/sites", "", ""); w.Code != 503 {
			t.Fatalf("first request after the restart: %d %s; want the override's 503", w.Code, w.Body)
		}
	})
}
