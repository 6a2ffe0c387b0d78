package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
)

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
	n.Actions = actionsOf(j.d.Event)
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
