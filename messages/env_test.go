package messages_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/accounts"
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

// start is the clock's first instant: a Wednesday, 12:00 in Buenos Aires.
var start = time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC)

// fataler is what the env needs of a test: *testing.T, *testing.B and
// *rapid.T all have it.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// fakeClaims is what a test says of the orders' claims.
type fakeClaims struct {
	mu sync.Mutex
	m  map[int64]messages.ClaimState
}

func (f *fakeClaims) OrderClaims(_ storage.Tx, orderID int64, _ []int64) (messages.ClaimState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.m[orderID], nil
}

func (f *fakeClaims) set(orderID int64, st messages.ClaimState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.m[orderID] = st
}

// env is the messages service and the services below it over one store,
// with a seller selling an item and a buyer.
type env struct {
	tb     fataler
	store  storage.Store
	clock  *clock.Manual
	acc    *accounts.Service
	stock  *stock.Service
	sales  *sales.Service
	msg    *messages.Service
	claims *fakeClaims

	seller, buyer, other int64
	item                 string
}

func newEnvOn(tb fataler, st storage.Store) *env {
	tb.Helper()
	clk := clock.NewManual(start)
	g := geo.New(st, clk)
	if err := g.LoadBuiltin(ctx); err != nil {
		tb.Fatalf("load sites: %v", err)
	}
	stk := stock.New(st, clk, g)
	acc := accounts.New(st, clk, g)
	sl := sales.New(st, clk, stk, fees.New(st, clk, g))
	fc := &fakeClaims{m: map[int64]messages.ClaimState{}}
	e := &env{tb: tb, store: st, clock: clk, acc: acc, stock: stk, sales: sl, claims: fc,
		msg: messages.New(st, clk, sl, acc, fc)}
	e.seller, e.buyer, e.other = e.user("SELLER"), e.user("BUYER"), e.user("OTHER")
	q := int64(1_000_000)
	p, err := stk.Publish(ctx, e.seller, stock.NewItem{Title: "Mesa de roble", CategoryID: "MLA1055",
		Price: money.MustParse("100"), ListingTypeID: "gold_special", CurrencyID: "ARS", AvailableQuantity: &q})
	if err != nil {
		tb.Fatalf("publish: %v", err)
	}
	e.item = p.ID
	return e
}

func newEnv(tb testing.TB) *env { return newEnvOn(tb, teststore.New(tb)) }

// newPropertyEnv is newEnv for one iteration of a property test.
func newPropertyEnv(t *rapid.T, owner testing.TB) (*env, func()) {
	st, done := teststore.Open(t, owner)
	return newEnvOn(t, st), done
}

func (e *env) user(nick string) int64 {
	e.tb.Helper()
	u, err := e.acc.CreateUser(ctx, accounts.NewUser{Nickname: nick, SiteID: "MLA", FirstName: "Ana", LastName: nick})
	if err != nil {
		e.tb.Fatalf("create user: %v", err)
	}
	return u.ID
}

// order places an order of the buyer: paid, or payment_required.
func (e *env) order(status string) sales.Order {
	e.tb.Helper()
	o, err := e.sales.PlaceOrder(ctx, sales.NewOrder{BuyerID: e.buyer, ItemID: e.item, Quantity: 1, Status: status})
	if err != nil {
		e.tb.Fatalf("place order: %v", err)
	}
	return o
}

func (e *env) paid() sales.Order { return e.order(sales.StatusPaid) }

// send sends text from one party to the other in the conversation of
// order o.
func (e *env) send(o sales.Order, from int64, text string, atts ...string) (messages.Message, error) {
	to := o.Buyer.ID
	if from == o.Buyer.ID {
		to = o.Seller.ID
	}
	return e.msg.Send(ctx, from, 0, o.PackID, o.Seller.ID, messages.SendBody{From: from, To: to, Text: text, Attachments: atts})
}

func (e *env) mustSend(o sales.Order, from int64, text string, atts ...string) messages.Message {
	e.tb.Helper()
	m, err := e.send(o, from, text, atts...)
	if err != nil {
		e.tb.Fatalf("send %q: %v", text, err)
	}
	return m
}

// read reads the conversation of o as caller, marking read or not.
func (e *env) read(o sales.Order, caller int64, mark bool) messages.Conversation {
	e.tb.Helper()
	c, err := e.msg.Conversation(ctx, caller, o.PackID, o.Seller.ID, messages.ConversationQuery{Limit: 100, MarkAsRead: mark})
	if err != nil {
		e.tb.Fatalf("read conversation: %v", err)
	}
	return c
}

// status is the conversation's status and substatus as caller sees it.
func (e *env) status(o sales.Order, caller int64) (string, string) {
	e.tb.Helper()
	cs := e.read(o, caller, false).ConversationStatus
	sub := ""
	if cs.Substatus != nil {
		sub = *cs.Substatus
	}
	return cs.Status, sub
}

func (e *env) unread(caller int64, role string) map[string]int64 {
	e.tb.Helper()
	u, err := e.msg.Unread(ctx, caller, role)
	if err != nil {
		e.tb.Fatalf("unread: %v", err)
	}
	out := map[string]int64{}
	for _, r := range u.Results {
		out[r.Resource] = r.Count
	}
	return out
}

func (e *env) move(shipmentID int64, status string) {
	e.tb.Helper()
	if _, err := e.sales.MoveShipment(ctx, shipmentID, sales.ShipmentMove{Status: status}); err != nil {
		e.tb.Fatalf("move shipment to %s: %v", status, err)
	}
}

// outbox returns the messages events written after sequence number from.
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
			if ev.Seq > from && ev.Topic == notify.TopicMessages {
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

func (e *env) lastEvent() uint64 {
	e.tb.Helper()
	var last uint64
	err := e.store.View(ctx, func(tx storage.Tx) error {
		it := tx.Iterate(storage.Range{Start: notify.OutboxPrefix(), End: storage.PrefixEnd(notify.OutboxPrefix()), Reverse: true})
		defer it.Close()
		if it.Valid() {
			v, err := it.Value()
			if err != nil {
				return err
			}
			ev, err := notify.DecodeEvent(v)
			last = ev.Seq
			return err
		}
		return nil
	})
	if err != nil {
		e.tb.Fatalf("outbox: %v", err)
	}
	return last
}

// wantErr checks err's kind and message.
func wantErr(tb fataler, err error, kind errs.Kind, msg string) {
	tb.Helper()
	de := errs.As(err)
	if de == nil {
		tb.Fatalf("err = %v, want %v %q", err, kind, msg)
		return
	}
	if de.Kind != kind || de.Message != msg {
		tb.Fatalf("err = %v %q, want %v %q", de.Kind, de.Message, kind, msg)
	}
}

// wantShaped checks that err is answered in shape, with kind and message.
func wantShaped(tb fataler, err error, shape messages.Shape, kind errs.Kind, msg string) *messages.Error {
	tb.Helper()
	wantErr(tb, err, kind, msg)
	var me *messages.Error
	if !errors.As(err, &me) || me.Shape != shape {
		tb.Fatalf("err = %#v, want shape %d", err, shape)
	}
	return me
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func asError(err error, target **messages.Error) bool { return errors.As(err, target) }
