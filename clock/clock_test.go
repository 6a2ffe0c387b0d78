package clock_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/clock"
)

var start = time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC)

func TestManual_SetMovesForwardAndNotifiesWatchersWithOldAndNewTime(t *testing.T) {
	is := is.New(t)
	m := clock.NewManual(start)
	var got [][2]time.Time
	m.OnChange(func(from, to time.Time) { got = append(got, [2]time.Time{from, to}) })
	is.NoErr(m.Set(start.Add(time.Hour)))
	is.NoErr(m.Advance(time.Minute))
	is.Equal(m.Now(), start.Add(61*time.Minute))
	is.Equal(got, [][2]time.Time{{start, start.Add(time.Hour)}, {start.Add(time.Hour), start.Add(61 * time.Minute)}})
}

func TestManual_MovingBackwardsIsRefusedAndChangesNothing(t *testing.T) {
	is := is.New(t)
	m := clock.NewManual(start)
	calls := 0
	m.OnChange(func(_, _ time.Time) { calls++ })
	is.True(errors.Is(m.Set(start.Add(-time.Nanosecond)), clock.ErrBackwards))
	is.True(errors.Is(m.Advance(-time.Second), clock.ErrBackwards))
	is.Equal(m.Now(), start)
	is.Equal(calls, 0)
}

func TestManual_SettingTheSameTimeIsAllowedAndNotifiesNobody(t *testing.T) {
	is := is.New(t)
	m := clock.NewManual(start)
	calls := 0
	m.OnChange(func(_, _ time.Time) { calls++ })
	is.NoErr(m.Set(start))
	is.Equal(calls, 0)
}

func TestManual_CancelledWatcherIsNoLongerCalled(t *testing.T) {
	is := is.New(t)
	m := clock.NewManual(start)
	var a, b int
	cancelA := m.OnChange(func(_, _ time.Time) { a++ })
	m.OnChange(func(_, _ time.Time) { b++ })
	is.NoErr(m.Advance(time.Second))
	cancelA()
	cancelA() // harmless twice
	is.NoErr(m.Advance(time.Second))
	is.Equal(a, 1)
	is.Equal(b, 2)
}

func TestManual_WatcherMayReadTheClock(t *testing.T) {
	is := is.New(t)
	m := clock.NewManual(start)
	var seen time.Time
	m.OnChange(func(_, _ time.Time) { seen = m.Now() }) // must not deadlock
	is.NoErr(m.Advance(time.Hour))
	is.Equal(seen, start.Add(time.Hour))
}

func TestManual_ConcurrentMovesNeverGoBackwards(t *testing.T) {
	m := clock.NewManual(start)
	var mu sync.Mutex
	var bad []string
	m.OnChange(func(from, to time.Time) {
		if !to.After(from) {
			mu.Lock()
			bad = append(bad, from.String()+" -> "+to.String())
			mu.Unlock()
		}
	})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				_ = m.Set(start.Add(time.Duration(i*50+j) * time.Second))
				_ = m.Now()
			}
		}()
	}
	wg.Wait()
	if len(bad) > 0 {
		t.Fatalf("moves that did not go forward: %v", bad)
	}
}

func TestManual_RewindMovesBackWithoutTellingTheWatchers(t *testing.T) {
	start := time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC)
	m := clock.NewManual(start)
	calls := 0
	m.OnChange(func(_, _ time.Time) { calls++ })
	if err := m.Advance(time.Hour); err != nil {
		t.Fatal(err)
	}
	m.Rewind(start)
	if got := m.Now(); !got.Equal(start) {
		t.Fatalf("Now after Rewind = %v, want %v", got, start)
	}
	if calls != 1 {
		t.Fatalf("watchers called %d times, want 1 (the Advance only)", calls)
	}
}

func TestManual_SetInEpochAfterARewindIsRefusedAndChangesNothing(t *testing.T) {
	start := time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC)
	m := clock.NewManual(start)
	epoch := m.Epoch()
	if err := m.SetInEpoch(epoch, start.Add(time.Minute)); err != nil {
		t.Fatalf("SetInEpoch in the same epoch: %v", err)
	}
	m.Rewind(start)
	if err := m.SetInEpoch(epoch, start.Add(time.Hour)); !errors.Is(err, clock.ErrRewound) {
		t.Fatalf("SetInEpoch after a Rewind = %v, want ErrRewound", err)
	}
	if got := m.Now(); !got.Equal(start) {
		t.Fatalf("Now = %v, want %v", got, start)
	}
}
