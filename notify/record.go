package notify

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
)

// dueNote is a due key written for app.
type dueNote struct {
	app int64
	key []byte
}

// recordBatch bounds the outcomes recorded in one transaction.
const recordBatch = 256

// recorder records the outcomes of the loop's POSTs: it takes whatever has
// arrived, up to recordBatch, and records it in one Update, so that
// concurrent POSTs share a commit (and, on a durable store, its sync) rather
// than each waiting for its own.
type recorder struct {
	s    *Service
	in   chan outcome
	done chan struct{}

	mu  sync.Mutex
	err error
}

func (s *Service) startRecorder() *recorder {
	r := &recorder{s: s, in: make(chan outcome, recordBatch), done: make(chan struct{})}
	go r.run()
	return r
}

func (r *recorder) run() {
	defer close(r.done)
	batch := make([]outcome, 0, recordBatch)
	for o := range r.in {
		batch = append(batch[:0], o)
	more:
		for len(batch) < recordBatch {
			select {
			case o, ok := <-r.in:
				if !ok {
					break more
				}
				batch = append(batch, o)
			default:
				break more
			}
		}
		// The loop's context may have ended: what was sent is recorded all
		// the same.
		if err := r.s.record(context.Background(), batch); err != nil {
			r.mu.Lock()
			r.err = err
			r.mu.Unlock()
		}
	}
}

// takeErr returns and forgets the last failure to record.
func (r *recorder) takeErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	err := r.err
	r.err = nil
	return err
}

// close records what has arrived and stops the recorder. Every sender must
// be done.
func (r *recorder) close() {
	close(r.in)
	<-r.done
}

// record writes the outcomes of batch in one transaction and releases their
// claims. An outcome whose delivery has changed since it was read (recorded
// by someone else) is left out. When the transaction fails nothing is
// recorded, and the deliveries stay due: they will be sent again.
func (s *Service) record(ctx context.Context, batch []outcome) error {
	// A delivery POSTed while its fan-out was committing is recorded once
	// that commit is done; if it failed there is nothing to record (the
	// event is still in the outbox).
	kept := batch[:0]
	for _, o := range batch {
		if o.fan != nil {
			<-o.fan.done
			if !o.fan.ok {
				s.mu.Lock()
				delete(s.claimed, o.d.ID)
				s.mu.Unlock()
				continue
			}
		}
		kept = append(kept, o)
	}
	batch = kept
	if len(batch) == 0 {
		return nil
	}
	var due []dueNote
	fence := s.fence.Load()
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		due = due[:0]
		if fence != nil && *fence != nil {
			if err := (*fence)(tx); err != nil {
				return err
			}
		}
		for i := range batch {
			k, err := recordOutcome(tx, &batch[i])
			if err != nil {
				return err
			}
			if k != nil {
				due = append(due, dueNote{app: batch[i].d.ApplicationID, key: k})
			}
		}
		return nil
	})
	s.mu.Lock()
	for _, o := range batch {
		delete(s.claimed, o.d.ID)
		if err != nil {
			s.noteDue(o.d.ApplicationID, dueKey(o.d.ApplicationID, o.d.NextAttempt, o.d.ID))
		}
	}
	for _, d := range due {
		s.noteDue(d.app, d.key)
	}
	s.mu.Unlock()
	s.Wake()
	return wrapInternal(err, "record attempts")
}

// recordOutcome records o in tx: the attempt, and the delivery acknowledged
// (deleted), rescheduled or missed. It returns the new due key of a
// rescheduled delivery.
func recordOutcome(tx storage.Tx, o *outcome) ([]byte, error) {
	id := o.d.ID
	var cur Delivery
	if err := kv.GetJSON(tx, deliveryKey(id), &cur); err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return nil, nil
		}
		return nil, err
	}
	if cur.State != StatePending || cur.Attempts != o.d.Attempts {
		return nil, nil
	}
	req, res := o.req, o.res
	a := Attempt{NotificationID: cur.NotificationID, DeliveryID: id, ApplicationID: cur.ApplicationID,
		Topic: cur.Event.Topic, Resource: cur.Event.Resource, UserID: cur.Event.UserID,
		Attempt: cur.Attempts + 1, Sent: o.sent.UTC().Format(TimeLayout), Request: req, Response: res}
	if err := tx.Delete(dueKey(cur.ApplicationID, cur.NextAttempt, id)); err != nil {
		return nil, err
	}
	if cur.Attempts == 0 {
		cur.FirstAttempt = o.sent
	}
	cur.Attempts++
	cur.LastRequest, cur.LastResponse = &req, &res
	next := o.now.Add(o.delay)
	var due []byte
	switch {
	case res.HTTPCode == http.StatusOK:
		a.Outcome = OutcomeAcknowledged
		if err := tx.Delete(deliveryKey(id)); err != nil {
			return nil, err
		}
	case cur.Attempts >= MaxAttempts || next.After(cur.FirstAttempt.Add(retryWindow)):
		a.Outcome = OutcomeMissed
		cur.State, cur.MissedAt = StateMissed, o.now
		if err := tx.Set(missedKey(cur.ApplicationID, o.now, id), nil); err != nil {
			return nil, err
		}
		if err := kv.SetJSON(tx, deliveryKey(id), cur); err != nil {
			return nil, err
		}
	default:
		a.Outcome = OutcomeRetry
		a.NextAttempt = next.UTC().Format(TimeLayout)
		cur.NextAttempt = next
		due = dueKey(cur.ApplicationID, next, id)
		if err := tx.Set(due, nil); err != nil {
			return nil, err
		}
		if err := kv.SetJSON(tx, deliveryKey(id), cur); err != nil {
			return nil, err
		}
	}
	return due, kv.SetJSON(tx, attemptKey(cur.ApplicationID, o.sent, id, a.Attempt), a)
}
