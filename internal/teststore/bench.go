package teststore

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/marketplace/marketplace/internal/pgtest"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/badger"
	"github.com/marketplace/marketplace/storage/postgres"
)

// DurableBackends are the backends a benchmark measures on: the ones that
// keep what they acknowledge.
var DurableBackends = []string{"badger", "postgres"}

// OpenDurable returns an empty store on backend ("badger" or "postgres")
// for a benchmark, closed when it ends: Badger in a folder of its own,
// PostgreSQL in a database of its own on the package's shared server, with
// a pool of maxConns connections. Round trips counts the statements and
// batches sent to PostgreSQL (it stays at zero on Badger).
//
// The PostgreSQL commits do not wait for the disk: a benchmark's load is
// then about 15% faster, and what it measures (a page read, a write's
// round trips) is the same.
func OpenDurable(b testing.TB, backend string, maxConns int32) (storage.Store, *RoundTrips) {
	b.Helper()
	rt := &RoundTrips{}
	var st storage.Store
	switch backend {
	case "badger":
		bs, err := badger.Open(b.TempDir(), badger.Options{})
		if err != nil {
			b.Fatal(err)
		}
		st = bs
	case "postgres":
		cfg, err := pgxpool.ParseConfig(pgtest.NewDatabase(b) + "&synchronous_commit=off")
		if err != nil {
			b.Fatal(err)
		}
		cfg.ConnConfig.Tracer = rt
		ps, err := postgres.OpenConfig(context.Background(), cfg, postgres.Options{MaxConns: maxConns})
		if err != nil {
			b.Fatal(err)
		}
		st = ps
	default:
		b.Fatalf("teststore: no durable backend %q; the durable ones are %v", backend, DurableBackends)
	}
	b.Cleanup(func() { _ = st.Close() })
	return st, rt
}

// RoundTrips counts the statements and batches a PostgreSQL store sends,
// each a round trip to the server. It is a pgx tracer.
type RoundTrips struct{ n atomic.Int64 }

// Load returns the round trips counted so far.
func (r *RoundTrips) Load() int64 { return r.n.Load() }

// Report reports the round trips per operation since n0 on b, when any
// were counted.
func (r *RoundTrips) Report(b *testing.B, n0 int64, ops int) {
	if n := r.n.Load() - n0; n > 0 && ops > 0 {
		b.ReportMetric(float64(n)/float64(ops), "round-trips/op")
	}
}

// TraceQueryStart counts a statement.
func (r *RoundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	r.n.Add(1)
	return ctx
}

// TraceQueryEnd is part of pgx's tracer: the statement was counted at its
// start.
func (r *RoundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TraceBatchStart counts a batch: its statements go in one round trip.
func (r *RoundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	r.n.Add(1)
	return ctx
}

// TraceBatchQuery is part of pgx's tracer: a batch's statements share its
// round trip.
func (r *RoundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

// TraceBatchEnd is part of pgx's tracer.
func (r *RoundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}
