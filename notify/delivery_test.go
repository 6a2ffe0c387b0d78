package notify_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/storage/badger"
)

func TestDelivery_AcknowledgedOnFirstTry(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, notify.Options{})
	rcv := newReceiver(t, always(http.StatusOK))
	seller := e.mustUser()
	app := e.mustApp(seller, rcv.URL+"/hook")
	received := e.clock.Now()
	e.emit(seller, "/questions/42")
	e.advance(1500 * time.Millisecond)

	is.Equal(e.process(), 1) // one POST
	got := rcv.got()
	is.Equal(len(got), 1)
	n := got[0].Body
	is.True(n.ID != "")
	is.Equal(n.Topic, "questions")
	is.Equal(n.Resource, "/questions/42")
	is.Equal(n.UserID, seller)
	is.Equal(n.ApplicationID, app.ID)
	is.Equal(n.Attempts, 1)
	is.Equal(n.Received, received.UTC().Format("2006-01-02T15:04:05.000Z"))
	is.Equal(n.Sent, "2026-03-04T15:00:01.500Z")

	// Acknowledged: nothing more is sent, however far the clock moves.
	e.advance(2 * time.Hour)
	is.Equal(e.process(), 0)
	is.Equal(len(rcv.got()), 1)
	attempts, total, err := e.m.Notify.Attempts(e.ctx, app.ID, 0, 50)
	is.NoErr(err)
	is.Equal(total, 1)
	is.Equal(attempts[0].Outcome, notify.OutcomeAcknowledged)
	is.Equal(attempts[0].Response.HTTPCode, 200)
	missed, err := e.m.Notify.MissedFeeds(e.ctx, seller, notify.FeedQuery{AppID: app.ID, Limit: 10})
	is.NoErr(err)
	is.Equal(len(missed), 0)
}

func TestDelivery_BodyHasExactlyTheDocumentedFields(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, notify.Options{})
	rcv := newReceiver(t, always(http.StatusOK))
	seller := e.mustUser()
	e.mustApp(seller, rcv.URL)
	e.emit(seller, "/questions/1")
	e.process()
	var fields map[string]any
	is.NoErr(json.Unmarshal(rcv.got()[0].Raw, &fields))
	is.Equal(len(fields), 8) // _id, topic, resource, user_id, application_id, attempts, sent, received
	for _, k := range []string{"_id", "topic", "resource", "user_id", "application_id", "attempts", "sent", "received"} {
		_, ok := fields[k]
		is.True(ok) // field present
	}
	h := rcv.got()[0].Header
	is.Equal(h.Get("Content-Type"), "application/json")
	is.Equal(h.Get("User-Agent"), notify.UserAgent)
}

func TestDelivery_FailingTwiceThen200IsAcknowledgedOnTheThirdAttempt(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, notify.Options{})
	rcv := newReceiver(t, failing(2, http.StatusInternalServerError))
	seller := e.mustUser()
	app := e.mustApp(seller, rcv.URL)
	e.emit(seller, "/questions/7")

	is.Equal(e.process(), 1)
	is.Equal(e.process(), 0) // the retry waits for the clock
	e.advance(20 * time.Minute)
	is.Equal(e.process(), 1)
	e.advance(20 * time.Minute)
	is.Equal(e.process(), 1)
	e.advance(2 * time.Hour)
	is.Equal(e.process(), 0) // acknowledged: no fourth POST

	got := rcv.got()
	is.Equal(len(got), 3)
	for i, h := range got {
		is.Equal(h.Body.Attempts, i+1)      // attempts counts the POSTs
		is.Equal(h.Body.ID, got[0].Body.ID) // one notification, one _id
		is.Equal(h.Body.Received, got[0].Body.Received)
	}
	attempts, total, err := e.m.Notify.Attempts(e.ctx, app.ID, 0, 50)
	is.NoErr(err)
	is.Equal(total, 3)
	is.Equal(attempts[0].Outcome, notify.OutcomeAcknowledged) // newest first
	is.Equal(attempts[1].Outcome, notify.OutcomeRetry)
	is.Equal(attempts[2].Response.HTTPCode, 500)
}

func TestDelivery_Never200GivesEightAttemptsThenMissedFeed(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, notify.Options{})
	rcv := newReceiver(t, always(http.StatusServiceUnavailable))
	seller := e.mustUser()
	app := e.mustApp(seller, rcv.URL+"/cb")
	e.emit(seller, "/questions/9")

	first := e.clock.Now()
	e.runFor(3 * time.Hour)
	got := rcv.got()
	is.Equal(len(got), notify.MaxAttempts) // exactly 8 POSTs
	last, _ := time.Parse(notify.TimeLayout, got[len(got)-1].Body.Sent)
	is.True(last.Sub(first) <= time.Hour) // all within the retry hour

	missed, err := e.m.Notify.MissedFeeds(e.ctx, seller, notify.FeedQuery{AppID: app.ID, Limit: 10})
	is.NoErr(err)
	is.Equal(len(missed), 1)
	msg := missed[0]
	is.Equal(msg.Attempts, 8)
	is.Equal(msg.Resource, "/questions/9")
	is.Equal(msg.ID, got[0].Body.ID)
	is.Equal(msg.Request.URL, rcv.URL+"/cb")
	is.Equal(msg.Request.Headers["User-Agent"], notify.UserAgent)
	is.Equal(string(msg.Request.Data), string(got[7].Raw)) // the last body sent
	is.Equal(msg.Response.HTTPCode, 503)
	is.Equal(msg.Response.Body, "receiver says Service Unavailable")
	is.Equal(msg.Response.Headers["X-Receiver"], "test")
	attempts, total, err := e.m.Notify.Attempts(e.ctx, app.ID, 0, 50)
	is.NoErr(err)
	is.Equal(total, 8)
	is.Equal(attempts[0].Outcome, notify.OutcomeMissed)
}

func TestDelivery_201IsNotAnAcknowledgement(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, notify.Options{})
	rcv := newReceiver(t, failing(1, http.StatusCreated))
	seller := e.mustUser()
	e.mustApp(seller, rcv.URL)
	e.emit(seller, "/questions/3")
	e.process()
	e.advance(20 * time.Minute)
	e.process()
	got := rcv.got()
	is.Equal(len(got), 2) // the 201 was followed by a retry
	is.Equal(got[1].Body.Attempts, 2)
}

func TestDelivery_RedirectIsNotFollowedNorAcknowledged(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, notify.Options{})
	target := newReceiver(t, always(http.StatusOK))
	redirect := newReceiver(t, always(http.StatusTemporaryRedirect))
	redirect.Config.Handler = http.RedirectHandler(target.URL, http.StatusTemporaryRedirect)
	seller := e.mustUser()
	app := e.mustApp(seller, redirect.URL)
	e.emit(seller, "/questions/3")
	e.process()
	is.Equal(len(target.got()), 0)
	attempts, _, err := e.m.Notify.Attempts(e.ctx, app.ID, 0, 10)
	is.NoErr(err)
	is.Equal(attempts[0].Response.HTTPCode, 307)
	is.Equal(attempts[0].Outcome, notify.OutcomeRetry)
}

func TestDelivery_ReceiverSlowerThanTheTimeoutIsRetried(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, notify.Options{Timeout: 200 * time.Millisecond})
	rcv := newReceiver(t, always(http.StatusOK))
	never := make(chan struct{})
	t.Cleanup(func() { close(never) })
	rcv.delay = func(n int) <-chan struct{} {
		if n == 0 {
			return never // the first answer never comes in time
		}
		return nil
	}
	seller := e.mustUser()
	app := e.mustApp(seller, rcv.URL)
	e.emit(seller, "/questions/5")
	e.process()
	attempts, _, err := e.m.Notify.Attempts(e.ctx, app.ID, 0, 10)
	is.NoErr(err)
	is.Equal(len(attempts), 1)
	is.Equal(attempts[0].Response.HTTPCode, 0) // no answer within the timeout
	is.True(attempts[0].Response.Error != "")
	is.Equal(attempts[0].Outcome, notify.OutcomeRetry)

	// Retried until a timely answer; a loaded machine may need more than one.
	for i := 0; i < 5 && attempts[0].Outcome != notify.OutcomeAcknowledged; i++ {
		e.advance(20 * time.Minute)
		e.process()
		attempts, _, err = e.m.Notify.Attempts(e.ctx, app.ID, 0, 10)
		is.NoErr(err)
	}
	is.Equal(attempts[0].Outcome, notify.OutcomeAcknowledged)
	is.Equal(len(rcv.got()), len(attempts))
}

func TestDelivery_SlowReceiverDoesNotHoldUpOthers(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, notify.Options{Timeout: 10 * time.Second, Concurrency: 4, PerApplication: 2})
	slow := newReceiver(t, always(http.StatusOK))
	hold := make(chan struct{})
	slow.delay = func(int) <-chan struct{} { return hold }
	fast := newReceiver(t, always(http.StatusOK))
	slowSeller, fastSeller := e.mustUser(), e.mustUser()
	e.mustApp(slowSeller, slow.URL)
	e.mustApp(fastSeller, fast.URL)
	for i := 0; i < 20; i++ {
		e.emit(slowSeller, fmt.Sprintf("/questions/%d", i))
	}
	e.emit(fastSeller, "/questions/100")

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.m.Start(ctx) }()
	got := waitHits(t, fast, 1) // delivered while the slow receiver holds its POSTs
	is.Equal(got[0].Body.Resource, "/questions/100")
	is.True(len(slow.got()) <= 2) // the slow one never takes more than its share
	close(hold)
	cancel()
	<-done
}

func TestDelivery_SignatureVerifiesWithTheApplicationSecret(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, notify.Options{})
	rcv := newReceiver(t, always(http.StatusOK))
	seller := e.mustUser()
	app := e.mustApp(seller, rcv.URL)
	e.emit(seller, "/questions/11")
	e.process()
	h := rcv.got()[0]
	sig := h.Header.Get(notify.SignatureHeader)
	is.True(strings.HasPrefix(sig, "sha256="))
	is.True(notify.Verify(app.Secret, h.Raw, sig))                            // the receiver's check passes
	is.True(!notify.Verify(app.Secret, append([]byte(" "), h.Raw...), sig))   // a changed body fails
	is.True(!notify.Verify(strings.Repeat("0", len(app.Secret)), h.Raw, sig)) // another secret fails
	is.Equal(sig, notify.Sign(app.Secret, h.Raw))
}

func TestDelivery_OnlyTheUsersSubscribedApplicationsReceive(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, notify.Options{})
	subscribed := newReceiver(t, always(http.StatusOK))
	unsubscribed := newReceiver(t, always(http.StatusOK))
	other := newReceiver(t, always(http.StatusOK))
	seller, someoneElse := e.mustUser(), e.mustUser()
	e.mustApp(seller, subscribed.URL)
	e.mustApp(seller, unsubscribed.URL, []string{}...)
	e.mustApp(someoneElse, other.URL)
	e.emit(seller, "/questions/1")
	e.process()
	is.Equal(len(subscribed.got()), 1)
	is.Equal(len(unsubscribed.got()), 0) // no topics, no notifications
	is.Equal(len(other.got()), 0)        // another user's application
}

func TestDelivery_EveryApplicationGetsItsOwnNotification(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, notify.Options{})
	a, b := newReceiver(t, always(http.StatusOK)), newReceiver(t, always(http.StatusOK))
	seller := e.mustUser()
	appA, appB := e.mustApp(seller, a.URL), e.mustApp(seller, b.URL)
	e.emit(seller, "/questions/1")
	e.process()
	is.Equal(a.got()[0].Body.ApplicationID, appA.ID)
	is.Equal(b.got()[0].Body.ApplicationID, appB.ID)
	is.True(a.got()[0].Body.ID != b.got()[0].Body.ID)
}

func TestDelivery_NewCallbackURLAppliesFromTheNextAttempt(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, notify.Options{})
	old := newReceiver(t, always(http.StatusInternalServerError))
	fresh := newReceiver(t, always(http.StatusOK))
	seller := e.mustUser()
	app := e.mustApp(seller, old.URL)
	e.emit(seller, "/questions/1")
	e.process()
	u := fresh.URL
	_, err := e.m.Notify.UpdateApplication(e.ctx, app.ID, notify.ApplicationUpdate{CallbackURL: &u})
	is.NoErr(err)
	e.advance(20 * time.Minute)
	e.process()
	is.Equal(len(old.got()), 1)
	is.Equal(len(fresh.got()), 1)
	is.Equal(fresh.got()[0].Body.Attempts, 2)
}

func TestRun_ManualClockMoveSendsTheDueRetryWithoutSleeping(t *testing.T) {
	is := is.New(t)
	// A long poll interval: only the clock's move can wake the loop in time.
	e := newEnv(t, notify.Options{PollInterval: time.Hour})
	rcv := newReceiver(t, failing(1, http.StatusInternalServerError))
	seller := e.mustUser()
	app := e.mustApp(seller, rcv.URL)
	e.emit(seller, "/questions/1")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = e.m.Start(ctx) }()
	e.waitAttempts(app.ID, 1)
	e.advance(20 * time.Minute)
	got := waitHits(t, rcv, 2)
	is.Equal(got[1].Body.Attempts, 2)
}

func TestMissedFeeds_KeptTwoDaysThenPruned(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, notify.Options{})
	rcv := newReceiver(t, always(http.StatusNotFound))
	seller := e.mustUser()
	app := e.mustApp(seller, rcv.URL)
	e.emit(seller, "/questions/1")
	e.runFor(time.Hour)
	attempts, _, err := e.m.Notify.Attempts(e.ctx, app.ID, 0, 1)
	is.NoErr(err)
	is.Equal(attempts[0].Outcome, notify.OutcomeMissed)
	missedAt, err := time.Parse(notify.TimeLayout, attempts[0].Sent)
	is.NoErr(err)
	e.advance(missedAt.Add(47 * time.Hour).Sub(e.clock.Now()))
	feed := func() int {
		m, err := e.m.Notify.MissedFeeds(e.ctx, seller, notify.FeedQuery{AppID: app.ID, Limit: 10})
		is.NoErr(err)
		return len(m)
	}
	is.Equal(feed(), 1) // still within two days
	e.advance(2 * time.Hour)
	is.Equal(feed(), 0) // older than two days
	is.NoErr(e.m.Notify.Prune(e.ctx))
	_, total, err := e.m.Notify.Attempts(e.ctx, app.ID, 0, 10)
	is.NoErr(err)
	is.Equal(total, 0) // attempts pruned with it
	is.Equal(len(rcv.got()), notify.MaxAttempts)
}

func TestMissedFeeds_OnlyTheOwnerMayRead(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, notify.Options{})
	seller, other := e.mustUser(), e.mustUser()
	app := e.mustApp(seller, "http://127.0.0.1:1/")
	_, err := e.m.Notify.MissedFeeds(e.ctx, other, notify.FeedQuery{AppID: app.ID, Limit: 10})
	is.Equal(errs.KindOf(err), errs.Forbidden)
	_, err = e.m.Notify.MissedFeeds(e.ctx, seller, notify.FeedQuery{AppID: app.ID + 100, Limit: 10})
	is.Equal(errs.KindOf(err), errs.NotFound)
}

func TestMissedFeeds_AppIDMustBePositiveBeforeAnythingElse(t *testing.T) {
	e := newEnv(t, notify.Options{})
	seller := e.mustUser()
	for _, id := range []int64{0, -7} {
		// Every other part of the query is at fault too: the app id is named,
		// on every call.
		for range 3 {
			_, err := e.m.Notify.MissedFeeds(e.ctx, seller, notify.FeedQuery{AppID: id, Topic: "orders", Offset: -1, Limit: -1})
			de := errs.As(err)
			want := fmt.Sprintf("Invalid app_id: %d. It must be a positive integer", id)
			if de == nil || de.Kind != errs.Invalid || de.Message != want {
				t.Fatalf("MissedFeeds(app %d) error = %v; want Invalid %q", id, err, want)
			}
		}
	}
}

func TestMissedFeeds_OffsetLimitAndTopicFilter(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, notify.Options{})
	notify.SetJitter(e.m.Notify, func() float64 { return 0.5 }) // the five miss in the order they were sent
	rcv := newReceiver(t, always(http.StatusInternalServerError))
	seller := e.mustUser()
	app := e.mustApp(seller, rcv.URL)
	for i := 1; i <= 5; i++ {
		e.emit(seller, fmt.Sprintf("/questions/%d", i))
	}
	e.runFor(time.Hour)
	page, err := e.m.Notify.MissedFeeds(e.ctx, seller, notify.FeedQuery{AppID: app.ID, Topic: "questions", Offset: 1, Limit: 2})
	is.NoErr(err)
	is.Equal(len(page), 2)
	is.Equal(page[0].Resource, "/questions/2")
	is.Equal(page[1].Resource, "/questions/3")
	_, err = e.m.Notify.MissedFeeds(e.ctx, seller, notify.FeedQuery{AppID: app.ID, Topic: "orders", Limit: 2})
	is.Equal(errs.KindOf(err), errs.Invalid)
}

// TestDelivery_PendingNotificationsAreDeliveredAfterRestart runs the engine on
// Badger, stops it with notifications both still in the outbox and fanned out
// but unacknowledged, and opens it again on the same folder.
func TestDelivery_PendingNotificationsAreDeliveredAfterRestart(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	rcv := newReceiver(t, func(n int) int {
		if n < 3 {
			return http.StatusInternalServerError // the first engine's POSTs fail
		}
		return http.StatusOK
	})
	opts := func(c clock.Clock) marketplace.Options {
		return marketplace.Options{Clock: c, Notifications: notify.Options{AllowPrivateCallbacks: true}}
	}
	clk1 := clock.NewManual(start)
	m1, err := marketplace.Open(context.Background(), badger.Dir(dir), opts(clk1))
	is.NoErr(err)
	e1 := &env{t: t, ctx: context.Background(), m: m1, clock: clk1}
	seller := e1.mustUser()
	e1.mustApp(seller, rcv.URL)
	for i := 1; i <= 3; i++ {
		e1.emit(seller, fmt.Sprintf("/questions/%d", i))
	}
	is.Equal(e1.process(), 3) // fanned out, POSTed, refused
	for i := 4; i <= 6; i++ {
		e1.emit(seller, fmt.Sprintf("/questions/%d", i)) // still in the outbox
	}
	is.NoErr(m1.Close())

	clk2 := clock.NewManual(start.Add(30 * time.Minute))
	m2, err := marketplace.Open(context.Background(), badger.Dir(dir), opts(clk2))
	is.NoErr(err)
	defer m2.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = m2.Start(ctx) }()
	got := waitHits(t, rcv, 9)
	acked := map[string]bool{}
	for _, h := range got[3:] {
		acked[h.Body.Resource] = true
	}
	for i := 1; i <= 6; i++ {
		is.True(acked[fmt.Sprintf("/questions/%d", i)]) // none lost
	}
}

func TestDelivery_PostCutShortByStopIsNotRecordedAndIsSentAgain(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, notify.Options{Timeout: 10 * time.Second})
	rcv := newReceiver(t, always(http.StatusOK))
	hold := make(chan struct{})
	rcv.delay = func(n int) <-chan struct{} {
		if n == 0 {
			return hold
		}
		return nil
	}
	seller := e.mustUser()
	app := e.mustApp(seller, rcv.URL)
	e.emit(seller, "/questions/1")
	go func() { _ = e.m.Start(context.Background()) }()
	waitHits(t, rcv, 1) // the first POST is in flight
	e.m.Notify.Stop()   // as on shutdown
	close(hold)
	_, total, err := e.m.Notify.Attempts(e.ctx, app.ID, 0, 10)
	is.NoErr(err)
	is.Equal(total, 0) // nothing recorded for the POST cut short
	pending, err := e.m.Notify.Pending(e.ctx)
	is.NoErr(err)
	is.Equal(pending, 1)
	is.Equal(e.process(), 1) // sent again
	got := rcv.got()
	is.Equal(got[1].Body.ID, got[0].Body.ID)
	is.Equal(got[1].Body.Attempts, 1)
	pending, err = e.m.Notify.Pending(e.ctx)
	is.NoErr(err)
	is.Equal(pending, 0)
}

func TestProcess_IsRefusedWhileTheDeliveryLoopRuns(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, notify.Options{})
	rcv := newReceiver(t, always(http.StatusOK))
	seller := e.mustUser()
	e.mustApp(seller, rcv.URL)
	e.emit(seller, "/questions/1")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = e.m.Start(ctx) }()
	waitHits(t, rcv, 1) // the loop runs
	_, err := e.m.Notify.Process(e.ctx)
	is.Equal(err, notify.ErrRunning)
	is.Equal(e.m.Start(ctx), notify.ErrRunning) // one loop at a time
	e.m.Notify.Stop()
	_, err = e.m.Notify.Process(e.ctx)
	is.NoErr(err) // allowed again once stopped
}

// TestDelivery_RetryIsNotSentBeforeItsTimeWhenClaimedFromAStaleSnapshot: the
// loop may read the due index from a snapshot taken just before the previous
// attempt was recorded and claim the delivery again; the attempt itself must
// see that it was rescheduled and send nothing.
func TestDelivery_RetryIsNotSentBeforeItsTimeWhenClaimedFromAStaleSnapshot(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, notify.Options{})
	rcv := newReceiver(t, always(http.StatusInternalServerError))
	seller := e.mustUser()
	app := e.mustApp(seller, rcv.URL)
	e.emit(seller, "/questions/7")
	is.Equal(e.process(), 1) // attempt 1 fails: the retry waits 15 s
	attempts, _, err := e.m.Notify.Attempts(e.ctx, app.ID, 0, 10)
	is.NoErr(err)
	is.Equal(len(attempts), 1)

	is.NoErr(notify.AttemptDelivery(e.ctx, e.m.Notify, attempts[0].DeliveryID)) // a stale claim
	is.Equal(len(rcv.got()), 1)                                                 // nothing sent early
	_, total, err := e.m.Notify.Attempts(e.ctx, app.ID, 0, 10)
	is.NoErr(err)
	is.Equal(total, 1) // nothing recorded

	e.advance(time.Minute)
	is.Equal(e.process(), 1) // the retry, when due
	got := rcv.got()
	is.Equal(len(got), 2)
	is.Equal(got[1].Body.Attempts, 2)
}
