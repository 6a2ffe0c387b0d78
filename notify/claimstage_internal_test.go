package notify

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/memory"
)

// movingClock moves itself forward by step right after the first Now it
// answers, and calls moved as a manual clock's watchers are called: the
// clock move lands between the read of the clock and what follows it.
type movingClock struct {
	mu    sync.Mutex
	now   time.Time
	step  time.Duration
	moved func()
	done  bool
}

func (c *movingClock) Now() time.Time {
	c.mu.Lock()
	now, move := c.now, !c.done
	if move {
		c.now, c.done = c.now.Add(c.step), true
	}
	c.mu.Unlock()
	if move {
		c.moved()
	}
	return now
}

// TestClaimStage_AClockMoveDuringAStageIsClaimedByTheNextStage: the move
// wakes the loop after it has happened, so whichever stage takes its wake
// must claim at the time after the move; otherwise a retry it made due waits
// for the next poll (an hour with a long poll interval).
func TestClaimStage_AClockMoveDuringAStageIsClaimedByTheNextStage(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC)
	st := memory.New()
	const app = int64(firstAppID)
	if err := st.Update(ctx, func(tx storage.Tx) error { return tx.Set(appKey(app), []byte(`{}`)) }); err != nil {
		t.Fatal(err)
	}
	clk := &movingClock{now: t0, step: 20 * time.Minute}
	s := New(st, clk, clock.Wall{}, Options{})
	clk.moved = s.Wake
	s.sweptAt = time.Now() // no sweep: it would ask for a claim by itself
	rec := s.startRecorder()
	defer rec.close()
	s.Wake()
	for range 2 {
		if _, err := s.claimStage(ctx, rec, false); err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	from := s.apps[app].from
	s.mu.Unlock()
	if want := dueKeyBefore(app, t0.Add(clk.step)); !bytes.Equal(from, want) {
		t.Fatalf("after two stages the due cursor is at %x; want the end of what is due after the move, %x", from, want)
	}
}
