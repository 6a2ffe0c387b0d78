package notify

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
)

// dispatchBatch bounds the events fanned out in one transaction.
const dispatchBatch = 256

// Dispatch moves up to a batch of outbox events, in one transaction, into
// one pending delivery per subscribed application of the event's user, due
// now, and deletes them from the outbox. It returns the number of events
// moved. Errors: storage failures (Internal).
func (s *Service) Dispatch(ctx context.Context) (int, error) {
	_, _, moved, err := s.dispatchFrom(ctx, 0)
	return moved, err
}

// dispatchFrom is Dispatch reading the outbox from event number from on, as
// the loop does. It returns how many events it found, the highest number
// among them, and how many it moved (another loop may have moved some).
func (s *Service) dispatchFrom(ctx context.Context, from uint64) (found int, hi uint64, moved int, err error) {
	start := OutboxPrefix()
	if from > 0 {
		start = outboxKey(from)
	}
	b, err := s.readOutbox(ctx, start)
	if err != nil || len(b.keys) == 0 {
		return 0, 0, 0, wrapInternal(err, "read outbox")
	}
	hi = keycodec.Read(b.keys[len(b.keys)-1][len(OutboxPrefix()):]).Uint()
	seq, err := s.store.Sequence(DeliverySequence)
	if err != nil {
		return 0, 0, 0, wrapInternal(err, "dispatch outbox")
	}
	// The deliveries are made before the transaction, so that the first
	// POSTs of those whose notification id derives from their event's start
	// while it commits: should it fail, or the process die before it
	// commits, the event is fanned out again later and POSTed with the same
	// _id.
	now := s.clock.Now()
	plan, err := planDeliveries(ctx, seq, b, now)
	if err != nil {
		return 0, 0, 0, wrapInternal(err, "dispatch outbox")
	}
	fan := &fanOutBatch{done: make(chan struct{})}
	if s.queueEarly(plan, fan) {
		s.wakeStart()
	}
	moved, err = s.writeDeliveries(ctx, b.keys, plan, now)
	fan.ok = err == nil
	close(fan.done)
	if err != nil {
		return 0, 0, 0, wrapInternal(err, "dispatch outbox")
	}
	s.mu.Lock()
	for _, p := range plan {
		s.noteDue(p.d.ApplicationID, dueKey(p.d.ApplicationID, now, p.d.ID))
	}
	s.mu.Unlock()
	return len(b.keys), hi, moved, nil
}

// audience is a user and topic of an event: whose applications hear it.
type audience struct {
	user  int64
	topic string
}

// outboxBatch is a batch of the outbox: its keys and events, in order, and
// the subscribed applications of each user and topic in it.
type outboxBatch struct {
	keys        [][]byte
	events      []Event
	subscribers map[audience][]Application
}

// readOutbox reads a batch of the outbox from the key start on, and who
// subscribes to its events. The outbox and the subscriptions are read in a
// View first, so that a poll of an empty outbox writes nothing, and the
// Update does not open an iterator over its own pending writes (Badger sorts
// them for each).
func (s *Service) readOutbox(ctx context.Context, start []byte) (outboxBatch, error) {
	b := outboxBatch{subscribers: map[audience][]Application{}}
	err := s.store.View(ctx, func(tx storage.Tx) error {
		b.keys, b.events = b.keys[:0], b.events[:0]
		clear(b.subscribers)
		it := tx.Iterate(storage.Range{Start: start, End: storage.PrefixEnd(OutboxPrefix())})
		defer it.Close()
		for ; it.Valid() && len(b.keys) < dispatchBatch; it.Next() {
			v, err := it.Value()
			if err != nil {
				return err
			}
			ev, err := decodeEvent(v)
			if err != nil {
				// A record that cannot be read is dropped rather than
				// blocking every event behind it.
				ev = Event{}
			}
			b.keys = append(b.keys, append([]byte(nil), it.Key()...))
			b.events = append(b.events, ev)
			if ev.Topic != "" {
				b.subscribers[audience{ev.UserID, ev.Topic}] = nil
			}
		}
		for a := range b.subscribers {
			apps, err := subscribed(tx, a.user, a.topic)
			if err != nil {
				return err
			}
			b.subscribers[a] = apps
		}
		return nil
	})
	return b, err
}

// planDeliveries makes the deliveries of b's events, one per subscribed
// application, due at now, with ids drawn from seq; in the order of the
// events, which writeDeliveries relies on.
func planDeliveries(ctx context.Context, seq storage.Sequence, b outboxBatch, now time.Time) ([]planned, error) {
	var plan []planned
	for i, ev := range b.events {
		if ev.Topic == "" {
			continue
		}
		for _, app := range b.subscribers[audience{ev.UserID, ev.Topic}] {
			id, err := seq.Next(ctx)
			if err != nil {
				return nil, err
			}
			plan = append(plan, planned{event: i, app: app, d: Delivery{ID: id, NotificationID: notificationID(ev, app.ID),
				ApplicationID: app.ID, Event: ev, State: StatePending, NextAttempt: now}})
		}
	}
	return plan, nil
}

// writeDeliveries writes the deliveries of plan and their due keys, and
// deletes their events (keys) from the outbox, in one transaction. It
// returns the number of events moved: one that another loop has moved
// meanwhile is skipped with its deliveries.
func (s *Service) writeDeliveries(ctx context.Context, keys [][]byte, plan []planned, now time.Time) (int, error) {
	moved := 0
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		moved = 0
		next := 0
		if err := storage.Prefetch(tx, keys...); err != nil {
			return err
		}
		for i, k := range keys {
			// Read again in the transaction: another loop may have moved it.
			_, err := tx.Get(k)
			gone := errors.Is(err, storage.ErrNotFound)
			if err != nil && !gone {
				return err
			}
			for ; next < len(plan) && plan[next].event == i; next++ {
				if gone {
					continue
				}
				d := plan[next].d
				if err := kv.SetJSON(tx, deliveryKey(d.ID), d); err != nil {
					return err
				}
				if err := tx.Set(dueKey(d.ApplicationID, now, d.ID), nil); err != nil {
					return err
				}
			}
			if gone {
				continue
			}
			if err := tx.Delete(k); err != nil {
				return err
			}
			moved++
		}
		return nil
	})
	return moved, err
}

// planned is a delivery of the event at index event of a fan-out batch.
type planned struct {
	event int
	app   Application
	d     Delivery
}

// fanOutBatch is the transaction of a fan-out, for the deliveries POSTed
// before it committed: done is closed once it has ended, and ok says whether
// it committed.
type fanOutBatch struct {
	done chan struct{}
	ok   bool
}

// failed reports whether the fan-out has ended without committing.
func (f *fanOutBatch) failed() bool {
	if f == nil {
		return false
	}
	select {
	case <-f.done:
		return !f.ok
	default:
		return false
	}
}

// notificationNamespace derives the notification ids of an event's
// deliveries from the event's id.
var notificationNamespace = uuid.MustParse("0b1f6e36-5a3c-4f8e-9a57-2f5d8f0c7d41")

// notificationID is the _id of ev's notification to application app: derived
// from the event's id, so that a fan-out done again after a crash gives the
// same one; random for an event written without an id.
func notificationID(ev Event, app int64) string {
	if ev.ID == "" {
		return uuid.NewString()
	}
	return uuid.NewSHA1(notificationNamespace, fmt.Appendf(nil, "%s/%d", ev.ID, app)).String()
}

// subscribed returns the applications of user subscribed to topic. Only the
// owner's events reach an application (see docs/notifications.md).
func subscribed(tx storage.Tx, user int64, topic string) ([]Application, error) {
	var ids []int64
	p := ownerAppsPrefix(user)
	it := tx.Iterate(storage.Prefix(p))
	for ; it.Valid(); it.Next() {
		ids = append(ids, keycodec.Read(it.Key()[len(p):]).Int())
	}
	it.Close()
	var out []Application
	for _, id := range ids {
		app, err := getApp(tx, id)
		if err != nil {
			return nil, err
		}
		if app.Subscribed(topic) {
			out = append(out, app)
		}
	}
	return out, nil
}
