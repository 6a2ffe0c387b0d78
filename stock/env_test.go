package stock_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/internal/teststore"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/stock"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/badger"
)

// env is the stock service with the accounts it needs, over one store.
type env struct {
	tb    fataler
	store storage.Store
	clock *clock.Manual
	acc   *accounts.Service
	svc   *stock.Service
}

var ctx = context.Background()

// fataler is what the env functions need of a test: *testing.T, *testing.B and
// *rapid.T all have it.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

func newEnvOn(tb fataler, st storage.Store) *env {
	tb.Helper()
	clk := clock.NewManual(time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC))
	g := geo.New(st, clk)
	return &env{tb: tb, store: st, clock: clk, acc: accounts.New(st, clk, g), svc: stock.New(st, clk, g)}
}

func newEnv(tb testing.TB) *env { return newEnvOn(tb, teststore.New(tb)) }

// newPropertyEnv is newEnv for one iteration of a property test: the
// iteration closes it with the returned function before it ends.
func newPropertyEnv(t *rapid.T, owner testing.TB) (*env, func()) {
	st, done := teststore.Open(t, owner)
	return newEnvOn(t, st), done
}

func newBadgerEnv(tb testing.TB) *env {
	tb.Helper()
	st, err := badger.Open(tb.TempDir(), badger.Options{})
	if err != nil {
		tb.Fatalf("open badger: %v", err)
	}
	tb.Cleanup(func() { _ = st.Close() })
	return newEnvOn(tb, st)
}

func (e *env) mustUser(site string, tags ...string) int64 {
	e.tb.Helper()
	u, err := e.acc.CreateUser(ctx, accounts.NewUser{Nickname: "SELLER", SiteID: site, Tags: tags})
	if err != nil {
		e.tb.Fatalf("create user: %v", err)
	}
	return u.ID
}

func (e *env) mustStore(owner int64, tags ...string) string {
	e.tb.Helper()
	st, err := e.acc.CreateStore(ctx, owner, accounts.NewStore{Description: "warehouse", Tags: tags})
	if err != nil {
		e.tb.Fatalf("create store: %v", err)
	}
	return st.ID
}

// mustSeller is an MLA seller with warehouse_management and n stock
// location stores.
func (e *env) mustSeller(n int) (int64, []string) {
	e.tb.Helper()
	id := e.mustUser("MLA", "warehouse_management")
	var stores []string
	for i := 0; i < n; i++ {
		stores = append(stores, e.mustStore(id, "stock_location"))
	}
	return id, stores
}

func multiItem(title, price string, locs ...stock.StockLocation) stock.NewItem {
	return stock.NewItem{Title: title, CategoryID: "MLA1055", Price: money.MustParse(price),
		ListingTypeID: "gold_special", CurrencyID: "ARS", StockLocations: locs}
}

func plainItem(title, price string, qty int64) stock.NewItem {
	return stock.NewItem{Title: title, CategoryID: "MLA1055", Price: money.MustParse(price),
		ListingTypeID: "gold_special", CurrencyID: "ARS", AvailableQuantity: &qty}
}

func loc(store string, q int64) stock.StockLocation {
	return stock.StockLocation{StoreID: store, Quantity: q}
}

func (e *env) mustPublishMulti(seller int64, in stock.NewItem) stock.Published {
	e.tb.Helper()
	p, err := e.svc.PublishMultiOrigin(ctx, seller, in)
	if err != nil {
		e.tb.Fatalf("publish multi-origin: %v", err)
	}
	return p
}

func (e *env) mustPublish(seller int64, in stock.NewItem) stock.Published {
	e.tb.Helper()
	p, err := e.svc.Publish(ctx, seller, in)
	if err != nil {
		e.tb.Fatalf("publish: %v", err)
	}
	return p
}

func ver(v int64) string { return fmt.Sprint(v) }

// putStock is PutStock with the version as the x-version header sends it,
// read by the header's rule (ParseVersion) first, as the HTTP server does.
func (e *env) putStock(caller int64, id, rawVersion string, locs []stock.StockLocation) (stock.StockUpdate, error) {
	version, err := stock.ParseVersion(rawVersion)
	if err != nil {
		return stock.StockUpdate{}, err
	}
	return e.svc.PutStock(ctx, caller, id, version, locs)
}
