package storage

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
)

// Sequence hands out ids outside any transaction, so that writers of
// different records never touch a common key to number them.
//
// Promises, checked by storagetest: Next returns 1 or more; an id is never
// returned twice by one sequence of one store, whatever the concurrency, and
// not after a restart or a crash either (a crash may leave gaps, never a
// repeat); ids returned in one process increase in the order of the calls.
type Sequence interface {
	// Next returns a new id.
	Next(ctx context.Context) (uint64, error)
	// Advance makes every later Next return more than n; a sequence already
	// past n is left as it is. Migrations use it to carry an older counter
	// over.
	Advance(ctx context.Context, n uint64) error
}

// SequenceKey is where a backend that keeps its sequences as ordinary keys
// (LeasedSequence) stores the state of the sequence called name. The
// namespace is the store's own ("sys"), beside the schema version.
func SequenceKey(name string) []byte { return NewKey("sys/seq").Str(name) }

// LeasedSequence is a Sequence kept at one key of a store, which holds the
// first id not yet leased. Next hands out ids from a block leased in memory
// and writes the key only once per bandwidth ids, in an Update of its own:
// the lease is on disk (for a durable store) before any id of it is returned,
// so a crash loses at most the rest of a block. Close gives the rest of the
// block back on a clean close of the store.
type LeasedSequence struct {
	store     Store
	key       []byte
	bandwidth uint64

	mu     sync.Mutex
	next   uint64 // the id Next returns, when next < leased
	leased uint64 // the end of the block leased in memory
	closed bool
}

// NewLeasedSequence returns the sequence called name of store, leasing
// bandwidth ids at a time. A backend keeps one per name, so that the ids of
// one process increase.
func NewLeasedSequence(store Store, name string, bandwidth uint64) *LeasedSequence {
	if bandwidth == 0 {
		bandwidth = 1
	}
	return &LeasedSequence{store: store, key: SequenceKey(name), bandwidth: bandwidth}
}

// Next returns a new id, leasing a new block when the current one is spent.
func (q *LeasedSequence) Next(ctx context.Context) (uint64, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return 0, ErrClosed
	}
	if q.next >= q.leased {
		var start uint64
		err := q.store.Update(ctx, func(tx Tx) error {
			var err error
			if start, err = readSequenceState(tx, q.key); err != nil {
				return err
			}
			return tx.Set(q.key, binary.BigEndian.AppendUint64(nil, start+q.bandwidth))
		})
		if err != nil {
			return 0, err
		}
		q.next, q.leased = start, start+q.bandwidth
	}
	id := q.next
	q.next++
	return id, nil
}

// Advance makes every later Next return more than n.
func (q *LeasedSequence) Advance(ctx context.Context, n uint64) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return ErrClosed
	}
	if q.next > n {
		return nil
	}
	err := q.store.Update(ctx, func(tx Tx) error {
		start, err := readSequenceState(tx, q.key)
		if err != nil || start > n {
			return err
		}
		return tx.Set(q.key, binary.BigEndian.AppendUint64(nil, n+1))
	})
	if err != nil {
		return err
	}
	// The block in memory, if any, lies below n: drop it.
	q.next, q.leased = 0, 0
	return nil
}

// Close gives the unused rest of the leased block back, so that a clean
// restart continues without a gap; later calls return ErrClosed. A backend
// calls it just before it closes the store.
func (q *LeasedSequence) Close(ctx context.Context) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return nil
	}
	q.closed = true
	if q.next >= q.leased {
		return nil
	}
	err := q.store.Update(ctx, func(tx Tx) error {
		start, err := readSequenceState(tx, q.key)
		if err != nil || start != q.leased {
			// Someone leased past this block (another process on a
			// shared store): the rest of it stays a gap.
			return err
		}
		return tx.Set(q.key, binary.BigEndian.AppendUint64(nil, q.next))
	})
	if err != nil {
		return err
	}
	q.next, q.leased = 0, 0
	return nil
}

func readSequenceState(tx Tx, key []byte) (uint64, error) {
	b, err := tx.Get(key)
	switch {
	case errors.Is(err, ErrNotFound):
		return 1, nil
	case err != nil:
		return 0, err
	case len(b) != 8:
		return 0, fmt.Errorf("sequence %q: corrupt state", key)
	}
	return binary.BigEndian.Uint64(b), nil
}

// OnceID draws one id from a store's sequence the first time it is asked
// for and gives the same id after that. An Update's function may run again
// after a conflict; the record it writes keeps the id drawn the first time,
// and an id drawn for an Update that then fails is a gap, never a repeat.
type OnceID struct {
	store Store
	name  string
	id    uint64
}

// NewOnceID returns an OnceID for the sequence called name of store.
func NewOnceID(store Store, name string) *OnceID { return &OnceID{store: store, name: name} }

// Get returns the id, drawing it on the first call.
func (o *OnceID) Get(ctx context.Context) (uint64, error) {
	if o.id != 0 {
		return o.id, nil
	}
	q, err := o.store.Sequence(o.name)
	if err != nil {
		return 0, err
	}
	if o.id, err = q.Next(ctx); err != nil {
		return 0, err
	}
	return o.id, nil
}
