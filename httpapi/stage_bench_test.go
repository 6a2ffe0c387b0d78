package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/internal/logbuf"
	"github.com/marketplace/marketplace/journal"
	"github.com/marketplace/marketplace/metrics"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/memory"
)

// BenchmarkStage measures, each on its own and from parallel goroutines as
// requests run, what every stage of a request costs beside its handler: the
// log line, the journal entry, the metrics, the state gate, the shared
// clock's sync and the fault check (docs/benchmarks.md, "The request
// path"). The request log and the journal are on in the server's defaults.
//
//	go test -run '^$' -bench BenchmarkStage -benchtime 2000000x ./httpapi
func BenchmarkStage(b *testing.B) {
	ctx := context.Background()
	b.Run("log", func(b *testing.B) {
		// As cmd/marketplaced logs: JSON at level info through logbuf.
		out := logbuf.New(io.Discard)
		defer out.Close()
		logger := slog.New(slog.NewJSONHandler(out, &slog.HandlerOptions{Level: slog.LevelInfo}))
		parallel(b, func() {
			// The attributes of the request line (server.go, logged).
			logger.LogAttrs(ctx, slog.LevelInfo, "request", slog.String("method", http.MethodGet),
				slog.String("path", "/users/1234567"), slog.String("route", "/users/:user_id"), slog.Int("status", 200),
				slog.String("duration", (1520*time.Microsecond).String()))
		})
	})
	b.Run("journal", func(b *testing.B) {
		j := journal.New(journal.DefaultSize)
		at := time.Now()
		parallel(b, func() {
			user, app := int64(1234567), int64(0)
			e := journal.Entry{Time: at.UTC(), Method: http.MethodGet, Path: "/users/1234567",
				Query: journal.RedactQuery(""), Route: "/users/{user_id}", Status: 200, LatencyMS: 1.52}
			e.UserID = &user
			if app != 0 {
				e.ApplicationID = &app
			}
			j.Add(e)
		})
	})
	b.Run("metrics", func(b *testing.B) {
		rm := metrics.New().Route(http.MethodGet, "/users/:user_id")
		parallel(b, func() { rm.Observe(200, 1520*time.Microsecond) })
	})
	m, err := marketplace.New(memory.New(), marketplace.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	b.Run("gate", func(b *testing.B) { parallel(b, func() { m.Enter()() }) })
	b.Run("faults", func(b *testing.B) {
		_ = m.Faults.Refresh(ctx)
		parallel(b, func() {
			if m.Faults.Active() {
				b.Fatal("no rule was made")
			}
		})
	})
	b.Run("syncclock", func(b *testing.B) {
		mc, err := marketplace.New(memory.New(), marketplace.Options{Clock: clock.NewManual(testStart)})
		if err != nil {
			b.Fatal(err)
		}
		defer mc.Close()
		parallel(b, func() {
			if err := mc.SyncClock(ctx); err != nil {
				b.Fatal(err)
			}
		})
	})
	// For scale: the storage read that every stage above is compared with,
	// a View of one Get on the memory store.
	b.Run("view", func(b *testing.B) {
		st := memory.New()
		key := []byte("bench/key")
		_ = st.Update(ctx, func(tx storage.Tx) error { return tx.Set(key, []byte("value")) })
		parallel(b, func() {
			_ = st.View(ctx, func(tx storage.Tx) error { _, err := tx.Get(key); return err })
		})
	})
}

// parallel runs f b.N times over GOMAXPROCS goroutines, reporting
// allocations.
func parallel(b *testing.B, f func()) {
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			f()
		}
	})
}
