package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/google/uuid"

	"marketplace/storage"
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
	now := s.clock.Now()
	moved := 0
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		moved = 0
		var events []Event
		var keys [][]byte
		it := tx.Iterate(storage.Prefix(OutboxPrefix()))
		for ; it.Valid() && len(events) < dispatchBatch; it.Next() {
			v, err := it.Value()
			if err != nil {
				it.Close()
				return err
			}
			var ev Event
			if err := json.Unmarshal(v, &ev); err != nil {
				// A record that cannot be read is dropped rather than
				// blocking every event behind it.
				ev = Event{}
			}
			events = append(events, ev)
			keys = append(keys, append([]byte(nil), it.Key()...))
		}
		it.Close()
		for i, ev := range events {
			if ev.Topic != "" {
				if err := s.fanOut(ctx, tx, ev, now); err != nil {
					return err
				}
			}
			if err := tx.Delete(keys[i]); err != nil {
				return err
			}
			moved++
		}
		return nil
	})
	if err != nil {
		return 0, wrapInternal(err, "dispatch outbox")
	}
	return moved, nil
}

// fanOut writes one delivery per application of ev's user subscribed to its
// topic. Only the owner's events reach an application (see
// docs/notifications.md).
func (s *Service) fanOut(ctx context.Context, tx storage.Tx, ev Event, now time.Time) error {
	seq, err := s.store.Sequence(DeliverySequence)
	if err != nil {
		return err
	}
	var ids []int64
	it := tx.Iterate(storage.Prefix(ownerAppsPrefix(ev.UserID)))
	for ; it.Valid(); it.Next() {
		ids = append(ids, storage.ReadKey(it.Key()[len(ownerAppsPrefix(ev.UserID)):]).Int())
	}
	it.Close()
	for _, appID := range ids {
		app, err := getApp(tx, appID)
		if err != nil {
			return err
		}
		if !app.Subscribed(ev.Topic) {
			continue
		}
		id, err := seq.Next(ctx)
		if err != nil {
			return err
		}
		d := Delivery{ID: id, NotificationID: uuid.NewString(), ApplicationID: appID, Event: ev,
			State: StatePending, NextAttempt: now}
		if err := storage.SetJSON(tx, deliveryKey(id), d); err != nil {
			return err
		}
		if err := tx.Set(dueKey(appID, now, id), nil); err != nil {
			return err
		}
	}
	return nil
}

// maxResponseBody bounds the receiver's answer kept for the missed feed.
const maxResponseBody = 4 << 10

// attempt POSTs delivery id once and records the outcome. A POST cut short
// by ctx is not recorded, so the delivery stays due.
func (s *Service) attempt(ctx context.Context, id uint64) error {
	var d Delivery
	var app Application
	err := s.store.View(ctx, func(tx storage.Tx) error {
		if err := storage.GetJSON(tx, deliveryKey(id), &d); err != nil {
			return err
		}
		var err error
		app, err = getApp(tx, d.ApplicationID)
		return err
	})
	if errors.Is(err, storage.ErrNotFound) || (err == nil && d.State != StatePending) {
		return nil
	}
	if err != nil {
		return err
	}
	sent := s.clock.Now()
	if d.NextAttempt.After(sent) {
		// Claimed from a snapshot older than the record of the previous
		// attempt, which has rescheduled it: not due yet.
		return nil
	}
	n := Notification{ID: d.NotificationID, Topic: d.Event.Topic, Resource: d.Event.Resource,
		UserID: d.Event.UserID, ApplicationID: app.ID, Attempts: d.Attempts + 1,
		Sent: sent.UTC().Format(TimeLayout), Received: d.Event.Received.UTC().Format(TimeLayout)}
	body, err := json.Marshal(n)
	if err != nil {
		return err
	}
	req := Request{URL: app.CallbackURL, Data: body, Headers: map[string]string{
		"Content-Type":  "application/json",
		"User-Agent":    UserAgent,
		SignatureHeader: Sign(app.Secret, body),
	}}
	res := s.post(ctx, req)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	now := s.clock.Now()
	delay := s.backoff(d.Attempts + 1)
	return s.store.Update(context.WithoutCancel(ctx), func(tx storage.Tx) error {
		var cur Delivery
		if err := storage.GetJSON(tx, deliveryKey(id), &cur); err != nil {
			if errors.Is(err, storage.ErrNotFound) {
				return nil
			}
			return err
		}
		if cur.State != StatePending || cur.Attempts != d.Attempts {
			return nil
		}
		a := Attempt{NotificationID: cur.NotificationID, DeliveryID: id, ApplicationID: cur.ApplicationID,
			Topic: cur.Event.Topic, Resource: cur.Event.Resource, UserID: cur.Event.UserID,
			Attempt: cur.Attempts + 1, Sent: n.Sent, Request: req, Response: res}
		if err := tx.Delete(dueKey(cur.ApplicationID, cur.NextAttempt, id)); err != nil {
			return err
		}
		if cur.Attempts == 0 {
			cur.FirstAttempt = sent
		}
		cur.Attempts++
		cur.LastRequest, cur.LastResponse = &req, &res
		next := now.Add(delay)
		switch {
		case res.HTTPCode == http.StatusOK:
			a.Outcome = OutcomeAcknowledged
			if err := tx.Delete(deliveryKey(id)); err != nil {
				return err
			}
		case cur.Attempts >= MaxAttempts || next.After(cur.FirstAttempt.Add(retryWindow)):
			a.Outcome = OutcomeMissed
			cur.State, cur.MissedAt = StateMissed, now
			if err := tx.Set(missedKey(cur.ApplicationID, now, id), nil); err != nil {
				return err
			}
			if err := storage.SetJSON(tx, deliveryKey(id), cur); err != nil {
				return err
			}
		default:
			a.Outcome = OutcomeRetry
			a.NextAttempt = next.UTC().Format(TimeLayout)
			cur.NextAttempt = next
			if err := tx.Set(dueKey(cur.ApplicationID, next, id), nil); err != nil {
				return err
			}
			if err := storage.SetJSON(tx, deliveryKey(id), cur); err != nil {
				return err
			}
		}
		return storage.SetJSON(tx, attemptKey(cur.ApplicationID, sent, id, a.Attempt), a)
	})
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
	// req_time is how long the receiver really took, so it is measured on
	// the wall clock, not the engine's (which a manual clock may freeze).
	start := time.Now()
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
		res.ReqTime = time.Since(start).Milliseconds()
		res.Error = err.Error()
		return res
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
	// Drain a little more so that the connection can be reused.
	_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
	resp.Body.Close()
	res.ReqTime = time.Since(start).Milliseconds()
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
