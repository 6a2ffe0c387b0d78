package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/httpapi"
	"github.com/marketplace/marketplace/metrics"
	"github.com/marketplace/marketplace/storage/memory"
)

func TestReady_OKWhenTheStorageAnswers(t *testing.T) {
	ts := newTestServer(t)
	res := ts.do("GET", "/ready", "", nil)
	if res.Status != http.StatusOK || res.Obj()["status"] != "ok" {
		t.Fatalf("got %d %s", res.Status, res.Raw)
	}
	res = ts.do("HEAD", "/ready", "", nil)
	if res.Status != http.StatusOK {
		t.Fatalf("HEAD: got %d", res.Status)
	}
}

func TestReady_503ServiceUnavailableWhenTheStorageDoesNotAnswer(t *testing.T) {
	st := &downStore{Store: memory.New()}
	m, err := marketplace.New(st, marketplace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	ts := &testServer{t: t, m: m, handler: httpapi.New(m, checked(t, httpapi.Config{OperatorToken: testOperatorToken}))}
	st.down.Store(true)
	res := ts.do("GET", "/ready", "", nil)
	if res.Status != http.StatusServiceUnavailable || res.Obj()["error"] != "service_unavailable" {
		t.Fatalf("got %d %s, want 503 service_unavailable", res.Status, res.Raw)
	}
	st.down.Store(false)
	if res := ts.do("GET", "/ready", "", nil); res.Status != http.StatusOK {
		t.Errorf("back up: got %d", res.Status)
	}
}

func TestVersion_AnswersTheModuleAndGoVersion(t *testing.T) {
	ts := newTestServer(t)
	res := ts.do("GET", "/version", "", nil)
	if res.Status != http.StatusOK {
		t.Fatalf("got %d %s", res.Status, res.Raw)
	}
	if res.Obj()["module"] != "github.com/marketplace/marketplace" || !strings.HasPrefix(res.Obj()["go"].(string), "go") {
		t.Errorf("body %s", res.Raw)
	}
	if res := ts.do("HEAD", "/health", "", nil); res.Status != http.StatusOK {
		t.Errorf("HEAD /health: %d", res.Status)
	}
}

func TestMetrics_CountRequestsByRouteTemplateMethodAndStatus(t *testing.T) {
	ts := newTestServer(t)
	met := metrics.New()
	ts.handler = httpapi.New(ts.m, checked(t, httpapi.Config{OperatorToken: testOperatorToken, Metrics: met}))
	ts.do("GET", "/items/MLA1", "", nil)
	ts.do("GET", "/items/MLA2", "", nil)
	rec := httptest.NewRecorder()
	ts.handler.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("got %d", rec.Code)
	}
	text := rec.Body.String()
	for _, want := range []string{
		`marketplace_http_requests_total{method="GET",route="/items/:item_id",status="404"} 2`,
		`marketplace_http_request_duration_seconds_count{method="GET",route="/items/:item_id"} 2`,
		`marketplace_journal_entries`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestMetrics_NotOnThePublicPortWhenServedElsewhere(t *testing.T) {
	ts := newTestServer(t)
	ts.handler = httpapi.New(ts.m, checked(t, httpapi.Config{Metrics: metrics.New(), MetricsOwnAddress: true}))
	if res := ts.do("GET", "/metrics", "", nil); res.Status != http.StatusNotFound {
		t.Errorf("got %d, want 404", res.Status)
	}
}
