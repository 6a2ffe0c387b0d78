package badger

import (
	"bytes"
	"context"
	"errors"

	badgerdb "github.com/dgraph-io/badger/v4"

	"github.com/marketplace/marketplace/storage"
)

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
	if r.End != nil && bytes.Equal(storage.PrefixEnd(r.Start), r.End) {
		// A prefix's range: the prefix itself is one byte longer than what
		// its ends share, and lets Badger skip the tables of its neighbours.
		it := t.iterate(r, r.Start)
		if !r.Reverse || it.it.Valid() {
			return it
		}
		// A reverse seek to End stands on End where that key is held, and
		// End is not in the prefix: Badger would end the range there. Read
		// it with the prefix its ends share.
		it.Close()
	}
	return t.iterate(r, commonPrefix(r.Start, r.End))
}

func (t *tx) iterate(r storage.Range, prefix []byte) *iterator {
	opts := badgerdb.DefaultIteratorOptions
	opts.Reverse = r.Reverse
	opts.PrefetchValues = false
	opts.Prefix = prefix
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
	if i.it.Valid() { // Badger's Next past the end of its prefix panics
		i.it.Next()
	}
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
