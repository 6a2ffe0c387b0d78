package notify

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
)

// ShareStore makes Run deliver only while this process holds the store's
// delivery lease, as holder (a name of its own), so that processes sharing
// the store POST each delivery once. The lease expires in the real time
// New was given, whatever clock the deliveries follow.
func (s *Service) ShareStore(holder string) {
	s.holder = holder
}

// The delivery lease: of the processes that share a store (ShareStore), the
// one that holds it fans the outbox out, POSTs and prunes; the others stand
// by and take over when it expires, so a delivery is POSTed by one process
// at a time. Its holder renews it every third of its duration and stops
// delivering when a renewal fails; every outcome it records is checked
// against it (fencing), so a holder that paused past its expiry records
// nothing, and the next holder POSTs again: at least once.
const deliveryLease = "notify/delivery"

// deliverUnderLease delivers while this process holds the delivery lease,
// and waits for it while another does, until ctx ends.
func (s *Service) deliverUnderLease(ctx context.Context) error {
	ttl := s.opts.Lease
	// A holder that stops releases the lease: where the store tells of
	// it, the wait ends then rather than at the lease's expiry.
	released, unsubscribe, _ := storage.Subscribe(s.store, kv.LeaseTopic(deliveryLease))
	defer unsubscribe()
	for {
		l, held, err := kv.AcquireLease(ctx, s.store, deliveryLease, s.holder, s.wall.Now(), ttl)
		if err == nil && held {
			// Losing the lease or the store ends this turn; either way the
			// answer is the same: look again a little later.
			_ = s.deliverHolding(ctx, l)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// Lost, or the store failed: look again a little later. Held by
		// another: it cannot be taken before it expires (its holder may
		// renew it meanwhile: then wait again).
		wait := ttl / 3
		if err == nil && !held {
			wait = min(max(l.Expires.Sub(s.wall.Now()), time.Millisecond), ttl)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-released:
			t.Stop()
		case <-t.C:
		}
	}
}

// deliverHolding delivers until ctx ends or the lease l is lost, renewing
// it; it releases the lease when ctx ends.
func (s *Service) deliverHolding(ctx context.Context, l kv.Lease) error {
	ttl := s.opts.Lease
	held, lost := context.WithCancel(ctx)
	defer lost()
	var current atomic.Pointer[kv.Lease]
	current.Store(&l)
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		defer lost()
		t := time.NewTicker(ttl / 3)
		defer t.Stop()
		for {
			select {
			case <-held.Done():
				return
			case <-t.C:
			}
			next, err := current.Load().Renew(held, s.store, s.wall.Now(), ttl)
			if err != nil {
				return
			}
			current.Store(&next)
		}
	}()
	err := s.deliver(held, func(tx storage.Tx) error { return current.Load().Check(tx, s.wall.Now()) })
	lost()
	<-renewed
	if ctx.Err() != nil {
		// Stopped, not lost: let another process take over at once.
		_ = current.Load().Release(context.WithoutCancel(ctx), s.store, s.wall.Now())
	}
	return err
}
