// Package notify delivers notifications to applications. Domain packages
// write events into the outbox (Append) in the same transaction as the change
// they announce, so no change is acknowledged without its event; notify reads
// the outbox and delivers each event to the subscribed applications.
package notify

import (
	"context"
	"encoding/binary"
	"errors"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/marketplace/marketplace/internal/binrec"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/storage"
)

// Topics of the events the domain packages write.
const (
	// TopicQuestions: a question asked, answered, deleted or moderated.
	TopicQuestions = "questions"
	// TopicOrders: an order created, paid, cancelled, or its shipment
	// delivered or not.
	TopicOrders = "orders_v2"
	// TopicShipments: a shipment created or moved to another status.
	TopicShipments = "shipments"
	// TopicItems: an item created, or anything in its JSON changed.
	TopicItems = "items"
	// TopicStockLocation: a store's quantity of a user product changed.
	TopicStockLocation = "stock-location"
	// TopicMessages: a post-sale message created (Action "created") or
	// read by its recipient (Action "read"); the resource is the
	// message's id, without a slash.
	TopicMessages = "messages"
	// TopicPostPurchase: a claim opened or its stage or status changed
	// (Action "claims"), or an action taken on it or its return (Action
	// "claims_actions").
	TopicPostPurchase = "post_purchase"
	// TopicOrdersFeedback: feedback on an order given or changed.
	TopicOrdersFeedback = "orders_feedback"
)

// subtopicTopics are the topics whose notifications carry the event's
// action in an "actions" array: an application filters on it.
var subtopicTopics = []string{TopicMessages, TopicPostPurchase}

// actionsOf is the "actions" array of a notification of ev: its action on
// a topic with subtopics, nothing on the others.
func actionsOf(ev Event) []string {
	if ev.Action == "" || !slices.Contains(subtopicTopics, ev.Topic) {
		return nil
	}
	return []string{ev.Action}
}

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
//	ntf/outbox/<seq>      -> Event (binary, see encodeEvent), until notify has fanned it out
//
// seq comes from the store's OutboxSequence, drawn for the change just
// before or inside its transaction, so that concurrent changes write no
// common key. The outbox is
// read in seq order. Two changes of one resource are in order (the later
// transaction starts after the earlier one committed, so it draws a larger
// number); events of unrelated changes that commit at the same moment may be
// fanned out a little out of their numbers' order, since the loop takes
// whatever has committed.

// eventForm is the first byte of an outbox record. Every ask and answer
// writes one and the fan-out reads it back, so it is binary rather than
// JSON; the first form was JSON (migration 7 rewrote it).
const eventForm = 2

var errCorruptEvent = errors.New("notify: corrupt outbox record")

func encodeEvent(ev Event) []byte {
	b := make([]byte, 0, 1+5*binary.MaxVarintLen64+len(ev.ID)+len(ev.Topic)+len(ev.Resource)+len(ev.Action)+3*binary.MaxVarintLen64)
	b = append(b, eventForm)
	b = binary.AppendUvarint(b, ev.Seq)
	b = binrec.AppendString(b, ev.ID)
	b = binrec.AppendString(b, ev.Topic)
	b = binary.AppendVarint(b, ev.UserID)
	b = binrec.AppendString(b, ev.Resource)
	b = binrec.AppendString(b, ev.Action)
	return binrec.AppendTime(b, ev.Received)
}

// DecodeEvent reads an outbox record (a value under OutboxPrefix), for the
// tools and tests that read the outbox themselves.
func DecodeEvent(b []byte) (Event, error) { return decodeEvent(b) }

func decodeEvent(b []byte) (Event, error) {
	if len(b) == 0 || b[0] != eventForm {
		return Event{}, errCorruptEvent
	}
	d := binrec.NewDecoder(b[1:])
	ev := Event{Seq: d.Uvarint(), ID: d.String(), Topic: d.String(), UserID: d.Varint(),
		Resource: d.String(), Action: d.String(), Received: d.Time()}
	if d.Done() != nil {
		return Event{}, errCorruptEvent
	}
	return ev, nil
}

// OutboxSequence names the sequence that numbers outbox events.
const OutboxSequence = "outbox"

func outboxKey(seq uint64) []byte { return keycodec.New("ntf/outbox").Uint(seq) }

// NextEventSeq draws the Seq of an event from store's OutboxSequence, for
// Append. A number drawn for a change that then fails is a gap in the
// outbox, which its readers allow.
func NextEventSeq(ctx context.Context, store storage.Store) (uint64, error) {
	q, err := store.Sequence(OutboxSequence)
	if err != nil {
		return 0, err
	}
	return q.Next(ctx)
}

// OutboxPrefix is the key range of events not yet fanned out.
func OutboxPrefix() []byte { return keycodec.New("ntf/outbox") }

// eventNumbers are event numbers drawn ahead with a transaction's first
// read (DrawEventNumbers), for the Appends of that transaction.
type eventNumbers struct {
	tx     storage.Tx
	values func() ([]uint64, error)
	used   int
}

type eventNumbersKey struct{}

// DrawEventNumbers queues the draw of n event numbers with tx's next read,
// where tx can draw in its own round trips (storage.TxDrawer: on
// PostgreSQL, no round trip of their own), and returns ctx carrying them:
// an Append into tx under that context takes the next of them rather than
// draw its own, and draws its own once they are spent. Numbers left
// unused are gaps in the outbox, which its readers allow. A function
// calls it before its first read; elsewhere it returns ctx as it is.
func DrawEventNumbers(ctx context.Context, tx storage.Tx, n int) context.Context {
	d, ok := tx.(storage.TxDrawer)
	if !ok || n <= 0 {
		return ctx
	}
	names := make([]string, n)
	for i := range names {
		names[i] = OutboxSequence
	}
	values, ok := d.DrawLater(names)
	if !ok {
		return ctx
	}
	return context.WithValue(ctx, eventNumbersKey{}, &eventNumbers{tx: tx, values: values})
}

// takeEventNumber returns the next number that ctx carries for tx, or
// false when it carries none left.
func takeEventNumber(ctx context.Context, tx storage.Tx) (uint64, bool, error) {
	nums, _ := ctx.Value(eventNumbersKey{}).(*eventNumbers)
	if nums == nil || nums.tx != tx {
		return 0, false, nil
	}
	values, err := nums.values()
	if err != nil {
		return 0, false, err
	}
	if nums.used == len(values) {
		return 0, false, nil
	}
	nums.used++
	return values[nums.used-1], true, nil
}

// Append writes ev into the outbox inside tx, a transaction of store, and
// returns it with its Seq. A zero ev.Seq is taken from the numbers that
// ctx carries (DrawEventNumbers), or drawn from OutboxSequence here; a
// caller may instead draw it before its transaction begins
// (NextEventSeq), so that the transaction does not wait for the draw.
func Append(ctx context.Context, store storage.Store, tx storage.Tx, ev Event) (Event, error) {
	if ev.Seq == 0 {
		seq, ok, err := takeEventNumber(ctx, tx)
		if err != nil {
			return Event{}, err
		}
		if !ok {
			if seq, err = NextEventSeq(ctx, store); err != nil {
				return Event{}, err
			}
		}
		ev.Seq = seq
	}
	if ev.ID == "" {
		ev.ID = uuid.NewString()
	}
	if err := tx.Set(outboxKey(ev.Seq), encodeEvent(ev)); err != nil {
		return Event{}, err
	}
	if !wakeLoops(store) {
		// The delivering process is another one, if any: it is told
		// when the change commits. (Announced only then: on PostgreSQL
		// the commits that notify take a lock, one after the other.)
		storage.Announce(tx, OutboxTopic)
	}
	return ev, nil
}

// OutboxTopic is announced (storage.Announce) by an Append in a process
// where no delivery loop runs on the store, so that the process that
// delivers, on another server, fans the event out at once.
const OutboxTopic = "notify/outbox"

// loops are the delivery loops running in this process, by store, so that
// Append can wake them rather than leave the event to their next poll.
var loops = struct {
	sync.RWMutex
	m map[storage.Store][]*Service
}{m: map[storage.Store][]*Service{}}

// loopKey is the store by which loops are kept: a store that wraps
// another (the engine's gate over the store its services use) is kept by
// the store beneath, so that an Append through any wrapper of a store, or
// through the store itself, wakes the loops of all of them.
func loopKey(store storage.Store) storage.Store {
	for {
		w, ok := store.(interface{ Unwrap() storage.Store })
		if !ok {
			return store
		}
		store = w.Unwrap()
	}
}

// watchAppends makes every Append on store wake s until cancel is called.
func watchAppends(store storage.Store, s *Service) (cancel func()) {
	store = loopKey(store)
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

// wakeLoops wakes the delivery loops of store and reports whether there
// were any. Append calls it inside the change's transaction, before the
// commit: a loop that looks before the commit finds the event at one of
// the reads that follow (recheckMax) or at its next poll
// (Options.PollInterval).
func wakeLoops(store storage.Store) bool {
	loops.RLock()
	defer loops.RUnlock()
	if len(loops.m) == 0 {
		return false
	}
	if store = loopKey(store); !reflect.TypeOf(store).Comparable() {
		return false
	}
	for _, s := range loops.m[store] {
		s.wakeForOutbox()
	}
	return len(loops.m[store]) > 0
}
