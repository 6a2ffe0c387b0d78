package schema

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/marketplace/marketplace/storage"
)

// LegacyCounter is an id counter of the time before sequences: a key
// written in the transaction of every new record, holding the last id
// handed out (8 bytes big-endian). Its ids now come from Sequence as
// First - 1 + the sequence's next number.
type LegacyCounter struct {
	Key      []byte
	Sequence string
	First    uint64
}

// CarryCounters returns a migration that carries every counter over to its
// sequence and deletes the counter: the sequence is advanced (in Start,
// outside any transaction) so that its next id follows the counter's last,
// then the keys are deleted in one chunk. Advancing is idempotent, so a crash
// between the two steps only advances again to the same place.
func CarryCounters(name string, counters []LegacyCounter) Migration {
	return Migration{
		Name: name,
		Start: func(ctx context.Context, st storage.Store) error {
			lasts := make([]uint64, len(counters))
			err := st.View(ctx, func(tx storage.Tx) error {
				for i, c := range counters {
					b, err := tx.Get(c.Key)
					if errors.Is(err, storage.ErrNotFound) {
						continue
					}
					if err != nil {
						return err
					}
					if len(b) != 8 {
						return fmt.Errorf("counter %q: corrupt value (%d bytes)", c.Key, len(b))
					}
					lasts[i] = binary.BigEndian.Uint64(b)
				}
				return nil
			})
			if err != nil {
				return err
			}
			for i, c := range counters {
				if lasts[i] < c.First {
					continue // no id was handed out
				}
				seq, err := st.Sequence(c.Sequence)
				if err != nil {
					return err
				}
				if err := seq.Advance(ctx, lasts[i]-(c.First-1)); err != nil {
					return fmt.Errorf("advance sequence %q: %w", c.Sequence, err)
				}
			}
			return nil
		},
		Chunk: func(ctx context.Context, tx storage.Tx, _ []byte, _ int) ([]byte, bool, error) {
			for _, c := range counters {
				if err := tx.Delete(c.Key); err != nil {
					return nil, false, err
				}
			}
			return nil, true, nil
		},
	}
}
