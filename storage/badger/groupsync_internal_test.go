package badger

import (
	"errors"
	"fmt"
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
		createEmpty(t, dir, name)
	}
	for _, name := range []string{"00001.mem", "00002.mem", "000001.vlog", "000001.sst", "000002.sst", "MANIFEST", "KEYREGISTRY"} {
		touch(name)
	}
	l := &logFiles{dir: dir}
	mustSyncReplaced(t, l)
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
	mustSyncReplaced(t, l)
	if l.lastMem != 4 || l.lastV != 2 {
		t.Fatalf("newest memtable log %d and value log %d, want 4 and 2", l.lastMem, l.lastV)
	}
}

// ageFolder sets dir's modification time to an hour ago, as if its last
// entry change were that old.
// createEmpty creates an empty file: the sync looks at names, never contents.
func createEmpty(tb testing.TB, dir, name string) {
	tb.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
		tb.Fatal(err)
	}
}

// mustSyncReplaced runs the search for replaced logs a group sync makes.
func mustSyncReplaced(t *testing.T, l *logFiles) {
	t.Helper()
	if err := l.syncReplaced(); err != nil {
		t.Fatal(err)
	}
}

func ageFolder(t *testing.T, dir string) time.Time {
	t.Helper()
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(dir, old, old); err != nil {
		t.Fatal(err)
	}
	return old
}

func TestLogFiles_AFolderUnchangedSinceASettledListingIsNotListedAgain(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"00001.mem", "000001.vlog", "000001.sst"} {
		createEmpty(t, dir, name)
	}
	old := ageFolder(t, dir)
	l := &logFiles{dir: dir}
	mustSyncReplaced(t, l)
	// A file that appears without stamping the folder shows that the next
	// sync does not list it.
	createEmpty(t, dir, "00002.mem")
	if err := os.Chtimes(dir, old, old); err != nil {
		t.Fatal(err)
	}
	mustSyncReplaced(t, l)
	if l.lastMem != 1 {
		t.Fatalf("newest memtable log %d after a sync of an unchanged folder, want 1: it was listed again", l.lastMem)
	}
}

func TestLogFiles_ALogCreatedAfterASettledListingIsFound(t *testing.T) {
	dir := t.TempDir()
	createEmpty(t, dir, "00001.mem")
	ageFolder(t, dir)
	l := &logFiles{dir: dir}
	mustSyncReplaced(t, l)
	if l.settled.IsZero() {
		t.Fatal("a listing of a folder unchanged for an hour did not settle")
	}
	createEmpty(t, dir, "00002.mem")
	mustSyncReplaced(t, l)
	if l.lastMem != 2 {
		t.Fatalf("newest memtable log %d, want 2: the new log was not found", l.lastMem)
	}
}

// A folder changed just before a listing may change again within the same
// tick of the file system's clock and keep its time: the next sync lists it
// again whatever its time says.
func TestLogFiles_AFolderChangedJustBeforeAListingIsListedAgain(t *testing.T) {
	dir := t.TempDir()
	createEmpty(t, dir, "00001.mem")
	info, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	l := &logFiles{dir: dir}
	mustSyncReplaced(t, l)
	// The next change within the same tick: the folder keeps its time.
	createEmpty(t, dir, "00002.mem")
	if err := os.Chtimes(dir, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
	mustSyncReplaced(t, l)
	if l.lastMem != 2 {
		t.Fatalf("newest memtable log %d, want 2: a folder stamped just before its listing was trusted", l.lastMem)
	}
}

// BenchmarkLogFilesSyncReplaced is the search for replaced logs that each
// group sync makes, in a folder of 1,000 tables: listed every time (a
// folder whose entries keep changing) against settled (unchanged since the
// last listing).
//
//	go test -run '^$' -bench BenchmarkLogFilesSyncReplaced ./storage/badger
func BenchmarkLogFilesSyncReplaced(b *testing.B) {
	dir := b.TempDir()
	for i := range 1000 {
		createEmpty(b, dir, fmt.Sprintf("%06d.sst", i+1))
	}
	for _, name := range []string{"00001.mem", "000001.vlog"} {
		createEmpty(b, dir, name)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(dir, old, old); err != nil {
		b.Fatal(err)
	}
	for _, settle := range []bool{false, true} {
		name := "listed"
		if settle {
			name = "settled"
		}
		b.Run(name, func(b *testing.B) {
			l := &logFiles{dir: dir}
			for b.Loop() {
				if !settle {
					l.settled = time.Time{}
				}
				if err := l.syncReplaced(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
