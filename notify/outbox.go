// Package notify delivers notifications to applications. Domain packages
// write events into the outbox (Append) in the same transaction as the change
// they announce, so no change is acknowledged without its event; notify reads
// the outbox and delivers each event to the subscribed applications.
package notify

import (
	"context"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"marketplace/storage"
)

// TopicQuestions is the topic of question events.
const TopicQuestions = "questions"

// Event is a change that applications may be notified of.
type Event struct {
	// Seq is the event's position in the outbox, assigned by Append.
	Seq uint64 `json:"seq"`
	// ID is a random UUID given by Append; the _id of each notification of
	// the event derives from it and the application, so that it is the
	// same however often the event is fanned out (after a crash). Events
	// written before it existed have none and get random _ids.
	ID string `json:"id,omitempty"`
	// Topic is the notification topic, e.g. "questions".
	Topic string `json:"topic"`
	// UserID is the user concerned: the one whose applications are notified.
	UserID int64 `json:"user_id"`
	// Resource is the path of the element created or updated.
	Resource string `json:"resource"`
	// Action says what happened (created, answered, deleted, moderated...),
	// kept for the logs and the operator's views.
	Action string `json:"action"`
	// Received is when the change happened, by the service's clock.
	Received time.Time `json:"received"`
}

// Key layout of the outbox (the rest of notify's keys are in keys.go).
//
//	ntf/outbox/<seq>      -> Event (JSON), until notify has fanned it out
//
// seq comes from the store's OutboxSequence, taken inside the transaction of
// the change, so that concurrent changes write no common key. The outbox is
// read in seq order. Two changes of one resource are in order (the later
// transaction starts after the earlier one committed, so it draws a larger
// number); events of unrelated changes that commit at the same moment may be
// fanned out a little out of their numbers' order, since the loop takes
// whatever has committed.

// OutboxSequence names the sequence that numbers outbox events.
const OutboxSequence = "outbox"

func outboxKey(seq uint64) []byte { return storage.NewKey("ntf/outbox").Uint(seq) }

// OutboxPrefix is the key range of events not yet fanned out.
func OutboxPrefix() []byte { return storage.NewKey("ntf/outbox") }

// Append writes ev into the outbox inside tx, a transaction of store, and
// returns it with its Seq.
func Append(ctx context.Context, store storage.Store, tx storage.Tx, ev Event) (Event, error) {
	q, err := store.Sequence(OutboxSequence)
	if err != nil {
		return Event{}, err
	}
	seq, err := q.Next(ctx)
	if err != nil {
		return Event{}, err
	}
	ev.Seq = seq
	if ev.ID == "" {
		ev.ID = uuid.NewString()
	}
	if err := storage.SetJSON(tx, outboxKey(seq), ev); err != nil {
		return Event{}, err
	}
	wakeLoops(store)
	return ev, nil
}

// loops are the delivery loops running in this process, by store, so that
// Append can wake them rather than leave the event to their next poll.
var loops = struct {
	sync.RWMutex
	m map[storage.Store][]*Service
}{m: map[storage.Store][]*Service{}}

// watchAppends makes every Append on store wake s until cancel is called.
func watchAppends(store storage.Store, s *Service) (cancel func()) {
	if !reflect.TypeOf(store).Comparable() {
		// Not usable as a map key: the loop finds events at its polls.
		return func() {}
	}
	loops.Lock()
	loops.m[store] = append(loops.m[store], s)
	loops.Unlock()
	return func() {
		loops.Lock()
		defer loops.Unlock()
		ss := slices.DeleteFunc(loops.m[store], func(x *Service) bool { return x == s })
		if len(ss) == 0 {
			delete(loops.m, store)
		} else {
			loops.m[store] = ss
		}
	}
}

// wakeLoops wakes the delivery loops of store. Append calls it inside the
// change's transaction, before the commit: a loop that looks before the
// commit finds the event at its next poll (Options.PollInterval).
func wakeLoops(store storage.Store) {
	loops.RLock()
	defer loops.RUnlock()
	if len(loops.m) == 0 || !reflect.TypeOf(store).Comparable() {
		return
	}
	for _, s := range loops.m[store] {
		s.wakeForOutbox()
	}
}
