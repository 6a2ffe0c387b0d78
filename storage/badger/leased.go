package badger

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	badgerdb "github.com/dgraph-io/badger/v4"

	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/storage"
)

// sequenceKey is where a backend that keeps its sequences as ordinary keys
// (leasedSequence) stores the state of the sequence called name. The
// namespace is the store's own ("sys"), beside the schema version.
func sequenceKey(name string) []byte { return keycodec.New("sys/seq").Str(name) }

// leasedSequence is a Sequence kept at one key of a store, which holds the
// first id not yet leased. Next hands out ids from a block leased in memory
// and writes the key only once per bandwidth ids, in an Update of its own:
// the lease is on disk (for a durable store) before any id of it is returned,
// so a crash loses at most the rest of a block. Close gives the rest of the
// block back on a clean close of the store.
type leasedSequence struct {
	update    func(context.Context, func(storage.Tx) error) error
	key       []byte
	bandwidth uint64

	mu     sync.Mutex
	next   uint64 // the id Next returns, when next < leased
	leased uint64 // the end of the block leased in memory
	closed bool
}

// newLeasedSequence returns the sequence called name, leasing bandwidth ids
// at a time through update, a durable read-write transaction of the store.
// Ids are drawn inside other Updates, so update must never wait for another
// Update of the store to end (a backend passes a transaction that bypasses
// whatever it uses to run a contended Update alone). A backend keeps one
// sequence per name, so that the ids of one process increase.
func newLeasedSequence(update func(context.Context, func(storage.Tx) error) error, name string, bandwidth uint64) *leasedSequence {
	if bandwidth == 0 {
		bandwidth = 1
	}
	return &leasedSequence{update: update, key: sequenceKey(name), bandwidth: bandwidth}
}

// Next returns a new id, leasing a new block when the current one is spent.
func (q *leasedSequence) Next(ctx context.Context) (uint64, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return 0, storage.ErrClosed
	}
	if q.next >= q.leased {
		var start uint64
		err := q.update(ctx, func(tx storage.Tx) error {
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
func (q *leasedSequence) Advance(ctx context.Context, n uint64) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return storage.ErrClosed
	}
	if q.next > n {
		return nil
	}
	err := q.update(ctx, func(tx storage.Tx) error {
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
// restart continues without a gap; later calls return storage.ErrClosed. A backend
// calls it just before it closes the store.
func (q *leasedSequence) Close(ctx context.Context) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return nil
	}
	q.closed = true
	if q.next >= q.leased {
		return nil
	}
	err := q.update(ctx, func(tx storage.Tx) error {
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

func readSequenceState(tx storage.Tx, key []byte) (uint64, error) {
	b, err := tx.Get(key)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return 1, nil
	case err != nil:
		return 0, err
	case len(b) != 8:
		return 0, fmt.Errorf("sequence %q: corrupt state", key)
	}
	return binary.BigEndian.Uint64(b), nil
}

// State returns the id the next Next returns: from the block leased in
// memory when there is one, else from the sequence's key.
func (q *leasedSequence) State(ctx context.Context, view func(context.Context, func(storage.Tx) error) error) (uint64, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return 0, storage.ErrClosed
	}
	if q.next < q.leased {
		return q.next, nil
	}
	var n uint64
	err := view(ctx, func(tx storage.Tx) error {
		var err error
		n, err = readSequenceState(tx, q.key)
		return err
	})
	return n, err
}

// Rewind makes the next Next return next (1 or more), dropping the block
// leased in memory.
func (q *leasedSequence) Rewind(ctx context.Context, next uint64) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return storage.ErrClosed
	}
	err := q.update(ctx, func(tx storage.Tx) error {
		if next <= 1 {
			return tx.Delete(q.key)
		}
		return tx.Set(q.key, binary.BigEndian.AppendUint64(nil, next))
	})
	if err != nil {
		return err
	}
	q.next, q.leased = 0, 0
	return nil
}

// leasedSequenceStates reads the state of every sequence kept at a key of
// the store (sequenceKey) and not open in this process: the key holds the
// first id not yet leased, so that is the next id.
func leasedSequenceStates(tx storage.Tx) (map[string]uint64, error) {
	out := map[string]uint64{}
	prefix := keycodec.New("sys/seq")
	it := tx.Iterate(storage.Prefix(prefix))
	defer it.Close()
	for ; it.Valid(); it.Next() {
		r := keycodec.Read(it.Key()[len(prefix):])
		name := r.Str()
		if r.Err() != nil {
			continue
		}
		v, err := it.Value()
		if err != nil {
			return nil, err
		}
		if len(v) != 8 {
			return nil, fmt.Errorf("sequence %q: corrupt state", name)
		}
		out[name] = binary.BigEndian.Uint64(v)
	}
	return out, nil
}

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
		_, err := s.commitOnce(ctx, fn)
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
