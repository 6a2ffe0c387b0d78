package main

import (
	"context"
	"errors"
	"sync"

	badgerdb "github.com/dgraph-io/badger/v4"

	"marketplace/storage"
	"marketplace/storage/badger"
)

// directLeases is a Badger store whose sequences lease their blocks of ids in
// Badger transactions of their own, never through the store's Update. The
// preload uses it: storage/badger's own sequences lease through Update, which
// a sequence drawn inside an Update's function then waits for while holding
// the store's gate shared, and that deadlocks as soon as an Update that
// conflicted three times waits for the gate alone (see docs/benchmarks.md).
// The keys and the leasing scheme are storage.LeasedSequence's, so the store
// it leaves is the one storage/badger reads.
type directLeases struct {
	*badger.Store
	mu   sync.Mutex
	seqs map[string]*storage.LeasedSequence
}

// leaseBandwidth is storage/badger's sequenceBandwidth.
const leaseBandwidth = 1000

func newDirectLeases(st *badger.Store) *directLeases {
	return &directLeases{Store: st, seqs: map[string]*storage.LeasedSequence{}}
}

func (d *directLeases) Sequence(name string) (storage.Sequence, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	q, ok := d.seqs[name]
	if !ok {
		q = storage.NewLeasedSequence(rawBadger{d.DB()}, name, leaseBandwidth)
		d.seqs[name] = q
	}
	return q, nil
}

// Close gives back the unused ids, as storage/badger does, then closes the
// store.
func (d *directLeases) Close() error {
	d.mu.Lock()
	var errs []error
	for _, q := range d.seqs {
		errs = append(errs, q.Close(context.Background()))
	}
	d.mu.Unlock()
	return errors.Join(append(errs, d.Store.Close())...)
}

// rawBadger runs a sequence's Get and Set on the Badger database directly.
// Only the sequence's own key is written through it, under the sequence's
// lock, so within one process it never conflicts.
type rawBadger struct{ db *badgerdb.DB }

func (r rawBadger) View(_ context.Context, fn func(storage.Tx) error) error {
	return r.db.View(func(txn *badgerdb.Txn) error { return fn(rawTx{txn}) })
}

func (r rawBadger) Update(_ context.Context, fn func(storage.Tx) error) error {
	return r.db.Update(func(txn *badgerdb.Txn) error { return fn(rawTx{txn}) })
}

func (r rawBadger) Sequence(string) (storage.Sequence, error) {
	return nil, errors.New("rawBadger has no sequences")
}

func (r rawBadger) Close() error { return nil }

type rawTx struct{ txn *badgerdb.Txn }

func (t rawTx) Get(key []byte) ([]byte, error) {
	item, err := t.txn.Get(key)
	if errors.Is(err, badgerdb.ErrKeyNotFound) {
		return nil, storage.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return item.ValueCopy(nil)
}

func (t rawTx) Set(key, value []byte) error {
	return t.txn.Set(append([]byte(nil), key...), append([]byte(nil), value...))
}

func (t rawTx) Delete(key []byte) error { return t.txn.Delete(append([]byte(nil), key...)) }

func (t rawTx) Iterate(storage.Range) storage.Iterator { return emptyIterator{} }

type emptyIterator struct{}

func (emptyIterator) Valid() bool            { return false }
func (emptyIterator) Key() []byte            { return nil }
func (emptyIterator) Value() ([]byte, error) { return nil, storage.ErrNotFound }
func (emptyIterator) Next()                  {}
func (emptyIterator) Seek([]byte)            {}
func (emptyIterator) Close()                 {}
