package notify

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
)

// Redeliver POSTs the notification of delivery id of application appID once
// more, now, to the application's current callback URL and signed with its
// current secret, whether it was acknowledged or missed, and records the
// POST as the delivery's next attempt (Redelivery set). A redelivery is
// never retried: its outcome is acknowledged (a 200) or missed. A missed
// delivery that a redelivery gets acknowledged leaves the missed feed.
//
// The notification is the one first sent: the same _id, topic, resource
// and received time; attempts and sent are those of the new attempt.
//
// Errors: NotFound (no such application, or no delivery id of it, or its
// records are past the retention), Conflict (the delivery is still pending:
// the delivery loop is retrying it), Internal.
func (s *Service) Redeliver(ctx context.Context, appID int64, id uint64) (Attempt, error) {
	var app Application
	var n Notification
	err := s.store.View(ctx, func(tx storage.Tx) error {
		var err error
		if app, err = getApp(tx, appID); err != nil {
			return err
		}
		n, err = redeliverable(tx, appID, id)
		return err
	})
	if err != nil {
		return Attempt{}, wrapInternal(err, "read delivery")
	}
	sent := s.clock.Now()
	n.ApplicationID = app.ID
	n.Attempts++
	n.Sent = sent.UTC().Format(TimeLayout)
	body, err := json.Marshal(n)
	if err != nil {
		return Attempt{}, wrapInternal(err, "encode notification")
	}
	req := Request{URL: app.CallbackURL, Data: body, Headers: map[string]string{
		"Content-Type":  "application/json",
		"User-Agent":    UserAgent,
		SignatureHeader: Sign(app.Secret, body),
	}}
	res := s.post(ctx, req)
	var a Attempt
	err = s.store.Update(context.WithoutCancel(ctx), func(tx storage.Tx) error {
		a = Attempt{NotificationID: n.ID, DeliveryID: id, ApplicationID: appID, Topic: n.Topic,
			Resource: n.Resource, UserID: n.UserID, Sent: n.Sent, Request: req, Response: res,
			Outcome: OutcomeMissed, Redelivery: true}
		if res.HTTPCode == http.StatusOK {
			a.Outcome = OutcomeAcknowledged
		}
		// Numbered in the transaction, so that two redeliveries at once
		// are two attempts.
		last, err := lastAttempt(tx, appID, id)
		if err != nil {
			return err
		}
		a.Attempt = last + 1
		var d Delivery
		err = kv.GetJSON(tx, deliveryKey(id), &d)
		switch {
		case errors.Is(err, storage.ErrNotFound):
		case err != nil:
			return err
		case d.State == StateMissed:
			a.Attempt = max(a.Attempt, d.Attempts+1)
			if a.Outcome == OutcomeAcknowledged {
				if err := tx.Delete(missedKey(appID, d.MissedAt, id)); err != nil {
					return err
				}
				if err := tx.Delete(deliveryKey(id)); err != nil {
					return err
				}
				break
			}
			d.Attempts = a.Attempt
			d.LastRequest, d.LastResponse = &req, &res
			if err := kv.SetJSON(tx, deliveryKey(id), d); err != nil {
				return err
			}
		}
		return kv.SetJSON(tx, attemptKey(appID, sent, id, a.Attempt), a)
	})
	if err != nil {
		return Attempt{}, wrapInternal(err, "record redelivery")
	}
	return a, nil
}

// redeliverable returns the notification of delivery id of app as last
// sent, with the number of attempts made.
func redeliverable(tx storage.Tx, app int64, id uint64) (Notification, error) {
	var d Delivery
	err := kv.GetJSON(tx, deliveryKey(id), &d)
	if err == nil && d.ApplicationID == app {
		if d.State == StatePending {
			return Notification{}, errs.Conflictf("Delivery %d is still pending: it is being retried", id)
		}
		return Notification{ID: d.NotificationID, Topic: d.Event.Topic, Resource: d.Event.Resource,
			UserID: d.Event.UserID, Actions: actionsOf(d.Event), Attempts: d.Attempts, Received: d.Event.Received.UTC().Format(TimeLayout)}, nil
	}
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return Notification{}, err
	}
	// Acknowledged: the delivery is gone, its attempts remain.
	a, found, err := latestAttempt(tx, app, id)
	if err != nil {
		return Notification{}, err
	}
	if !found {
		return Notification{}, errs.NotFoundf("Delivery %d of application %d not found", id, app)
	}
	var n Notification
	if err := json.Unmarshal(a.Request.Data, &n); err != nil {
		return Notification{}, err
	}
	n.Attempts = a.Attempt
	return n, nil
}

// lastAttempt returns the highest attempt number of delivery id of app (0
// when there is none).
func lastAttempt(tx storage.Tx, app int64, id uint64) (int, error) {
	a, found, err := latestAttempt(tx, app, id)
	if err != nil || !found {
		return 0, err
	}
	return a.Attempt, nil
}

// latestAttempt returns the attempt of delivery id of app with the highest
// number. Attempts are keyed by time first, so all of the application's
// are walked; the retention keeps them to two days.
func latestAttempt(tx storage.Tx, app int64, id uint64) (Attempt, bool, error) {
	p := attemptPrefix(app)
	var keys [][]byte
	it := tx.Iterate(storage.Prefix(p))
	for ; it.Valid(); it.Next() {
		r := keycodec.Read(it.Key()[len(p):])
		r.Int()
		if r.Uint() == id && r.Err() == nil {
			keys = append(keys, append([]byte(nil), it.Key()...))
		}
	}
	it.Close()
	var best Attempt
	found := false
	for _, k := range keys {
		var a Attempt
		if err := kv.GetJSON(tx, k, &a); err != nil {
			return Attempt{}, false, err
		}
		if !found || a.Attempt > best.Attempt {
			best, found = a, true
		}
	}
	return best, found, nil
}
