package metrics_test

import (
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/marketplace/marketplace/internal/storeobs"
	"github.com/marketplace/marketplace/metrics"
	"github.com/marketplace/marketplace/notify"
)

func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

func TestStorage_CountsTransactionsConflictsAndRetriesByBackend(t *testing.T) {
	m := metrics.New()
	defer m.ObserveStorage()()
	storeobs.ObserveTransaction("badger", true, nil)
	storeobs.ObserveTransaction("badger", true, nil)
	storeobs.ObserveTransaction("postgres", false, errors.New("down"))
	storeobs.ObserveTransaction("other", false, nil)
	storeobs.ObserveConflict("badger", true)
	text := scrape(t, m)
	for _, want := range []string{
		`marketplace_storage_transactions_total{backend="badger",kind="update",result="ok"} 2`,
		`marketplace_storage_transactions_total{backend="postgres",kind="view",result="error"} 1`,
		`marketplace_storage_transactions_total{backend="other",kind="view",result="ok"} 1`,
		`marketplace_storage_conflicts_total{backend="badger"} 1`,
		`marketplace_storage_retries_total{backend="badger"} 1`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestRoute_CountsByStatusAndTimesEachRequest(t *testing.T) {
	m := metrics.New()
	r := m.Route("GET", "/items/:item_id")
	r.Observe(200, time.Millisecond)
	r.Observe(200, time.Millisecond)
	r.Observe(404, time.Millisecond)
	var none *metrics.Route
	none.Observe(200, time.Second) // metrics off: nothing, no panic
	text := scrape(t, m)
	for _, want := range []string{
		`marketplace_http_requests_total{method="GET",route="/items/:item_id",status="200"} 2`,
		`marketplace_http_requests_total{method="GET",route="/items/:item_id",status="404"} 1`,
		`marketplace_http_request_duration_seconds_count{method="GET",route="/items/:item_id"} 3`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestNotificationAttemptsAndRefreshes(t *testing.T) {
	m := metrics.New()
	m.NotificationAttempt(notify.AttemptAcked)
	m.NotificationAttempt(notify.AttemptFailed)
	m.RefreshStarted()()
	text := scrape(t, m)
	for _, want := range []string{
		`marketplace_notification_attempts_total{result="acknowledged"} 1`,
		`marketplace_notification_attempts_total{result="failed"} 1`,
		`marketplace_response_time_refresh_duration_seconds_count 1`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func BenchmarkRouteObserve(b *testing.B) {
	r := metrics.New().Route("GET", "/items/:item_id")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r.Observe(200, time.Millisecond)
		}
	})
}

func BenchmarkStorageTransaction(b *testing.B) {
	defer metrics.New().ObserveStorage()()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			storeobs.ObserveTransaction("memory", false, nil)
		}
	})
}
