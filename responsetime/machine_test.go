package responsetime_test

import (
	"context"
	"time"

	"testing"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/questions"
	"github.com/marketplace/marketplace/responsetime"
)

// rtMachine drives ResponseTimes on a manual clock through questions asked,
// answered and deleted, clock moves and refreshes, against a model that keeps
// the figures each refresh must have stored, computed by the naive reference
// over a copy of the questions as they were at the refresh.
type rtMachine struct {
	e       *rtEnv
	sellers []int64
	locs    map[int64]*time.Location
	nextID  int64
	// model
	samples []questions.Sample
	want    map[int64]naiveFigures
}

func (m *rtMachine) refreshed(at time.Time) {
	m.want = map[int64]naiveFigures{}
	for _, seller := range m.sellers {
		var mine []questions.Sample
		for _, s := range m.samples {
			if s.SellerID == seller {
				mine = append(mine, s)
			}
		}
		m.want[seller] = naiveResponseTime(mine, at, m.locs[seller])
	}
}

func (m *rtMachine) Ask(t *rapid.T) {
	m.nextID++
	s := questions.Sample{
		QuestionID: m.nextID,
		SellerID:   rapid.SampledFrom(m.sellers).Draw(t, "seller"),
		BuyerID:    int64(rapid.IntRange(1, 3).Draw(t, "buyer")),
		ItemID:     rapid.SampledFrom([]string{"MLA1", "MLA2"}).Draw(t, "item"),
		Status:     "UNANSWERED",
		Asked:      m.e.clock.Now(),
	}
	m.samples = append(m.samples, s)
	m.e.src.add(s)
}

func (m *rtMachine) setStatus(t *rapid.T, status string, answered bool) {
	var open []int
	for i, s := range m.samples {
		if s.Status == "UNANSWERED" {
			open = append(open, i)
		}
	}
	if len(open) == 0 {
		t.Skip("no unanswered question")
	}
	i := rapid.SampledFrom(open).Draw(t, "question")
	m.samples[i].Status = status
	if answered {
		m.samples[i].Answered = m.e.clock.Now()
	}
	m.e.src.mu.Lock()
	m.e.src.samples[i] = m.samples[i]
	m.e.src.mu.Unlock()
}

func (m *rtMachine) Answer(t *rapid.T) { m.setStatus(t, "ANSWERED", true) }

func (m *rtMachine) Delete(t *rapid.T) { m.setStatus(t, "DELETED", false) }

func (m *rtMachine) MoveClock(t *rapid.T) {
	d := time.Duration(rapid.IntRange(1, 4*24*60).Draw(t, "minutes")) * time.Minute
	from := m.e.clock.Now()
	if err := m.e.clock.Advance(d); err != nil {
		t.Fatalf("advance: %v", err)
	}
	if due := responsetime.LatestScheduledRefresh(from.Add(d)); due.After(from) {
		m.refreshed(due)
	}
}

func (m *rtMachine) RefreshNow(t *rapid.T) {
	if err := m.e.rts.Refresh(context.Background()); err != nil {
		t.Fatalf("refresh: %v", err)
	}
	m.refreshed(m.e.clock.Now())
}

func (m *rtMachine) Check(t *rapid.T) {
	for _, seller := range m.sellers {
		got, err := m.e.rts.Get(context.Background(), seller, seller)
		want := m.want[seller]
		if !want.ok {
			if !errs.Is(err, errs.NotFound) {
				t.Fatalf("seller %d: got %v, %v; want not found", seller, figuresOf(got), err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("seller %d: %v; want %v", seller, err, want.figures)
		}
		if figuresOf(got) != want.figures || salesOf(got) != want.sales {
			t.Fatalf("seller %d: figures %v sales %v; want %v %v", seller, figuresOf(got), salesOf(got), want.figures, want.sales)
		}
	}
}

func TestResponseTimes_StateMachineFollowsTheLatestDailyRefresh(t *testing.T) {
	owner := t
	rapid.Check(t, func(t *rapid.T) {
		e, done := newPropertyRTEnv(t, owner, rtNow)
		defer done()
		stop := e.rts.FollowManual(e.clock, func(err error) { t.Fatalf("refresh: %v", err) })
		defer stop()
		m := &rtMachine{e: e, locs: map[int64]*time.Location{}}
		for _, site := range []string{"MLA", "MLM"} {
			id := e.mustSeller(t, site)
			m.sellers = append(m.sellers, id)
		}
		m.locs[m.sellers[0]] = ba
		m.locs[m.sellers[1]] = mustLoc("America/Mexico_City")
		t.Repeat(rapid.StateMachineActions(m))
	})
}
