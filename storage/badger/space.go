package badger

import (
	"sync"
	"time"

	badgerdb "github.com/dgraph-io/badger/v4"

	"github.com/marketplace/marketplace/storage"
)

// The sizes Open gives Badger; the free space margin is derived from them.
const (
	memTableSize     = 64 << 20
	numMemtables     = 2
	valueLogFileSize = 64 << 20
)

// DefaultFreeSpaceMargin is the free space, in bytes, that a Store keeps on
// the file system of its folder: an Update that would leave less is refused
// with storage.ErrNoSpace before it reaches Badger. It is 256 MiB, exactly
// what Badger maps ahead of its writes with the options of Open.
//
// Badger writes its write-ahead log (one file per memtable) and its value log
// through memory maps of files it truncates to twice their size (2 × 64 MiB
// each), and it writes every new table (a flushed memtable, a compaction's
// output) through a map as well. The file system backs a map lazily: when a
// page cannot be backed, the process dies with SIGBUS instead of getting an
// error. The margin is for what Badger may still write on its own once we
// stop taking writes: the level-0 tables of the memtable being written and of
// one waiting to be flushed (Close flushes the first), each at most a memtable
// plus one transaction (64 + 9.6 MiB), 147 MiB together, and the rest for the
// small files (manifest, discard stats) and slack. The bytes of the writes we
// take are counted on top of it (see spaceGuard), and so are the tables that
// compactions may rewrite (see compactionReserve).
const DefaultFreeSpaceMargin = 2*memTableSize + 2*valueLogFileSize

// spaceRecheck is how long a reading of the free space is trusted. Between
// readings the guard subtracts the bytes of every write it let through, so
// a writer cannot eat into the margin; a reading only catches up with what
// others did to the disk (a file deleted, a compaction done, another
// program's writes). One statfs per interval, not one per Update.
const spaceRecheck = 100 * time.Millisecond

// Bytes counted for each write of a transaction beside its key and value, and
// for the transaction itself. Badger's log entry adds a header (at most 22
// bytes), an 8-byte version and a 4-byte checksum to the key and value; a
// value written to the value log leaves a pointer entry in the write-ahead
// log, which repeats the key; each transaction ends with a marker entry.
const (
	entryOverhead = 96
	txnOverhead   = 128
)

// spaceGuard refuses writes that would leave less than margin bytes free. It
// reads the free space at most once per spaceRecheck and, in between,
// subtracts every admitted write, so the estimate only errs on the safe side.
type spaceGuard struct {
	dir    string
	margin int64
	// free reads the free space of dir; reserve returns the bytes Badger's
	// next compaction of level 0 may write before it deletes its inputs.
	free    func(dir string) (int64, error)
	reserve func() int64

	mu     sync.Mutex
	readAt time.Time
	// avail is the free space at readAt, less the compaction reserve and
	// the bytes of every write that finished since.
	avail int64
	// inflight is the bytes of the writes admitted and not yet finished.
	inflight int64
}

func newSpaceGuard(dir string, margin int64, reserve func() int64) *spaceGuard {
	g := &spaceGuard{dir: dir, margin: margin, free: freeSpace, reserve: reserve}
	g.read(time.Now())
	return g
}

// read takes a new reading. If the file system cannot be read, the last
// estimate stands until the next attempt.
func (g *spaceGuard) read(now time.Time) {
	g.readAt = now
	free, err := g.free(g.dir)
	if err != nil {
		return
	}
	g.avail = free - g.reserve()
}

// admit reserves n bytes for a write about to be committed, or returns
// storage.ErrNoSpace. Every admit that returns nil must be followed by one
// done(n).
func (g *spaceGuard) admit(n int64) error {
	now := time.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	if now.Sub(g.readAt) >= spaceRecheck {
		g.read(now)
	}
	if g.avail-g.inflight-n < g.margin {
		return storage.ErrNoSpace
	}
	g.inflight += n
	return nil
}

// done ends a write admitted for n bytes. Its bytes stay counted until the
// next reading, whether or not the commit wrote them.
func (g *spaceGuard) done(n int64) {
	g.mu.Lock()
	g.inflight -= n
	g.avail -= n
	g.mu.Unlock()
}

// levelSizeMultiplier is Badger's default ratio between the target sizes of
// two neighbouring levels, which Open keeps.
const levelSizeMultiplier = 10

// compactionReserve returns the bytes that Badger's compactions may write
// before they delete their inputs, given the state of the levels. A
// compaction writes all its output tables first, through memory maps, and
// only then deletes the tables it merged, so the file system must hold both
// for a while. Badger runs two compactors: one merges level 0 into the base
// level (all of both, at most), the other moves one table of a deeper level
// into the next, with the tables it overlaps there (about
// levelSizeMultiplier tables' worth, plus one at each edge). The reserve is
// the first plus the largest of the second, at most the two levels whole.
func compactionReserve(levels []badgerdb.LevelInfo) int64 {
	var l0, deeper int64
	for i, l := range levels {
		if l.Level == 0 || l.IsBaseLevel {
			l0 += l.Size
		}
		if l.Level == 0 || l.NumTables == 0 || i+1 >= len(levels) {
			continue // level 0 is counted above; the last level moves nowhere
		}
		next := levels[i+1]
		c := (1+levelSizeMultiplier)*l.TargetFileSize + 2*next.TargetFileSize
		deeper = max(deeper, min(c, l.Size+next.Size))
	}
	return l0 + deeper
}
