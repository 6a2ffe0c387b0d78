// Package memory is the in-process storage backend: an ordered copy-on-write
// B-tree. Updates run one at a time on a private copy of the tree and publish
// it when they commit, so transactions are serializable, a failed Update
// leaves nothing behind, and a View reads a snapshot without blocking writers.
package memory

import (
	"bytes"
	"context"
	"encoding/binary"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tidwall/btree"

	"marketplace/storage"
)

// Store is an in-memory storage.Store, safe for concurrent use.
type Store struct {
	writeMu sync.Mutex // one Update at a time
	current atomic.Pointer[tree]
	closed  atomic.Bool
	seqs    sync.Map // name -> *sequence
}

var _ storage.Store = (*Store)(nil)

// New returns an empty store.
func New() *Store {
	s := &Store{}
	s.current.Store(newTree())
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

// tree is the ordered map of the store. An entry is one string holding the
// key's length (uvarint), the key and the value: one allocation and one
// pointer per entry, where a key string and a value slice would be two of
// each. Every Update copies the nodes on the paths it writes, and the
// garbage collector scans every entry, so both costs halve. Nodes are small
// (degree 16, up to 31 entries) for the same reason.
type tree = btree.BTreeG[string]

func newTree() *tree {
	return btree.NewBTreeGOptions(entryLess, btree.Options{Degree: 16, NoLocks: true})
}

func entry(key, value []byte) string {
	var n [binary.MaxVarintLen64]byte
	w := binary.PutUvarint(n[:], uint64(len(key)))
	var b strings.Builder // one allocation: String does not copy
	b.Grow(w + len(key) + len(value))
	b.Write(n[:w])
	b.Write(key)
	b.Write(value)
	return b.String()
}

// probe is the entry compared with to find key: its value does not count.
func probe(key []byte) string { return entry(key, nil) }

func splitEntry(e string) (key, value string) {
	// The uvarint written by entry, read from the string in place.
	var n uint64
	var w int
	for shift := 0; w < len(e); shift += 7 {
		c := e[w]
		w++
		n |= uint64(c&0x7f) << shift
		if c < 0x80 {
			break
		}
	}
	return e[w : w+int(n)], e[w+int(n):]
}

func entryKey(e string) string {
	k, _ := splitEntry(e)
	return k
}

func entryLess(a, b string) bool { return entryKey(a) < entryKey(b) }

type tx struct {
	tree     *tree
	readOnly bool
}

func (t *tx) Get(key []byte) ([]byte, error) {
	if len(key) == 0 {
		return nil, storage.ErrEmptyKey
	}
	e, ok := t.tree.Get(probe(key))
	if !ok {
		return nil, storage.ErrNotFound
	}
	_, v := splitEntry(e)
	return []byte(v), nil
}

func (t *tx) Set(key, value []byte) error {
	if err := t.checkWrite(key); err != nil {
		return err
	}
	t.tree.Set(entry(key, value))
	return nil
}

func (t *tx) Delete(key []byte) error {
	if err := t.checkWrite(key); err != nil {
		return err
	}
	t.tree.Delete(probe(key))
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
			it.valid = it.it.Seek(probe(r.Start))
		}
	}
	it.clamp()
	return it
}

type iterator struct {
	it    btree.IterG[string]
	r     storage.Range
	valid bool
}

// seekReverse positions on the last key <= key (or < key when !inclusive).
func (i *iterator) seekReverse(key []byte, inclusive bool) {
	i.valid = i.it.Seek(probe(key))
	if !i.valid {
		i.valid = i.it.Last()
		return
	}
	if inclusive && entryKey(i.it.Item()) == string(key) {
		return
	}
	i.valid = i.it.Prev()
}

func (i *iterator) clamp() {
	if !i.valid {
		return
	}
	k := entryKey(i.it.Item())
	if i.r.Start != nil && k < string(i.r.Start) {
		i.valid = false
	}
	if i.r.End != nil && k >= string(i.r.End) {
		i.valid = false
	}
}

func (i *iterator) Valid() bool { return i.valid }

func (i *iterator) Key() []byte { return []byte(entryKey(i.it.Item())) }

func (i *iterator) Value() ([]byte, error) {
	_, v := splitEntry(i.it.Item())
	return []byte(v), nil
}

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
		i.valid = i.it.Seek(probe(key))
	}
	i.clamp()
}

func (i *iterator) Close() { i.it.Release() }
