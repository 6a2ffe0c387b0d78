package idempotency

import (
	"context"
	"errors"
	"time"

	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
)

// Bounds of a sweep: records are removed SweepBatch to a transaction, and
// at most MaxSweep in one call, so that a store that has gathered many
// expired records is emptied over several rounds, each of bounded work.
const (
	SweepBatch = 200
	MaxSweep   = 20 * SweepBatch
)

// SweepInterval is how often Run sweeps.
const SweepInterval = time.Minute

// sweepLease is the lease of the sweep on a store that several processes
// share. A sweep run twice at once removes the same records (the loser of
// each transaction finds them gone), so the lease saves work, no more; its
// duration outlasts a round, which renews nothing.
const (
	sweepLease    = "idempotency/sweep"
	sweepLeaseTTL = 2 * SweepInterval
)

// ShareStore makes Run's sweeps happen in one of the processes that share
// the store at a time: each takes the sweep's lease as holder (a name of
// its own) first. wall is real time, in which the lease expires.
func (s *Service) ShareStore(holder string, wall clock.Clock) {
	s.holder, s.wall = holder, wall
}

// Sweep removes the records that have expired by the engine's clock, oldest
// first, looking at most MaxSweep of them over, and returns how many it
// removed. An expired record that was not swept counts as absent all the
// same. Errors: the storage's.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	cutoff := s.clock.Now().Add(-Retention)
	r := storage.Range{Start: expPrefix(), End: keycodec.Key(expPrefix()).Int(cutoff.UnixNano() + 1)}
	removed := 0
	for seen := 0; seen < MaxSweep; seen += SweepBatch {
		var n, entries int
		err := s.store.Update(ctx, func(tx storage.Tx) error {
			var err error
			n, entries, err = sweepBatch(tx, r)
			return err
		})
		if err != nil {
			return removed, errs.Internalf(err, "sweep idempotency keys")
		}
		removed += n
		if entries < SweepBatch {
			break
		}
	}
	return removed, nil
}

// sweepBatch removes the first SweepBatch expiry entries of r and their
// records, and returns how many records and entries it removed.
func sweepBatch(tx storage.Tx, r storage.Range) (records, entries int, err error) {
	var batch [][]byte
	it := tx.Iterate(r)
	for ; it.Valid() && len(batch) < SweepBatch; it.Next() {
		batch = append(batch, append([]byte(nil), it.Key()...))
	}
	it.Close()
	for _, e := range batch {
		if err := tx.Delete(e); err != nil {
			return 0, 0, err
		}
		key, nanos, ok := recOfExp(e)
		if !ok {
			continue
		}
		var rec record
		err := kv.GetJSON(tx, key, &rec)
		if errors.Is(err, storage.ErrNotFound) {
			continue
		}
		if err != nil {
			return 0, 0, err
		}
		// A record made again since has an entry of its own.
		if rec.At.UnixNano() == nanos {
			if err := tx.Delete(key); err != nil {
				return 0, 0, err
			}
			records++
		}
	}
	return records, len(batch), nil
}

// Run sweeps every SweepInterval until ctx ends, under the sweep's lease
// when the store is shared (ShareStore); failures go to onErr and are
// tried again at the next round.
func (s *Service) Run(ctx context.Context, onErr func(error)) error {
	t := time.NewTicker(SweepInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		if err := s.sweepRound(ctx); err != nil && ctx.Err() == nil && onErr != nil {
			onErr(err)
		}
	}
}

func (s *Service) sweepRound(ctx context.Context) error {
	if s.holder != "" {
		_, held, err := kv.AcquireLease(ctx, s.store, sweepLease, s.holder, s.wall.Now(), sweepLeaseTTL)
		if err != nil {
			return errs.Internalf(err, "take the idempotency sweep lease")
		}
		if !held {
			return nil
		}
	}
	_, err := s.Sweep(ctx)
	return err
}
