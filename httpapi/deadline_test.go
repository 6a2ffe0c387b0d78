package httpapi_test

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
	"github.com/marketplace/marketplace/httpapi"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/memory"
)

// stallStore is a store whose transactions can be made to stall, as a
// database that stops answering does: while stall is set, View and Update
// wait for it (or for their context to end) before they run.
type stallStore struct {
	storage.Store
	stall atomic.Int64 // nanoseconds each transaction waits
}

func (s *stallStore) wait(ctx context.Context) error {
	d := time.Duration(s.stall.Load())
	if d == 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (s *stallStore) View(ctx context.Context, fn func(storage.Tx) error) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	return s.Store.View(ctx, fn)
}

func (s *stallStore) Update(ctx context.Context, fn func(storage.Tx) error) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	return s.Store.Update(ctx, fn)
}

// requestTimeoutBody is the whole answer to a request that ran out of time.
const requestTimeoutBody = `{"message":"The request took longer than the server allows, try again later","error":"request_timeout","status":503,"cause":[]}` + "\n"

// deadlineTimeout is the bound of the servers of these tests, and
// deadlineStall a stall far longer than it.
const (
	deadlineTimeout = 50 * time.Millisecond
	deadlineStall   = 3 * time.Second
)

func newDeadlineWorld(t *testing.T) (*stallStore, *qWorld) {
	t.Helper()
	st := &stallStore{Store: memory.New()}
	clk := clock.NewManual(testStart)
	m, err := marketplace.New(st, marketplace.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	ts := &testServer{t: t, m: m, clock: clk, handler: httpapi.New(m, checked(t, httpapi.Config{
		OperatorToken: testOperatorToken, ManualClock: clk, RequestTimeout: deadlineTimeout}))}
	w := &qWorld{testServer: ts, seller: ts.mustUser("MLA"), buyer: ts.mustUser("MLA")}
	w.item = w.mustItem(w.seller.ID)
	return st, w
}

func TestRequestTimeout_AStalledRequestIs503RequestTimeoutAndWritesNothing(t *testing.T) {
	is := is.New(t)
	st, w := newDeadlineWorld(t)
	asked := w.mustAsk(w.buyer, w.item, "Does it come with a case?")

	st.stall.Store(int64(deadlineStall))
	for _, c := range []struct {
		name, method, path, token string
		body                      any
	}{
		{"Read", "GET", fmt.Sprintf("/questions/%d", asked), w.buyer.Token, nil},
		{"Search", "GET", "/questions/search?item=" + w.item, "", nil},
		{"Ask", "POST", "/questions", w.buyer.Token, map[string]any{"text": "And a strap?", "item_id": w.item}},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			start := time.Now()
			res := w.do(c.method, c.path, c.token, c.body)
			is.Equal(res.Status, http.StatusServiceUnavailable) // a request out of time
			is.Equal(string(res.Raw), requestTimeoutBody)
			is.True(time.Since(start) < deadlineStall) // stopped at its bound, not at the store's pace
		})
	}
	st.stall.Store(0)
	res := w.do("GET", "/questions/search?item="+w.item, "", nil)
	is.Equal(res.Status, http.StatusOK)
	is.Equal(res.Obj()["total"], float64(1)) // the ask out of time wrote nothing
}

func TestRequestTimeout_OperatorRoutesAreNotBound(t *testing.T) {
	is := is.New(t)
	st, w := newDeadlineWorld(t)
	// Longer than the bound, short enough to wait for.
	st.stall.Store(int64(4 * deadlineTimeout))
	res := w.operator("GET", fmt.Sprintf("/operator/users/%d", w.seller.ID), nil)
	is.Equal(res.Status, http.StatusOK) // the operator's request ran to its end
}

func TestRequestTimeout_AFaultRulesLatencyIsNotCounted(t *testing.T) {
	is := is.New(t)
	_, w := newDeadlineWorld(t)
	w.mustFault(map[string]any{"route": "/questions/search", "latency_ms": 4 * deadlineTimeout.Milliseconds()})
	res := w.do("GET", "/questions/search?item="+w.item, "", nil)
	is.Equal(res.Status, http.StatusOK) // the rule's latency stands for the network, not for the server's work
}

// holdingStore is a store whose next View, once armed, waits inside its
// transaction until released: a search that takes long.
type holdingStore struct {
	storage.Store
	armed   atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (s *holdingStore) View(ctx context.Context, fn func(storage.Tx) error) error {
	if s.armed.CompareAndSwap(true, false) {
		return s.Store.View(ctx, func(tx storage.Tx) error {
			close(s.entered)
			<-s.release
			return fn(tx)
		})
	}
	return s.Store.View(ctx, fn)
}

// newHoldingWorld is a server with one search slot over a holdingStore.
func newHoldingWorld(t *testing.T, timeout time.Duration) (*holdingStore, *qWorld) {
	t.Helper()
	st := &holdingStore{Store: memory.New(), entered: make(chan struct{}), release: make(chan struct{})}
	clk := clock.NewManual(testStart)
	m, err := marketplace.New(st, marketplace.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	ts := &testServer{t: t, m: m, clock: clk, handler: httpapi.New(m, checked(t, httpapi.Config{
		OperatorToken: testOperatorToken, ManualClock: clk, RequestTimeout: timeout, ConcurrentSearches: 1}))}
	w := &qWorld{testServer: ts, seller: ts.mustUser("MLA"), buyer: ts.mustUser("MLA")}
	w.item = w.mustItem(w.seller.ID)
	return st, w
}

func TestConcurrentSearches_ASearchWaitsForASlotWhileWritesAndOtherReadsGoOn(t *testing.T) {
	is := is.New(t)
	st, w := newHoldingWorld(t, time.Minute)
	asked := w.mustAsk(w.buyer, w.item, "Does it come with a case?")

	// A search that holds the only slot, and one that needs it.
	st.armed.Store(true)
	first := make(chan response, 1)
	go func() { first <- w.do("GET", "/questions/search?item="+w.item, "", nil) }()
	<-st.entered
	second := make(chan response, 1)
	go func() {
		second <- w.do("GET", "/questions/search?seller_id="+fmt.Sprint(w.seller.ID), w.seller.Token, nil)
	}()

	res := w.do("GET", fmt.Sprintf("/questions/%d", asked), "", nil)
	is.Equal(res.Status, http.StatusOK) // a read that is no search does not wait
	res = w.do("POST", "/questions", w.buyer.Token, map[string]any{"text": "And a strap?", "item_id": w.item})
	is.Equal(res.Status, http.StatusCreated) // nor does a write
	select {
	case res := <-second:
		t.Fatalf("a second search was answered (%d) while the only slot was held", res.Status)
	default:
	}

	close(st.release)
	is.Equal((<-first).Status, http.StatusOK)
	res = <-second
	is.Equal(res.Status, http.StatusOK) // served once the slot was free
	is.Equal(res.Obj()["total"], float64(2))
}

func TestConcurrentSearches_ASearchThatWaitsPastItsTimeIs503RequestTimeout(t *testing.T) {
	is := is.New(t)
	st, w := newHoldingWorld(t, deadlineTimeout)
	w.mustAsk(w.buyer, w.item, "Does it come with a case?")
	st.armed.Store(true)
	first := make(chan response, 1)
	go func() { first <- w.do("GET", "/questions/search?item="+w.item, "", nil) }()
	<-st.entered
	res := w.do("GET", "/questions/search?seller_id="+fmt.Sprint(w.seller.ID), w.seller.Token, nil)
	is.Equal(res.Status, http.StatusServiceUnavailable) // it waited for the slot within its time, no longer
	is.Equal(string(res.Raw), requestTimeoutBody)
	close(st.release)
	<-first
}
