package claims_test

import (
	"context"
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/claims"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/fees"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/internal/teststore"
	"github.com/marketplace/marketplace/messages"
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

// start is the clock's time in every test: 12:00 in Buenos Aires.
var start = time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC)

// env is the claims service with the services below it, over one store.
type env struct {
	tb     fataler
	store  storage.Store
	clock  *clock.Manual
	geo    *geo.Service
	acc    *accounts.Service
	stock  *stock.Service
	sales  *sales.Service
	claims *claims.Service
}

func newEnvOn(tb fataler, st storage.Store) *env {
	tb.Helper()
	clk := clock.NewManual(start)
	g := geo.New(st, clk)
	if err := g.LoadBuiltin(ctx); err != nil {
		tb.Fatalf("load sites: %v", err)
	}
	stk := stock.New(st, clk, g)
	sl := sales.New(st, clk, stk, fees.New(st, clk, g))
	return &env{tb: tb, store: st, clock: clk, geo: g, acc: accounts.New(st, clk, g), stock: stk, sales: sl,
		claims: claims.New(st, clk, sl)}
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

// sale is a paid order of a buyer from a seller.
type sale struct {
	seller, buyer int64
	item          string
	userProduct   string
	store         string
	order         sales.Order
}

// mustSale sells qty units (of 10) of a new multi-origin item of a new
// seller, at 1500.50 each, to a new buyer; delivered moves the shipment
// to delivered.
func (e *env) mustSale(qty int64, delivered bool) sale {
	e.tb.Helper()
	seller := e.mustUser("SELLER", "warehouse_management")
	st, err := e.acc.CreateStore(ctx, seller, accounts.NewStore{Description: "warehouse", Tags: []string{"stock_location"}})
	if err != nil {
		e.tb.Fatalf("create store: %v", err)
	}
	p, err := e.stock.PublishMultiOrigin(ctx, seller, stock.NewItem{Title: "Bicicleta rodado 29", CategoryID: "MLA1055",
		Price: money.MustParse("1500.50"), ListingTypeID: "gold_special", CurrencyID: "ARS",
		StockLocations: []stock.StockLocation{{StoreID: st.ID, Quantity: 10}}})
	if err != nil {
		e.tb.Fatalf("publish: %v", err)
	}
	return e.mustSaleOf(seller, p.ID, p.UserProductID, st.ID, qty, delivered)
}

// mustSaleOf sells qty units of item to a new buyer.
func (e *env) mustSaleOf(seller int64, item, userProduct, store string, qty int64, delivered bool) sale {
	e.tb.Helper()
	buyer := e.mustUser("BUYER")
	o, err := e.sales.PlaceOrder(ctx, sales.NewOrder{BuyerID: buyer, ItemID: item, Quantity: qty, StoreID: store})
	if err != nil {
		e.tb.Fatalf("place order: %v", err)
	}
	if delivered {
		e.mustMove(*o.Shipping.ID, sales.ShipmentShipped)
		e.mustMove(*o.Shipping.ID, sales.ShipmentDelivered)
	}
	return sale{seller: seller, buyer: buyer, item: item, userProduct: userProduct, store: store, order: e.mustOrder(o.ID)}
}

func (e *env) mustMove(shipment int64, status string) {
	e.tb.Helper()
	if _, err := e.sales.MoveShipment(ctx, shipment, sales.ShipmentMove{Status: status}); err != nil {
		e.tb.Fatalf("move shipment %d to %s: %v", shipment, status, err)
	}
}

func (e *env) mustOrder(id int64) sales.Order {
	e.tb.Helper()
	o, err := e.sales.Order(ctx, sales.Operator, id)
	if err != nil {
		e.tb.Fatalf("order %d: %v", id, err)
	}
	return o
}

// mustOpen opens a claim of reason on the sale's order.
func (e *env) mustOpen(s sale, reason string) claims.Claim {
	e.tb.Helper()
	c, err := e.claims.Open(ctx, claims.NewClaim{OrderID: s.order.ID, ReasonID: reason})
	if err != nil {
		e.tb.Fatalf("open claim %s on order %d: %v", reason, s.order.ID, err)
	}
	return c
}

func (e *env) mustClaim(id int64) claims.Claim {
	e.tb.Helper()
	c, err := e.claims.Claim(ctx, claims.Operator, id)
	if err != nil {
		e.tb.Fatalf("claim %d: %v", id, err)
	}
	return c
}

func (e *env) mustAct(id int64, in claims.OperatorAction) claims.Claim {
	e.tb.Helper()
	c, err := e.claims.Act(ctx, id, in)
	if err != nil {
		e.tb.Fatalf("act %+v on claim %d: %v", in, id, err)
	}
	return c
}

func (e *env) mustSend(caller, id int64, receiver, text string, files ...string) {
	e.tb.Helper()
	if err := e.claims.Send(ctx, caller, id, claims.NewMessage{ReceiverRole: receiver, Message: text, Attachments: files}); err != nil {
		e.tb.Fatalf("send %q to the %s of claim %d: %v", text, receiver, id, err)
	}
}

// mustDeliveredReturn allows the return of claim id and moves it to
// delivered.
func (e *env) mustDeliveredReturn(s sale, id int64) claims.Return {
	e.tb.Helper()
	if _, err := e.claims.AllowReturn(ctx, s.seller, id); err != nil {
		e.tb.Fatalf("allow return: %v", err)
	}
	rt, err := e.claims.ClaimReturn(ctx, s.seller, id)
	if err != nil {
		e.tb.Fatalf("return of claim %d: %v", id, err)
	}
	for _, st := range []string{claims.ReturnShipped, claims.ReturnDelivered} {
		if rt, err = e.claims.MoveReturn(ctx, rt.ID, claims.ReturnMove{Status: st}); err != nil {
			e.tb.Fatalf("move return %d to %s: %v", rt.ID, st, err)
		}
	}
	return rt
}

func (e *env) advance(d time.Duration) {
	e.tb.Helper()
	if err := e.clock.Advance(d); err != nil {
		e.tb.Fatalf("advance: %v", err)
	}
}

// stamp is how claims write the clock's time t on an MLA claim.
func (e *env) stamp(t time.Time) string {
	e.tb.Helper()
	loc, err := time.LoadLocation("America/Argentina/Buenos_Aires")
	if err != nil {
		e.tb.Fatalf("time zone: %v", err)
	}
	return t.In(loc).Format(sales.TimeLayout)
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

// topics lists the events as "topic action resource", oldest first.
func topics(evs []notify.Event) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Topic+" "+ev.Action+" "+ev.Resource)
	}
	return out
}

// wantErr fails unless err is a domain error of kind, code and message.
func wantErr(tb fataler, err error, kind errs.Kind, code, msg string) {
	tb.Helper()
	de := errs.As(err)
	if de == nil || de.Kind != kind || de.Message != msg || (code != "" && de.Code != code) {
		tb.Fatalf("err = %v (%+v), want %v %s %q", err, de, kind, code, msg)
	}
}

// actions lists the available actions of role in c, as "name" or
// "name!due" for a mandatory one.
func actions(c claims.Claim, role string) []string {
	out := []string{}
	for _, p := range c.Players {
		if p.Role != role {
			continue
		}
		for _, a := range p.AvailableActions {
			s := a.Action
			if a.Mandatory {
				s += "!"
				if a.DueDate != nil {
					s += *a.DueDate
				}
			}
			out = append(out, s)
		}
	}
	return out
}

// stockAt is the quantity of store in the user product's stock.
func (e *env) stockAt(s sale) int64 {
	e.tb.Helper()
	st, err := e.stock.Stock(ctx, s.seller, s.userProduct)
	if err != nil {
		e.tb.Fatalf("stock: %v", err)
	}
	for _, l := range st.Locations {
		if l.StoreID == s.store {
			return l.Quantity
		}
	}
	return 0
}

// orderClaims is what the conversation of an order learns of its claims.
func (e *env) orderClaims(orderID int64) messages.ClaimState {
	e.tb.Helper()
	var st messages.ClaimState
	err := e.store.View(ctx, func(tx storage.Tx) error {
		var err error
		o, err := e.sales.OrderOf(tx, orderID)
		if err != nil {
			return err
		}
		var ids []int64
		for _, m := range o.Order.Mediations {
			ids = append(ids, m.ID)
		}
		st, err = e.claims.OrderClaims(tx, orderID, ids)
		return err
	})
	if err != nil {
		e.tb.Fatalf("order claims: %v", err)
	}
	return st
}

func urlValues(query string) (url.Values, error) { return url.ParseQuery(query) }

func jsonNumber(s string) json.Number { return json.Number(s) }

func ptr[T any](v T) *T { return &v }
