// Package memory is the in-process storage backend: an ordered copy-on-write
// B-tree. Updates run one at a time on a private copy of the tree and publish
// it when they commit, so transactions are serializable, a failed Update
// leaves nothing behind, and a View reads a snapshot without blocking writers.
package memory

import (
	"bytes"
	"context"
	"sync"
	"sync/atomic"

	"github.com/tidwall/btree"

	"marketplace/storage"
)

// Store is an in-memory storage.Store, safe for concurrent use.
type Store struct {
	writeMu sync.Mutex // one Update at a time
	current atomic.Pointer[btree.Map[string, []byte]]
	closed  atomic.Bool
	seqs    sync.Map // name -> *sequence
}

var _ storage.Store = (*Store)(nil)

// New returns an empty store.
func New() *Store {
	s := &Store{}
	// Every Update copies the nodes on the paths it writes: small nodes
	// (up to 31 entries) copy less per write than the library's default.
	s.current.Store(btree.NewMap[string, []byte](16))
	return s
}

// View runs fn over a snapshot of the store.
func (s *Store) View(ctx context.Context, fn func(storage.Tx) error) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	return fn(&tx{tree: s.current.Load(), readOnly: true})
}

// Update runs fn on a private copy of the tree and publishes it if fn returns
// nil. Updates are serialized, so they never conflict.
func (s *Store) Update(ctx context.Context, fn func(storage.Tx) error) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.closed.Load() {
		return storage.ErrClosed
	}
	// Only the writer copies the published tree: Copy touches the source's
	// isolation id, which readers never read.
	work := s.current.Load().Copy()
	t := &tx{tree: work}
	if err := fn(t); err != nil {
		return err
	}
	// A caller that gave up while fn ran must not find its writes committed.
	if err := ctx.Err(); err != nil {
		return err
	}
	s.current.Store(work)
	return nil
}

// Sequence returns the sequence called name: an atomic counter, since
// nothing of the store outlives the process.
func (s *Store) Sequence(name string) (storage.Sequence, error) {
	if s.closed.Load() {
		return nil, storage.ErrClosed
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

type tx struct {
	tree     *btree.Map[string, []byte]
	readOnly bool
}

func (t *tx) Get(key []byte) ([]byte, error) {
	if len(key) == 0 {
		return nil, storage.ErrEmptyKey
	}
	v, ok := t.tree.Get(string(key))
	if !ok {
		return nil, storage.ErrNotFound
	}
	return bytes.Clone(v), nil
}

func (t *tx) Set(key, value []byte) error {
	if err := t.checkWrite(key); err != nil {
		return err
	}
	v := make([]byte, len(value))
	copy(v, value)
	t.tree.Set(string(key), v)
	return nil
}

func (t *tx) Delete(key []byte) error {
	if err := t.checkWrite(key); err != nil {
		return err
	}
	t.tree.Delete(string(key))
	return nil
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
	it := &iterator{it: t.tree.Iter(), r: r}
	if r.Reverse {
		if r.End == nil {
			it.valid = it.it.Last()
		} else {
			it.seekReverse(r.End, false)
		}
	} else {
		if r.Start == nil {
			it.valid = it.it.First()
		} else {
			it.valid = it.it.Seek(string(r.Start))
		}
	}
	it.clamp()
	return it
}

type iterator struct {
	it    btree.MapIter[string, []byte]
	r     storage.Range
	valid bool
}

// seekReverse positions on the last key <= key (or < key when !inclusive).
func (i *iterator) seekReverse(key []byte, inclusive bool) {
	i.valid = i.it.Seek(string(key))
	if !i.valid {
		i.valid = i.it.Last()
		return
	}
	if inclusive && i.it.Key() == string(key) {
		return
	}
	i.valid = i.it.Prev()
}

func (i *iterator) clamp() {
	if !i.valid {
		return
	}
	k := i.it.Key()
	if i.r.Start != nil && k < string(i.r.Start) {
		i.valid = false
	}
	if i.r.End != nil && k >= string(i.r.End) {
		i.valid = false
	}
}

func (i *iterator) Valid() bool { return i.valid }

func (i *iterator) Key() []byte { return []byte(i.it.Key()) }

func (i *iterator) Value() ([]byte, error) { return bytes.Clone(i.it.Value()), nil }

func (i *iterator) Next() {
	if !i.valid {
		return
	}
	if i.r.Reverse {
		i.valid = i.it.Prev()
	} else {
		i.valid = i.it.Next()
	}
	i.clamp()
}

func (i *iterator) Seek(key []byte) {
	if i.r.Reverse {
		if i.r.End != nil && bytes.Compare(key, i.r.End) >= 0 {
			i.seekReverse(i.r.End, false)
		} else {
			i.seekReverse(key, true)
		}
	} else {
		if i.r.Start != nil && bytes.Compare(key, i.r.Start) < 0 {
			key = i.r.Start
		}
		i.valid = i.it.Seek(string(key))
	}
	i.clamp()
}

func (i *iterator) Close() {}
