package notify_test

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/internal/teststore"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/badger"
)

// countingStore counts the Updates run through it.
type countingStore struct {
	storage.Store
	updates atomic.Int64
}

func (c *countingStore) Update(ctx context.Context, fn func(storage.Tx) error) error {
	c.updates.Add(1)
	return c.Store.Update(ctx, fn)
}

// TestRun_IdleLoopWritesNothing runs the loop with a 1 ms poll over an empty
// outbox, with one delivery acknowledged and one waiting for a retry later
// by the clock: while nothing is due, a poll costs no Update.
func TestRun_IdleLoopWritesNothing(t *testing.T) {
	for _, backend := range []string{"memory", "badger"} {
		t.Run(backend, func(t *testing.T) {
			is := is.New(t)
			var inner storage.Store = teststore.New(t)
			if backend == "badger" {
				st, err := badger.Open(t.TempDir(), badger.Options{})
				is.NoErr(err)
				t.Cleanup(func() { _ = st.Close() })
				inner = st
			}
			st := &countingStore{Store: inner}
			clk := clock.NewManual(start)
			m, err := marketplace.New(st, marketplace.Options{Clock: clk, Notifications: notify.Options{
				AllowPrivateCallbacks: true, Timeout: 10 * time.Second, PollInterval: time.Millisecond}})
			is.NoErr(err)
			t.Cleanup(func() { _ = m.Close() })
			e := &env{t: t, ctx: context.Background(), m: m, clock: clk}
			ok, failing := newReceiver(t, always(http.StatusOK)), newReceiver(t, always(http.StatusInternalServerError))
			seller, other := e.mustUser(), e.mustUser()
			okApp, failingApp := e.mustApp(seller, ok.URL), e.mustApp(other, failing.URL)

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- m.Start(ctx) }()
			e.emit(seller, "/questions/1")
			e.emit(other, "/questions/2")
			e.waitAttempts(okApp.ID, 1)
			e.waitAttempts(failingApp.ID, 1) // the retry is 15 s away by a clock that stands still
			time.Sleep(50 * time.Millisecond)

			before := st.updates.Load()
			time.Sleep(300 * time.Millisecond)           // some 300 polls
			is.Equal(st.updates.Load()-before, int64(0)) // no Update while idle
			pending, err := m.Notify.Pending(e.ctx)
			is.NoErr(err)
			is.Equal(pending, 1) // the retry is still there

			e.advance(time.Minute)
			waitHits(t, failing, 2) // and is sent when the clock reaches it
			cancel()
			<-done
		})
	}
}

// TestRun_AppendWakesTheLoopWithoutWaitingForThePoll: with a poll interval
// of an hour, an event appended in the process is delivered at once.
func TestRun_AppendWakesTheLoopWithoutWaitingForThePoll(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, notify.Options{PollInterval: time.Hour})
	rcv := newReceiver(t, always(http.StatusOK))
	seller := e.mustUser()
	app := e.mustApp(seller, rcv.URL)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- e.m.Start(ctx) }()
	for i := 1; i <= 3; i++ {
		time.Sleep(20 * time.Millisecond) // the loop has gone idle
		e.emit(seller, fmt.Sprintf("/questions/%d", i))
		got := waitHits(t, rcv, i)
		is.Equal(got[i-1].Body.Resource, fmt.Sprintf("/questions/%d", i))
		e.waitAttempts(app.ID, i)
	}
	cancel()
	<-done
}

// TestDelivery_EventFannedOutAgainKeepsItsNotificationID: a POST may be made
// before the fan-out of its event commits; should the process die then, the
// event is fanned out again, and its notification must keep its _id so that
// the receiver can tell the repeat.
func TestDelivery_EventFannedOutAgainKeepsItsNotificationID(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, notify.Options{})
	rcv := newReceiver(t, always(http.StatusOK))
	seller := e.mustUser()
	e.mustApp(seller, rcv.URL)
	e.emit(seller, "/questions/1")
	var key, value []byte
	is.NoErr(e.m.Store().View(e.ctx, func(tx storage.Tx) error {
		it := tx.Iterate(storage.Prefix(notify.OutboxPrefix()))
		defer it.Close()
		key = append([]byte(nil), it.Key()...)
		var err error
		value, err = it.Value()
		return err
	}))
	is.Equal(e.process(), 1)
	// The outbox as it was before the fan-out committed.
	is.NoErr(e.m.Store().Update(e.ctx, func(tx storage.Tx) error { return tx.Set(key, value) }))
	is.Equal(e.process(), 1)
	got := rcv.got()
	is.Equal(len(got), 2)
	is.Equal(got[1].Body.ID, got[0].Body.ID) // the same notification, sent again
}
