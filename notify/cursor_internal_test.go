package notify

import (
	"testing"
	"time"
)

// TestOutboxSweep_StartsWhereTheOutboxWasSweepLagAgoAndFromTheStartEveryFullSweep:
// a sweep reads from the first number not yet fanned out sweepLag before,
// so that it does not walk the deleted keys of everything fanned out long
// ago, and reads the whole outbox every fullSweepEvery.
func TestOutboxSweep_StartsWhereTheOutboxWasSweepLagAgoAndFromTheStartEveryFullSweep(t *testing.T) {
	t0 := time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC)
	var c outboxCursor
	drawn := uint64(0)
	sweep := func(at time.Duration) uint64 {
		c.sweep = true
		return c.start(t0.Add(at), drawn)
	}
	if from := sweep(0); from != 0 {
		t.Fatalf("first sweep starts at %d; want the outbox's start", from)
	}
	// One second later, events up to 100 were fanned out.
	c.saw(100)
	if from := sweep(time.Second); from != 1 {
		t.Fatalf("a sweep before any mark is sweepLag old starts at %d; want the oldest mark, 1", from)
	}
	c.saw(500)
	sweep(2 * time.Second)
	c.saw(900)
	if from := sweep(time.Second + sweepLag); from != 101 {
		t.Fatalf("a sweep sweepLag after the mark 101 starts at %d; want 101", from)
	}
	if from := sweep(2*time.Second + sweepLag); from != 501 {
		t.Fatalf("a sweep sweepLag after the mark 501 starts at %d; want 501", from)
	}
	if from := sweep(fullSweepEvery); from != 0 {
		t.Fatalf("a sweep fullSweepEvery after the last full one starts at %d; want the outbox's start", from)
	}
	// With nothing fanned out, a number drawn at the sweep marks where
	// the outbox stood: events before it are history.
	drawn = 5000
	sweep(fullSweepEvery + time.Second)
	drawn = 5010
	if from := sweep(fullSweepEvery + time.Second + sweepLag); from != 5000 {
		t.Fatalf("a sweep sweepLag after a drawn mark 5000 starts at %d; want 5000", from)
	}
	// And the reads between sweeps start there too, once the grace is over.
	c.start(t0.Add(fullSweepEvery+2*time.Second+sweepLag), 0)
	if from := c.start(t0.Add(fullSweepEvery+3*time.Second+sweepLag), 0); from < 5010 {
		t.Fatalf("a read between sweeps starts at %d; want at least the last drawn mark, 5010", from)
	}
}
