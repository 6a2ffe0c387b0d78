package notify

import (
	"time"

	"context"

	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
)

// SetJitter replaces the backoff jitter source, so that tests know the
// schedule.
func SetJitter(s *Service, f func() float64) { s.jitter = f }

// PutApplication writes app as it is, skipping the registration checks, as
// if the callback host's address had changed since registration.
func PutApplication(ctx context.Context, st storage.Store, app Application) error {
	return st.Update(ctx, func(tx storage.Tx) error {
		if err := kv.SetJSON(tx, appKey(app.ID), app); err != nil {
			return err
		}
		return tx.Set(ownerAppKey(app.OwnerUserID, app.ID), nil)
	})
}

// Backoff exposes the retry delay after the n-th failed attempt.
func Backoff(s *Service, n int) time.Duration { return s.backoff(n) }

// AttemptDelivery runs one attempt of delivery id as the delivery loop does once it
// has claimed it, so that tests can claim it as a stale snapshot would.
func AttemptDelivery(ctx context.Context, s *Service, id uint64) error { return s.attempt(ctx, id) }
