package notify_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/internal/teststore"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/storage"
)

// start is the manual clock's start in every test.
var start = time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC)

// env is the engine on the memory store with a manual clock; loopback
// callbacks are allowed so that httptest receivers can be registered.
type env struct {
	t     testing.TB
	ctx   context.Context
	m     *marketplace.Marketplace
	clock *clock.Manual
}

func newEnv(t testing.TB, opts notify.Options) *env {
	t.Helper()
	e := newEnvOn(t, teststore.New(t), opts)
	t.Cleanup(func() { _ = e.m.Close() })
	return e
}

// newPropertyEnv is newEnv for one iteration of a property test: the
// iteration closes it with the returned function before it ends.
func newPropertyEnv(rt *rapid.T, t testing.TB, opts notify.Options) (*env, func()) {
	t.Helper()
	st, done := teststore.Open(rt, t)
	e := newEnvOn(t, st, opts)
	return e, func() { _ = e.m.Close(); done() }
}

func newEnvOn(t testing.TB, st storage.Store, opts notify.Options) *env {
	opts.AllowPrivateCallbacks = true
	if opts.Timeout == 0 {
		// A loaded machine (the race detector, two cores) can take longer
		// than the 500 ms default to answer a local POST; only the tests of
		// the timeout set a short one.
		opts.Timeout = 10 * time.Second
	}
	clk := clock.NewManual(start)
	m, err := marketplace.New(st, marketplace.Options{Clock: clk, Notifications: opts})
	if err != nil {
		t.Fatalf("new marketplace: %v", err)
	}
	return &env{t: t, ctx: context.Background(), m: m, clock: clk}
}

func (e *env) mustUser() int64 {
	e.t.Helper()
	u, err := e.m.Accounts.CreateUser(e.ctx, accounts.NewUser{Nickname: "SELLER", SiteID: "MLA"})
	if err != nil {
		e.t.Fatalf("create user: %v", err)
	}
	return u.ID
}

func (e *env) mustApp(owner int64, url string, topics ...string) notify.Application {
	e.t.Helper()
	if topics == nil {
		topics = []string{notify.TopicQuestions}
	}
	app, err := e.m.Notify.CreateApplication(e.ctx, notify.NewApplication{Name: "app", OwnerUserID: owner, CallbackURL: url, Topics: topics})
	if err != nil {
		e.t.Fatalf("create application: %v", err)
	}
	return app
}

// emit appends a question event of user to the outbox, as a question change
// does in its own transaction.
func emit(tb testing.TB, st storage.Store, user int64, resource string, received time.Time) {
	tb.Helper()
	err := st.Update(context.Background(), func(tx storage.Tx) error {
		_, err := notify.Append(context.Background(), st, tx, notify.Event{Topic: notify.TopicQuestions, UserID: user, Resource: resource,
			Action: "created", Received: received})
		return err
	})
	if err != nil {
		tb.Fatalf("append event: %v", err)
	}
}

func (e *env) emit(user int64, resource string) {
	e.t.Helper()
	emit(e.t, e.m.Store(), user, resource, e.clock.Now())
}

// process runs one synchronous delivery pass and returns the POSTs made.
func (e *env) process() int {
	e.t.Helper()
	n, err := e.m.Notify.Process(e.ctx)
	if err != nil {
		e.t.Fatalf("process: %v", err)
	}
	return n
}

func (e *env) advance(d time.Duration) {
	e.t.Helper()
	if err := e.clock.Advance(d); err != nil {
		e.t.Fatal(err)
	}
}

// hit is one POST a receiver got.
type hit struct {
	Header http.Header
	Raw    []byte
	Body   notify.Notification
}

// receiver is a real local HTTP server that records every POST and answers
// with the status its function gives for the n-th call (0-based).
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	hits   []hit
	status func(n int) int
	// delay, when set, is waited before answering the n-th call.
	delay func(n int) <-chan struct{}
	// ch gets every hit as it arrives, for tests that wait on the
	// background loop.
	ch chan hit
}

func newReceiver(t testing.TB, status func(n int) int) *receiver {
	t.Helper()
	r := &receiver{status: status, ch: make(chan hit, 20000)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		raw, _ := io.ReadAll(req.Body)
		h := hit{Header: req.Header.Clone(), Raw: raw}
		_ = json.Unmarshal(raw, &h.Body)
		r.mu.Lock()
		n := len(r.hits)
		r.hits = append(r.hits, h)
		r.mu.Unlock()
		r.ch <- h
		if r.delay != nil {
			if c := r.delay(n); c != nil {
				select {
				case <-c:
				case <-req.Context().Done():
				}
			}
		}
		code := http.StatusOK
		if r.status != nil {
			code = r.status(n)
		}
		w.Header().Set("X-Receiver", "test")
		w.WriteHeader(code)
		_, _ = w.Write([]byte("receiver says " + http.StatusText(code)))
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) got() []hit {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]hit(nil), r.hits...)
}

// always answers code to every call.
func always(code int) func(int) int { return func(int) int { return code } }

// failing answers fail for the first n calls, then 200.
func failing(n, fail int) func(int) int {
	return func(i int) int {
		if i < n {
			return fail
		}
		return http.StatusOK
	}
}

// waitHits waits (in real time, for the background loop) until the receiver
// has got n POSTs; the deadline only guards against a hang.
func waitHits(t testing.TB, r *receiver, n int) []hit {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		if got := r.got(); len(got) >= n {
			return got
		}
		select {
		case <-r.ch:
		case <-deadline:
			t.Fatalf("receiver got %d POSTs, want %d", len(r.got()), n)
		}
	}
}

// runFor follows the retry schedule for d of clock time: a delivery pass at
// every step of one minute.
func (e *env) runFor(d time.Duration) {
	e.t.Helper()
	for end := e.clock.Now().Add(d); e.clock.Now().Before(end); e.advance(time.Minute) {
		e.process()
	}
	e.process()
}

// waitAttempts waits (in real time, for the background loop) until app has
// n recorded attempts; the deadline only guards against a hang.
func (e *env) waitAttempts(app int64, n int) {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, total, err := e.m.Notify.Attempts(e.ctx, app, 0, 1)
		if err != nil {
			e.t.Fatal(err)
		}
		if total >= n {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%d attempts recorded, want %d", total, n)
		}
		time.Sleep(time.Millisecond)
	}
}
