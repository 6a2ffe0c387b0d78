package schema

import (
	"context"
	"fmt"

	"github.com/marketplace/marketplace/storage"
)

// Phase is one pass of a migration over the keys of a range, in key order.
type Phase struct {
	// Range is walked forward; its Reverse is ignored.
	Range storage.Range
	// When, if set, is asked at the start of each chunk of the phase; the
	// phase is skipped when it says no. What it reads must not be changed
	// by the phase itself (a marker the migration deletes in a later
	// phase, say).
	When func(tx storage.Tx) (bool, error)
	// Each handles one key. It is called after the chunk's iterator is
	// closed, so it may write to tx, and it may be called again for the
	// same key if its chunk did not commit.
	Each func(tx storage.Tx, key, value []byte) error
}

// DeleteKey is the Each of a phase that deletes every key of its range.
func DeleteKey(tx storage.Tx, key, _ []byte) error { return tx.Delete(key) }

// KeyRange is the range that holds key alone.
func KeyRange(key []byte) storage.Range {
	return storage.Range{Start: key, End: append(append([]byte(nil), key...), 0)}
}

// Phases returns a Chunk function that runs phases one after another, each a
// walk of its range in chunks of at most limit keys. The cursor is the
// phase's index followed by the last key handled.
func Phases(phases ...Phase) func(ctx context.Context, tx storage.Tx, cursor []byte, limit int) ([]byte, bool, error) {
	if len(phases) > 255 {
		panic("schema: too many phases")
	}
	return func(ctx context.Context, tx storage.Tx, cursor []byte, limit int) ([]byte, bool, error) {
		i, after := 0, []byte(nil)
		if len(cursor) > 0 {
			i, after = int(cursor[0]), cursor[1:]
		}
		if i >= len(phases) {
			return nil, false, fmt.Errorf("schema: cursor names phase %d of %d", i, len(phases))
		}
		p := phases[i]
		nextPhase := func() ([]byte, bool, error) {
			if i+1 == len(phases) {
				return nil, true, nil
			}
			return []byte{byte(i + 1)}, false, nil
		}
		if p.When != nil {
			ok, err := p.When(tx)
			if err != nil || !ok {
				if err != nil {
					return nil, false, err
				}
				return nextPhase()
			}
		}
		r := storage.Range{Start: p.Range.Start, End: p.Range.End}
		if len(cursor) > 1 {
			r.Start = append(append([]byte(nil), after...), 0) // just after the last key handled
		}
		type kv struct{ k, v []byte }
		batch := make([]kv, 0, min(limit, 1024))
		it := tx.Iterate(r)
		for ; it.Valid() && len(batch) < limit; it.Next() {
			v, err := it.Value()
			if err != nil {
				it.Close()
				return nil, false, err
			}
			batch = append(batch, kv{append([]byte(nil), it.Key()...), v})
		}
		more := it.Valid()
		it.Close()
		for _, e := range batch {
			if err := ctx.Err(); err != nil {
				return nil, false, err
			}
			if err := p.Each(tx, e.k, e.v); err != nil {
				return nil, false, fmt.Errorf("key %q: %w", e.k, err)
			}
		}
		if !more {
			return nextPhase()
		}
		return append([]byte{byte(i)}, batch[len(batch)-1].k...), false, nil
	}
}
