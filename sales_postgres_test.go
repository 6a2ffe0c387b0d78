package marketplace_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/pgtest"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/sales"
	"github.com/marketplace/marketplace/stock"
)

func mustUserOn(tb testing.TB, m *marketplace.Marketplace, nick string, tags ...string) int64 {
	tb.Helper()
	u, _, err := m.CreateUser(context.Background(), accounts.NewUser{Nickname: nick, SiteID: "MLA", Tags: tags})
	if err != nil {
		tb.Fatalf("create user: %v", err)
	}
	return u.ID
}

// raceOnEngines runs the purchases ins at once, alternating the engines,
// and returns the orders made; a refused purchase must be Invalid.
func raceOnEngines(t *testing.T, engines []*marketplace.Marketplace, ins []sales.NewOrder) []sales.Order {
	t.Helper()
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		orders []sales.Order
		errc   = make(chan error, len(ins))
		start  = make(chan struct{})
	)
	for i, in := range ins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			o, err := engines[i%len(engines)].Sales.PlaceOrder(context.Background(), in)
			switch {
			case err == nil:
				mu.Lock()
				orders = append(orders, o)
				mu.Unlock()
			case !errs.Is(err, errs.Invalid):
				errc <- fmt.Errorf("purchase %d on engine %d: %v; want success or Invalid", i, i%len(engines), err)
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	return orders
}

// wantSoldOut checks, on every engine, that the item sold sold units
// and has none left, paused as out_of_stock, its stock moved once a sale.
func wantSoldOut(t *testing.T, engines []*marketplace.Marketplace, seller int64, item stock.Published, sold int64) {
	t.Helper()
	ctx := context.Background()
	for i, m := range engines {
		it, err := m.Stock.Item(ctx, item.ID)
		if err != nil {
			t.Fatal(err)
		}
		if it.AvailableQuantity != 0 || it.SoldQuantity != sold || it.Status != stock.StatusPaused ||
			!slices.Equal(it.SubStatus, []string{stock.SubStatusOutOfStock}) {
			t.Fatalf("engine %d: item %d available, %d sold, %s %v", i, it.AvailableQuantity, it.SoldQuantity, it.Status, it.SubStatus)
		}
		st, err := m.Stock.Stock(ctx, seller, item.UserProductID)
		if err != nil || st.Version != 1+sold {
			t.Fatalf("engine %d: stock version %d (%v), want %d", i, st.Version, err, 1+sold)
		}
		res, err := m.Sales.Search(ctx, seller, sales.SearchQuery{Seller: seller, Status: sales.StatusPaid, Limit: 50})
		if err != nil || res.Paging.Total != int(sold) {
			t.Fatalf("engine %d: the seller's paid orders %+v %v, want %d", i, res.Paging, err, sold)
		}
	}
}

func TestSalesOnPostgres_TwoEnginesSellEachUnitOnce(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := context.Background()
	engines := []*marketplace.Marketplace{mustOpenPostgres(t, url), mustOpenPostgres(t, url)}
	a := engines[0]
	const buyersN = 8
	var buyers []int64
	for range buyersN {
		buyers = append(buyers, mustUserOn(t, a, "BUYER"))
	}

	t.Run("Plain", func(t *testing.T) {
		seller := mustUserOn(t, a, "PLAIN")
		q := int64(3)
		item, err := a.Stock.Publish(ctx, seller, stock.NewItem{Title: "Mesa de roble", CategoryID: "MLA1055",
			Price: money.MustParse("100"), ListingTypeID: "gold_special", CurrencyID: "ARS", AvailableQuantity: &q})
		if err != nil {
			t.Fatal(err)
		}
		var ins []sales.NewOrder
		for _, b := range buyers {
			ins = append(ins, sales.NewOrder{BuyerID: b, ItemID: item.ID, Quantity: 1})
		}
		if orders := raceOnEngines(t, engines, ins); len(orders) != 3 {
			t.Fatalf("%d purchases succeeded, want 3", len(orders))
		}
		wantSoldOut(t, engines, seller, item, 3)
	})

	t.Run("MultiOrigin", func(t *testing.T) {
		seller := mustUserOn(t, a, "WAREHOUSE", "warehouse_management")
		var stores []string
		for range 2 {
			st, err := a.Accounts.CreateStore(ctx, seller, accounts.NewStore{Description: "warehouse", Tags: []string{"stock_location"}})
			if err != nil {
				t.Fatal(err)
			}
			stores = append(stores, st.ID)
		}
		item, err := a.Stock.PublishMultiOrigin(ctx, seller, stock.NewItem{Title: "Bicicleta", CategoryID: "MLA1055",
			Price: money.MustParse("100"), ListingTypeID: "gold_special", CurrencyID: "ARS",
			StockLocations: []stock.StockLocation{{StoreID: stores[0], Quantity: 2}, {StoreID: stores[1], Quantity: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		var ins []sales.NewOrder
		for i, b := range buyers {
			in := sales.NewOrder{BuyerID: b, ItemID: item.ID, Quantity: 1}
			if i%2 == 1 {
				in.StoreID = stores[i/2%2]
			}
			ins = append(ins, in)
		}
		orders := raceOnEngines(t, engines, ins)
		from := map[string]int{}
		for _, o := range orders {
			from[o.OrderItems[0].Stock[0].StoreID]++
		}
		if len(orders) != 3 || from[stores[0]] != 2 || from[stores[1]] != 1 {
			t.Fatalf("%d purchases succeeded, units per store %v; want 3, 2 and 1", len(orders), from)
		}
		wantSoldOut(t, engines, seller, item, 3)
	})
}

func TestSalesOnPostgres_TwoBuyersOfTheLastUnitOnTwoEnginesGetOneOrder(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := context.Background()
	engines := []*marketplace.Marketplace{mustOpenPostgres(t, url), mustOpenPostgres(t, url)}
	a, b := engines[0], engines[1]
	seller := mustUserOn(t, a, "PLAIN")
	buyers := []int64{mustUserOn(t, a, "BUYER"), mustUserOn(t, b, "BUYER")}
	// Several rounds: each sells the last unit once, and the winner's
	// cancellation on the other engine puts it back on sale.
	q := int64(1)
	item, err := a.Stock.Publish(ctx, seller, stock.NewItem{Title: "Mesa de roble", CategoryID: "MLA1055",
		Price: money.MustParse("100"), ListingTypeID: "gold_special", CurrencyID: "ARS", AvailableQuantity: &q})
	if err != nil {
		t.Fatal(err)
	}
	for round := range 5 {
		orders := raceOnEngines(t, engines, []sales.NewOrder{
			{BuyerID: buyers[0], ItemID: item.ID, Quantity: 1}, {BuyerID: buyers[1], ItemID: item.ID, Quantity: 1}})
		if len(orders) != 1 {
			t.Fatalf("round %d: %d purchases of the last unit succeeded, want 1", round, len(orders))
		}
		it, err := b.Stock.Item(ctx, item.ID)
		if err != nil || it.Status != stock.StatusPaused || it.SoldQuantity != 1 {
			t.Fatalf("round %d: item %s sold %d (%v)", round, it.Status, it.SoldQuantity, err)
		}
		if _, err := engines[(round+1)%2].Sales.Cancel(ctx, orders[0].ID); err != nil {
			t.Fatalf("round %d: cancel: %v", round, err)
		}
		it, err = engines[round%2].Stock.Item(ctx, item.ID)
		if err != nil || it.Status != stock.StatusActive || it.AvailableQuantity != 1 || it.SoldQuantity != 0 {
			t.Fatalf("round %d: after the cancellation: %s available %d sold %d (%v)", round, it.Status, it.AvailableQuantity, it.SoldQuantity, err)
		}
	}
}
