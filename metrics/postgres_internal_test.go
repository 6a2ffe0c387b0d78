package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

type follower struct {
	failovers uint64
	without   time.Duration
}

func (f follower) Failovers() uint64             { return f.failovers }
func (f follower) WithoutPrimary() time.Duration { return f.without }

func scrapeText(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

func TestPrimary_AStoreThatFollowsAPrimaryCountsItsFailoversAndItsTimeWithoutOne(t *testing.T) {
	m := New()
	m.primary(follower{failovers: 2, without: 4500 * time.Millisecond})
	text := scrapeText(t, m)
	for _, want := range []string{
		"# TYPE marketplace_postgres_failovers_total counter",
		"marketplace_postgres_failovers_total 2\n",
		"# TYPE marketplace_postgres_seconds_without_primary_total counter",
		"marketplace_postgres_seconds_without_primary_total 4.5\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

func TestPrimary_AStoreWithoutAPrimaryHasNoSuchMetrics(t *testing.T) {
	m := New()
	m.primary(struct{}{})
	if text := scrapeText(t, m); strings.Contains(text, "marketplace_postgres_") {
		t.Fatalf("metrics of a store with no primary:\n%s", text)
	}
}
