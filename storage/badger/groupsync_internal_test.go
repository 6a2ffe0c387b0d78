package badger

import (
	"errors"
	"os"
	"path/filepath"
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

func TestLogFiles_FollowTheNewestMemtableAndValueLogAmongTheTables(t *testing.T) {
	dir := t.TempDir()
	touch := func(name string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"00001.mem", "00002.mem", "000001.vlog", "000001.sst", "000002.sst", "MANIFEST", "KEYREGISTRY"} {
		touch(name)
	}
	l := &logFiles{dir: dir}
	if err := l.syncReplaced(); err != nil {
		t.Fatal(err)
	}
	if l.lastMem != 2 || l.lastV != 1 {
		t.Fatalf("newest memtable log %d and value log %d, want 2 and 1", l.lastMem, l.lastV)
	}
	// A memtable replaced and flushed (its log deleted) between two syncs.
	touch("00003.mem")
	touch("00004.mem")
	if err := os.Remove(filepath.Join(dir, "00003.mem")); err != nil {
		t.Fatal(err)
	}
	touch("000002.vlog")
	if err := l.syncReplaced(); err != nil {
		t.Fatal(err)
	}
	if l.lastMem != 4 || l.lastV != 2 {
		t.Fatalf("newest memtable log %d and value log %d, want 4 and 2", l.lastMem, l.lastV)
	}
}
