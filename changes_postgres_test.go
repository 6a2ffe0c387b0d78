package marketplace_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/faults"
	ikv "github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/internal/pgproxy"
	"github.com/marketplace/marketplace/internal/pgtest"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/postgres"
)

// The tests of this file check that a change made through one engine
// reaches another engine on the same database by the store's word
// (storage.Changes: LISTEN/NOTIFY), not by a poll: the engines either poll
// nothing for the change checked or poll far less often than the test's
// deadline. The deadline only catches a change that never arrives; how
// fast one arrives is logged (seen after ...), not asserted.

// throughProxy returns dbURL with its host replaced by a counting proxy's.
func throughProxy(tb testing.TB, dbURL string) (*pgproxy.Proxy, string) {
	tb.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		tb.Fatal(err)
	}
	p, err := pgproxy.Start(u.Host)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = p.Close() })
	u.Host = p.Addr()
	return p, u.String()
}

func openEngine(tb testing.TB, dbURL string, opts marketplace.Options) *marketplace.Marketplace {
	tb.Helper()
	m, err := marketplace.Open(context.Background(), postgres.URL(dbURL), opts)
	if err != nil {
		tb.Fatalf("Open on PostgreSQL: %v", err)
	}
	tb.Cleanup(func() { _ = m.Close() })
	return m
}

// start runs m's background work until the returned function is called
// or the test ends.
func start(tb testing.TB, m *marketplace.Marketplace) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = m.Start(ctx)
	}()
	stop = func() {
		cancel()
		<-done
	}
	tb.Cleanup(stop)
	return stop
}

// seen waits for cond within a generous deadline and logs how long it
// took from since.
func seen(tb testing.TB, what string, since time.Time, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("never seen: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
	tb.Logf("%s: seen after %v", what, time.Since(since).Round(100*time.Microsecond))
}

func TestChanges_AnEventAppendedThroughOneServerIsFannedOutByTheOtherOnItsWord(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	ctx := context.Background()
	// The delivering engine polls once an hour: only the word of the
	// store wakes it for an event appended elsewhere.
	a := openEngine(t, dbURL, marketplace.Options{Notifications: notify.Options{PollInterval: time.Hour}})
	b := openEngine(t, dbURL, marketplace.Options{})
	start(t, a)
	outboxEmpty := func() bool {
		empty := true
		err := b.Store().View(ctx, func(tx storage.Tx) error {
			it := tx.Iterate(storage.Prefix(notify.OutboxPrefix()))
			defer it.Close()
			empty = !it.Valid()
			return nil
		})
		return err == nil && empty
	}
	appendThrough := func(m *marketplace.Marketplace) {
		t.Helper()
		err := m.Store().Update(ctx, func(tx storage.Tx) error {
			_, err := notify.Append(ctx, m.Store(), tx, notify.Event{Topic: notify.TopicItems, UserID: 1, Resource: "/items/MLA1", Action: "updated"})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// a's own event wakes it in memory: its delivery loop runs.
	appendThrough(a)
	seen(t, "an event appended through the delivering engine fanned out", time.Now(), outboxEmpty)
	// Past the reads that follow a's own event (1 ms, 2 ms, 4 ms... up
	// to 512 ms apart), which would find the next one without a word.
	time.Sleep(2 * time.Second)
	at := time.Now()
	appendThrough(b)
	seen(t, "an event appended through the other engine fanned out", at, outboxEmpty)
}

func TestChanges_AManualClockMovedThroughOneServerMovesTheOther(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	t0 := time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)
	ca, cb := clock.NewManual(t0), clock.NewManual(t0)
	openEngine(t, dbURL, marketplace.Options{Clock: ca})
	openEngine(t, dbURL, marketplace.Options{Clock: cb})
	to := t0.Add(36 * time.Hour)
	at := time.Now()
	if err := ca.Set(to); err != nil {
		t.Fatal(err)
	}
	seen(t, "the clock moved on the other engine", at, func() bool { return cb.Now().Equal(to) })
}

func TestChanges_AStubAddedOrRemovedThroughOneServerIsSeenByTheOther(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	ctx := context.Background()
	a, b := openEngine(t, dbURL, marketplace.Options{}), openEngine(t, dbURL, marketplace.Options{})
	start(t, b)
	seen(t, "no override on a new database", time.Now(), func() bool { return !b.Stubs.HasOverride() })
	at := time.Now()
	m, err := a.Stubs.Create(ctx, []byte(`{"request":{"urlPath":"/items/MLA1"},"response":{"status":200},"marketplace":{"override":true,"public":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	seen(t, "an override stub added through the other engine", at, b.Stubs.HasOverride)
	at = time.Now()
	if err := a.Stubs.Delete(ctx, m.ID); err != nil {
		t.Fatal(err)
	}
	seen(t, "the override stub removed through the other engine", at, func() bool { return !b.Stubs.HasOverride() })
}

// faultRule is a rule that faults every request.
var faultRule = faults.NewRule{Status: ptrTo(503)}

func ptrTo[T any](v T) *T { return &v }

func TestChanges_AFaultRuleAddedOrRemovedThroughOneServerIsSeenByTheOther(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	ctx := context.Background()
	a, b := openEngine(t, dbURL, marketplace.Options{}), openEngine(t, dbURL, marketplace.Options{})
	start(t, b)
	seen(t, "no rule on a new database", time.Now(), func() bool { return !b.Faults.Active() })
	at := time.Now()
	r, err := a.Faults.Create(ctx, faultRule)
	if err != nil {
		t.Fatal(err)
	}
	seen(t, "a rule added through the other engine", at, b.Faults.Active)
	at = time.Now()
	if err := a.Faults.Delete(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	seen(t, "the rule removed through the other engine", at, func() bool { return !b.Faults.Active() })
}

func TestChanges_AResetOrARestoreThroughOneServerIsSeenByTheOther(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	ctx := context.Background()
	a, b := openEngine(t, dbURL, marketplace.Options{}), openEngine(t, dbURL, marketplace.Options{})
	start(t, b)
	snap, err := a.CreateSnapshot(ctx, "no rules")
	if err != nil {
		t.Fatal(err)
	}
	for _, replace := range []struct {
		name string
		fn   func() error
	}{
		{"a reset", func() error { return a.Reset(ctx, marketplace.ResetOptions{}) }},
		{"a restore", func() error { return a.RestoreSnapshot(ctx, snap.ID) }},
	} {
		if _, err := a.Faults.Create(ctx, faultRule); err != nil {
			t.Fatal(err)
		}
		seen(t, "a rule added before "+replace.name, time.Now(), b.Faults.Active)
		at := time.Now()
		if err := replace.fn(); err != nil {
			t.Fatal(err)
		}
		// Active says only whether a rule may be in force: after the
		// replaced state's hook has dropped the rules kept, it says so until
		// a request reads them again. Decide is what a request asks.
		seen(t, "the rule gone with "+replace.name+" through the other engine", at, func() bool {
			_, faulted, err := b.Faults.Decide(ctx, faults.Request{Method: "GET", Route: "/users/:user_id"})
			return err == nil && !faulted
		})
	}
}

func TestChanges_TheDeliveryLeaseIsTakenOverWhenItsHolderStops(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	ctx := context.Background()
	// A lease of an hour: only the holder's release, told by the store,
	// lets the other engine take it.
	opts := marketplace.Options{Notifications: notify.Options{Lease: time.Hour}}
	a, b := openEngine(t, dbURL, opts), openEngine(t, dbURL, opts)
	holder := func() string {
		v, err := storage.GetOne(ctx, b.Store(), ikv.LeaseKey("notify/delivery"))
		if err != nil || len(v) < 16 {
			return ""
		}
		return string(v[16:])
	}
	stopA := start(t, a)
	seen(t, "the first engine holding the lease", time.Now(), func() bool { return holder() != "" })
	first := holder()
	start(t, b)
	// b looks at the lease as it starts, and finds it held.
	time.Sleep(500 * time.Millisecond)
	at := time.Now()
	stopA()
	seen(t, "the lease taken over by the other engine", at, func() bool { h := holder(); return h != "" && h != first })
}

func TestChanges_AnIdleServerMakesAtMostTenRoundTripsPerSecond(t *testing.T) {
	p, proxied := throughProxy(t, pgtest.NewDatabase(t))
	m := openEngine(t, proxied, marketplace.Options{})
	start(t, m)
	// Past the start's reads (reference data, the first refresh, the
	// lease, the first LISTEN).
	time.Sleep(2 * time.Second)
	before, from := p.RoundTrips(), time.Now()
	time.Sleep(5 * time.Second)
	trips, secs := p.RoundTrips()-before, time.Since(from).Seconds()
	t.Logf("idle: %d round trips in %.1f s: %.1f per second", trips, secs, float64(trips)/secs)
	if float64(trips) > 10*secs {
		t.Fatalf("an idle server made %d round trips to PostgreSQL in %.1f s; want at most 10 per second", trips, secs)
	}
}
