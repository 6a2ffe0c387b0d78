package messages_test

import (
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/messages"
	"github.com/marketplace/marketplace/sales"
)

// The plain model of post-sale conversations, written from the rules of
// spec 3.10 and 8.1 and never by calling the engine's helpers: every sale
// ships with Mercado Envíos 2, so the seller starts a conversation only
// through the action guide.

type modelMessage struct {
	bySeller bool
	visible  bool
	read     bool
}

type modelConv struct {
	order       sales.Order
	status      string // paid, payment_required, cancelled
	shipment    string // pending, ready_to_ship, shipped, delivered, not_delivered, cancelled
	logistic    string
	created     time.Time
	mediation   bool
	refunded    bool
	refundedAt  time.Time
	messages    []modelMessage
	last        time.Time
	lastBuyer   time.Time
	usedOther   bool
	hasMessages bool
}

// substatus is the conversation's own status by the precedence of 3.10:
// "" when it is active.
func (c *modelConv) substatus(now time.Time) string {
	switch {
	case c.status == "cancelled":
		return "blocked_by_cancelled_order"
	case c.status == "payment_required":
		return "blocked_by_payment"
	case c.logistic == "fulfillment" && c.shipment != "delivered":
		return "blocked_by_fulfillment"
	case c.mediation && c.logistic == "fulfillment":
		return "blocked_by_mediation_fbm"
	case c.mediation:
		return "blocked_by_mediation"
	case c.refunded && !c.lastBuyer.After(c.refundedAt):
		return "blocked_by_refund"
	case !now.Before(c.created.AddDate(0, 18, 0)):
		return "blocked_by_conversation_expired"
	case c.hasMessages && !now.Before(c.last.Add(30*24*time.Hour)):
		return "blocked_by_time"
	}
	return ""
}

// shownTo is the substatus a party sees: the seller of a conversation
// with no message yet may not start it with a direct message.
func (c *modelConv) shownTo(seller bool, now time.Time) string {
	sub := c.substatus(now)
	if sub == "" && seller && !c.hasMessages {
		return "blocked_by_conversation_initiated_by_seller_limited"
	}
	return sub
}

func (c *modelConv) buyerWrote() bool {
	for _, m := range c.messages {
		if !m.bySeller {
			return true
		}
	}
	return false
}

func (c *modelConv) unread(seller bool) int64 {
	var n int64
	for _, m := range c.messages {
		if m.bySeller != seller && m.visible && !m.read {
			n++
		}
	}
	return n
}

type messagesMachine struct {
	e     *env
	convs []*modelConv
}

func (m *messagesMachine) now() time.Time { return m.e.clock.Now() }

func (m *messagesMachine) pick(t *rapid.T) *modelConv {
	if len(m.convs) == 0 {
		t.Skip("no sale yet")
	}
	return m.convs[rapid.IntRange(0, len(m.convs)-1).Draw(t, "sale")]
}

func (m *messagesMachine) Purchase(t *rapid.T) {
	status := rapid.SampledFrom([]string{sales.StatusPaid, sales.StatusPaymentRequired}).Draw(t, "status")
	o := m.e.order(status)
	shipment := "ready_to_ship"
	if status != sales.StatusPaid {
		shipment = "pending"
	}
	m.convs = append(m.convs, &modelConv{order: o, status: status, shipment: shipment, logistic: "drop_off", created: m.now()})
}

func (m *messagesMachine) Pay(t *rapid.T) {
	c := m.pick(t)
	if c.status != "payment_required" {
		t.Skip("not waiting for a payment")
	}
	if _, err := m.e.sales.Pay(ctx, c.order.ID, sales.PaymentInput{Status: "approved"}); err != nil {
		t.Fatalf("pay: %v", err)
	}
	c.status, c.shipment = "paid", "ready_to_ship"
}

func (m *messagesMachine) Cancel(t *rapid.T) {
	c := m.pick(t)
	if c.status == "cancelled" || c.shipment == "shipped" || c.shipment == "delivered" {
		t.Skip("not cancellable")
	}
	if _, err := m.e.sales.Cancel(ctx, c.order.ID); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	c.status = "cancelled"
	if c.shipment != "not_delivered" {
		c.shipment = "cancelled"
	}
}

func (m *messagesMachine) MoveShipment(t *rapid.T) {
	c := m.pick(t)
	next := map[string][]string{"ready_to_ship": {"shipped"}, "shipped": {"delivered", "not_delivered"}}[c.shipment]
	if c.status != "paid" || len(next) == 0 {
		t.Skip("the shipment does not move")
	}
	to := rapid.SampledFrom(next).Draw(t, "to")
	m.e.move(*c.order.Shipping.ID, to)
	c.shipment = to
}

func (m *messagesMachine) SetLogistic(t *rapid.T) {
	c := m.pick(t)
	if c.shipment != "pending" && c.shipment != "ready_to_ship" {
		t.Skip("shipped")
	}
	lt := rapid.SampledFrom(sales.LogisticTypes).Draw(t, "logistic")
	if _, err := m.e.sales.SetLogisticType(ctx, *c.order.Shipping.ID, lt); err != nil {
		t.Fatalf("set logistic type: %v", err)
	}
	c.logistic = lt
}

func (m *messagesMachine) Claim(t *rapid.T) {
	c := m.pick(t)
	c.mediation = rapid.Bool().Draw(t, "mediation")
	if rapid.Bool().Draw(t, "refund") {
		c.refunded, c.refundedAt = true, m.now()
	}
	m.e.claims.set(c.order.ID, messages.ClaimState{ClaimID: 5000000000 + c.order.ID%1000, Mediation: c.mediation,
		MediationSince: m.now(), Refunded: c.refunded, RefundedAt: c.refundedAt})
}

func (m *messagesMachine) wrote(c *modelConv, bySeller, visible bool) {
	c.messages = append(c.messages, modelMessage{bySeller: bySeller, visible: visible})
	c.hasMessages = true
	c.last = m.now()
	if !bySeller {
		c.lastBuyer = m.now()
	}
}

func (m *messagesMachine) BuyerWrites(t *rapid.T) {
	c := m.pick(t)
	moderated := rapid.IntRange(0, 4).Draw(t, "moderated") == 0
	text := "¿Cuándo llega?"
	if moderated {
		text += " " + messages.ModerationHook
	}
	sub := c.substatus(m.now())
	want := sub == "" || sub == "blocked_by_time" || sub == "blocked_by_refund"
	_, err := m.e.send(c.order, m.e.buyer, text)
	if want != (err == nil) {
		t.Fatalf("buyer's message to a conversation %q: %v, model says sent %v", sub, err, want)
	}
	if err == nil {
		m.wrote(c, false, !moderated)
	}
}

func (m *messagesMachine) SellerWrites(t *rapid.T) {
	c := m.pick(t)
	sub := c.substatus(m.now())
	want := sub == "" && c.buyerWrote()
	_, err := m.e.send(c.order, m.e.seller, "Hola, ya sale.")
	if want != (err == nil) {
		t.Fatalf("seller's message to a conversation %q (buyer wrote %v): %v, model says sent %v", sub, c.buyerWrote(), err, want)
	}
	if err == nil {
		m.wrote(c, true, true)
	}
}

func (m *messagesMachine) SellerUsesTheGuide(t *rapid.T) {
	c := m.pick(t)
	sub := c.substatus(m.now())
	want := sub == "" && !c.buyerWrote() && !c.usedOther && c.shipment != "delivered"
	_, err := m.e.msg.SendOption(ctx, m.e.seller, 0, c.order.PackID, messages.OptionBody{OptionID: "OTHER", Text: "¿Todo bien?"})
	if want != (err == nil) {
		t.Fatalf("option to a conversation %q: %v, model says sent %v", sub, err, want)
	}
	if err == nil {
		c.usedOther = true
		m.wrote(c, true, true)
	}
}

func (m *messagesMachine) Read(t *rapid.T) {
	c := m.pick(t)
	seller := rapid.Bool().Draw(t, "seller")
	mark := rapid.Bool().Draw(t, "mark")
	caller := m.e.buyer
	if seller {
		caller = m.e.seller
	}
	got := m.e.read(c.order, caller, mark)
	if mark && c.substatus(m.now()) != "blocked_by_conversation_expired" {
		for i := range c.messages {
			if c.messages[i].bySeller != seller && c.messages[i].visible {
				c.messages[i].read = true
			}
		}
	}
	seen := 0
	for _, msg := range c.messages {
		if msg.bySeller == seller || msg.visible {
			seen++
		}
	}
	if c.substatus(m.now()) == "blocked_by_conversation_expired" {
		seen = 0
	}
	if got.Paging.Total != int64(seen) || len(got.Messages) != min(seen, 100) {
		t.Fatalf("the %s sees %d of %d messages, model %d", map[bool]string{true: "seller", false: "buyer"}[seller],
			len(got.Messages), got.Paging.Total, seen)
	}
}

func (m *messagesMachine) Wait(t *rapid.T) {
	d := rapid.SampledFrom([]time.Duration{time.Minute, time.Hour, 24 * time.Hour, 10 * 24 * time.Hour, 31 * 24 * time.Hour}).Draw(t, "wait")
	if rapid.IntRange(0, 30).Draw(t, "months") == 0 {
		d = 18 * 31 * 24 * time.Hour
	}
	m.e.clock.Advance(d)
}

func (m *messagesMachine) Check(t *rapid.T) {
	now := m.now()
	unread := map[bool]map[string]int64{true: {}, false: {}}
	for _, c := range m.convs {
		for _, seller := range []bool{true, false} {
			caller := m.e.buyer
			if seller {
				caller = m.e.seller
			}
			st, sub := m.e.status(c.order, caller)
			want := c.shownTo(seller, now)
			if sub != want || (st == "blocked") != (want != "") {
				t.Fatalf("order %d: the %v seller sees %s/%s, model %q", c.order.ID, seller, st, sub, want)
			}
			if n := c.unread(seller); n > 0 {
				unread[seller][resource(c.order)] = n
			}
		}
	}
	for _, seller := range []bool{true, false} {
		caller, role := m.e.buyer, "buyer"
		if seller {
			caller, role = m.e.seller, "seller"
		}
		got := m.e.unread(caller, role)
		if len(got) != len(unread[seller]) {
			t.Fatalf("%s's unread %v, model %v", role, got, unread[seller])
		}
		for k, v := range unread[seller] {
			if got[k] != v {
				t.Fatalf("%s's unread %v, model %v", role, got, unread[seller])
			}
		}
	}
}

func TestMessagesStateMachine_ConversationsBlockUnblockAndCountUnreadAsTheModelSays(t *testing.T) {
	owner := t
	rapid.Check(t, func(t *rapid.T) {
		e, done := newPropertyEnv(t, owner)
		defer done()
		t.Repeat(rapid.StateMachineActions(&messagesMachine{e: e}))
	})
}
