package httpapi_test

import (
	"testing"
	"time"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/httpapi"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/memory"
)

// serverOn is a server whose engine runs on st, as one of several servers on
// one database.
func serverOn(t *testing.T, st storage.Store) *testServer {
	t.Helper()
	clk := clock.NewManual(testStart)
	m, err := marketplace.New(st, marketplace.Options{Clock: clk})
	if err != nil {
		t.Fatalf("new marketplace: %v", err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return &testServer{t: t, m: m, clock: clk, handler: httpapi.New(m, checked(t, httpapi.Config{OperatorToken: testOperatorToken, ManualClock: clk}))}
}

func TestSharedStore_ClockMovedThroughOneServerIsTheNextRequestsTimeOnAnother(t *testing.T) {
	st := memory.New()
	a, b := serverOn(t, st), serverOn(t, st)
	res := a.do("PUT", "/operator/clock", testOperatorToken, map[string]any{"now": "2026-03-06T10:00:00Z"})
	if res.Status != 200 {
		t.Fatalf("PUT on a: %d %s", res.Status, res.Raw)
	}
	res = b.do("GET", "/operator/clock", testOperatorToken, nil)
	if got := res.Obj()["now"]; got != "2026-03-06T10:00:00Z" {
		t.Fatalf("b's clock right after the move through a: %v; want 2026-03-06T10:00:00Z", got)
	}
	// b's clock only moves forward: an older time through b is refused.
	res = b.do("PUT", "/operator/clock", testOperatorToken, map[string]any{"now": "2026-03-05T10:00:00Z"})
	if res.Status != 400 {
		t.Fatalf("moving b back before a's move: %d; want 400", res.Status)
	}
}

func TestSharedStore_ClockMoveReachesAnotherEngineWithoutRequests(t *testing.T) {
	st := memory.New()
	a, b := serverOn(t, st), serverOn(t, st)
	to := testStart.Add(48 * time.Hour)
	if err := a.clock.Set(to); err != nil {
		t.Fatal(err)
	}
	// Its background work (retries, the daily refresh) follows the clock
	// the engine polls from the store.
	deadline := time.Now().Add(10 * time.Second)
	for !b.clock.Now().Equal(to) {
		if time.Now().After(deadline) {
			t.Fatalf("b's clock is %s; want %s", b.clock.Now(), to)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestSharedStore_EngineJoiningLaterStartsAtTheSharedTime(t *testing.T) {
	st := memory.New()
	a := serverOn(t, st)
	to := testStart.Add(72 * time.Hour)
	if err := a.clock.Set(to); err != nil {
		t.Fatal(err)
	}
	c := serverOn(t, st)
	if !c.clock.Now().Equal(to) {
		t.Fatalf("a new engine's clock is %s; want the shared %s", c.clock.Now(), to)
	}
}
