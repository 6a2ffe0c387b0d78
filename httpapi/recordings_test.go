package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/marketplace/marketplace/fixtures"
	"github.com/marketplace/marketplace/httpapi"
	"github.com/marketplace/marketplace/journal"
	"github.com/marketplace/marketplace/marketplacetest"
)

// operatorCall sends a request to an operator route with the operator
// token.
func operatorCall(t testing.TB, ps *proxyServer, method, target, body string) answer {
	t.Helper()
	return fwdSend(t, ps.url, method, target, body, "Authorization", "Bearer "+testOperatorToken, "Content-Type", "application/json")
}

// replayed are requests of each kind a recording plays back: emulated
// routes and routes the server does not emulate, JSON in the API's member
// order and compact and sorted, indented JSON, text, an error, a
// redirect, a write.
var replayed = []struct{ method, target, body string }{
	{"GET", "/sites/MLA", ""},
	{"GET", "/items/MLA1", ""},
	{"GET", "/users/me", ""},
	{"GET", "/claims/search?status=opened", ""},
	{"GET", "/visits/items?ids=MLA1", ""},
	{"GET", "/questions/search?item=MLA404", ""},
	{"GET", "/moved", ""},
	{"POST", "/answers", `{"question_id":5036111111,"text":"Hola, sí"}`},
}

func replay(t *testing.T, base string) []answer {
	t.Helper()
	var out []answer
	for _, r := range replayed {
		// A token the replaying server does not know: the recorded
		// mappings are public.
		out = append(out, fwdSend(t, base, r.method, r.target, r.body, "Authorization", "Bearer "+realUserToken, "Content-Type", "application/json"))
	}
	return out
}

func TestRecording_ReplaysIdenticallyWithTheUpstreamStopped(t *testing.T) {
	api := newLocalAPI(t)
	dir := t.TempDir()
	ps := newProxyServer(t, httpapi.Config{Upstream: mustURL(t, api.URL), UpstreamAll: true, Record: mustRecorder(t, dir, false)})
	live := replay(t, ps.url)
	api.Close()
	if a := fwdSend(t, ps.url, "GET", "/sites/MLA", ""); a.Status != http.StatusBadGateway {
		t.Fatalf("with the upstream stopped, forwarding answers %d; want 502", a.Status)
	}
	same := func(t *testing.T, got []answer) {
		t.Helper()
		for i, a := range got {
			w := live[i]
			if a.Status != w.Status || !bytes.Equal(a.Body, w.Body) || a.Header.Get("Content-Type") != w.Header.Get("Content-Type") ||
				a.Header.Get("Location") != w.Header.Get("Location") {
				t.Errorf("%s %s replayed %d %s %q; want %d %s %q, as recorded", replayed[i].method, replayed[i].target,
					a.Status, a.Header.Get("Content-Type"), a.Body, w.Status, w.Header.Get("Content-Type"), w.Body)
			}
		}
	}
	t.Run("the folder, as -stubs loads it", func(t *testing.T) {
		ps := newProxyServer(t, httpapi.Config{})
		loadFolder(t, ps, dir)
		same(t, replay(t, ps.url))
	})
	t.Run("a fixtures document", func(t *testing.T) {
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		var doc bytes.Buffer
		doc.WriteString(`{"stubs": [`)
		for i, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if i > 0 {
				doc.WriteString(",")
			}
			doc.Write(b)
		}
		doc.WriteString(`]}`)
		d, err := fixtures.Parse(doc.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		ps := newProxyServer(t, httpapi.Config{})
		if _, err := ps.m.LoadFixtures(t.Context(), d); err != nil {
			t.Fatal(err)
		}
		same(t, replay(t, ps.url))
	})
	t.Run("marketplacetest", func(t *testing.T) {
		srv := marketplacetest.NewServer(t, marketplacetest.WithStubs(dir))
		same(t, replay(t, srv.URL))
	})
}

func TestRecordingsAPI_StartStatusStopAsWireMock(t *testing.T) {
	api := newLocalAPI(t)
	// No -upstream: the recording's targetBaseUrl is where it forwards.
	ps := newProxyServer(t, httpapi.Config{})
	status := func() string {
		t.Helper()
		return fmt.Sprint(operatorCall(t, ps, "GET", "/operator/recordings/status", "").obj()["status"])
	}
	if s := status(); s != "NeverStarted" {
		t.Errorf("status = %s; want NeverStarted", s)
	}
	if a := operatorCall(t, ps, "POST", "/operator/recordings/stop", ""); a.Status != http.StatusConflict {
		t.Errorf("stop before start: %d %s; want 409", a.Status, a.Body)
	}
	if a := fwdSend(t, ps.url, "GET", "/claims/search", ""); a.Status != http.StatusNotFound || len(api.got("/claims/search")) != 0 {
		t.Errorf("before the recording: %d, upstream asked; want the server's own 404", a.Status)
	}
	a := operatorCall(t, ps, "POST", "/operator/recordings/start",
		`{"targetBaseUrl":"`+api.URL+`","filters":{"urlPathPattern":"/(claims|visits)/.*"}}`)
	if a.Status != 200 || a.obj()["status"] != "Recording" || status() != "Recording" {
		t.Fatalf("start: %d %s; want 200 and Recording", a.Status, a.Body)
	}
	if a := operatorCall(t, ps, "POST", "/operator/recordings/start", `{"targetBaseUrl":"`+api.URL+`"}`); a.Status != http.StatusConflict {
		t.Errorf("a second start: %d; want 409", a.Status)
	}
	fwdSend(t, ps.url, "GET", "/claims/search?status=opened", "", "Authorization", "Bearer "+realUserToken)
	fwdSend(t, ps.url, "GET", "/claims/search?status=opened", "", "Authorization", "Bearer "+realUserToken)
	fwdSend(t, ps.url, "GET", "/visits/items?ids=MLA1", "")
	fwdSend(t, ps.url, "GET", "/nothing/here", "") // forwarded, not in the filter
	if n := len(api.got("/claims/search")); n != 2 {
		t.Errorf("the upstream received %d claim searches; want 2", n)
	}
	stop := operatorCall(t, ps, "POST", "/operator/recordings/stop", "")
	var got struct{ Mappings []map[string]any }
	if err := json.Unmarshal(stop.Body, &got); err != nil || stop.Status != 200 {
		t.Fatalf("stop: %d %s", stop.Status, stop.Body)
	}
	if len(got.Mappings) != 2 || status() != "Stopped" {
		t.Fatalf("stop answered %d mappings (%s), status %s; want 2 (one per distinct request the filter takes), Stopped", len(got.Mappings), stop.Body, status())
	}
	if bytes.Contains(stop.Body, []byte("APP_USR")) {
		t.Errorf("the mappings hold the token: %s", stop.Body)
	}
	// Persisted as stubs: the same requests are answered with the
	// upstream gone and no recording running.
	api.Close()
	a = fwdSend(t, ps.url, "GET", "/claims/search?status=opened", "", "Authorization", "Bearer "+realUserToken)
	if a.Status != 200 || !strings.Contains(string(a.Body), `"id": 5000001`) {
		t.Errorf("after stop: %d %s; want the recorded answer", a.Status, a.Body)
	}
}

func TestRecordingsAPI_AStopWithoutPersistAddsNoStub(t *testing.T) {
	api := newLocalAPI(t)
	ps := newProxyServer(t, httpapi.Config{Upstream: mustURL(t, api.URL)})
	operatorCall(t, ps, "POST", "/operator/recordings/start", `{"persist":false}`)
	fwdSend(t, ps.url, "GET", "/visits/items?ids=MLA1", "")
	a := operatorCall(t, ps, "POST", "/operator/recordings/stop", "")
	if !strings.Contains(string(a.Body), `"urlPath":"/visits/items"`) {
		t.Errorf("stop: %s; want the mapping", a.Body)
	}
	if list := operatorCall(t, ps, "GET", "/operator/stubs", ""); list.obj()["meta"].(map[string]any)["total"] != 0.0 {
		t.Errorf("stubs after a stop without persist: %s; want none", list.Body)
	}
}

func TestRecordingsAPI_SnapshotMapsTheExchangesAlreadyForwarded(t *testing.T) {
	api := newLocalAPI(t)
	ps := newProxyServer(t, httpapi.Config{Upstream: mustURL(t, api.URL), Journal: journal.NewWithBodies(100, journal.Bodies{})})
	fwdSend(t, ps.url, "GET", "/claims/search?status=opened", "", "Authorization", "Bearer "+realUserToken)
	fwdSend(t, ps.url, "GET", "/visits/items?ids=MLA1", "")
	fwdSend(t, ps.url, "GET", "/sites/MLA", "") // emulated: not forwarded
	a := operatorCall(t, ps, "POST", "/operator/recordings/snapshot", `{"filters":{"urlPath":"/visits/items"},"persist":false}`)
	var got struct{ Mappings []map[string]any }
	if err := json.Unmarshal(a.Body, &got); err != nil || len(got.Mappings) != 1 {
		t.Fatalf("snapshot: %d %s; want the one forwarded exchange the filter takes", a.Status, a.Body)
	}
	a = operatorCall(t, ps, "POST", "/operator/recordings/snapshot", "")
	if err := json.Unmarshal(a.Body, &got); err != nil || len(got.Mappings) != 2 {
		t.Fatalf("snapshot: %d %s; want both forwarded exchanges", a.Status, a.Body)
	}
	if operatorCall(t, ps, "GET", "/operator/recordings/status", "").obj()["status"] != "NeverStarted" {
		t.Error("a snapshot started a recording")
	}
	api.Close()
	if a := fwdSend(t, ps.url, "GET", "/visits/items?ids=MLA1", ""); a.Status != 200 || string(a.Body) != "MLA1: 42 visits\n" {
		t.Errorf("after a persisted snapshot: %d %q; want the recorded answer", a.Status, a.Body)
	}
}

func TestRecordingsAPI_ASnapshotNeedsAJournalOfBodies(t *testing.T) {
	api := newLocalAPI(t)
	ps := newProxyServer(t, httpapi.Config{Upstream: mustURL(t, api.URL)})
	fwdSend(t, ps.url, "GET", "/visits/items?ids=MLA1", "")
	a := operatorCall(t, ps, "POST", "/operator/recordings/snapshot", "")
	if a.Status != http.StatusConflict || !strings.Contains(fmt.Sprint(a.obj()["message"]), "-journal-bodies") {
		t.Errorf("snapshot without a journal of bodies: %d %s; want 409 saying -journal-bodies", a.Status, a.Body)
	}
}

func TestRecordingsAPI_RepeatsAsScenariosReplaysEachAnswerInOrder(t *testing.T) {
	var n atomic.Int64
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, fmt.Sprintf(`{"status":"%s"}`, []string{"pending", "pending", "approved", "approved"}[min(n.Add(1)-1, 3)]))
	}))
	t.Cleanup(api.Close)
	ps := newProxyServer(t, httpapi.Config{Upstream: mustURL(t, api.URL)})
	operatorCall(t, ps, "POST", "/operator/recordings/start", `{"repeatsAsScenarios":true}`)
	for range 3 {
		fwdSend(t, ps.url, "GET", "/payments/123", "")
	}
	a := operatorCall(t, ps, "POST", "/operator/recordings/stop", "")
	var got struct{ Mappings []map[string]any }
	if err := json.Unmarshal(a.Body, &got); err != nil || len(got.Mappings) != 2 {
		t.Fatalf("stop: %s; want 2 mappings (pending twice, then approved)", a.Body)
	}
	api.Close()
	for i, want := range []string{"pending", "pending", "approved", "approved"} {
		a := fwdSend(t, ps.url, "GET", "/payments/123", "")
		if a.obj()["status"] != want {
			t.Errorf("replay %d: %s; want %s", i+1, a.Body, want)
		}
	}
}

func TestRecordingsAPI_AWrongBodyIsA400NamingTheField(t *testing.T) {
	ps := newProxyServer(t, httpapi.Config{})
	for _, c := range []struct{ target, body, want string }{
		{"/operator/recordings/start", `{}`, "targetBaseUrl"},
		{"/operator/recordings/start", `{"targetBaseUrl":"file:///etc"}`, "targetBaseUrl"},
		{"/operator/recordings/start", `{"targetBaseUrl":"http://127.0.0.1:9","captureHeaders":{}}`, "captureHeaders"},
		{"/operator/recordings/start", `{"targetBaseUrl":"http://127.0.0.1:9","filters":{"method":"GET","cookies":{}}}`, "filters"},
		{"/operator/recordings/snapshot", `{"targetBaseUrl":"http://127.0.0.1:9"}`, "targetBaseUrl"},
		{"/operator/recordings/snapshot", `{"persist":1}`, "persist"},
	} {
		a := operatorCall(t, ps, "POST", c.target, c.body)
		m := a.obj()
		if a.Status != 400 || m["status"] != 400.0 || !strings.Contains(fmt.Sprint(m["message"]), c.want) {
			t.Errorf("%s %s: %d %s; want 400 naming %s", c.target, c.body, a.Status, a.Body, c.want)
		}
	}
	if a := fwdSend(t, ps.url, "GET", "/operator/recordings/status", "", "Authorization", "Bearer "+realUserToken); a.Status != http.StatusUnauthorized && a.Status != http.StatusForbidden {
		t.Errorf("status without the operator token: %d; want 401 or 403", a.Status)
	}
}
