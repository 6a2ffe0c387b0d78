package storage

import (
	"context"
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
