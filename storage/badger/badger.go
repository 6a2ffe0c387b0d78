// Package badger is the durable storage backend, on Badger. Writes are synced
// to disk before Update returns, so an acknowledged write survives a crash of
// the process. A conflicting Update is run again; after a few conflicts it
// runs with no other Update beside it, so a hot key cannot starve a writer.
// Badger's conflict error, should it outlast the retries, is reported as
// storage.ErrConflict.
//
// A write that would leave less than a margin of free space on the data
// folder's file system is refused with storage.ErrNoSpace before it reaches
// Badger, which writes through memory maps and would otherwise die of SIGBUS
// on a full disk; reads go on, and writes are taken again once space returns.
package badger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	badgerdb "github.com/dgraph-io/badger/v4"

	"github.com/marketplace/marketplace/internal/storeobs"
	"github.com/marketplace/marketplace/storage"
)

// maxAttempts bounds how often a conflicting Update is run again. It is a
// safety net: past exclusiveAfter conflicts an Update runs alone and commits.
const maxAttempts = 64

// exclusiveAfter is how many conflicts an Update suffers before it runs with
// no other Update beside it. Optimistic retries alone can starve a writer on
// a hot key (a stock counter, a sequence) for as long as others keep winning.
const exclusiveAfter = 3

// Store is a Badger-backed storage.Store.
type Store struct {
	db  *badgerdb.DB
	dir string
	// gate is held shared by every Update attempt and exclusively by one
	// that has conflicted exclusiveAfter times: nothing can then commit
	// between its reads and its commit.
	gate sync.RWMutex

	seqMu sync.Mutex
	seqs  map[string]*leasedSequence
	lease uint64

	// durable syncs the commits of concurrent Updates together.
	durable *groupSync

	// conflicts counts the Update attempts that Badger refused for a
	// conflict and that were run again.
	conflicts atomic.Uint64

	// space refuses writes when the disk runs short; nil when the data is
	// in memory or free space cannot be measured here.
	space *spaceGuard

	// hot answers prefetched keys from memory where it can.
	hot *hotValues
}

// sequenceBandwidth is the default of Options.SequenceLease.
const sequenceBandwidth = 1000

var _ storage.Store = (*Store)(nil)

// Options tune the backend. The zero value is durable and sized for a service
// on a small machine.
type Options struct {
	// InMemory keeps the data in memory only (for tests of the backend's
	// behaviour without a disk); durability is then lost.
	InMemory bool
	// SequenceLease is how many ids a sequence leases at a time (default
	// 1000): one synced commit per lease, and at most that many ids
	// skipped by a crash.
	SequenceLease uint64
	// FreeSpaceMargin is the free space, in bytes, kept on the file system
	// of the folder: an Update that would leave less is refused with
	// storage.ErrNoSpace. Zero means DefaultFreeSpaceMargin, which is also
	// the least Open accepts; more leaves room for other programs that
	// write to the same disk.
	FreeSpaceMargin int64
}

// Open opens (or creates) the store in dir.
func Open(dir string, opts Options) (*Store, error) {
	// Badger's SyncWrites would sync once per transaction: the store syncs
	// once per group of commits instead (groupSync), before Update returns.
	margin := opts.FreeSpaceMargin
	if margin == 0 {
		margin = DefaultFreeSpaceMargin
	}
	if margin < DefaultFreeSpaceMargin {
		return nil, fmt.Errorf("open badger in %s: a free space margin of %d bytes is below the %d that Badger may write ahead", dir, margin, DefaultFreeSpaceMargin)
	}
	bo := badgerdb.DefaultOptions(dir).
		WithSyncWrites(false).
		WithLogger(nil).
		WithMemTableSize(memTableSize).
		WithNumMemtables(numMemtables).
		WithBlockCacheSize(32 << 20).
		WithIndexCacheSize(16 << 20).
		WithValueLogFileSize(valueLogFileSize).
		WithLevelSizeMultiplier(levelSizeMultiplier).
		WithNumCompactors(2)
	if opts.InMemory {
		bo = bo.WithDir("").WithValueDir("").WithInMemory(true)
	}
	db, err := badgerdb.Open(bo)
	if err != nil {
		return nil, fmt.Errorf("open badger in %s: %w", dir, translate(err))
	}
	lease := opts.SequenceLease
	if lease == 0 {
		lease = sequenceBandwidth
	}
	s := &Store{db: db, dir: dir, seqs: map[string]*leasedSequence{}, lease: lease, hot: newHotValues()}
	if !opts.InMemory && canMeasureFreeSpace {
		s.space = newSpaceGuard(dir, margin, func() int64 { return compactionReserve(db.Levels()) })
	}
	logs := &logFiles{dir: dir}
	s.durable = newGroupSync(func() error {
		if opts.InMemory {
			return nil
		}
		// The logs being written first: a log replaced after this is
		// then found below.
		return errors.Join(db.Sync(), logs.syncReplaced())
	})
	return s, nil
}

// Dir returns the folder the store was opened in.
func (s *Store) Dir() string { return s.dir }

// DB exposes the underlying database for maintenance (backups, GC).
func (s *Store) DB() *badgerdb.DB { return s.db }

// View runs fn in a read-only Badger transaction.
func (s *Store) View(ctx context.Context, fn func(storage.Tx) error) (err error) {
	defer func() { storeobs.ObserveTransaction(backendName, false, err) }()
	if err := ctx.Err(); err != nil {
		return err
	}
	// Read before Badger gives the View its snapshot (hotValues).
	begin := s.hot.begin()
	err = s.db.View(func(btx *badgerdb.Txn) error {
		t := &tx{btx: btx, ctx: ctx, hot: s.hot, begin: begin}
		err := fn(t)
		if t.ended != nil {
			return t.ended
		}
		return err
	})
	return translate(err)
}

// backendName labels this backend's transactions for storeobs.Observer.
const backendName = "badger"

// Update runs fn in a read-write transaction, retrying it on conflict.
func (s *Store) Update(ctx context.Context, fn func(storage.Tx) error) (err error) {
	defer func() { storeobs.ObserveTransaction(backendName, true, err) }()
	backoff := 50 * time.Microsecond
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		wrote, err := s.attempt(ctx, fn, attempt >= exclusiveAfter)
		if !errors.Is(err, badgerdb.ErrConflict) {
			if err == nil && wrote {
				err = s.syncCommitted()
			}
			return translate(err)
		}
		s.conflicts.Add(1)
		storeobs.ObserveConflict(backendName, attempt+1 < maxAttempts)
		if attempt+1 >= maxAttempts {
			return storage.ErrConflict
		}
		// A short pause spreads retrying writers apart; no clock rules here,
		// this is only scheduling.
		time.Sleep(backoff)
		if backoff < 5*time.Millisecond {
			backoff *= 2
		}
	}
}

// attempt runs fn once and commits it; wrote reports that it wrote
// something (and so must be synced).
func (s *Store) attempt(ctx context.Context, fn func(storage.Tx) error, alone bool) (wrote bool, err error) {
	if alone {
		s.gate.Lock()
		defer s.gate.Unlock()
	} else {
		s.gate.RLock()
		defer s.gate.RUnlock()
	}
	var admitted int64
	var commit hotCommit
	begin := s.hot.begin()
	err = s.db.Update(func(btx *badgerdb.Txn) error {
		t := &tx{btx: btx, ctx: ctx, hot: s.hot, begin: begin, update: true}
		if err := fn(t); err != nil || t.ended != nil {
			if t.ended != nil {
				return t.ended
			}
			return err
		}
		wrote = t.wrote
		// A caller that gave up while fn ran must not find its writes
		// committed.
		if err := ctx.Err(); err != nil {
			return err
		}
		admitted, err = s.admit(t)
		if err != nil {
			return err
		}
		commit, err = s.hot.precommit(begin, t.writes, t.fromMemory)
		return err
	})
	s.hot.postcommit(commit, err)
	s.admitted(admitted)
	return wrote, err
}

// admit is called as a transaction's function returns, while its writes are
// still in memory: it refuses them with storage.ErrNoSpace, before Badger
// commits them to its log, if the disk is short of space. It returns the
// bytes to give to admitted once the commit is over.
func (s *Store) admit(t *tx) (int64, error) {
	if s.space == nil || !t.wrote {
		return 0, nil
	}
	n := t.bytes + txnOverhead
	if err := s.space.admit(n); err != nil {
		return 0, err
	}
	return n, nil
}

// admitted ends the commit of n bytes that admit let through.
func (s *Store) admitted(n int64) {
	if n > 0 {
		s.space.done(n)
	}
}

// syncCommitted returns once everything committed so far is on disk. The
// commit is visible to other transactions from the moment Badger applied
// it; what the sync adds is that Update acknowledges only what a crash of
// the machine keeps.
func (s *Store) syncCommitted() error {
	if err := s.durable.wait(); err != nil {
		return fmt.Errorf("sync the commit to disk: %w", err)
	}
	return nil
}

// Conflicts returns how many Update attempts have been run again after a
// conflict since the store was opened: near zero when concurrent writers
// touch different records.
func (s *Store) Conflicts() uint64 { return s.conflicts.Load() }

// Sequence returns the sequence called name, leased from its key in blocks of
// Options.SequenceLease ids (the scheme of Badger's own DB.GetSequence, on the
// store's Update so that conflicts and errors are handled as everywhere).
func (s *Store) Sequence(name string) (storage.Sequence, error) {
	if s.db.IsClosed() {
		return nil, storage.ErrClosed
	}
	s.seqMu.Lock()
	defer s.seqMu.Unlock()
	q, ok := s.seqs[name]
	if !ok {
		q = newLeasedSequence(s.updateUngated, name, s.lease)
		s.seqs[name] = q
	}
	return q, nil
}

// updateUngated runs fn in a transaction that does not take the gate: ids
// are drawn inside Updates that hold the gate shared, and a lease waiting
// for the gate behind an Update that waits to run alone would never end.
// Only a sequence's lease key is written this way, under the sequence's own
// lock, so it needs no protection from starvation.
func (s *Store) updateUngated(ctx context.Context, fn func(storage.Tx) error) error {
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		var admitted int64
		var commit hotCommit
		begin := s.hot.begin()
		err := s.db.Update(func(btx *badgerdb.Txn) error {
			t := &tx{btx: btx, ctx: ctx, hot: s.hot, begin: begin, update: true}
			if err := fn(t); err != nil {
				return err
			}
			var err error
			admitted, err = s.admit(t)
			if err != nil {
				return err
			}
			commit, err = s.hot.precommit(begin, t.writes, t.fromMemory)
			return err
		})
		s.hot.postcommit(commit, err)
		s.admitted(admitted)
		if err == nil {
			err = s.syncCommitted()
		}
		if !errors.Is(err, badgerdb.ErrConflict) || attempt+1 >= maxAttempts {
			return translate(err)
		}
	}
}

var _ storage.SequenceRewinder = (*Store)(nil)

// SequenceStates returns the next id of every sequence: from the block a
// sequence open in this process leased, else from its key.
func (s *Store) SequenceStates(ctx context.Context) (map[string]uint64, error) {
	if s.db.IsClosed() {
		return nil, storage.ErrClosed
	}
	var out map[string]uint64
	err := s.View(ctx, func(tx storage.Tx) error {
		var err error
		out, err = leasedSequenceStates(tx)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.seqMu.Lock()
	defer s.seqMu.Unlock()
	for name, q := range s.seqs {
		n, err := q.State(ctx, s.View)
		if err != nil {
			return nil, err
		}
		if n > 1 {
			out[name] = n
		}
	}
	return out, nil
}

// RewindSequences sets every sequence back to next, or to 1 when not named.
func (s *Store) RewindSequences(ctx context.Context, next map[string]uint64) error {
	if s.db.IsClosed() {
		return storage.ErrClosed
	}
	var stored map[string]uint64
	err := s.View(ctx, func(tx storage.Tx) error {
		var err error
		stored, err = leasedSequenceStates(tx)
		return err
	})
	if err != nil {
		return err
	}
	s.seqMu.Lock()
	defer s.seqMu.Unlock()
	for name := range stored {
		if _, ok := s.seqs[name]; !ok {
			s.seqs[name] = newLeasedSequence(s.updateUngated, name, s.lease)
		}
	}
	for name := range next {
		if _, ok := s.seqs[name]; !ok {
			s.seqs[name] = newLeasedSequence(s.updateUngated, name, s.lease)
		}
	}
	for name, q := range s.seqs {
		n := next[name]
		if n == 0 {
			n = 1
		}
		if err := q.Rewind(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

// Close gives back the unused ids of every sequence, so that a clean
// restart continues without a gap, then flushes and closes the database.
func (s *Store) Close() error {
	var errs []error
	if !s.db.IsClosed() {
		s.seqMu.Lock()
		for _, q := range s.seqs {
			// Without the space to give the unused ids back, the next
			// start skips them: a gap, which sequences allow.
			if err := q.Close(context.Background()); !errors.Is(err, storage.ErrNoSpace) {
				errs = append(errs, err)
			}
		}
		s.seqMu.Unlock()
	}
	errs = append(errs, translate(s.db.Close()))
	return errors.Join(errs...)
}

func translate(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, badgerdb.ErrKeyNotFound):
		return storage.ErrNotFound
	case errors.Is(err, badgerdb.ErrConflict):
		return storage.ErrConflict
	case errors.Is(err, badgerdb.ErrDBClosed):
		return storage.ErrClosed
	case errors.Is(err, badgerdb.ErrEmptyKey):
		return storage.ErrEmptyKey
	case errors.Is(err, badgerdb.ErrReadOnlyTxn):
		return storage.ErrReadOnly
	case errors.Is(err, badgerdb.ErrTxnTooBig):
		return storage.ErrTooBig
	case errors.Is(err, storage.ErrNoSpace):
		return err
	case errors.Is(err, syscall.ENOSPC) || strings.Contains(err.Error(), syscall.ENOSPC.Error()):
		// Badger wraps some errors with %v, losing the errno but keeping
		// its text.
		return fmt.Errorf("%w: %v", storage.ErrNoSpace, err)
	}
	return err
}

type tx struct {
	btx *badgerdb.Txn
	ctx context.Context
	// ended is the context's error once a range walk saw it: the walk
	// stopped there, so the transaction's answer is that error.
	ended error
	wrote bool
	// bytes estimates what the transaction's writes take in Badger's logs.
	bytes int64
	// writes are the transaction's Sets and Deletes, for hotValues.
	writes []hotWrite
	// hot answers the transaction's prefetched keys from memory where it
	// can; update tells that the transaction writes.
	hot    *hotValues
	begin  uint64
	update bool
	// prefetched holds the values of the keys Prefetch read and the
	// transaction has not written since, nil where the key was not found.
	prefetched map[string][]byte
	// fromMemory are the keys an Update read from hotValues: Badger does
	// not see those reads, so hotValues checks them for conflicts.
	fromMemory []hotRead
}

func (t *tx) Get(key []byte) ([]byte, error) {
	if t.prefetched != nil {
		if v, ok := t.prefetched[string(key)]; ok {
			if v == nil {
				return nil, storage.ErrNotFound
			}
			return bytes.Clone(v), nil
		}
	}
	item, err := t.btx.Get(key)
	if err != nil {
		return nil, translate(err)
	}
	return item.ValueCopy(nil)
}

var _ storage.Prefetcher = (*tx)(nil)

// Prefetch answers keys from hotValues where it holds them, and reads the
// others from Badger, offering them to it.
func (t *tx) Prefetch(keys [][]byte) error {
	if t.update && len(t.writes) > 0 {
		// Badger and memory would answer with what this transaction
		// wrote or what it overwrote: the Gets read Badger.
		return nil
	}
	if t.prefetched == nil {
		t.prefetched = make(map[string][]byte, len(keys))
	}
	for _, k := range keys {
		if _, ok := t.prefetched[string(k)]; ok {
			continue
		}
		if e, value, found, ok := t.hot.lookup(k, t.begin); ok {
			t.prefetched[string(k)] = presentOrNil(value, found)
			if t.update {
				t.fromMemory = append(t.fromMemory, hotRead{key: bytes.Clone(k), entry: e})
			}
			continue
		}
		item, err := t.btx.Get(k)
		if errors.Is(err, badgerdb.ErrKeyNotFound) {
			t.prefetched[string(k)] = nil
			t.hot.offer(k, t.begin, nil, false)
			continue
		}
		if err != nil {
			return translate(err)
		}
		value, err := item.ValueCopy(nil)
		if err != nil {
			return translate(err)
		}
		t.prefetched[string(k)] = presentOrNil(value, true)
		t.hot.offer(k, t.begin, value, true)
	}
	return nil
}

// presentOrNil keeps a found empty value apart from a missing one.
func presentOrNil(value []byte, found bool) []byte {
	if !found {
		return nil
	}
	if value == nil {
		return []byte{}
	}
	return value
}

func (t *tx) Set(key, value []byte) error {
	t.wrote = true
	t.bytes += int64(2*len(key)+len(value)) + entryOverhead
	// Badger keeps the slices until commit; copy so callers may reuse theirs.
	key, value = bytes.Clone(key), bytes.Clone(value)
	if err := t.btx.Set(key, value); err != nil {
		return translate(err)
	}
	t.wrote1(hotWrite{key: key, value: value})
	return nil
}

func (t *tx) Delete(key []byte) error {
	t.wrote = true
	t.bytes += int64(2*len(key)) + entryOverhead
	key = bytes.Clone(key)
	if err := t.btx.Delete(key); err != nil {
		return translate(err)
	}
	t.wrote1(hotWrite{key: key, deleted: true})
	return nil
}

// wrote1 keeps a write for hotValues; a Get of the key after it reads the
// write, from Badger.
func (t *tx) wrote1(w hotWrite) {
	t.writes = append(t.writes, w)
	if t.prefetched != nil {
		delete(t.prefetched, string(w.key))
	}
}

func (t *tx) Iterate(r storage.Range) storage.Iterator {
	opts := badgerdb.DefaultIteratorOptions
	opts.Reverse = r.Reverse
	opts.PrefetchValues = false
	if prefix := commonPrefix(r.Start, r.End); len(prefix) > 0 {
		opts.Prefix = prefix
	}
	it := &iterator{it: t.btx.NewIterator(opts), r: r, t: t}
	if r.Reverse {
		if r.End == nil {
			it.it.Rewind()
		} else {
			it.seekReverseExclusive(r.End)
		}
	} else {
		if r.Start == nil {
			it.it.Rewind()
		} else {
			it.it.Seek(r.Start)
		}
	}
	return it
}

// commonPrefix lets Badger skip tables that cannot hold the range.
func commonPrefix(a, b []byte) []byte {
	if a == nil || b == nil {
		return nil
	}
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return a[:n]
}

type iterator struct {
	it *badgerdb.Iterator
	r  storage.Range
	t  *tx
	// steps counts moves since the context was last looked at.
	steps int
}

// step counts one move and looks at the context every
// storage.IterationCheckEvery of them.
func (i *iterator) step() {
	if i.steps++; i.steps < storage.IterationCheckEvery {
		return
	}
	i.steps = 0
	if err := i.t.ctx.Err(); err != nil && i.t.ended == nil {
		i.t.ended = err
	}
}

func (i *iterator) seekReverseExclusive(key []byte) {
	i.it.Seek(key)
	if i.it.Valid() && bytes.Equal(i.it.Item().Key(), key) {
		i.it.Next()
	}
}

func (i *iterator) Valid() bool {
	if i.t.ended != nil || !i.it.Valid() {
		return false
	}
	k := i.it.Item().Key()
	if i.r.Start != nil && bytes.Compare(k, i.r.Start) < 0 {
		return false
	}
	if i.r.End != nil && bytes.Compare(k, i.r.End) >= 0 {
		return false
	}
	return true
}

func (i *iterator) Key() []byte { return i.it.Item().Key() }

func (i *iterator) Value() ([]byte, error) { return i.it.Item().ValueCopy(nil) }

func (i *iterator) Next() {
	i.step()
	i.it.Next()
}

func (i *iterator) Seek(key []byte) {
	i.step()
	if i.r.Reverse {
		if i.r.End != nil && bytes.Compare(key, i.r.End) >= 0 {
			i.seekReverseExclusive(i.r.End)
			return
		}
		i.it.Seek(key)
		return
	}
	if i.r.Start != nil && bytes.Compare(key, i.r.Start) < 0 {
		key = i.r.Start
	}
	i.it.Seek(key)
}

func (i *iterator) Close() { i.it.Close() }

// Dir is the storage.Opener of a Badger store in a folder (created if
// missing), with the default Options: marketplace.Open(ctx,
// badger.Dir("./data"), opts). An embedder who needs other Options opens
// the store with Open and passes it to marketplace.New.
type Dir string

var _ storage.Opener = Dir("")

// Open opens (or creates) the store in the folder d.
func (d Dir) Open(context.Context) (storage.Store, error) {
	st, err := Open(string(d), Options{})
	if err != nil {
		return nil, err
	}
	return st, nil
}
