package badger

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// groupSync makes commits durable together. Badger's own SyncWrites syncs
// its log once per transaction, one after the other (writeToLSM ends each
// request of a batch with an msync of the memtable's log), so 64 concurrent
// writers commit at about the rate of one. Instead the store commits without
// syncing and every Update that wrote something waits here for a sync that
// began after its commit: one sync covers every commit queued behind the
// previous one, however many there are.
type groupSync struct {
	sync func() error

	mu      sync.Mutex
	cond    sync.Cond
	running bool
	waiting int    // callers inside wait
	started uint64 // syncs begun
	ended   uint64 // syncs ended
	// failed is the number of the last sync that failed, and err its error.
	failed uint64
	err    error
}

func newGroupSync(sync func() error) *groupSync {
	g := &groupSync{sync: sync}
	g.cond.L = &g.mu
	return g
}

// wait returns when a sync that began after the call has ended, so that
// everything committed before the call is on disk. A waiter that finds no
// sync running runs one itself; the others wait for it.
func (g *groupSync) wait() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.waiting++
	defer func() { g.waiting-- }()
	// A sync under way began before this call and may not cover it.
	need := g.started + 1
	for g.ended < need {
		if g.running {
			g.cond.Wait()
			continue
		}
		g.running = true
		g.started++
		n := g.started
		g.mu.Unlock()
		err := g.sync()
		g.mu.Lock()
		g.running = false
		g.ended = n
		if err != nil {
			g.failed, g.err = n, err
		}
		g.cond.Broadcast()
	}
	if g.failed >= need {
		return g.err
	}
	return nil
}

// logFiles syncs the log files that Badger has stopped writing since the
// last call. DB.Sync syncs only the logs being written (the active
// memtable's and the current value log); a commit that went into a memtable
// or a value log file which has been replaced since is in a file that
// Badger syncs only with SyncWrites on (the memtable's log is deleted once
// its memtable is flushed to a synced table).
type logFiles struct {
	dir            string
	lastMem, lastV uint64 // the newest log files at the last call

	// settled is the folder's modification time at the last listing, when
	// that time was old enough (entriesSettle) that any later creation or
	// deletion in the folder stamps it with another, and zero otherwise:
	// while it stays the same, the folder holds the files it held then and
	// is not listed again. The folder holds every table, so listing it on
	// every sync costs more as the store grows.
	settled time.Time
}

// entriesSettle is how old a folder's modification time must be before a
// sync trusts that the next entry change gives it another. File systems
// stamp with a coarse clock (a scheduler tick, a whole second on some, two
// on FAT), so a change within the same tick as the one before keeps its time.
const entriesSettle = 2 * time.Second

func (l *logFiles) syncReplaced() error {
	before := time.Now()
	info, err := os.Stat(l.dir)
	if err != nil {
		return err
	}
	modified := info.ModTime()
	if !l.settled.IsZero() && modified.Equal(l.settled) {
		return nil // no log created or deleted since the last listing
	}
	names, err := readNames(l.dir)
	if err != nil {
		return err
	}
	var mems, vlogs []logFile
	for _, name := range names {
		ext := filepath.Ext(name)
		id, err := strconv.ParseUint(strings.TrimSuffix(name, ext), 10, 64)
		switch {
		case err != nil:
		case ext == ".mem":
			mems = append(mems, logFile{id, name})
		case ext == ".vlog":
			vlogs = append(vlogs, logFile{id, name})
		}
	}
	var errs []error
	l.lastMem, errs = l.syncBelowNewest(mems, l.lastMem, errs)
	l.lastV, errs = l.syncBelowNewest(vlogs, l.lastV, errs)
	// A change after the Stat above stamps the folder anew, since its time
	// was old enough: the next sync sees it.
	l.settled = time.Time{}
	if len(errs) == 0 && before.Sub(modified) > entriesSettle {
		l.settled = modified
	}
	return errors.Join(errs...)
}

// readNames lists the folder's names, unsorted: the folder holds every table
// of the store, and a sync lists it, so sorting and typing each entry as
// os.ReadDir does would cost more as the store grows.
func readNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

type logFile struct {
	id   uint64
	name string
}

// syncBelowNewest syncs the files from id since up to, not including, the
// newest (which DB.Sync syncs), and returns the newest id.
func (l *logFiles) syncBelowNewest(files []logFile, since uint64, errs []error) (uint64, []error) {
	newest := since
	for _, f := range files {
		newest = max(newest, f.id)
	}
	for _, f := range files {
		if f.id < since || f.id >= newest {
			continue
		}
		if err := fsyncFile(filepath.Join(l.dir, f.name)); err != nil {
			errs = append(errs, err)
		}
	}
	return newest, errs
}

func fsyncFile(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		// A memtable's log is deleted once the memtable is in a synced
		// table: nothing left to sync.
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
