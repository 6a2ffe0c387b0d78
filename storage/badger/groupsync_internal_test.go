package badger

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestGroupSync_CommitsQueuedBehindASyncShareTheNextOne: while one sync
// runs, any number of commits that arrive wait for the next sync, which
// covers them all, and none of them returns with the sync under way (it
// began before their commit).
func TestGroupSync_CommitsQueuedBehindASyncShareTheNextOne(t *testing.T) {
	release := make(chan struct{})
	var syncs atomic.Int32
	g := newGroupSync(func() error {
		syncs.Add(1)
		<-release
		return nil
	})
	first := make(chan error)
	go func() { first <- g.wait() }()
	waitFor(t, func() bool { return syncs.Load() == 1 })

	const queued = 20
	var returned atomic.Int32
	var wg sync.WaitGroup
	for range queued {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := g.wait(); err != nil {
				t.Error(err)
			}
			returned.Add(1)
		}()
	}
	waitFor(t, func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.started == 1 && g.running && g.waiting == 1+queued
	})
	release <- struct{}{} // the first sync ends
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return syncs.Load() == 2 })
	if n := returned.Load(); n != 0 {
		t.Fatalf("%d commits returned on a sync that began before them", n)
	}
	release <- struct{}{} // the second ends
	wg.Wait()
	if n := syncs.Load(); n != 2 {
		t.Fatalf("%d syncs for 1 + %d commits; want 2", n, queued)
	}
}

func TestGroupSync_AFailedSyncFailsTheCommitsItCovered(t *testing.T) {
	boom := errors.New("disk error")
	fail := true
	g := newGroupSync(func() error {
		if fail {
			return boom
		}
		return nil
	})
	if err := g.wait(); !errors.Is(err, boom) {
		t.Fatalf("wait = %v; want the sync's error", err)
	}
	fail = false
	if err := g.wait(); err != nil {
		t.Fatalf("wait after a good sync = %v", err)
	}
}

// waitFor polls cond: the goroutines it waits for have no other signal.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 10s")
		}
		time.Sleep(time.Millisecond)
	}
}
