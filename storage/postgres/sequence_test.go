package postgres_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/marketplace/marketplace/internal/pgtest"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/postgres"
)

// nextvalCounter counts the statements that draw sequence values.
type nextvalCounter struct{ n atomic.Int64 }

func (c *nextvalCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if strings.Contains(data.SQL, "nextval(") {
		c.n.Add(1)
	}
	return ctx
}

func (c *nextvalCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func TestSequence_NextCallsThatWaitForADrawShareTheNextOneInArrivalOrder(t *testing.T) {
	url := pgtest.NewDatabase(t)
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	counter := &nextvalCounter{}
	cfg.ConnConfig.Tracer = counter
	st, err := postgres.OpenConfig(context.Background(), cfg, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	q, err := st.Sequence("grouped")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	first, err := q.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// A transaction holding ALTER SEQUENCE's lock blocks nextval, so the
	// next draw stays in flight while more calls arrive.
	locker, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close(ctx)
	lockTx, err := locker.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lockTx.Rollback(ctx)
	if _, err := lockTx.Exec(ctx, "ALTER SEQUENCE "+postgres.SequenceIdent("grouped")+" OWNED BY NONE"); err != nil {
		t.Fatal(err)
	}
	before := counter.n.Load()

	blocked := make(chan uint64, 1)
	go func() {
		id, err := q.Next(ctx)
		if err != nil {
			t.Error(err)
		}
		blocked <- id
	}()
	waitFor(t, func() bool { w, drawing := postgres.WaitingNext(q); return drawing && w == 0 })

	const later = 9
	ids := make([]uint64, later)
	var wg sync.WaitGroup
	for i := range later {
		// One at a time, so that the order of arrival is known.
		wg.Go(func() {
			id, err := q.Next(ctx)
			if err != nil {
				t.Error(err)
			}
			ids[i] = id
		})
		waitFor(t, func() bool { w, _ := postgres.WaitingNext(q); return w == i+1 })
	}
	if err := lockTx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	held := <-blocked

	if held <= first {
		t.Fatalf("blocked call got %d after %d", held, first)
	}
	for i, id := range ids {
		if want := held + 1 + uint64(i); id != want {
			t.Fatalf("ids of the calls that waited, in arrival order = %v; want %d.. in order", ids, held+1)
		}
	}
	if n := counter.n.Load() - before; n != 2 {
		t.Errorf("%d statements drew the ids of %d calls; want 2 (the blocked draw, then one for the calls that waited)", n, later+1)
	}
	if !slices.IsSorted(ids) {
		t.Errorf("ids %v not increasing", ids)
	}
}

// waitFor waits until cond holds; the test's deadline bounds it.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for !cond() {
		time.Sleep(time.Millisecond)
	}
}

func TestSequences_SeveralAreDrawnInOneRoundTrip(t *testing.T) {
	proxy, url := throughProxy(t, pgtest.NewDatabase(t))
	st := openWith(t, url, postgres.Options{})
	ctx := context.Background()
	names := []string{"orders", "packs", "shipments", "payments"}
	// The first draw of a sequence creates it: each is drawn on its own.
	first, err := storage.NextOfEach(ctx, st, names)
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range first {
		if id != 1 {
			t.Fatalf("first draw of %s: %d; want 1", names[i], id)
		}
	}
	if _, err := storage.NextOfEach(ctx, st, names); err != nil { // pgx prepares the statement
		t.Fatal(err)
	}
	before := proxy.RoundTrips()
	ids, err := storage.NextOfEach(ctx, st, names)
	if err != nil {
		t.Fatal(err)
	}
	if n := proxy.RoundTrips() - before; n != 1 {
		t.Errorf("drawing from 4 sequences made %d round trips; want 1", n)
	}
	for i, id := range ids {
		if id != 3 {
			t.Errorf("third draw of %s: %d; want 3", names[i], id)
		}
	}
	// A sequence that is new among known ones is created, not failed on.
	ids, err = storage.NextOfEach(ctx, st, []string{"orders", "refunds"})
	if err != nil || ids[0] != 4 || ids[1] != 1 {
		t.Fatalf("orders and a new sequence: %v, %v; want [4 1]", ids, err)
	}
}
