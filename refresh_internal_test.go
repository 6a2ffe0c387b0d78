package marketplace

import (
	"context"
	"testing"
	"time"

	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/storage/memory"
)

// The scheduled refresh of Start runs inside the engine's state gate, as a
// holder: a reset that comes while it runs waits for it, so the refresh
// cannot read the clock before the reset and store its record after.
func TestStart_ScheduledRefreshHoldsTheStateAgainstAReset(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m, err := New(memory.New(), Options{Clock: clock.NewManual(time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC))})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = m.Close() }()
	entered, release := make(chan struct{}), make(chan struct{})
	first := true
	m.ResponseTimes.ObserveRefresh(func() func() {
		if first {
			first = false
			close(entered)
			<-release
		}
		return func() {}
	})
	go func() { _ = m.Start(ctx) }()
	<-entered

	resetDone := make(chan error, 1)
	go func() { resetDone <- m.Reset(ctx, ResetOptions{}) }()
	for {
		if v := m.gate.state.Load(); v < 0 {
			if n := holders(v); n != 1 {
				t.Fatalf("a reset waits with %d holders inside; want 1, the refresh", n)
			}
			break
		}
		select {
		case err := <-resetDone:
			t.Fatalf("the reset ended (%v) while the scheduled refresh ran", err)
		case <-time.After(time.Millisecond):
		}
	}
	close(release)
	if err := <-resetDone; err != nil {
		t.Fatalf("reset after the refresh: %v", err)
	}
}
