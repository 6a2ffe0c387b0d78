package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
)

// Notification is the JSON body POSTed to a callback URL: the spec's
// Notification object plus the public API's _id, application_id and
// attempts.
type Notification struct {
	ID            string `json:"_id"`
	Topic         string `json:"topic"`
	Resource      string `json:"resource"`
	UserID        int64  `json:"user_id"`
	ApplicationID int64  `json:"application_id"`
	Attempts      int    `json:"attempts"`
	Sent          string `json:"sent"`
	Received      string `json:"received"`
}

// Request is what was sent in an attempt.
type Request struct {
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	Data    json.RawMessage   `json:"data"`
}

// Response is what the receiver answered in an attempt. HTTPCode is 0 when
// there was no answer (refused, timed out); Error then says why.
type Response struct {
	// ReqTime is how long the POST took, in milliseconds.
	ReqTime  int64             `json:"req_time"`
	HTTPCode int               `json:"http_code"`
	Body     string            `json:"body"`
	Headers  map[string]string `json:"headers"`
	Error    string            `json:"error,omitempty"`
}

// Delivery states.
const (
	StatePending = "pending"
	StateMissed  = "missed"
)

// Delivery is one event on its way to one application.
type Delivery struct {
	ID             uint64    `json:"id"`
	NotificationID string    `json:"_id"`
	ApplicationID  int64     `json:"application_id"`
	Event          Event     `json:"event"`
	State          string    `json:"state"`
	Attempts       int       `json:"attempts"`
	FirstAttempt   time.Time `json:"first_attempt"`
	NextAttempt    time.Time `json:"next_attempt"`
	MissedAt       time.Time `json:"missed_at"`
	LastRequest    *Request  `json:"last_request,omitempty"`
	LastResponse   *Response `json:"last_response,omitempty"`
}

// Attempt is one POST of a notification, as the operator lists them.
type Attempt struct {
	NotificationID string   `json:"_id"`
	DeliveryID     uint64   `json:"delivery_id"`
	ApplicationID  int64    `json:"application_id"`
	Topic          string   `json:"topic"`
	Resource       string   `json:"resource"`
	UserID         int64    `json:"user_id"`
	Attempt        int      `json:"attempt"`
	Sent           string   `json:"sent"`
	Request        Request  `json:"request"`
	Response       Response `json:"response"`
	// Outcome is acknowledged, retry or missed.
	Outcome     string `json:"outcome"`
	NextAttempt string `json:"next_attempt,omitempty"`
	// Redelivery marks an attempt the operator asked for (Redeliver).
	Redelivery bool `json:"redelivery,omitempty"`
}

// Attempt outcomes.
const (
	OutcomeAcknowledged = "acknowledged"
	OutcomeRetry        = "retry"
	OutcomeMissed       = "missed"
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
	// The outbox and the subscriptions are read in a View first, so that a
	// poll of an empty outbox writes nothing, and the Update does not open
	// an iterator over its own pending writes (Badger sorts them for each).
	var keys [][]byte
	var events []Event
	// The subscribed applications of each user and topic in the batch.
	type audience struct {
		user  int64
		topic string
	}
	subscribers := map[audience][]Application{}
	start := OutboxPrefix()
	if from > 0 {
		start = outboxKey(from)
	}
	err = s.store.View(ctx, func(tx storage.Tx) error {
		keys, events = keys[:0], events[:0]
		clear(subscribers)
		it := tx.Iterate(storage.Range{Start: start, End: storage.PrefixEnd(OutboxPrefix())})
		defer it.Close()
		for ; it.Valid() && len(keys) < dispatchBatch; it.Next() {
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
			keys = append(keys, append([]byte(nil), it.Key()...))
			events = append(events, ev)
			if ev.Topic != "" {
				subscribers[audience{ev.UserID, ev.Topic}] = nil
			}
		}
		for a := range subscribers {
			apps, err := subscribed(tx, a.user, a.topic)
			if err != nil {
				return err
			}
			subscribers[a] = apps
		}
		return nil
	})
	if err != nil || len(keys) == 0 {
		return 0, 0, 0, wrapInternal(err, "read outbox")
	}
	hi = keycodec.Read(keys[len(keys)-1][len(OutboxPrefix()):]).Uint()
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
	var plan []planned
	for i, ev := range events {
		if ev.Topic == "" {
			continue
		}
		for _, app := range subscribers[audience{ev.UserID, ev.Topic}] {
			id, err := seq.Next(ctx)
			if err != nil {
				return 0, 0, 0, wrapInternal(err, "dispatch outbox")
			}
			plan = append(plan, planned{event: i, app: app, d: Delivery{ID: id, NotificationID: notificationID(ev, app.ID),
				ApplicationID: app.ID, Event: ev, State: StatePending, NextAttempt: now}})
		}
	}
	fan := &fanOutBatch{done: make(chan struct{})}
	if s.queueEarly(plan, fan) {
		s.wakeStart()
	}
	err = s.store.Update(ctx, func(tx storage.Tx) error {
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
	return len(keys), hi, moved, nil
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

// dueNote is a due key written for app.
type dueNote struct {
	app int64
	key []byte
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

// maxResponseBody bounds the receiver's answer kept for the missed feed.
const maxResponseBody = 4 << 10

// outcome is one POST of a delivery, ready to be recorded.
type outcome struct {
	job
	req  Request
	res  Response
	sent time.Time // clock time of the POST
	now  time.Time // clock time of its answer
	// delay is the wait before a retry, should this attempt fail.
	delay time.Duration
}

// send POSTs j once. It reports false, sending nothing, when j is not due
// by the clock, and false when ctx ended during the POST: a POST cut short
// is not recorded, so the delivery stays due.
func (s *Service) send(ctx context.Context, j job) (outcome, bool) {
	sent := s.clock.Now()
	if j.d.NextAttempt.After(sent) {
		return outcome{}, false
	}
	n := Notification{ID: j.d.NotificationID, Topic: j.d.Event.Topic, Resource: j.d.Event.Resource,
		UserID: j.d.Event.UserID, ApplicationID: j.app.ID, Attempts: j.d.Attempts + 1,
		Sent: sent.UTC().Format(TimeLayout), Received: j.d.Event.Received.UTC().Format(TimeLayout)}
	body, err := json.Marshal(n)
	if err != nil {
		return outcome{}, false
	}
	req := Request{URL: j.app.CallbackURL, Data: body, Headers: map[string]string{
		"Content-Type":  "application/json",
		"User-Agent":    UserAgent,
		SignatureHeader: Sign(j.app.Secret, body),
	}}
	res := s.post(ctx, req)
	if ctx.Err() != nil {
		return outcome{}, false
	}
	if s.opts.OnAttempt != nil {
		switch {
		case res.Error != "" || res.HTTPCode == 0:
			s.opts.OnAttempt(AttemptFailed)
		case res.HTTPCode == http.StatusOK:
			s.opts.OnAttempt(AttemptAcked)
		default:
			s.opts.OnAttempt(AttemptRefused)
		}
	}
	return outcome{job: j, req: req, res: res, sent: sent, now: s.clock.Now(), delay: s.backoff(j.d.Attempts + 1)}, true
}

// attempt POSTs delivery id once and records the outcome, as the loop does
// once it has claimed it. A POST cut short by ctx is not recorded, so the
// delivery stays due.
func (s *Service) attempt(ctx context.Context, id uint64) error {
	var j job
	err := s.store.View(ctx, func(tx storage.Tx) error {
		if err := kv.GetJSON(tx, deliveryKey(id), &j.d); err != nil {
			return err
		}
		var err error
		j.app, err = getApp(tx, j.d.ApplicationID)
		return err
	})
	if errors.Is(err, storage.ErrNotFound) || (err == nil && j.d.State != StatePending) {
		return nil
	}
	if err != nil {
		return err
	}
	o, ok := s.send(ctx, j)
	if !ok {
		return ctx.Err()
	}
	return s.record(context.WithoutCancel(ctx), []outcome{o})
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

// backoff is the delay after the n-th failed attempt: retryBase doubled
// n-1 times, times a jitter factor in [0.75, 1.25) so that receivers coming
// back from an outage are not hit by every retry at once.
func (s *Service) backoff(n int) time.Duration {
	d := retryBase << (n - 1)
	return time.Duration(float64(d) * (0.75 + 0.5*s.jitter()))
}

// post sends req and describes the answer.
func (s *Service) post(ctx context.Context, req Request) Response {
	// req_time is how long the receiver really took, so it is measured in
	// real time, not on the engine's clock (which a manual clock may freeze).
	start := s.wall.Now()
	res := Response{Headers: map[string]string{}}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, req.URL, bytes.NewReader(req.Data))
	if err != nil {
		res.Error = err.Error()
		return res
	}
	for k, v := range req.Headers {
		hr.Header.Set(k, v)
	}
	resp, err := s.client.Do(hr)
	if err != nil {
		res.ReqTime = s.wall.Now().Sub(start).Milliseconds()
		res.Error = err.Error()
		return res
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
	// Drain a little more so that the connection can be reused.
	_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
	resp.Body.Close()
	res.ReqTime = s.wall.Now().Sub(start).Milliseconds()
	res.HTTPCode = resp.StatusCode
	res.Body = string(b)
	for k, v := range resp.Header {
		if len(v) > 0 {
			res.Headers[k] = v[0]
		}
	}
	return res
}

// Sign returns the value of the signature header for body: "sha256=" and
// the hex HMAC-SHA256 of body keyed with secret.
func Sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// Verify reports whether signature is the signature of body with secret, in
// constant time. Receivers written in Go can use it as it is.
func Verify(secret string, body []byte, signature string) bool {
	return hmac.Equal([]byte(Sign(secret, body)), []byte(signature))
}
