package sales_test

import (
	"context"
	"testing"
	"time"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/fees"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/internal/teststore"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/sales"
	"github.com/marketplace/marketplace/stock"
	"github.com/marketplace/marketplace/storage"
)

var ctx = context.Background()

// fataler is what the env functions need of a test: *testing.T,
// *testing.B and *rapid.T all have it.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// env is the sales service with the services below it, over one store.
type env struct {
	tb    fataler
	store storage.Store
	clock *clock.Manual
	acc   *accounts.Service
	stock *stock.Service
	sales *sales.Service
}

func newEnvOn(tb fataler, st storage.Store) *env {
	tb.Helper()
	clk := clock.NewManual(time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC))
	g := geo.New(st, clk)
	if err := g.LoadBuiltin(ctx); err != nil {
		tb.Fatalf("load sites: %v", err)
	}
	stk := stock.New(st, clk, g)
	return &env{tb: tb, store: st, clock: clk, acc: accounts.New(st, clk, g), stock: stk,
		sales: sales.New(st, clk, stk, fees.New(st, clk, g))}
}

func newEnv(tb testing.TB) *env { return newEnvOn(tb, teststore.New(tb)) }

func (e *env) mustUser(nick string, tags ...string) int64 {
	e.tb.Helper()
	u, err := e.acc.CreateUser(ctx, accounts.NewUser{Nickname: nick, SiteID: "MLA", Tags: tags})
	if err != nil {
		e.tb.Fatalf("create user: %v", err)
	}
	return u.ID
}

func (e *env) mustStore(owner int64) string {
	e.tb.Helper()
	st, err := e.acc.CreateStore(ctx, owner, accounts.NewStore{Description: "warehouse", Tags: []string{"stock_location"}})
	if err != nil {
		e.tb.Fatalf("create store: %v", err)
	}
	return st.ID
}

// mustMultiItem publishes an item of a new warehouse_management seller
// with quantities qs in as many stores.
func (e *env) mustMultiItem(qs ...int64) (seller int64, stores []string, item stock.Published) {
	e.tb.Helper()
	seller = e.mustUser("SELLER", "warehouse_management")
	var locs []stock.StockLocation
	for _, q := range qs {
		id := e.mustStore(seller)
		stores = append(stores, id)
		locs = append(locs, stock.StockLocation{StoreID: id, Quantity: q})
	}
	p, err := e.stock.PublishMultiOrigin(ctx, seller, stock.NewItem{Title: "Bicicleta rodado 29", CategoryID: "MLA1055",
		Price: money.MustParse("1500.50"), ListingTypeID: "gold_special", CurrencyID: "ARS", StockLocations: locs})
	if err != nil {
		e.tb.Fatalf("publish: %v", err)
	}
	return seller, stores, p
}

func (e *env) mustPlainItem(q int64) (seller int64, item stock.Published) {
	e.tb.Helper()
	seller = e.mustUser("PLAIN")
	p, err := e.stock.Publish(ctx, seller, stock.NewItem{Title: "Mesa de roble", CategoryID: "MLA1055",
		Price: money.MustParse("100"), ListingTypeID: "gold_special", CurrencyID: "ARS", AvailableQuantity: &q})
	if err != nil {
		e.tb.Fatalf("publish: %v", err)
	}
	return seller, p
}
