package notify_test

import (
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/notify"
)

func TestRedeliver_MissedNotificationIsSentAgainAndLeavesTheMissedFeedWhenAcknowledged(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, notify.Options{})
	var answer atomic.Int64
	answer.Store(http.StatusInternalServerError)
	r := newReceiver(t, func(int) int { return int(answer.Load()) })
	owner := e.mustUser()
	app := e.mustApp(owner, r.URL)
	e.emit(owner, "/questions/1")
	e.runFor(2 * time.Hour)
	missed, err := e.m.Notify.MissedFeeds(e.ctx, owner, notify.FeedQuery{AppID: app.ID, Limit: 10})
	is.NoErr(err)
	is.Equal(len(missed), 1)
	attempts, _, err := e.m.Notify.Attempts(e.ctx, app.ID, 0, 1)
	is.NoErr(err)
	last := attempts[0]
	is.Equal(last.Outcome, notify.OutcomeMissed)
	before := len(r.got())

	// Still failing: a new attempt, missed again, the delivery stays missed.
	a, err := e.m.Notify.Redeliver(e.ctx, app.ID, last.DeliveryID)
	is.NoErr(err)
	is.Equal(a.Attempt, last.Attempt+1)
	is.Equal(a.Outcome, notify.OutcomeMissed)
	is.True(a.Redelivery)
	is.Equal(len(r.got()), before+1)

	answer.Store(http.StatusOK)
	e.advance(time.Second)
	a, err = e.m.Notify.Redeliver(e.ctx, app.ID, last.DeliveryID)
	is.NoErr(err)
	is.Equal(a.Attempt, last.Attempt+2)
	is.Equal(a.Outcome, notify.OutcomeAcknowledged)
	hit := r.got()[len(r.got())-1]
	is.Equal(hit.Body.ID, last.NotificationID) // the same notification
	is.Equal(hit.Body.Attempts, last.Attempt+2)
	is.Equal(hit.Body.Resource, "/questions/1")
	is.True(notify.Verify(app.Secret, hit.Raw, hit.Header.Get(notify.SignatureHeader))) // signed like the others
	missed, err = e.m.Notify.MissedFeeds(e.ctx, owner, notify.FeedQuery{AppID: app.ID, Limit: 10})
	is.NoErr(err)
	is.Equal(len(missed), 0) // acknowledged: no longer missed

	// Delivered: it can be sent again, as a further attempt.
	e.advance(time.Second)
	a, err = e.m.Notify.Redeliver(e.ctx, app.ID, last.DeliveryID)
	is.NoErr(err)
	is.Equal(a.Attempt, last.Attempt+3)
	is.Equal(a.Outcome, notify.OutcomeAcknowledged)
	_, total, err := e.m.Notify.Attempts(e.ctx, app.ID, 0, 1)
	is.NoErr(err)
	is.Equal(total, last.Attempt+3) // each redelivery is recorded like the others
}

func TestRedeliver_AcknowledgedNotificationIsSentAgain(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, notify.Options{})
	r := newReceiver(t, always(http.StatusOK))
	owner := e.mustUser()
	app := e.mustApp(owner, r.URL)
	e.emit(owner, "/questions/7")
	e.process()
	attempts, _, err := e.m.Notify.Attempts(e.ctx, app.ID, 0, 1)
	is.NoErr(err)
	is.Equal(attempts[0].Outcome, notify.OutcomeAcknowledged)
	a, err := e.m.Notify.Redeliver(e.ctx, app.ID, attempts[0].DeliveryID)
	is.NoErr(err)
	is.Equal(a.Attempt, 2)
	is.Equal(len(r.got()), 2)
	is.Equal(r.got()[1].Body.ID, r.got()[0].Body.ID)
	is.Equal(r.got()[1].Body.Received, r.got()[0].Body.Received)
}

func TestRedeliver_Errors(t *testing.T) {
	e := newEnv(t, notify.Options{})
	r := newReceiver(t, always(http.StatusInternalServerError))
	owner := e.mustUser()
	app := e.mustApp(owner, r.URL)
	e.emit(owner, "/questions/1")
	e.process() // one failed attempt: pending, to be retried
	attempts, _, err := e.m.Notify.Attempts(e.ctx, app.ID, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	pending := attempts[0].DeliveryID
	for _, tc := range []struct {
		name     string
		app      int64
		delivery uint64
		kind     errs.Kind
		msg      string
	}{
		{"ErrPending", app.ID, pending, errs.Conflict, "Delivery " + strconv.FormatUint(pending, 10) + " is still pending: it is being retried"},
		{"ErrNoDelivery", app.ID, pending + 100, errs.NotFound, "Delivery " + strconv.FormatUint(pending+100, 10) + " of application " + strconv.FormatInt(app.ID, 10) + " not found"},
		{"ErrOtherApplication", app.ID + 1, pending, errs.NotFound, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.m.Notify.Redeliver(e.ctx, tc.app, tc.delivery)
			de := errs.As(err)
			if de == nil || de.Kind != tc.kind || (tc.msg != "" && de.Message != tc.msg) {
				t.Fatalf("err = %v, want %v %q", err, tc.kind, tc.msg)
			}
		})
	}
	if got := len(r.got()); got != 1 {
		t.Fatalf("a refused redelivery POSTed: %d POSTs", got)
	}
}
