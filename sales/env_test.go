package sales_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/fees"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/internal/teststore"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/notify"
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
	geo   *geo.Service
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
	return &env{tb: tb, store: st, clock: clk, geo: g, acc: accounts.New(st, clk, g), stock: stk,
		sales: sales.New(st, clk, stk, fees.New(st, clk, g))}
}

func newEnv(tb testing.TB) *env { return newEnvOn(tb, teststore.New(tb)) }

// newPropertyEnv is newEnv for one iteration of a property test: the
// iteration closes it with the returned function before it ends.
func newPropertyEnv(t *rapid.T, owner testing.TB) (*env, func()) {
	st, done := teststore.Open(t, owner)
	return newEnvOn(t, st), done
}

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

// stamp is how sales write the clock's time t for an MLA order: in the
// site's time zone, with milliseconds and the offset.
func (e *env) stamp(t time.Time) string {
	e.tb.Helper()
	site, err := e.geo.Site(ctx, "MLA")
	if err != nil {
		e.tb.Fatalf("site: %v", err)
	}
	loc, err := time.LoadLocation(site.TimeZone)
	if err != nil {
		e.tb.Fatalf("time zone %s: %v", site.TimeZone, err)
	}
	return t.In(loc).Format(sales.TimeLayout)
}

// now is the clock's time as sales write it.
func (e *env) now() string { return e.stamp(e.clock.Now()) }

// sysPrefix is the namespace of the backends' own keys (a Badger
// sequence's lease): they move when an id is drawn, which a refused
// operation may do (ids may have gaps).
var sysPrefix = []byte("sys/")

// dump digests every key and value of the store but the backend's own,
// for comparing the whole state before and after an operation that must
// change nothing.
func (e *env) dump() uint64 {
	e.tb.Helper()
	h := fnv.New64a()
	err := e.store.View(ctx, func(tx storage.Tx) error {
		it := tx.Iterate(storage.Range{})
		defer it.Close()
		for ; it.Valid(); it.Next() {
			if bytes.HasPrefix(it.Key(), sysPrefix) {
				continue
			}
			v, err := it.Value()
			if err != nil {
				return err
			}
			// Lengths first, so that no two stores digest the same bytes.
			h.Write(binary.AppendUvarint(binary.AppendUvarint(nil, uint64(len(it.Key()))), uint64(len(v))))
			h.Write(it.Key())
			h.Write(v)
		}
		return nil
	})
	if err != nil {
		e.tb.Fatalf("dump: %v", err)
	}
	return h.Sum64()
}

// unchanged fails when the store differs from before (a dump).
func (e *env) unchanged(before uint64, op string) {
	e.tb.Helper()
	if e.dump() != before {
		e.tb.Fatalf("%s was refused but changed the store", op)
	}
}

// outbox returns the notification events written after sequence number
// from, oldest first.
func (e *env) outbox(from uint64) []notify.Event {
	e.tb.Helper()
	var got []notify.Event
	err := e.store.View(ctx, func(tx storage.Tx) error {
		it := tx.Iterate(storage.Prefix(notify.OutboxPrefix()))
		defer it.Close()
		for ; it.Valid(); it.Next() {
			v, err := it.Value()
			if err != nil {
				return err
			}
			ev, err := notify.DecodeEvent(v)
			if err != nil {
				return err
			}
			if ev.Seq > from {
				got = append(got, ev)
			}
		}
		return nil
	})
	if err != nil {
		e.tb.Fatalf("outbox: %v", err)
	}
	return got
}

// lastEvent is the sequence number of the newest event in the outbox.
func (e *env) lastEvent() uint64 {
	e.tb.Helper()
	var last uint64
	for _, ev := range e.outbox(0) {
		last = max(last, ev.Seq)
	}
	return last
}

// wantErr fails unless err is a domain error of kind with message msg.
func wantErr(tb fataler, err error, kind errs.Kind, msg string) *errs.Error {
	tb.Helper()
	de := errs.As(err)
	if de == nil || de.Kind != kind || de.Message != msg {
		tb.Fatalf("err = %v, want %v %q", err, kind, msg)
	}
	return de
}

func (e *env) mustOrder(in sales.NewOrder) sales.Order {
	e.tb.Helper()
	o, err := e.sales.PlaceOrder(ctx, in)
	if err != nil {
		e.tb.Fatalf("place order %+v: %v", in, err)
	}
	return o
}

func (e *env) mustItem(id string) stock.Item {
	e.tb.Helper()
	it, err := e.stock.Item(ctx, id)
	if err != nil {
		e.tb.Fatalf("item %s: %v", id, err)
	}
	return it
}

func (e *env) mustStock(seller int64, upID string) stock.Stock {
	e.tb.Helper()
	st, err := e.stock.Stock(ctx, seller, upID)
	if err != nil {
		e.tb.Fatalf("stock %s: %v", upID, err)
	}
	return st
}

func (e *env) mustShipment(id int64) sales.Shipment {
	e.tb.Helper()
	sh, err := e.sales.Shipment(ctx, sales.Operator, id)
	if err != nil {
		e.tb.Fatalf("shipment %d: %v", id, err)
	}
	return sh
}

func (e *env) mustReadOrder(id int64) sales.Order {
	e.tb.Helper()
	o, err := e.sales.Order(ctx, sales.Operator, id)
	if err != nil {
		e.tb.Fatalf("order %d: %v", id, err)
	}
	return o
}

// quantities lists the quantity of each store of a stock, by store id.
func quantities(st stock.Stock) map[string]int64 {
	out := map[string]int64{}
	for _, l := range st.Locations {
		out[l.StoreID] = l.Quantity
	}
	return out
}

func itoa(n int64) string { return fmt.Sprint(n) }
