package questions_test

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/internal/teststore"
	"github.com/marketplace/marketplace/notify"
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

// An ask draws two ids (its question's and its event's) and an answer one
// (its event's): on PostgreSQL the draw goes with the transaction's first
// read (internal/roundtrips counts the round trips), elsewhere it is drawn
// at once. Counted by the sequences themselves, whichever draws.
func TestAskAndAnswer_DrawTheirIDsOnceEach(t *testing.T) {
	e := newEnv(t)
	seller, buyer := e.mustUser(t), e.mustUser(t)
	item := e.mustItem(t, seller)
	probe := func() (question, event uint64) {
		t.Helper()
		ids, err := storage.NextOfEach(e.ctx, e.store, []string{"questions", notify.OutboxSequence})
		if err != nil {
			t.Fatal(err)
		}
		return ids[0], ids[1]
	}
	q0, e0 := probe()
	q, err := e.q.Ask(e.ctx, buyer, questions.AskInput{Text: "Is it new?", ItemID: item})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.q.Answer(e.ctx, seller, questions.AnswerInput{QuestionID: q.ID, Text: "Yes."}); err != nil {
		t.Fatal(err)
	}
	q1, e1 := probe()
	if got := q1 - q0 - 1; got != 1 {
		t.Errorf("question ids drawn by an ask and an answer: %d, want 1", got)
	}
	if got := e1 - e0 - 1; got != 2 {
		t.Errorf("event ids drawn by an ask and an answer: %d, want 2", got)
	}
}

// tombstoneStore keeps what a transaction deletes as a marker that reads
// and iterators pass over, as Badger does until a compaction drops it, and
// counts the keys iterators step on, the markers included.
type tombstoneStore struct {
	storage.Store
	steps atomic.Int64
}

var tombstone = []byte("\x00deleted\x00")

func (s *tombstoneStore) View(ctx context.Context, fn func(storage.Tx) error) error {
	return s.Store.View(ctx, func(tx storage.Tx) error { return fn(tombstoneTx{tx, &s.steps}) })
}

func (s *tombstoneStore) Update(ctx context.Context, fn func(storage.Tx) error) error {
	return s.Store.Update(ctx, func(tx storage.Tx) error { return fn(tombstoneTx{tx, &s.steps}) })
}

type tombstoneTx struct {
	storage.Tx
	steps *atomic.Int64
}

func (t tombstoneTx) Get(k []byte) ([]byte, error) {
	v, err := t.Tx.Get(k)
	if err == nil && bytes.Equal(v, tombstone) {
		return nil, storage.ErrNotFound
	}
	return v, err
}

func (t tombstoneTx) Delete(k []byte) error { return t.Tx.Set(k, tombstone) }

func (t tombstoneTx) Iterate(r storage.Range) storage.Iterator {
	it := &tombstoneIt{Iterator: t.Tx.Iterate(r), steps: t.steps}
	it.skip()
	return it
}

type tombstoneIt struct {
	storage.Iterator
	steps *atomic.Int64
}

func (it *tombstoneIt) skip() {
	for it.Iterator.Valid() {
		it.steps.Add(1)
		if v, err := it.Iterator.Value(); err != nil || !bytes.Equal(v, tombstone) {
			return
		}
		it.Iterator.Next()
	}
}

func (it *tombstoneIt) Next()           { it.Iterator.Next(); it.skip() }
func (it *tombstoneIt) Seek(key []byte) { it.Iterator.Seek(key); it.skip() }

// TestSearch_ByAskerStepsOverNoDeletedKeyOfAnAskerThatLeftTheClass: a
// search ordered by asker takes its askers of each class from the asker
// lists, so the unanswered class of a frequent asker whose questions were
// all answered, which holds a deleted key for each of them, is not walked:
// a page of one costs the same after 20 answered questions as after 400.
func TestSearch_ByAskerStepsOverNoDeletedKeyOfAnAskerThatLeftTheClass(t *testing.T) {
	ts := &tombstoneStore{Store: teststore.New(t)}
	e := newEnvOn(ts)
	seller := e.mustUser(t)
	frequent, other := e.mustUser(t), e.mustUser(t)
	if frequent > other {
		frequent, other = other, frequent // the frequent asker comes first in from_id ASC
	}
	item := e.mustItem(t, seller)
	e.mustAsk(t, other, item, "still there?")
	asked := 0
	askAndAnswer := func(upTo int) {
		for ; asked < upTo; asked++ {
			q := e.mustAsk(t, frequent, item, fmt.Sprintf("q%d", asked))
			e.mustAnswer(t, seller, q.ID, "yes")
		}
	}
	searches := []questions.SearchQuery{
		{SellerID: seller, Status: questions.StatusUnanswered, Sorts: []questions.Sort{{Field: questions.SortFromID, Type: "ASC"}}},
		{SellerID: seller, Sorts: []questions.Sort{{Field: questions.SortFromID, Type: "ASC"}, {Field: questions.SortItemID, Type: "ASC"}}},
		{ItemID: item, Status: questions.StatusUnanswered, Sorts: []questions.Sort{{Field: questions.SortFromID, Type: "ASC"}}},
	}
	measure := func() []int64 {
		out := make([]int64, len(searches))
		for i, q := range searches {
			q.Limit = 1
			ts.steps.Store(0)
			if _, err := e.q.Search(e.ctx, seller, q); err != nil {
				t.Fatal(err)
			}
			out[i] = ts.steps.Load()
		}
		return out
	}
	askAndAnswer(20)
	small := measure()
	askAndAnswer(400)
	large := measure()
	for i, q := range searches {
		if large[i] > small[i]+5 {
			t.Errorf("%+v: stepped on %d keys after 20 answered questions, %d after 400", q, small[i], large[i])
		}
	}
}
