package questions_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/questions"
	"github.com/marketplace/marketplace/stock"
)

// modelQuestion is the plain model of one question.
type modelQuestion struct {
	id     int64
	seller int64
	buyer  int64
	item   string
	status string
	hidden bool
}

// lifecycleMachine drives ask / answer / delete / hide / block / unblock /
// close item against the service and a plain model of the same rules.
type lifecycleMachine struct {
	e       *env
	users   []int64
	items   []string
	sellers map[string]int64
	closed  map[string]bool
	blocked map[[2]int64]bool
	qs      []*modelQuestion
}

func newLifecycleMachine(t *rapid.T, e *env) *lifecycleMachine {
	m := &lifecycleMachine{e: e, sellers: map[string]int64{}, closed: map[string]bool{}, blocked: map[[2]int64]bool{}}
	for range 4 {
		m.users = append(m.users, e.mustUser(t))
	}
	for _, seller := range m.users[:2] {
		for range 2 {
			item := e.mustItem(t, seller)
			m.items = append(m.items, item)
			m.sellers[item] = seller
		}
	}
	return m
}

func wantKind(t *rapid.T, op string, err error, kind errs.Kind, ok bool) {
	if ok {
		if err != nil {
			t.Fatalf("%s: unexpected error %v", op, err)
		}
		return
	}
	if !errs.Is(err, kind) {
		t.Fatalf("%s: err = %v, want %v", op, err, kind)
	}
}

func (m *lifecycleMachine) Ask(t *rapid.T) {
	buyer := rapid.SampledFrom(m.users).Draw(t, "buyer")
	item := rapid.SampledFrom(m.items).Draw(t, "item")
	seller := m.sellers[item]
	m.e.clock.Advance(time.Second)
	q, err := m.e.q.Ask(m.e.ctx, buyer, questions.AskInput{Text: "question?", ItemID: item})
	switch {
	case m.closed[item]:
		wantKind(t, "ask on closed item", err, errs.Invalid, false)
	case buyer == seller:
		wantKind(t, "ask on own item", err, errs.Forbidden, false)
	case m.blocked[[2]int64{seller, buyer}]:
		wantKind(t, "ask while blocked", err, errs.Forbidden, false)
	default:
		wantKind(t, "ask", err, 0, true)
		m.qs = append(m.qs, &modelQuestion{id: q.ID, seller: seller, buyer: buyer, item: item, status: questions.StatusUnanswered})
	}
}

func (m *lifecycleMachine) pick(t *rapid.T) *modelQuestion {
	if len(m.qs) == 0 {
		t.Skip("no questions yet")
	}
	return rapid.SampledFrom(m.qs).Draw(t, "question")
}

// caller draws the question's seller most of the time, anyone otherwise.
func (m *lifecycleMachine) caller(t *rapid.T, q *modelQuestion) int64 {
	if rapid.Bool().Draw(t, "by seller") {
		return q.seller
	}
	return rapid.SampledFrom(m.users).Draw(t, "caller")
}

func (m *lifecycleMachine) Answer(t *rapid.T) {
	q := m.pick(t)
	caller := m.caller(t, q)
	_, err := m.e.q.Answer(m.e.ctx, caller, questions.AnswerInput{QuestionID: q.id, Text: "answer"})
	switch {
	case caller != q.seller:
		wantKind(t, "answer by other", err, errs.Forbidden, false)
	case q.status != questions.StatusUnanswered:
		wantKind(t, "answer "+q.status, err, errs.Invalid, false)
	default:
		wantKind(t, "answer", err, 0, true)
		q.status = questions.StatusAnswered
	}
}

func (m *lifecycleMachine) Delete(t *rapid.T) {
	q := m.pick(t)
	caller := m.caller(t, q)
	err := m.e.q.Delete(m.e.ctx, caller, q.id)
	switch {
	case caller != q.seller:
		wantKind(t, "delete by other", err, errs.Forbidden, false)
	case q.status == questions.StatusDeleted:
		wantKind(t, "delete twice", err, errs.Invalid, false)
	default:
		wantKind(t, "delete", err, 0, true)
		q.status = questions.StatusDeleted
	}
}

func (m *lifecycleMachine) Hide(t *rapid.T) {
	q := m.pick(t)
	caller := m.caller(t, q)
	_, err := m.e.q.Hide(m.e.ctx, caller, questions.HideInput{QuestionIDs: []int64{q.id}})
	if caller != q.seller {
		wantKind(t, "hide by other", err, errs.Forbidden, false)
		return
	}
	wantKind(t, "hide", err, 0, true)
	q.hidden = true
}

func (m *lifecycleMachine) Moderate(t *rapid.T) {
	q := m.pick(t)
	status := rapid.SampledFrom([]string{questions.StatusBanned, questions.StatusUnderReview, questions.StatusDisabled}).Draw(t, "status")
	if _, err := m.e.q.Moderate(m.e.ctx, q.id, questions.Moderation{Status: &status}); err != nil {
		t.Fatalf("moderate: %v", err)
	}
	q.status = status
}

func (m *lifecycleMachine) Block(t *rapid.T) {
	seller := rapid.SampledFrom(m.users).Draw(t, "seller")
	user := rapid.SampledFrom(m.users).Draw(t, "user")
	_, err := m.e.q.Block(m.e.ctx, seller, seller, user)
	if seller == user {
		wantKind(t, "block self", err, errs.Invalid, false)
		return
	}
	wantKind(t, "block", err, 0, true)
	m.blocked[[2]int64{seller, user}] = true
}

func (m *lifecycleMachine) Unblock(t *rapid.T) {
	seller := rapid.SampledFrom(m.users).Draw(t, "seller")
	user := rapid.SampledFrom(m.users).Draw(t, "user")
	err := m.e.q.Unblock(m.e.ctx, seller, seller, user)
	key := [2]int64{seller, user}
	if !m.blocked[key] {
		wantKind(t, "unblock not blocked", err, errs.NotFound, false)
		return
	}
	wantKind(t, "unblock", err, 0, true)
	delete(m.blocked, key)
}

func (m *lifecycleMachine) CloseItem(t *rapid.T) {
	item := rapid.SampledFrom(m.items).Draw(t, "item")
	closed := stock.StatusClosed
	if _, err := m.e.stock.UpdateItem(m.e.ctx, m.sellers[item], item, stock.ItemUpdate{Status: &closed}); err != nil {
		t.Fatalf("close item: %v", err)
	}
	m.closed[item] = true
	for _, q := range m.qs {
		if q.item == item && q.status == questions.StatusUnanswered {
			q.status = questions.StatusClosedUnanswered
		}
	}
}

func (m *lifecycleMachine) Check(t *rapid.T) {
	answered := map[int64]int64{}
	for _, q := range m.qs {
		if q.status == questions.StatusAnswered {
			answered[q.buyer]++
		}
	}
	for _, q := range m.qs {
		got, err := m.e.q.Question(m.e.ctx, q.seller, q.id, false)
		if err != nil {
			t.Fatalf("read %d: %v", q.id, err)
		}
		if got.Status != q.status || got.DeletedFromListing != q.hidden || *got.From.AnsweredQuestions != answered[q.buyer] {
			t.Fatalf("question %d: got %s hidden=%v answered=%d, model %s hidden=%v answered=%d",
				q.id, got.Status, got.DeletedFromListing, *got.From.AnsweredQuestions, q.status, q.hidden, answered[q.buyer])
		}
	}
	// The public listing of each item: visible questions, newest first.
	for _, item := range m.items {
		var want []int64
		for _, q := range slices.Backward(m.qs) {
			if q.item == item && !q.hidden && (q.status == questions.StatusUnanswered ||
				q.status == questions.StatusAnswered || q.status == questions.StatusClosedUnanswered) {
				want = append(want, q.id)
			}
		}
		res, err := m.e.q.Search(m.e.ctx, 0, questions.SearchQuery{ItemID: item, Limit: 1000})
		if err != nil {
			t.Fatalf("search item: %v", err)
		}
		if got := ids(res); fmt.Sprint(got) != fmt.Sprint(want) || res.Total != len(want) {
			t.Fatalf("public listing of %s = %v, model %v", item, got, want)
		}
	}
	// The index-backed seller search (its counters and status indexes).
	for _, seller := range m.users[:2] {
		for _, status := range append([]string{""}, questions.Statuses...) {
			var want []int64
			for _, q := range slices.Backward(m.qs) {
				if q.seller == seller && (status == "" || q.status == status) {
					want = append(want, q.id)
				}
			}
			res, err := m.e.q.Search(m.e.ctx, seller, questions.SearchQuery{SellerID: seller, Status: status, Limit: 1000})
			if err != nil {
				t.Fatalf("search seller: %v", err)
			}
			if got := ids(res); fmt.Sprint(got) != fmt.Sprint(want) || res.Total != len(want) {
				t.Fatalf("seller %d status %q = %v (total %d), model %v", seller, status, got, res.Total, want)
			}
		}
	}
}

func ids(res questions.SearchResult) []int64 {
	var out []int64
	for _, q := range res.Questions {
		out = append(out, q.ID)
	}
	return out
}

func TestLifecycle_StateMachineMatchesModel(t *testing.T) {
	owner := t
	rapid.Check(t, func(t *rapid.T) {
		e, done := newPropertyEnv(t, owner)
		defer done()
		m := newLifecycleMachine(t, e)
		t.Repeat(rapid.StateMachineActions(m))
	})
}
