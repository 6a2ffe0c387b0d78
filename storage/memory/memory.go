// Package memory is the in-process storage backend: an ordered B-tree of
// keys, each holding its recent versions, newest first.
//
// Updates run one at a time, so transactions are serializable and never
// conflict. An Update writes its versions into the tree in place, stamped
// with the next commit number, and publishes them by advancing the committed
// number; a View reads the versions no newer than the number it started at,
// so it sees a fixed snapshot and never blocks writers for longer than one
// key's write. A failed Update takes its versions out again. Versions that no
// open View can read any more are dropped as later Updates commit, and a
// deleted key leaves the tree once no View can still see it.
//
// Writing in place is what keeps the cost of a write flat: a copy-on-write
// tree copies every node on the path to each key it writes, which for an ask
// (some fifteen keys) was most of the memory the request allocated.
package memory

import (
	"bytes"
	"context"
	"encoding/binary"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/tidwall/btree"

	"github.com/marketplace/marketplace/internal/storeobs"
	"github.com/marketplace/marketplace/storage"
)

// Store is an in-memory storage.Store, safe for concurrent use.
type Store struct {
	writeMu sync.Mutex // one Update at a time; held while an Update runs

	// mu guards the tree and every version chain: the Update holding writeMu
	// takes it for each write, readers for each read.
	mu    sync.RWMutex
	index *btree.BTreeG[slot]

	committed atomic.Uint64 // commit number of the last committed Update

	snapMu    sync.Mutex
	snapshots map[uint64]int // open Views by the commit number they read at

	// hints remember where the last search for a group of keys went: keys
	// that differ only in their last 16 bytes (the time and id that end
	// every index key) are neighbours, and new ones go next to the last. A
	// search that starts from there compares two keys per node instead of a
	// binary search's dozen, each a cache miss on a large tree. Only the
	// Update holding writeMu uses them.
	hints map[string]*btree.PathHint

	// pending lists the keys whose older versions, or whose deletion, wait
	// for Views that may still read them, in commit order. Only the Update
	// holding writeMu touches it.
	pending []pendingKey

	// written is the list of written keys the next Update reuses. Only the
	// Update holding writeMu touches it.
	written []written

	closed atomic.Bool
	seqs   sync.Map // name -> *sequence
}

// maxKeptWritten bounds the list of written keys kept for the next Update:
// one that wrote a million keys should not keep its list for ever.
const maxKeptWritten = 1024

var _ storage.Store = (*Store)(nil)

// slot is one key in the tree with its newest version; a View reads the
// first version, from the newest down, whose commit number is no later than
// its own. The key and the newest value are one string, so that most keys
// cost the garbage collector one object and one pointer: its work grows with
// the pointers the store holds, and most keys have one version.
//
// head holds the key's first bytes, so that most comparisons in a search
// are settled inside the tree's node: comparing the strings themselves
// reads each key from its own place in memory, a cache miss per comparison
// on a large tree, and on keys that share a long prefix (a namespace, an
// index name, a seller) that was most of the cost of a write.
type slot struct {
	head    keyHead
	entry   string // the key, then the newest value
	keyLen  uint32
	deleted bool
	commit  uint64
	older   *version
}

// keyHead is the first 24 bytes of a key, zero-padded, as big-endian words:
// words that differ order two keys as their bytes do (a shorter key's
// padding sorts before any byte of a longer one, and equal words leave the
// order to the full keys).
type keyHead [3]uint64

func headOf(key string) keyHead {
	var b [24]byte
	copy(b[:], key)
	return keyHead{binary.BigEndian.Uint64(b[0:]), binary.BigEndian.Uint64(b[8:]), binary.BigEndian.Uint64(b[16:])}
}

func newSlot(key string, entry string, commit uint64) slot {
	return slot{head: headOf(key), entry: entry, keyLen: uint32(len(key)), commit: commit}
}

func (sl *slot) key() string   { return sl.entry[:sl.keyLen] }
func (sl *slot) value() string { return sl.entry[sl.keyLen:] }

// setNewest makes value (or the deletion) the newest version, stamped with
// commit.
func (sl *slot) setNewest(commit uint64, value []byte, deleted bool) {
	sl.commit, sl.deleted = commit, deleted
	if deleted {
		sl.entry = sl.key()
		return
	}
	sl.entry = entryOf(sl.key(), value)
}

type version struct {
	commit  uint64
	value   string
	deleted bool
	older   *version
}

type pendingKey struct {
	key    string
	commit uint64 // the commit after which the key may need trimming
}

// New returns an empty store.
func New() *Store {
	return &Store{
		index:     btree.NewBTreeGOptions(slotLess, btree.Options{Degree: 32, NoLocks: true}),
		snapshots: make(map[uint64]int),
		hints:     make(map[string]*btree.PathHint),
		written:   make([]written, 0, 16),
	}
}

// maxHints bounds the key groups the store keeps a search hint for.
const maxHints = 4096

// hint returns where an Update's search for key should start.
func (s *Store) hint(key []byte) *btree.PathHint {
	group := max(len(key)-16, 0)
	if i := bytes.IndexByte(key, 0); i < 0 {
		group = len(key)
	} else if group < i {
		group = i // at least the namespace
	}
	if h, ok := s.hints[string(key[:group])]; ok {
		return h
	}
	if len(s.hints) >= maxHints {
		clear(s.hints)
	}
	h := new(btree.PathHint)
	s.hints[string(key[:group])] = h
	return h
}

func slotLess(a, b slot) bool {
	for i := range a.head {
		if a.head[i] != b.head[i] {
			return a.head[i] < b.head[i]
		}
	}
	return a.key() < b.key()
}

// backendName labels this backend's transactions for storeobs.Observer.
const backendName = "memory"

// View runs fn over the snapshot of the last committed Update.
func (s *Store) View(ctx context.Context, fn func(storage.Tx) error) (err error) {
	defer func() { storeobs.ObserveTransaction(backendName, false, err) }()
	if err := s.check(ctx); err != nil {
		return err
	}
	s.snapMu.Lock()
	at := s.committed.Load()
	s.snapshots[at]++
	s.snapMu.Unlock()
	defer s.release(at)
	t := &tx{store: s, ctx: ctx, at: at, readOnly: true}
	err = fn(t)
	if t.ended != nil {
		return t.ended
	}
	return err
}

func (s *Store) release(at uint64) {
	s.snapMu.Lock()
	if s.snapshots[at] <= 1 {
		delete(s.snapshots, at)
	} else {
		s.snapshots[at]--
	}
	s.snapMu.Unlock()
}

// Update runs fn with the store's next commit number and commits it if fn
// returns nil. Updates are serialized, so they never conflict.
func (s *Store) Update(ctx context.Context, fn func(storage.Tx) error) (err error) {
	defer func() { storeobs.ObserveTransaction(backendName, true, err) }()
	if err := s.check(ctx); err != nil {
		return err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.closed.Load() {
		return storage.ErrClosed
	}
	// Updates run one at a time, so each can use the list of written keys
	// the previous one left.
	t := &tx{store: s, ctx: ctx, at: s.committed.Load() + 1, written: s.written[:0]}
	committed := false
	defer func() {
		// Also on a panic in fn: nothing of it may stay behind.
		if !committed {
			s.rollback(t)
		}
		if cap(t.written) <= maxKeptWritten {
			clear(t.written) // the keys are the tree's; keep none alive
			s.written = t.written[:0]
		}
	}()
	if err := fn(t); err != nil || t.ended != nil {
		if t.ended != nil {
			return t.ended
		}
		return err
	}
	// A caller that gave up while fn ran must not find its writes committed.
	if err := ctx.Err(); err != nil {
		return err
	}
	s.snapMu.Lock()
	s.committed.Store(t.at)
	oldest := t.at
	for at := range s.snapshots {
		oldest = min(oldest, at)
	}
	s.snapMu.Unlock()
	committed = true
	s.trim(t, oldest)
	return nil
}

// rollback takes the versions of t out of the tree.
func (s *Store) rollback(t *tx) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range t.written {
		sl, ok := s.index.Get(probeString(w.key))
		if !ok {
			continue // a key new in t, already taken out
		}
		if sl.older == nil {
			s.index.Delete(sl)
			continue
		}
		o := sl.older
		sl.setNewest(o.commit, []byte(o.value), o.deleted)
		sl.older = o.older
		s.index.Set(sl)
	}
}

// trim drops the versions that no View can read any more: at once those that
// t replaced when no View is older than t, later those that waited for Views
// that have closed since. oldest is the commit number of the oldest open View
// (or of t, when none is open).
func (s *Store) trim(t *tx, oldest uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range t.written {
		if !w.trim {
			continue // a new key: nothing to drop
		}
		if oldest >= t.at {
			s.trimKey(w.key, oldest)
		} else {
			s.pending = append(s.pending, pendingKey{key: w.key, commit: t.at})
		}
	}
	done := 0
	for done < len(s.pending) && s.pending[done].commit <= oldest {
		s.trimKey(s.pending[done].key, oldest)
		done++
	}
	if done > 0 {
		n := copy(s.pending, s.pending[done:])
		clear(s.pending[n:])
		s.pending = s.pending[:n]
	}
}

// trimKey keeps the versions of key that a View at oldest or later may read,
// and takes the key out of the tree when all that is left is its deletion.
func (s *Store) trimKey(key string, oldest uint64) {
	hint := s.hint([]byte(key))
	sl, ok := s.index.GetHint(probeString(key), hint)
	if !ok {
		return // gone already, by an earlier trim of the same key
	}
	if sl.commit <= oldest {
		if sl.older == nil && !sl.deleted {
			return
		}
		sl.older = nil
		if sl.deleted {
			s.index.DeleteHint(sl, hint)
		} else {
			s.index.SetHint(sl, hint)
		}
		return
	}
	// The versions below the newest are the slot's own chain; cutting one
	// of them needs no change to the tree.
	for v := sl.older; v != nil; v = v.older {
		if v.commit <= oldest {
			v.older = nil
			return
		}
	}
}

// Sequence returns the sequence called name: an atomic counter, since
// nothing of the store outlives the process.
func (s *Store) Sequence(name string) (storage.Sequence, error) {
	if s.closed.Load() {
		return nil, storage.ErrClosed
	}
	if q, ok := s.seqs.Load(name); ok {
		return q.(*sequence), nil // without making a sequence to throw away
	}
	q, _ := s.seqs.LoadOrStore(name, &sequence{store: s})
	return q.(*sequence), nil
}

type sequence struct {
	store *Store
	last  atomic.Uint64
}

func (q *sequence) Next(ctx context.Context) (uint64, error) {
	if err := q.store.check(ctx); err != nil {
		return 0, err
	}
	return q.last.Add(1), nil
}

func (q *sequence) Advance(ctx context.Context, n uint64) error {
	if err := q.store.check(ctx); err != nil {
		return err
	}
	for {
		last := q.last.Load()
		if last >= n || q.last.CompareAndSwap(last, n) {
			return nil
		}
	}
}

var _ storage.SequenceRewinder = (*Store)(nil)

// SequenceStates returns the next id of every sequence that handed one out.
func (s *Store) SequenceStates(ctx context.Context) (map[string]uint64, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	s.seqs.Range(func(name, q any) bool {
		if last := q.(*sequence).last.Load(); last > 0 {
			out[name.(string)] = last + 1
		}
		return true
	})
	return out, nil
}

// RewindSequences sets every sequence back to next, or to 1 when not named.
func (s *Store) RewindSequences(ctx context.Context, next map[string]uint64) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	s.seqs.Range(func(name, q any) bool {
		q.(*sequence).last.Store(0)
		return true
	})
	for name, n := range next {
		q, _ := s.seqs.LoadOrStore(name, &sequence{store: s})
		q.(*sequence).last.Store(n - 1)
	}
	return nil
}

// Close marks the store closed; later calls return storage.ErrClosed.
func (s *Store) Close() error {
	s.closed.Store(true)
	return nil
}

func (s *Store) check(ctx context.Context) error {
	if s.closed.Load() {
		return storage.ErrClosed
	}
	return ctx.Err()
}

// tx reads at commit number at; an Update also writes versions stamped with
// it.
type tx struct {
	store *Store
	ctx   context.Context
	// ended is the context's error once a range walk saw it: the walk
	// stopped there, so the transaction's answer is that error.
	ended    error
	at       uint64
	readOnly bool
	// written lists the keys this Update wrote: each key it replaced once,
	// since rolling back restores the version before it.
	written []written
	hint    btree.PathHint
}

type written struct {
	key  string
	trim bool // the key keeps a version it may drop later: an older one, or its deletion
}

// lookup returns the slot of key, if the tree has one, and the hint it used.
// The caller holds mu.
func (t *tx) lookup(key []byte) (slot, bool, *btree.PathHint) {
	hint := &t.hint
	if !t.readOnly {
		hint = t.store.hint(key)
	}
	sl, ok := t.store.index.GetHint(probe(key), hint)
	return sl, ok, hint
}

// probe is the slot searched for key. It only lives for the search, so it
// may borrow key's bytes rather than copy them.
func probe(key []byte) slot { return probeString(borrow(key)) }

// borrow is key as a string that shares key's bytes: for the length of a
// call that neither keeps it nor lets key change.
func borrow(key []byte) string { return unsafe.String(unsafe.SliceData(key), len(key)) }

func probeString(key string) slot { return newSlot(key, key, 0) }

// visible returns the value of sl that a reader at commit number at sees,
// or false when the key does not exist for it.
func (sl *slot) visible(at uint64) (string, bool) {
	if sl.commit <= at {
		return sl.value(), !sl.deleted
	}
	for v := sl.older; v != nil; v = v.older {
		if v.commit <= at {
			return v.value, !v.deleted
		}
	}
	return "", false
}

func (t *tx) Get(key []byte) ([]byte, error) {
	if len(key) == 0 {
		return nil, storage.ErrEmptyKey
	}
	s := t.store
	s.mu.RLock()
	sl, ok, _ := t.lookup(key)
	var value string
	if ok {
		value, ok = sl.visible(t.at)
	}
	s.mu.RUnlock()
	if !ok {
		return nil, storage.ErrNotFound
	}
	return []byte(value), nil
}

func (t *tx) Set(key, value []byte) error {
	if err := t.checkWrite(key); err != nil {
		return err
	}
	t.write(key, value, false)
	return nil
}

func (t *tx) Delete(key []byte) error {
	if err := t.checkWrite(key); err != nil {
		return err
	}
	t.write(key, nil, true)
	return nil
}

func (t *tx) write(key, value []byte, deleted bool) {
	s := t.store
	s.mu.Lock()
	defer s.mu.Unlock()
	var sl, fresh slot
	var ok bool
	var hint *btree.PathHint
	if deleted {
		sl, ok, hint = t.lookup(key)
		if !ok {
			return
		}
	} else {
		// Most writes are of new keys (index entries, records, events): set
		// first, one search instead of a lookup and a set, and mend the
		// slot when the key was there.
		hint = t.store.hint(key)
		fresh = newSlot(borrow(key), "", t.at)
		fresh.entry = entryOf(borrow(key), value)
		sl, ok = s.index.SetHint(fresh, hint)
		if !ok {
			t.written = append(t.written, written{key: fresh.key()})
			return
		}
	}
	switch {
	case sl.commit == t.at:
		// Written before in this Update: no View can read this version yet.
		if deleted && sl.older == nil {
			t.written = append(t.written, written{key: sl.key(), trim: true})
		}
	case deleted && sl.deleted:
		return // already absent for every reader from now on
	default:
		sl.older = &version{commit: sl.commit, value: sl.value(), deleted: sl.deleted, older: sl.older}
		t.written = append(t.written, written{key: sl.key(), trim: true})
	}
	if deleted {
		sl.setNewest(t.at, nil, true)
	} else {
		sl.commit, sl.deleted, sl.entry = t.at, false, fresh.entry
	}
	s.index.SetHint(sl, hint)
}

// entryOf copies key and value into one string.
func entryOf(key string, value []byte) string {
	var b strings.Builder // String does not copy
	b.Grow(len(key) + len(value))
	b.WriteString(key)
	b.Write(value)
	return b.String()
}

func (t *tx) checkWrite(key []byte) error {
	if t.readOnly {
		return storage.ErrReadOnly
	}
	if len(key) == 0 {
		return storage.ErrEmptyKey
	}
	return nil
}

func (t *tx) Iterate(r storage.Range) storage.Iterator {
	it := &iterator{t: t, r: r, batchSize: firstBatch}
	if r.Reverse {
		it.fill(r.End, false)
	} else {
		it.fill(r.Start, true)
	}
	return it
}

// An iterator reads the tree in batches, each under one read lock, and finds
// its place again by key for the next: the tree may change between batches,
// but never in what the transaction sees. Batches start small, since most
// loops stop after a few keys, and grow for the long walks.
const (
	firstBatch = 16
	maxBatch   = 512
)

type iterator struct {
	t         *tx
	r         storage.Range
	batch     []entry
	pos       int
	more      bool // the range may hold keys after the batch
	batchSize int
	key       []byte // Key's answer, made once per position
}

type entry struct{ key, value string }

// fill reads the next batch from key on, in the iteration order: key itself
// included only when inclusive. A nil key starts at the range's edge.
func (i *iterator) fill(from []byte, inclusive bool) {
	i.batch, i.pos, i.more, i.key = i.batch[:0], 0, false, nil
	t, s := i.t, i.t.store
	// A batch holds at most maxBatch keys, within
	// storage.IterationCheckEvery of the last look.
	if err := t.ctx.Err(); err != nil {
		t.ended = err
		return
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	take := func(sl slot) bool {
		key := sl.key()
		if from != nil && !inclusive && key == string(from) {
			return true
		}
		if i.r.Reverse {
			if i.r.Start != nil && key < string(i.r.Start) {
				return false
			}
		} else if i.r.End != nil && key >= string(i.r.End) {
			return false
		}
		if len(i.batch) == i.batchSize {
			i.more = true
			return false
		}
		if v, ok := sl.visible(t.at); ok {
			i.batch = append(i.batch, entry{key, v})
		}
		return true
	}
	switch {
	case from == nil && i.r.Reverse:
		s.index.Reverse(take)
	case from == nil:
		s.index.Scan(take)
	default:
		if i.r.Reverse {
			s.index.DescendHint(probe(from), take, &t.hint)
		} else {
			s.index.AscendHint(probe(from), take, &t.hint)
		}
	}
	i.batchSize = min(2*i.batchSize, maxBatch)
}

func (i *iterator) Valid() bool { return i.pos < len(i.batch) }

func (i *iterator) Key() []byte {
	if i.key == nil && i.Valid() {
		i.key = []byte(i.batch[i.pos].key)
	}
	return i.key
}

func (i *iterator) Value() ([]byte, error) {
	return []byte(i.batch[i.pos].value), nil
}

func (i *iterator) Next() {
	if !i.Valid() {
		return
	}
	i.pos++
	i.key = nil
	if i.pos == len(i.batch) && i.more {
		last := []byte(i.batch[len(i.batch)-1].key)
		i.fill(last, false)
	}
}

func (i *iterator) Seek(key []byte) {
	if i.r.Reverse {
		if i.r.End != nil && string(key) >= string(i.r.End) {
			i.fill(i.r.End, false)
		} else {
			i.fill(key, true)
		}
		return
	}
	if i.r.Start != nil && string(key) < string(i.r.Start) {
		key = i.r.Start
	}
	i.fill(key, true)
}

func (i *iterator) Close() {}
