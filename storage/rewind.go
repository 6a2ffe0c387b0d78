package storage

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
)

// SequenceRewinder is implemented by every backend (storagetest checks it):
// it reads and sets back the positions of all the store's sequences at once,
// so that the whole state of a store can be replaced (a reset, the restore of
// a snapshot) with the ids going on from where that state left them.
//
// Rewinding breaks the promise that a sequence never repeats an id, on
// purpose: the records that held those ids are gone. The caller makes sure
// that nothing draws ids while it rewinds.
type SequenceRewinder interface {
	// SequenceStates returns, for every sequence of the store that has
	// handed out an id or been advanced, the id its next Next returns.
	SequenceStates(ctx context.Context) (map[string]uint64, error)
	// RewindSequences makes the next Next of each sequence named in next
	// return the id given for it (1 or more), and every other sequence of
	// the store start again from 1.
	RewindSequences(ctx context.Context, next map[string]uint64) error
}

// ErrNoRewind is returned by SequenceStates and RewindSequences for a store
// that does not implement SequenceRewinder.
var ErrNoRewind = errors.New("storage: the store cannot rewind its sequences")

// SequenceStates returns the positions of st's sequences (see
// SequenceRewinder).
func SequenceStates(ctx context.Context, st Store) (map[string]uint64, error) {
	if r, ok := st.(SequenceRewinder); ok {
		return r.SequenceStates(ctx)
	}
	return nil, ErrNoRewind
}

// RewindSequences sets st's sequences back to next (see SequenceRewinder).
func RewindSequences(ctx context.Context, st Store, next map[string]uint64) error {
	for name, n := range next {
		if n == 0 {
			return fmt.Errorf("rewind sequence %q: the next id must be 1 or more", name)
		}
	}
	if r, ok := st.(SequenceRewinder); ok {
		return r.RewindSequences(ctx, next)
	}
	return ErrNoRewind
}

// State returns the id the next Next returns: from the block leased in
// memory when there is one, else from the sequence's key.
func (q *LeasedSequence) State(ctx context.Context, view func(context.Context, func(Tx) error) error) (uint64, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return 0, ErrClosed
	}
	if q.next < q.leased {
		return q.next, nil
	}
	var n uint64
	err := view(ctx, func(tx Tx) error {
		var err error
		n, err = readSequenceState(tx, q.key)
		return err
	})
	return n, err
}

// Rewind makes the next Next return next (1 or more), dropping the block
// leased in memory.
func (q *LeasedSequence) Rewind(ctx context.Context, next uint64) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return ErrClosed
	}
	err := q.update(ctx, func(tx Tx) error {
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

// LeasedSequenceStates reads the state of every sequence kept at a key of
// the store (SequenceKey) and not open in this process: the key holds the
// first id not yet leased, so that is the next id.
func LeasedSequenceStates(tx Tx) (map[string]uint64, error) {
	out := map[string]uint64{}
	prefix := NewKey("sys/seq")
	it := tx.Iterate(Prefix(prefix))
	defer it.Close()
	for ; it.Valid(); it.Next() {
		r := ReadKey(it.Key()[len(prefix):])
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
