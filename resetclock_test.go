package marketplace_test

import (
	"context"
	"testing"
	"time"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/memory"
)

var resetStart = time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC)

func newManualEngine(t *testing.T) (*marketplace.Marketplace, *clock.Manual) {
	t.Helper()
	clk := clock.NewManual(resetStart)
	m, err := marketplace.New(memory.New(), marketplace.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m, clk
}

func TestReset_WithClockSetsTheManualClockBackTogetherWithTheState(t *testing.T) {
	ctx := context.Background()
	m, clk := newManualEngine(t)
	mustCreateUser(t, m, "LATER")
	if err := clk.Set(resetStart.Add(72 * time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := m.Reset(ctx, marketplace.ResetOptions{Demo: true, Clock: resetStart}); err != nil {
		t.Fatalf("reset: %v", err)
	}
	if got := clk.Now(); !got.Equal(resetStart) {
		t.Fatalf("clock after reset = %v, want %v", got, resetStart)
	}
	// The shared time went back too: a sync does not bring the clock
	// forward again.
	if err := m.SyncClock(ctx); err != nil {
		t.Fatal(err)
	}
	if got := clk.Now(); !got.Equal(resetStart) {
		t.Fatalf("clock after sync = %v, want %v", got, resetStart)
	}
	demo, err := m.EnsureDemo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if reg, err := time.Parse(time.RFC3339Nano, demo.Seller.RegistrationDate); err != nil || !reg.Equal(resetStart) {
		t.Fatalf("demo seller registered at %v, want the start %v", demo.Seller.RegistrationDate, resetStart)
	}
	// Forward moves work from the start again.
	if err := clk.Advance(time.Hour); err != nil {
		t.Fatalf("advance after the reset: %v", err)
	}
}

func TestReset_WithALaterClockMovesItForward(t *testing.T) {
	m, clk := newManualEngine(t)
	later := resetStart.Add(48 * time.Hour)
	if err := m.Reset(context.Background(), marketplace.ResetOptions{Clock: later}); err != nil {
		t.Fatalf("reset: %v", err)
	}
	if got := clk.Now(); !got.Equal(later) {
		t.Fatalf("clock = %v, want %v", got, later)
	}
}

func TestReset_WithClockOnTheWallClockIsConflictAndChangesNothing(t *testing.T) {
	m, err := marketplace.New(memory.New(), marketplace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	u, _ := mustCreateUser(t, m, "KEPT")
	err = m.Reset(context.Background(), marketplace.ResetOptions{Clock: resetStart})
	if !errs.Is(err, errs.Conflict) {
		t.Fatalf("reset = %v, want Conflict", err)
	}
	if _, err := m.Accounts.User(context.Background(), u.ID); err != nil {
		t.Fatalf("the refused reset removed the user: %v", err)
	}
}

func TestReset_SettingTheClockBackOnAStoreOfSeveralEnginesIsConflictAndChangesNothing(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	clk := clock.NewManual(resetStart)
	m, err := marketplace.New(st, marketplace.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	other, err := marketplace.New(st, marketplace.Options{Clock: clock.NewManual(resetStart)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close() })
	u, _ := mustCreateUser(t, m, "KEPT")
	later := resetStart.Add(time.Hour)
	if err := clk.Set(later); err != nil {
		t.Fatal(err)
	}
	err = m.Reset(ctx, marketplace.ResetOptions{Clock: resetStart})
	if !errs.Is(err, errs.Conflict) {
		t.Fatalf("reset = %v, want Conflict", err)
	}
	if got := clk.Now(); !got.Equal(later) {
		t.Fatalf("clock = %v, want it unchanged at %v", got, later)
	}
	if _, err := m.Accounts.User(ctx, u.ID); err != nil {
		t.Fatalf("the refused reset removed the user: %v", err)
	}
}

func TestRestore_WithClockBringsBackTheStateAndTheTime(t *testing.T) {
	ctx := context.Background()
	m, clk := newManualEngine(t)
	kept, _ := mustCreateUser(t, m, "KEPT")
	snap, err := m.CreateSnapshot(ctx, "start")
	if err != nil {
		t.Fatal(err)
	}
	if err := clk.Set(resetStart.Add(30 * 24 * time.Hour)); err != nil {
		t.Fatal(err)
	}
	gone, _ := mustCreateUser(t, m, "GONE")
	if err := m.Restore(ctx, snap.ID, marketplace.RestoreOptions{Clock: resetStart}); err != nil {
		t.Fatalf("restore: %v", err)
	}
	if got := clk.Now(); !got.Equal(resetStart) {
		t.Fatalf("clock = %v, want %v", got, resetStart)
	}
	if _, err := m.Accounts.User(ctx, kept.ID); err != nil {
		t.Fatalf("user of the snapshot: %v", err)
	}
	if _, err := m.Accounts.User(ctx, gone.ID); !errs.Is(err, errs.NotFound) {
		t.Fatalf("user made after the snapshot = %v, want NotFound", err)
	}
	if err := m.Restore(ctx, snap.ID+100, marketplace.RestoreOptions{Clock: resetStart}); !errs.Is(err, errs.NotFound) {
		t.Fatalf("restore of an unknown snapshot = %v, want NotFound", err)
	}
}

func TestReset_SettingTheClockBackWorksOnAStoreOfOneProcessAndIsConflictOnPostgreSQL(t *testing.T) {
	forEachBackend(t, func(t *testing.T, m *marketplace.Marketplace) {
		ctx := context.Background()
		u, _ := mustCreateUser(t, m, "KEPT")
		manual := m.Clock.(*clock.Manual)
		start := manual.Now()
		if err := manual.Advance(time.Hour); err != nil {
			t.Fatal(err)
		}
		err := m.Reset(ctx, marketplace.ResetOptions{Clock: start})
		if storage.IsShared(m.Store()) {
			if !errs.Is(err, errs.Conflict) {
				t.Fatalf("reset on a shared store = %v, want Conflict", err)
			}
			if _, err := m.Accounts.User(ctx, u.ID); err != nil {
				t.Fatalf("the refused reset removed the user: %v", err)
			}
			return
		}
		if err != nil {
			t.Fatalf("reset: %v", err)
		}
		if got := manual.Now(); !got.Equal(start) {
			t.Fatalf("clock = %v, want %v", got, start)
		}
	})
}
