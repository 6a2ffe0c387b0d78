package notify_test

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/notify"
)

// deliveryModel is the plain model of one notification's retries.
type deliveryModel struct {
	resource string
	attempts int
	first    time.Time
	next     time.Time
}

// deliveryMachine drives emits, receiver outages, clock moves and delivery
// passes against the model: with the jitter fixed, the n-th retry comes
// 15s * 2^(n-1) after the n-th failure, at most 8 attempts, none scheduled
// past the hour after the first.
type deliveryMachine struct {
	e       *env
	rcv     *receiver
	ok      atomic.Bool
	seller  int64
	app     int64
	seen    int
	nextRes int

	now     time.Time
	pending []*deliveryModel
	byRes   map[string]*deliveryModel
	posts   int
	acked   int
	missed  int
}

func (m *deliveryMachine) Emit(t *rapid.T) {
	m.nextRes++
	res := fmt.Sprintf("/questions/%d", m.nextRes)
	m.e.emit(m.seller, res)
	d := &deliveryModel{resource: res, next: m.now}
	m.pending = append(m.pending, d)
	m.byRes[res] = d
}

func (m *deliveryMachine) Receiver(t *rapid.T) {
	m.ok.Store(rapid.Bool().Draw(t, "receiver_ok"))
}

func (m *deliveryMachine) Advance(t *rapid.T) {
	d := time.Duration(rapid.IntRange(0, 1200).Draw(t, "advance_seconds")) * time.Second
	m.e.advance(d)
	m.now = m.now.Add(d)
}

func (m *deliveryMachine) Process(t *rapid.T) {
	m.e.process()
	ok := m.ok.Load()
	var still []*deliveryModel
	for _, d := range m.pending {
		if d.next.After(m.now) {
			still = append(still, d)
			continue
		}
		m.posts++
		d.attempts++
		if d.attempts == 1 {
			d.first = m.now
		}
		if ok {
			m.acked++
			continue
		}
		d.next = m.now.Add(15 * time.Second << (d.attempts - 1))
		if d.attempts >= notify.MaxAttempts || d.next.After(d.first.Add(time.Hour)) {
			m.missed++
			continue
		}
		still = append(still, d)
	}
	m.pending = still
	// Every new POST carries the attempt number the model expects.
	hits := m.rcv.got()
	for _, h := range hits[m.seen:] {
		d := m.byRes[h.Body.Resource]
		if d == nil || h.Body.Attempts != d.attempts {
			t.Fatalf("POST %s attempt %d, model says %v", h.Body.Resource, h.Body.Attempts, d)
		}
	}
	m.seen = len(hits)
}

func (m *deliveryMachine) Check(t *rapid.T) {
	if got := len(m.rcv.got()); got != m.posts {
		t.Fatalf("receiver got %d POSTs, model %d", got, m.posts)
	}
	pending, err := m.e.m.Notify.Pending(m.e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if pending != len(m.pending) {
		t.Fatalf("pending %d, model %d", pending, len(m.pending))
	}
	missed, err := m.e.m.Notify.MissedFeeds(m.e.ctx, m.seller, notify.FeedQuery{AppID: m.app, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(missed) != m.missed {
		t.Fatalf("missed feed has %d, model %d", len(missed), m.missed)
	}
	_, attempts, err := m.e.m.Notify.Attempts(m.e.ctx, m.app, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if attempts != m.posts {
		t.Fatalf("attempts recorded %d, model %d", attempts, m.posts)
	}
}

func TestDelivery_RetryScheduleStateMachine(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		e, done := newPropertyEnv(rt, t, notify.Options{})
		defer done()
		notify.SetJitter(e.m.Notify, func() float64 { return 0.5 })
		m := &deliveryMachine{e: e, now: e.clock.Now(), byRes: map[string]*deliveryModel{}}
		m.rcv = newReceiver(t, func(int) int {
			if m.ok.Load() {
				return http.StatusOK
			}
			return http.StatusInternalServerError
		})
		m.seller = e.mustUser()
		m.app = e.mustApp(m.seller, m.rcv.URL).ID
		rt.Repeat(rapid.StateMachineActions(m))
	})
}
