package responsetime_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/responsetime"
)

// gatedSource is a SampleSource whose listing of sellers counts its calls
// and, when gated, waits until released.
type gatedSource struct {
	fakeSource
	calls   atomic.Int32
	entered chan struct{}
	release chan struct{}
}

func (g *gatedSource) SellersWithQuestionsSince(ctx context.Context, since time.Time) ([]int64, error) {
	g.calls.Add(1)
	if g.entered != nil {
		close(g.entered)
		<-g.release
	}
	return g.fakeSource.SellersWithQuestionsSince(ctx, since)
}

func TestRefresh_SharedStore_OneProcessRefreshesAndTheOthersFindItDone(t *testing.T) {
	start := time.Date(2026, 3, 5, 12, 0, 0, 0, time.UTC)
	e := newRTEnv(t, start)
	wall := clock.NewManual(start)
	g := geo.New(e.store, e.clock)
	srcA := &gatedSource{entered: make(chan struct{}), release: make(chan struct{})}
	srcB := &gatedSource{}
	a := responsetime.New(e.store, e.clock, g, srcA)
	b := responsetime.New(e.store, e.clock, g, srcB)
	a.ShareStore("server-a", wall)
	b.ShareStore("server-b", wall)
	ctx := context.Background()

	done := make(chan error, 1)
	go func() { done <- responsetime.ScheduledRefresh(ctx, a) }()
	<-srcA.entered // a holds the lease and is refreshing
	if err := responsetime.ScheduledRefresh(ctx, b); !errors.Is(err, responsetime.ErrRefreshElsewhere) {
		t.Fatalf("b while a refreshes: %v; want ErrRefreshElsewhere", err)
	}
	close(srcA.release)
	if err := <-done; err != nil {
		t.Fatalf("a's refresh: %v", err)
	}
	if err := responsetime.ScheduledRefresh(ctx, b); err != nil {
		t.Fatalf("b after a's refresh: %v", err)
	}
	if n := srcB.calls.Load(); n != 0 {
		t.Fatalf("b read the questions %d times; want 0: a refreshed for both", n)
	}
	if _, ok, err := b.LastRefresh(ctx); err != nil || !ok {
		t.Fatalf("b sees no refresh (%v, %v)", ok, err)
	}
}

func TestRefresh_SharedStore_DeadHolderIsTakenOverAfterTheLease(t *testing.T) {
	start := time.Date(2026, 3, 5, 12, 0, 0, 0, time.UTC)
	e := newRTEnv(t, start)
	wall := clock.NewManual(start)
	g := geo.New(e.store, e.clock)
	ctx := context.Background()
	// A holder that took the lease and died without refreshing.
	dead := responsetime.New(e.store, e.clock, g, &gatedSource{})
	dead.ShareStore("server-dead", wall)
	if _, err := responsetime.TakeRefreshLease(ctx, dead); err != nil {
		t.Fatal(err)
	}
	src := &gatedSource{}
	b := responsetime.New(e.store, e.clock, g, src)
	b.ShareStore("server-b", wall)
	if err := responsetime.ScheduledRefresh(ctx, b); !errors.Is(err, responsetime.ErrRefreshElsewhere) {
		t.Fatalf("b while the lease is held: %v; want ErrRefreshElsewhere", err)
	}
	if err := wall.Advance(15 * time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := responsetime.ScheduledRefresh(ctx, b); err != nil || src.calls.Load() != 1 {
		t.Fatalf("b after the lease expired: %v, %d reads; want one refresh", err, src.calls.Load())
	}
}

// A reset can move the engine's clock back while a scheduled refresh is on
// its way: the refresh must read the clock inside the engine's state hold,
// or it stores a refresh record of the time before the reset, ahead of the
// new clock, and the refreshes that clock then crosses find themselves done.
func TestScheduledRefresh_ReadsTheClockInsideTheStateHold(t *testing.T) {
	for _, shared := range []bool{false, true} {
		start := time.Date(2026, 3, 5, 12, 0, 0, 0, time.UTC)
		e := newRTEnv(t, start)
		r := responsetime.New(e.store, e.clock, geo.New(e.store, e.clock), &gatedSource{})
		if shared {
			r.ShareStore("server-a", clock.NewManual(start))
		}
		moved := start.Add(72 * time.Hour)
		entered := false
		r.HoldStateWith(func() func() {
			// What a reset held out until now did: the clock is elsewhere.
			if err := e.clock.Set(moved); err != nil {
				t.Fatal(err)
			}
			entered = true
			return func() {}
		})
		ctx := context.Background()
		if err := responsetime.ScheduledRefresh(ctx, r); err != nil {
			t.Fatalf("shared %v: refresh: %v", shared, err)
		}
		last, ok, err := r.LastRefresh(ctx)
		if err != nil || !ok || !entered {
			t.Fatalf("shared %v: last refresh %v, %v, %v (hold entered: %v)", shared, last, ok, err, entered)
		}
		if want := responsetime.LatestScheduledRefresh(moved); !last.Equal(want) {
			t.Fatalf("shared %v: refreshed as of %v; want %v, the clock inside the hold", shared, last, want)
		}
	}
}
