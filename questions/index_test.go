package questions_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/internal/teststore"
	"github.com/marketplace/marketplace/questions"
	"github.com/marketplace/marketplace/stock"
	"github.com/marketplace/marketplace/storage"
)

// countingStore counts the keys a transaction reads (Get calls and
// iterator steps), to check that a search reads a page, not the history.
type countingStore struct {
	storage.Store
	reads atomic.Int64
}

func (s *countingStore) View(ctx context.Context, fn func(storage.Tx) error) error {
	return s.Store.View(ctx, func(tx storage.Tx) error { return fn(countingTx{tx, &s.reads}) })
}

func (s *countingStore) Update(ctx context.Context, fn func(storage.Tx) error) error {
	return s.Store.Update(ctx, func(tx storage.Tx) error { return fn(countingTx{tx, &s.reads}) })
}

type countingTx struct {
	storage.Tx
	reads *atomic.Int64
}

func (t countingTx) Get(k []byte) ([]byte, error) {
	t.reads.Add(1)
	return t.Tx.Get(k)
}

func (t countingTx) Iterate(r storage.Range) storage.Iterator {
	return countingIt{t.Tx.Iterate(r), t.reads}
}

type countingIt struct {
	storage.Iterator
	reads *atomic.Int64
}

func (it countingIt) Valid() bool {
	v := it.Iterator.Valid()
	if v {
		it.reads.Add(1)
	}
	return v
}

// TestSearch_EverySearchReadsItsPageWhateverTheNumberOfQuestions runs
// seller and item searches in every kind of order and filter, by every
// kind of caller, on 600 questions and again on 3,000: the keys each one
// reads (index keys up to the page's end, one seek per group of a mixed
// order, the tallies of its classes, the page's records) are the same.
func TestSearch_EverySearchReadsItsPageWhateverTheNumberOfQuestions(t *testing.T) {
	cs := &countingStore{Store: teststore.New(t)}
	clk := clock.NewManual(start)
	g := geo.New(cs, clk)
	acc := accounts.New(cs, clk, g)
	sk := stock.New(cs, clk, g)
	e := &env{ctx: context.Background(), store: cs, clock: clk, acc: acc, stock: sk, q: questions.New(cs, clk, acc, sk)}
	seller, stranger := e.mustUser(t), e.mustUser(t)
	buyers := []int64{e.mustUser(t), e.mustUser(t), e.mustUser(t)}
	items := []string{e.mustItem(t, seller), e.mustItem(t, seller)}
	asked := 0
	ask := func(upTo int) {
		for ; asked < upTo; asked++ {
			q := e.mustAsk(t, buyers[asked%3], items[asked%2], fmt.Sprintf("q%d", asked))
			if asked%5 == 0 {
				e.mustAnswer(t, seller, q.ID, "yes")
			}
		}
	}
	sorts := func(pairs ...string) []questions.Sort {
		var out []questions.Sort
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, questions.Sort{Field: pairs[i], Type: pairs[i+1]})
		}
		return out
	}
	type search struct {
		caller int64
		q      questions.SearchQuery
	}
	var searches []search
	for _, srt := range [][]questions.Sort{
		nil,
		sorts(questions.SortDateCreated, "ASC"),
		sorts(questions.SortItemID, "DESC"),
		sorts(questions.SortFromID, "ASC", questions.SortDateCreated, "DESC"),
		sorts(questions.SortItemID, "ASC", questions.SortFromID, "DESC", questions.SortDateCreated, "ASC"),
		sorts(questions.SortFromID, "DESC", questions.SortSellerID, "ASC", questions.SortItemID, "ASC", questions.SortDateCreated, "DESC"),
	} {
		for _, q := range []questions.SearchQuery{
			{SellerID: seller},
			{SellerID: seller, Status: questions.StatusAnswered},
			{SellerID: seller, From: buyers[1]},
			{SellerID: seller, TotalDivisions: 5, Division: 1},
		} {
			q.Sorts, q.Offset, q.Limit = srt, 20, 30
			searches = append(searches, search{seller, q})
		}
		for _, caller := range []int64{0, stranger, buyers[0], seller} {
			for _, q := range []questions.SearchQuery{
				{ItemID: items[0]},
				{ItemID: items[0], Status: questions.StatusUnanswered},
				{ItemID: items[0], From: buyers[0]},
				{ItemID: items[0], TotalDivisions: 5, Division: 2},
			} {
				q.Sorts, q.Offset, q.Limit = srt, 20, 30
				searches = append(searches, search{caller, q})
			}
		}
	}
	measure := func() []int64 {
		out := make([]int64, len(searches))
		for i, s := range searches {
			cs.reads.Store(0)
			res, err := e.q.Search(e.ctx, s.caller, s.q)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Questions) != s.q.Limit {
				t.Fatalf("%+v by %d: a page of %d, want %d", s.q, s.caller, len(res.Questions), s.q.Limit)
			}
			out[i] = cs.reads.Load()
		}
		return out
	}
	ask(600)
	small := measure()
	ask(3000)
	large := measure()
	for i, s := range searches {
		if large[i] > small[i]+5 {
			t.Errorf("%+v by %d: read %d keys on 600 questions, %d on 3,000", s.q, s.caller, small[i], large[i])
		}
	}
}

// drawWatchingStore counts the ids drawn from its sequences while one of
// its Updates runs.
type drawWatchingStore struct {
	storage.Store
	updating    atomic.Int64
	drawnInside atomic.Int64
	drawn       atomic.Int64
}

func (s *drawWatchingStore) Update(ctx context.Context, fn func(storage.Tx) error) error {
	s.updating.Add(1)
	defer s.updating.Add(-1)
	return s.Store.Update(ctx, fn)
}

func (s *drawWatchingStore) Sequence(name string) (storage.Sequence, error) {
	q, err := s.Store.Sequence(name)
	return watchedSequence{q, s}, err
}

type watchedSequence struct {
	storage.Sequence
	s *drawWatchingStore
}

func (q watchedSequence) Next(ctx context.Context) (uint64, error) {
	q.s.drawn.Add(1)
	if q.s.updating.Load() > 0 {
		q.s.drawnInside.Add(1)
	}
	return q.Sequence.Next(ctx)
}

// Where a draw is a round trip to the database (PostgreSQL), a transaction
// that drew its ids would hold a connection while it waited.
func TestAskAndAnswer_DrawTheirIDsBeforeTheirTransaction(t *testing.T) {
	st := &drawWatchingStore{Store: teststore.New(t)}
	e := newEnvOn(st)
	seller, buyer := e.mustUser(t), e.mustUser(t)
	item := e.mustItem(t, seller)
	st.drawn.Store(0)
	st.drawnInside.Store(0) // users and items draw theirs inside
	q, err := e.q.Ask(e.ctx, buyer, questions.AskInput{Text: "Is it new?", ItemID: item})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.q.Answer(e.ctx, seller, questions.AnswerInput{QuestionID: q.ID, Text: "Yes."}); err != nil {
		t.Fatal(err)
	}
	if got := st.drawn.Load(); got != 3 {
		t.Errorf("ids drawn by an ask and an answer: %d, want 3 (the question's and two events')", got)
	}
	if got := st.drawnInside.Load(); got != 0 {
		t.Errorf("ids drawn inside a transaction: %d, want 0", got)
	}
}
