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
		// The table indexes and bloom filters stay in memory (an index
		// cache of 0, Badger's default): a bounded cache smaller than them
		// (16 MiB against 51 MiB for a store of 2,000,000 questions) is
		// read again from the tables on every miss, and every read then
		// costs more the larger the store.
		WithBlockCacheSize(64 << 20).
		WithIndexCacheSize(0).
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

// attempt runs fn once under the gate: shared, or alone after conflicts.
func (s *Store) attempt(ctx context.Context, fn func(storage.Tx) error, alone bool) (wrote bool, err error) {
	if alone {
		s.gate.Lock()
		defer s.gate.Unlock()
	} else {
		s.gate.RLock()
		defer s.gate.RUnlock()
	}
	return s.commitOnce(ctx, fn)
}

// commitOnce runs fn in one Badger transaction and commits it; wrote
// reports that it wrote something (and so must be synced).
func (s *Store) commitOnce(ctx context.Context, fn func(storage.Tx) error) (wrote bool, err error) {
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
