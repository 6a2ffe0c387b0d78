package notify

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/paging"
	"github.com/marketplace/marketplace/storage"
)

// MissedMessage is one entry of the missed feed: the notification as last
// sent, with that attempt's request and response.
type MissedMessage struct {
	Notification
	Request  Request  `json:"request"`
	Response Response `json:"response"`
}

// FeedQuery selects a page of an application's missed feed.
type FeedQuery struct {
	AppID  int64
	Topic  string // empty: every topic
	Offset int
	Limit  int
}

// MissedFeedsDefaultLimit is the public API's page size of the missed feed,
// for a request that gives no limit.
const MissedFeedsDefaultLimit = 10

// MissedFeeds returns the notifications of an application that were never
// acknowledged, oldest first, as long as they are kept (2 days). Only the
// application's owner may read them. The query is checked in a fixed order:
// the application id (positive), the window (package paging), the topic.
// Errors: Invalid, NotFound (no such application), Forbidden (caller is not
// the owner).
func (s *Service) MissedFeeds(ctx context.Context, caller int64, q FeedQuery) ([]MissedMessage, error) {
	if q.AppID <= 0 {
		return nil, errs.Invalidf("Invalid app_id: %d. It must be a positive integer", q.AppID)
	}
	if err := paging.Check(q.Offset, q.Limit); err != nil {
		return nil, err
	}
	if q.Topic != "" && !slices.Contains(Topics, q.Topic) {
		return nil, errs.Invalidf("Invalid topic: %q. Valid topics are: %s", q.Topic, strings.Join(Topics, ", "))
	}
	cutoff := s.clock.Now().Add(-retention)
	out := []MissedMessage{}
	err := s.store.View(ctx, func(tx storage.Tx) error {
		out = out[:0]
		app, err := getApp(tx, q.AppID)
		if err != nil {
			return err
		}
		if app.OwnerUserID != caller {
			return errs.Forbiddenf("The application %d does not belong to the caller", q.AppID)
		}
		prefix := missedPrefix(q.AppID)
		it := tx.Iterate(storage.Range{Start: keycodec.Key(prefix).Int(cutoff.UnixNano()), End: storage.PrefixEnd(prefix)})
		defer it.Close()
		skipped := 0
		for ; it.Valid() && len(out) < q.Limit; it.Next() {
			kr := keycodec.Read(it.Key()[len(prefix):])
			kr.Int()
			id := kr.Uint()
			var d Delivery
			if err := kv.GetJSON(tx, deliveryKey(id), &d); err != nil {
				continue
			}
			if q.Topic != "" && d.Event.Topic != q.Topic {
				continue
			}
			if skipped < q.Offset {
				skipped++
				continue
			}
			out = append(out, missedMessage(d))
		}
		return nil
	})
	if err != nil {
		return nil, wrapInternal(err, "read missed feeds")
	}
	return out, nil
}

func missedMessage(d Delivery) MissedMessage {
	m := MissedMessage{}
	if d.LastRequest != nil {
		m.Request = *d.LastRequest
		_ = json.Unmarshal(d.LastRequest.Data, &m.Notification)
	}
	if d.LastResponse != nil {
		m.Response = *d.LastResponse
	}
	if m.Request.Headers == nil {
		m.Request.Headers = map[string]string{}
	}
	if m.Response.Headers == nil {
		m.Response.Headers = map[string]string{}
	}
	return m
}

// Attempts returns a page of every POST made to application appID, newest
// first, and their total (attempts are kept 2 days). Errors: NotFound.
func (s *Service) Attempts(ctx context.Context, appID int64, offset, limit int) ([]Attempt, int, error) {
	if err := paging.Check(offset, limit); err != nil {
		return nil, 0, err
	}
	out := []Attempt{}
	total := 0
	err := s.store.View(ctx, func(tx storage.Tx) error {
		out, total = out[:0], 0
		if _, err := getApp(tx, appID); err != nil {
			return err
		}
		p := attemptPrefix(appID)
		it := tx.Iterate(storage.Range{Start: p, End: storage.PrefixEnd(p), Reverse: true})
		defer it.Close()
		for ; it.Valid(); it.Next() {
			total++
			if total <= offset || len(out) >= limit {
				continue
			}
			v, err := it.Value()
			if err != nil {
				return err
			}
			var a Attempt
			if err := json.Unmarshal(v, &a); err != nil {
				return err
			}
			out = append(out, a)
		}
		return nil
	})
	if err != nil {
		return nil, 0, wrapInternal(err, "list attempts")
	}
	return out, total, nil
}

// Prune deletes the missed deliveries and the attempt records older than
// the retention (2 days) by the clock. Errors: storage failures (Internal).
func (s *Service) Prune(ctx context.Context) error {
	cutoff := s.clock.Now().Add(-retention)
	var apps []int64
	err := s.store.View(ctx, func(tx storage.Tx) error {
		apps = apps[:0]
		it := tx.Iterate(storage.Prefix(appPrefix()))
		defer it.Close()
		for ; it.Valid(); it.Next() {
			apps = append(apps, keycodec.Read(it.Key()[len(appPrefix()):]).Int())
		}
		return nil
	})
	if err != nil {
		return wrapInternal(err, "prune")
	}
	for _, app := range apps {
		if err := s.pruneApp(ctx, app, cutoff); err != nil {
			return wrapInternal(err, "prune")
		}
	}
	return nil
}

// pruneBatch bounds the keys deleted in one transaction.
const pruneBatch = 512

// pruneApp deletes app's missed deliveries and attempts older than cutoff.
// What to delete is found in a View, so that a pass with nothing to prune
// writes nothing; the records it finds are never written again, so deleting
// them from a later transaction is safe.
func (s *Service) pruneApp(ctx context.Context, app int64, cutoff time.Time) error {
	for {
		var del [][]byte
		err := s.store.View(ctx, func(tx storage.Tx) error {
			del = del[:0]
			mp := missedPrefix(app)
			it := tx.Iterate(storage.Range{Start: mp, End: keycodec.Key(missedPrefix(app)).Int(cutoff.UnixNano())})
			for ; it.Valid() && len(del) < pruneBatch; it.Next() {
				k := append([]byte(nil), it.Key()...)
				kr := keycodec.Read(k[len(mp):])
				kr.Int()
				del = append(del, k, deliveryKey(kr.Uint()))
			}
			it.Close()
			ap := attemptPrefix(app)
			it = tx.Iterate(storage.Range{Start: ap, End: keycodec.Key(attemptPrefix(app)).Int(cutoff.UnixNano())})
			for ; it.Valid() && len(del) < 2*pruneBatch; it.Next() {
				del = append(del, append([]byte(nil), it.Key()...))
			}
			it.Close()
			return nil
		})
		if err != nil || len(del) == 0 {
			return err
		}
		err = s.store.Update(ctx, func(tx storage.Tx) error {
			for _, k := range del {
				if err := tx.Delete(k); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
}

// Pending returns the number of notifications not yet acknowledged nor
// missed: events still in the outbox (counted once, before fan-out) and
// deliveries waiting for an attempt. Errors: storage failures (Internal).
func (s *Service) Pending(ctx context.Context) (int, error) {
	n := 0
	err := s.store.View(ctx, func(tx storage.Tx) error {
		n = 0
		for _, p := range [][]byte{OutboxPrefix(), duePrefix()} {
			it := tx.Iterate(storage.Prefix(p))
			for ; it.Valid(); it.Next() {
				n++
			}
			it.Close()
		}
		return nil
	})
	return n, wrapInternal(err, "count pending")
}

// Oldest returns when the oldest notification not yet acknowledged nor
// missed was received (its event's time), and false when there is none. It
// reads every waiting delivery: meant for a metrics scrape, not a request.
// Errors: storage failures (Internal).
func (s *Service) Oldest(ctx context.Context) (time.Time, bool, error) {
	var oldest time.Time
	found := false
	note := func(t time.Time) {
		if !found || t.Before(oldest) {
			oldest, found = t, true
		}
	}
	err := s.store.View(ctx, func(tx storage.Tx) error {
		oldest, found = time.Time{}, false
		// Outbox keys are in append order: the first is the oldest event.
		it := tx.Iterate(storage.Prefix(OutboxPrefix()))
		if it.Valid() {
			if v, err := it.Value(); err == nil {
				if e, err := decodeEvent(v); err == nil {
					note(e.Received)
				}
			}
		}
		it.Close()
		it = tx.Iterate(storage.Prefix(duePrefix()))
		defer it.Close()
		for ; it.Valid(); it.Next() {
			// A due key ends with the delivery's id (dueKey).
			k := it.Key()
			if len(k) < 8 {
				continue
			}
			id := binary.BigEndian.Uint64(k[len(k)-8:])
			var d Delivery
			if err := kv.GetJSON(tx, deliveryKey(id), &d); err != nil {
				continue
			}
			note(d.Event.Received)
		}
		return nil
	})
	return oldest, found, wrapInternal(err, "oldest pending")
}
