package marketplace_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/questions"
	"github.com/marketplace/marketplace/stock"
	"github.com/marketplace/marketplace/storage/badger"
)

// runConcurrently runs fn(i) for i in [0, n) on n goroutines and fails on
// the first error.
func runConcurrently(t *testing.T, n int, fn func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errc := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errc <- fn(i)
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestNoHotKeys_ConcurrentWritersOfDifferentRecordsDoNotConflictOnBadger
// runs writers of different records of every kind side by side on Badger:
// users, stores, publications in one site (one search list), asks to one
// seller, answers, stock PUTs on different user products. None of them may
// write a key that the others also write, so almost no Update is run again.
// The only ones allowed are counter compactions meeting each other.
func TestNoHotKeys_ConcurrentWritersOfDifferentRecordsDoNotConflictOnBadger(t *testing.T) {
	m, err := marketplace.Open(context.Background(), badger.Dir(t.TempDir()), marketplace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	ctx := context.Background()
	const n = 64
	st := m.Store().(*badger.Store)
	phase := func(name string, fn func(i int) error) {
		t.Helper()
		before := st.Conflicts()
		runConcurrently(t, n, fn)
		if c := st.Conflicts() - before; c > n/16 {
			t.Fatalf("%s: %d of %d concurrent Updates were run again after a conflict; want near zero", name, c, n)
		} else {
			t.Logf("%s: %d conflicts in %d Updates", name, c, n)
		}
	}

	seller, _, err := m.CreateUser(ctx, accounts.NewUser{Nickname: "SELLER", SiteID: "MLA", Tags: []string{"warehouse_management"}})
	if err != nil {
		t.Fatal(err)
	}
	buyers := make([]int64, n)
	phase("create users", func(i int) error {
		u, err := m.Accounts.CreateUser(ctx, accounts.NewUser{Nickname: fmt.Sprint("BUYER", i), SiteID: "MLA"})
		buyers[i] = u.ID
		return err
	})
	stores := make([]string, n)
	phase("create stores", func(i int) error {
		s, err := m.Accounts.CreateStore(ctx, seller.ID, accounts.NewStore{Description: "warehouse", Tags: []string{"stock_location"}})
		stores[i] = s.ID
		return err
	})
	publish := func(i int) (stock.Published, error) {
		return m.Stock.PublishMultiOrigin(ctx, seller.ID, stock.NewItem{
			Title: fmt.Sprintf("Auriculares inalambricos modelo %d", i), CategoryID: "MLA1055", Price: money.FromInt(1500),
			ListingTypeID: "gold_special", CurrencyID: "ARS", Condition: "new", Channels: []string{"marketplace"},
			StockLocations: []stock.StockLocation{{StoreID: stores[i], Quantity: 5}},
		})
	}
	// The first publication of a new store marks its search index complete.
	if _, err := publish(0); err != nil {
		t.Fatal(err)
	}
	items := make([]stock.Published, n)
	phase("publish in one site", func(i int) error {
		p, err := publish(i)
		items[i] = p
		return err
	})
	asked := make([]questions.Question, n)
	phase("ask one seller", func(i int) error {
		q, err := m.Questions.Ask(ctx, buyers[i], questions.AskInput{Text: "Tiene garantia?", ItemID: items[i].ID})
		asked[i] = q
		return err
	})
	phase("answer", func(i int) error {
		_, err := m.Questions.Answer(ctx, seller.ID, questions.AnswerInput{QuestionID: asked[i].ID, Text: "Si, un año."})
		return err
	})
	phase("put stock on different user products", func(i int) error {
		_, err := m.Stock.PutStock(ctx, seller.ID, items[i].UserProductID, 1,
			[]stock.StockLocation{{StoreID: stores[i], Quantity: 7}})
		return err
	})

	res, err := m.Questions.Search(ctx, seller.ID, questions.SearchQuery{SellerID: seller.ID, Status: questions.StatusAnswered, Limit: 1})
	if err != nil || res.Total != n {
		t.Fatalf("answered questions of the seller: %d, %v; want %d", res.Total, err, n)
	}
	found, err := m.Stock.Search(ctx, stock.SearchQuery{SiteID: "MLA", Q: "auriculares", Limit: 1})
	if err != nil || found.Total != n+1 {
		t.Fatalf("site search total: %d, %v; want %d", found.Total, err, n+1)
	}
}
