package badger

import (
	"hash/maphash"
	"sync"
	"sync/atomic"

	badgerdb "github.com/dgraph-io/badger/v4"
)

// hotValues keeps in memory the newest committed value of keys that Views
// prefetch, so that a View answers them without Badger's Get. The keys a
// View prefetches are the shards of a count (a seller's question total is
// the sum of 64), which every write of the kind rewrites and every read of
// the kind reads all of: such a key has a version in each memtable, in each
// table of level 0 and in one table of every level below, and Badger's Get
// looks in every one of them (it stops early only on the exact version it
// was asked for, and a read asks for the newest at its snapshot, whose
// version it does not know). So a Get of a hot key costs more as the store
// grows, where a map lookup does not.
//
// A cached value is used only where it is what the View's snapshot holds.
// commits counts the Updates that have ended their commit, and a View reads
// it before Badger gives it its snapshot: every Update counted by then is in
// the snapshot, and one that commits after it is not. An Update that is
// committing marks the entries of the keys it wrote (writers), and on its
// end stores what it wrote, as the key's newest value, if no other Update
// wrote the key meanwhile (else no one can tell which of the two Badger
// committed last, and the entry waits for a View to fill it again). A View
// uses an entry only if no Update is committing the key and the key's last
// commit, and the entry's making, were counted before its snapshot.
//
// An entry is made by a View that read the key from Badger, and only when no
// Update that may have written the key was committing, nor had ended since
// the View began: only then is the View's value certainly the newest. The
// Updates of keys without an entry leave their trace in marks, a fixed
// table of write counters that every written key hashes into, so that a
// key is judged by the few keys it shares a mark with rather than by every
// Update of the store (under a steady stream of asks some Update is always
// committing, and the records a search reads would never be kept). A View
// that finds an entry without a value fills it on the same terms as a
// commit would, per key.
type hotValues struct {
	commits atomic.Uint64
	// hits counts the keys answered from memory.
	hits    atomic.Uint64
	seed    maphash.Seed
	stripes [hotStripes]hotStripe
	marks   [hotMarks]writeMark
}

// writeMark is what the Updates writing any of the keys that hash to it
// leave behind: how many are committing, and the commit count after the
// last one that ended.
type writeMark struct {
	writers    atomic.Int64
	lastCommit atomic.Uint64
}

// quiet reports whether no Update that wrote a key of m is committing or
// has ended since a View that began at begin took its snapshot. writers is
// read first: an Update stores lastCommit before it leaves writers.
func (m *writeMark) quiet(begin uint64) bool {
	return m.writers.Load() == 0 && m.lastCommit.Load() <= begin
}

// ended notes an Update that wrote a key of m and has ended as the n-th.
func (m *writeMark) ended(n uint64) {
	for {
		last := m.lastCommit.Load()
		if last >= n || m.lastCommit.CompareAndSwap(last, n) {
			break
		}
	}
	m.writers.Add(-1)
}

const (
	hotStripes = 64
	// hotPerStripe bounds the entries: 16,384 in all, a few MiB of small
	// values.
	hotPerStripe = 256
	// hotMaxValue is the largest value kept: counts are small, and a large
	// value is not what the cache is for.
	hotMaxValue = 4 << 10
	// hotEvictScan bounds the entries looked at to find one to evict.
	hotEvictScan = 32
	// hotMarks is the number of write marks: enough that the keys an
	// Update writes (a dozen for an ask) leave most marks quiet, 256 KiB.
	hotMarks = 1 << 14
)

type hotStripe struct {
	mu      sync.Mutex
	entries map[string]*hotEntry
}

type hotEntry struct {
	value []byte
	found bool
	// valid says value is the key's newest committed value.
	valid bool
	// writers counts the Updates committing a write of the key;
	// overlapped that two were at once since writers was last zero.
	writers    int
	overlapped bool
	// lastCommit is commits after the last Update that wrote the key, and
	// made commits when the entry was made: every Update before that is in
	// the value the entry was made with.
	lastCommit uint64
	made       uint64
	// readers counts the Updates committing that read the key from
	// memory: Badger does not know of those reads, so a write of the key
	// that would commit before them is refused here as a conflict.
	readers int
	// used is set by a View's use and cleared by a pass of eviction, which
	// takes an entry not used since (keys read by every search stay).
	used bool
}

func newHotValues() *hotValues {
	h := &hotValues{seed: maphash.MakeSeed()}
	for i := range h.stripes {
		h.stripes[i].entries = map[string]*hotEntry{}
	}
	return h
}

func (h *hotValues) stripe(key []byte) *hotStripe {
	return &h.stripes[maphash.Bytes(h.seed, key)%hotStripes]
}

// slot returns key's stripe and its write mark.
func (h *hotValues) slot(key []byte) (*hotStripe, *writeMark) {
	x := maphash.Bytes(h.seed, key)
	return &h.stripes[x%hotStripes], &h.marks[(x/hotStripes)%hotMarks]
}

// begin is read by a View before Badger gives it its snapshot.
func (h *hotValues) begin() uint64 { return h.commits.Load() }

// usable reports whether e holds what a View that began at begin reads.
func (e *hotEntry) usable(begin uint64) bool {
	return e.valid && e.writers == 0 && e.lastCommit <= begin && e.made <= begin
}

// lookup returns the value of key as a transaction that began at begin
// reads it, and its entry, if the cache holds it; ok is false if the
// transaction must read Badger.
func (h *hotValues) lookup(key []byte, begin uint64) (e *hotEntry, value []byte, found, ok bool) {
	s := h.stripe(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	e = s.entries[string(key)]
	if e == nil || !e.usable(begin) {
		return nil, nil, false, false
	}
	e.used = true
	h.hits.Add(1)
	return e, e.value, e.found, true
}

// offer gives the cache what a View that began at begin read of key from
// Badger.
func (h *hotValues) offer(key []byte, begin uint64, value []byte, found bool) {
	if len(value) > hotMaxValue {
		return
	}
	s, m := h.slot(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[string(key)]
	if e != nil {
		if !e.valid && e.writers == 0 && e.lastCommit <= begin && e.made <= begin {
			e.value, e.found, e.valid = value, found, true
		}
		return
	}
	// An Update that is committing a write of a key of the mark, or that
	// ended after the View began, may have written the key unseen: its
	// pre-commit counted itself in the mark before it looked for the entry
	// under this lock.
	if !m.quiet(begin) {
		return
	}
	if len(s.entries) >= hotPerStripe && !s.evictOne() {
		return
	}
	s.entries[string(key)] = &hotEntry{value: value, found: found, valid: true, lastCommit: begin, made: begin}
}

// evictOne drops an entry not used since the last pass, or failing that
// the last one looked at; never one that an Update is committing.
func (s *hotStripe) evictOne() bool {
	var last string
	seen := 0
	for k, e := range s.entries {
		if e.writers > 0 || e.readers > 0 {
			continue
		}
		if !e.used {
			delete(s.entries, k)
			return true
		}
		e.used = false
		last = k
		if seen++; seen >= hotEvictScan {
			break
		}
	}
	if last == "" {
		return false
	}
	delete(s.entries, last)
	return true
}

// hotWrite is one Set or Delete of a transaction, in its order.
type hotWrite struct {
	key, value []byte
	deleted    bool
}

// hotRead is a key an Update read from memory.
type hotRead struct {
	key   []byte
	entry *hotEntry
}

// hotCommit is what an Update's commit tells the cache at its end.
type hotCommit struct {
	started bool
	entries []*hotEntry
	writes  []hotWrite // the last write of each entry's key
	reads   []hotRead
	marks   []*writeMark // one per write, repeats included
}

// precommit is called once the function of an Update that began at begin
// has returned and before Badger commits it. It refuses the commit with
// Badger's conflict error where Badger would have, had it seen the reads
// from memory: a key read was written since, or is being written; or a key
// written is being read from memory by an Update that is committing.
func (h *hotValues) precommit(begin uint64, writes []hotWrite, reads []hotRead) (hotCommit, error) {
	if len(writes) == 0 {
		// Badger commits nothing and checks nothing then: the reads were
		// of one snapshot.
		return hotCommit{}, nil
	}
	c := hotCommit{started: true, marks: make([]*writeMark, len(writes))}
	for i, w := range writes {
		_, m := h.slot(w.key)
		m.writers.Add(1)
		c.marks[i] = m
	}
	var index map[*hotEntry]int
	for _, w := range writes {
		s := h.stripe(w.key)
		s.mu.Lock()
		e := s.entries[string(w.key)]
		if e == nil {
			s.mu.Unlock()
			continue
		}
		i, seen := c.find(e, &index)
		if seen {
			s.mu.Unlock()
			c.writes[i] = w
			continue
		}
		if e.readers > 0 {
			s.mu.Unlock()
			h.abort(c)
			return hotCommit{}, badgerdb.ErrConflict
		}
		if e.writers > 0 {
			e.overlapped = true
		}
		e.writers++
		e.valid = false
		s.mu.Unlock()
		c.entries = append(c.entries, e)
		c.writes = append(c.writes, w)
	}
	for _, r := range reads {
		own := 0
		if c.wrote(r.entry, index) {
			own = 1
		}
		s := h.stripe(r.key)
		s.mu.Lock()
		e := s.entries[string(r.key)]
		if e != r.entry || e.writers != own || e.lastCommit > begin {
			s.mu.Unlock()
			h.abort(c)
			return hotCommit{}, badgerdb.ErrConflict
		}
		e.readers++
		s.mu.Unlock()
		c.reads = append(c.reads, r)
	}
	return c, nil
}

// abort undoes a precommit whose Update will not commit.
func (h *hotValues) abort(c hotCommit) {
	for i, e := range c.entries {
		s := h.stripe(c.writes[i].key)
		s.mu.Lock()
		e.writers--
		if e.writers == 0 {
			e.overlapped = false
		}
		s.mu.Unlock()
	}
	h.releaseReads(c.reads)
	for _, m := range c.marks {
		m.writers.Add(-1)
	}
}

func (h *hotValues) releaseReads(reads []hotRead) {
	for _, r := range reads {
		s := h.stripe(r.key)
		s.mu.Lock()
		r.entry.readers--
		s.mu.Unlock()
	}
}

// find returns where e is in c, by a scan while c is short and by an index
// once it is not (a large transaction may write thousands of cached keys).
func (c *hotCommit) find(e *hotEntry, index *map[*hotEntry]int) (int, bool) {
	const scanUpTo = 16
	if len(c.entries) <= scanUpTo {
		for i, x := range c.entries {
			if x == e {
				return i, true
			}
		}
		return 0, false
	}
	if *index == nil {
		*index = make(map[*hotEntry]int, 2*len(c.entries))
		for i, x := range c.entries {
			(*index)[x] = i
		}
	}
	i, ok := (*index)[e]
	if !ok {
		(*index)[e] = len(c.entries)
	}
	return i, ok
}

// wrote tells whether the Update wrote e's key (index: find's, if made).
func (c *hotCommit) wrote(e *hotEntry, index map[*hotEntry]int) bool {
	if index != nil {
		_, ok := index[e]
		return ok
	}
	for _, x := range c.entries {
		if x == e {
			return true
		}
	}
	return false
}

// postcommit is called when Badger's commit of the Update has ended, err
// its outcome.
func (h *hotValues) postcommit(c hotCommit, err error) {
	if !c.started {
		return
	}
	n := h.commits.Add(1)
	for i, e := range c.entries {
		w := c.writes[i]
		s := h.stripe(w.key)
		s.mu.Lock()
		e.writers--
		e.lastCommit = n
		if err == nil && e.writers == 0 && !e.overlapped && len(w.value) <= hotMaxValue {
			e.value, e.found, e.valid = w.value, !w.deleted, true
		} else {
			e.valid = false
		}
		if e.writers == 0 {
			e.overlapped = false
		}
		s.mu.Unlock()
	}
	h.releaseReads(c.reads)
	for _, m := range c.marks {
		m.ended(n)
	}
}
