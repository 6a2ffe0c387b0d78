package questions_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/internal/kv"
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

func TestSearch_SellerPageReadsOnlyThePageNotEveryQuestion(t *testing.T) {
	cs := &countingStore{Store: teststore.New(t)}
	clk := clock.NewManual(start)
	g := geo.New(cs, clk)
	acc := accounts.New(cs, clk, g)
	sk := stock.New(cs, clk, g)
	e := &env{ctx: context.Background(), store: cs, clock: clk, acc: acc, stock: sk, q: questions.New(cs, clk, acc, sk)}
	seller, buyer := e.mustUser(t), e.mustUser(t)
	item := e.mustItem(t, seller)
	const n = 2000
	for i := range n {
		e.mustAsk(t, buyer, item, fmt.Sprintf("q%d", i))
	}
	for _, sorts := range [][]questions.Sort{
		nil,
		{{Field: questions.SortItemID, Type: "DESC"}},
		{{Field: questions.SortFromID, Type: "ASC"}, {Field: questions.SortDateCreated, Type: "ASC"}},
		{{Field: questions.SortSellerID, Type: "ASC"}},
	} {
		for _, status := range []string{"", questions.StatusUnanswered} {
			cs.reads.Store(0)
			res, err := e.q.Search(e.ctx, seller, questions.SearchQuery{SellerID: seller, Status: status, Sorts: sorts, Offset: 100, Limit: 50})
			if err != nil {
				t.Fatal(err)
			}
			if res.Total != n || len(res.Questions) != 50 {
				t.Fatalf("total %d, page %d", res.Total, len(res.Questions))
			}
			// The counter's shards, offset+limit index keys, and the
			// page's 50 records; in the order of items or askers, one
			// status is read from the index of every status, with the
			// record of each key up to the page's end (all UNANSWERED
			// here).
			records := int64(50)
			if status != "" && len(sorts) > 0 && (sorts[0].Field == questions.SortItemID || sorts[0].Field == questions.SortFromID) {
				records = 150
			}
			if got, limit := cs.reads.Load(), int64(kv.MaxCounterShards+150+5)+records; got > limit {
				t.Fatalf("sorts %v, status %q: the search read %d keys for a page of 50 at offset 100; at most %d expected", sorts, status, got, limit)
			}
		}
	}

	// An asker's questions to the seller are read from the asker's part of
	// the index: the other asker's 2,000 questions are not touched.
	other := e.mustUser(t)
	for i := range 3 {
		e.mustAsk(t, other, item, fmt.Sprintf("other %d", i))
	}
	cs.reads.Store(0)
	res, err := e.q.Search(e.ctx, seller, questions.SearchQuery{SellerID: seller, From: other, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != 3 || len(res.Questions) != 3 {
		t.Fatalf("from: total %d, page %d", res.Total, len(res.Questions))
	}
	if got := cs.reads.Load(); got > 3+3+5 {
		t.Fatalf("from: the search read %d keys for an asker with 3 questions", got)
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
