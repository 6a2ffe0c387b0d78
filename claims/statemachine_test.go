package claims_test

import (
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/claims"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/sales"
)

// The plain model of claims over sales, written from the state tables of
// the spec (8.3, 8.5) and docs/claims.md, never by calling the engine's
// helpers: an order's claim, its stage and status, the timeouts, the
// return, and what reaches the order (money refunded, units back in
// stock).

// returnNext is the return flow: the statuses each status may move to.
var returnNext = map[string][]string{
	"pending":            {"label_generated", "pending_failure", "failed", "pending_cancel", "cancelled"},
	"label_generated":    {"scheduled", "shipped", "pending_cancel", "cancelled", "pending_expiration", "expired"},
	"scheduled":          {"shipped"},
	"shipped":            {"pending_delivered", "delivered", "not_delivered"},
	"pending_delivered":  {"delivered"},
	"not_delivered":      {"return_to_buyer"},
	"pending_cancel":     {"cancelled"},
	"pending_failure":    {"failed"},
	"pending_expiration": {"expired"},
}

const unitPrice = "1500.50"

type modelClaim struct {
	id     int64
	pdd    bool
	qty    int64
	stage  string
	status string
	// bySeller: the seller opened the dispute.
	bySeller  bool
	opened    time.Time
	answered  bool
	offer     string // "", "pending", "rejected", "accepted"
	returnID  int64
	ret       string // the return's status, "" for none
	delivered time.Time
	reviewed  bool
	refunded  bool
}

type modelSale struct {
	s         sale
	qty       int64
	delivered bool
	paid      money.Dec
	refunded  money.Dec
	restocked int64
	claim     *modelClaim
	closed    []*modelClaim
}

type claimsMachine struct {
	e     *env
	sales []*modelSale
	stock int64 // units in the seller's store, as the model counts them
	seed  sale  // the first sale: its seller, item and store are everyone's
}

func newClaimsMachine(t *rapid.T, e *env) *claimsMachine {
	m := &claimsMachine{e: e}
	qty := rapid.Int64Range(1, 2).Draw(t, "quantity")
	m.seed = e.mustSale(qty, rapid.Bool().Draw(t, "delivered"))
	m.stock = 10 - qty
	m.sales = append(m.sales, &modelSale{s: m.seed, qty: qty, delivered: m.isDelivered(m.seed),
		paid: money.MustParse(unitPrice).Mul(money.FromInt(qty)), refunded: money.FromInt(0)})
	return m
}

func (m *claimsMachine) isDelivered(s sale) bool {
	sh, err := m.e.sales.Shipment(ctx, s.seller, *s.order.Shipping.ID)
	return err == nil && sh.Status == "delivered"
}

func (m *claimsMachine) now() time.Time { return m.e.clock.Now() }

// settle applies the timeouts due by now to the model: an unanswered claim
// goes to dispute 48 h after it opened; a delivered return left unreviewed
// for 72 h refunds the buyer.
func (m *claimsMachine) settle() {
	for _, ms := range m.sales {
		c := ms.claim
		if c == nil {
			continue
		}
		if c.status == "opened" && c.stage == "claim" && !c.answered && !m.now().Before(c.opened.Add(48*time.Hour)) {
			c.stage = "dispute"
		}
		if c.status == "opened" && c.ret == "delivered" && !c.reviewed && !m.now().Before(c.delivered.Add(72*time.Hour)) {
			c.reviewed = true
			m.close(ms)
			m.refund(ms, true)
		}
	}
}

// close closes the sale's claim: a return not yet at its end is cancelled.
func (m *claimsMachine) close(ms *modelSale) {
	c := ms.claim
	c.status = "closed"
	if c.ret != "" && len(returnNext[c.ret]) > 0 {
		c.ret = "cancelled"
	}
	ms.closed = append(ms.closed, c)
	ms.claim = nil
}

// refund gives the claimed amount back (once per claim); a return the
// seller received gives its units back once, never more than the order
// took.
func (m *claimsMachine) refundClaim(ms *modelSale, c *modelClaim, amount money.Dec) {
	if c.refunded {
		return
	}
	c.refunded = true
	ms.refunded = ms.refunded.Add(amount)
	if c.ret == "delivered" {
		n := min(c.qty, ms.qty-ms.restocked)
		ms.restocked += n
		m.stock += n
	}
}

func (m *claimsMachine) refund(ms *modelSale, _ bool) {
	c := ms.closed[len(ms.closed)-1]
	m.refundClaim(ms, c, money.MustParse(unitPrice).Mul(money.FromInt(c.qty)))
}

func (m *claimsMachine) tick(t *rapid.T) {
	m.e.advance(time.Duration(rapid.IntRange(0, 90*60).Draw(t, "minutes")) * time.Minute)
	m.settle()
}

// pick draws a sale whose claim is opened, or skips; mostly one whose
// claim prefer likes, when there is one, so that the claims go deep.
func (m *claimsMachine) pick(t *rapid.T, prefer ...func(*modelClaim) bool) *modelSale {
	var open, liked []*modelSale
	for _, ms := range m.sales {
		if ms.claim != nil {
			open = append(open, ms)
			if len(prefer) > 0 && prefer[0](ms.claim) {
				liked = append(liked, ms)
			}
		}
	}
	if len(open) == 0 {
		t.Skip("no opened claim")
	}
	if len(liked) > 0 && rapid.IntRange(0, 3).Draw(t, "liked") > 0 {
		return rapid.SampledFrom(liked).Draw(t, "sale")
	}
	return rapid.SampledFrom(open).Draw(t, "sale")
}

// expect runs op, which the model says succeeds (ok) or is refused.
func expect(t *rapid.T, name string, ok bool, err error) {
	if ok && err != nil {
		t.Fatalf("%s: %v; the model allows it", name, err)
	}
	if !ok && err == nil {
		t.Fatalf("%s succeeded; the model refuses it", name)
	}
}

func (m *claimsMachine) Buy(t *rapid.T) {
	if m.stock < 2 {
		t.Skip("no stock")
	}
	qty := rapid.Int64Range(1, 2).Draw(t, "quantity")
	delivered := rapid.Bool().Draw(t, "delivered")
	s := m.e.mustSaleOf(m.seed.seller, m.seed.item, m.seed.userProduct, m.seed.store, qty, delivered)
	m.stock -= qty
	m.sales = append(m.sales, &modelSale{s: s, qty: qty, delivered: delivered,
		paid: money.MustParse(unitPrice).Mul(money.FromInt(qty)), refunded: money.FromInt(0)})
}

func (m *claimsMachine) Open(t *rapid.T) {
	ms := rapid.SampledFrom(m.sales).Draw(t, "sale")
	pdd := ms.delivered && rapid.IntRange(0, 3).Draw(t, "pdd") > 0 || rapid.IntRange(0, 9).Draw(t, "pdd_undelivered") == 0
	qty := rapid.Int64Range(1, ms.qty).Draw(t, "claimed")
	reason := "PNR3430"
	if pdd {
		reason = rapid.SampledFrom([]string{"PDD9549", "PDD9551", "PDD9939"}).Draw(t, "reason")
	}
	m.tick(t)
	ok := ms.claim == nil && ms.refunded.IsZero() && (!pdd || ms.delivered)
	c, err := m.e.claims.Open(ctx, claims.NewClaim{OrderID: ms.s.order.ID, ReasonID: reason, Quantity: qty})
	expect(t, "open", ok, err)
	if ok {
		ms.claim = &modelClaim{id: c.ID, pdd: pdd, qty: qty, stage: "claim", status: "opened", opened: m.now()}
	}
}

func (m *claimsMachine) SellerMessage(t *rapid.T) {
	ms := m.pick(t)
	m.tick(t)
	c := ms.claim
	if c == nil {
		t.Skip("closed by the clock")
	}
	err := m.e.claims.Send(ctx, ms.s.seller, c.id, claims.NewMessage{ReceiverRole: "complainant", Message: "Hola"})
	ok := c.stage == "claim"
	expect(t, "seller message", ok, err)
	if ok {
		c.answered = true
	}
}

func (m *claimsMachine) OpenDispute(t *rapid.T) {
	ms := m.pick(t)
	m.tick(t)
	c := ms.claim
	if c == nil {
		t.Skip("closed by the clock")
	}
	var err error
	bySeller := rapid.Bool().Draw(t, "by_seller")
	if bySeller {
		_, err = m.e.claims.OpenDispute(ctx, ms.s.seller, c.id)
	} else {
		_, err = m.e.claims.Act(ctx, c.id, claims.OperatorAction{Role: "complainant", Action: "open_dispute"})
	}
	ok := c.stage == "claim"
	expect(t, "open dispute", ok, err)
	if ok {
		c.stage, c.bySeller = "dispute", bySeller
	}
}

func (m *claimsMachine) Refund(t *rapid.T) {
	ms := m.pick(t)
	m.tick(t)
	if ms.claim == nil {
		t.Skip("closed by the clock")
	}
	_, err := m.e.claims.Refund(ctx, ms.s.seller, ms.claim.id)
	expect(t, "refund", true, err)
	m.close(ms)
	m.refund(ms, false)
}

func (m *claimsMachine) OfferPartialRefund(t *rapid.T) {
	ms := m.pick(t)
	m.tick(t)
	c := ms.claim
	if c == nil {
		t.Skip("closed by the clock")
	}
	_, err := m.e.claims.OfferPartialRefund(ctx, ms.s.seller, c.id, claims.PartialRefund{})
	ok := c.pdd && c.stage == "claim" && c.returnID == 0 && c.offer == ""
	expect(t, "offer a partial refund", ok, err)
	if ok {
		c.offer = "pending"
	}
}

func (m *claimsMachine) AnswerOffer(t *rapid.T) {
	ms := m.pick(t)
	accept := rapid.Bool().Draw(t, "accept")
	m.tick(t)
	c := ms.claim
	if c == nil {
		t.Skip("closed by the clock")
	}
	action := "reject_partial_refund"
	if accept {
		action = "accept_partial_refund"
	}
	_, err := m.e.claims.Act(ctx, c.id, claims.OperatorAction{Role: "complainant", Action: action})
	ok := c.offer == "pending"
	expect(t, action, ok, err)
	if !ok {
		return
	}
	if !accept {
		c.offer = "rejected"
		return
	}
	m.close(ms)
	// Half of the claimed amount, to the cent.
	m.refundClaim(ms, c, money.MustParse(unitPrice).Mul(money.FromInt(c.qty)).Percent(money.FromInt(50)).Round(2))
}

func (m *claimsMachine) AllowReturn(t *rapid.T) {
	ms := m.pick(t, func(c *modelClaim) bool { return c.pdd && c.returnID == 0 })
	m.tick(t)
	c := ms.claim
	if c == nil {
		t.Skip("closed by the clock")
	}
	_, err := m.e.claims.AllowReturn(ctx, ms.s.seller, c.id)
	ok := c.pdd && c.stage == "claim" && c.returnID == 0
	expect(t, "allow return", ok, err)
	if ok {
		// The seller's return replaces its own pending offer.
		if c.offer == "pending" {
			c.offer = "rejected"
		}
		rt, err := m.e.claims.ClaimReturn(ctx, ms.s.buyer, c.id)
		if err != nil {
			t.Fatal(err)
		}
		c.returnID, c.ret = rt.ID, "label_generated"
	}
}

func (m *claimsMachine) MoveReturn(t *rapid.T) {
	var with []*modelClaim
	var of []*modelSale
	for _, ms := range m.sales {
		for _, c := range append(slices.Clone(ms.closed), ms.claim) {
			if c != nil && c.returnID != 0 {
				with, of = append(with, c), append(of, ms)
			}
		}
	}
	if len(with) == 0 {
		t.Skip("no return")
	}
	i := rapid.IntRange(0, len(with)-1).Draw(t, "return")
	c, ms := with[i], of[i]
	all := []string{"pending", "label_generated", "scheduled", "shipped", "pending_delivered", "delivered",
		"not_delivered", "return_to_buyer", "pending_cancel", "cancelled", "pending_failure", "failed", "pending_expiration", "expired"}
	// Mostly a move the flow allows, so that returns reach their ends.
	to := rapid.SampledFrom(all).Draw(t, "status")
	if next := returnNext[c.ret]; len(next) > 0 && rapid.IntRange(0, 3).Draw(t, "follow") > 0 {
		to = rapid.SampledFrom(next).Draw(t, "next")
	}
	m.tick(t)
	_, err := m.e.claims.MoveReturn(ctx, c.returnID, claims.ReturnMove{Status: to})
	ok := slices.Contains(returnNext[c.ret], to)
	expect(t, "move return "+c.ret+" to "+to, ok, err)
	if !ok {
		return
	}
	c.ret = to
	if to == "delivered" {
		c.delivered = m.now()
	}
	if (to == "cancelled" || to == "expired") && ms.claim == c {
		m.close(ms)
	}
}

func (m *claimsMachine) Review(t *rapid.T) {
	ms := m.pick(t, func(c *modelClaim) bool { return c.ret == "delivered" })
	good := rapid.Bool().Draw(t, "ok")
	m.tick(t)
	c := ms.claim
	if c == nil || c.returnID == 0 {
		t.Skip("no return on an opened claim")
	}
	var failures []claims.ReviewFailure
	if !good {
		failures = []claims.ReviewFailure{{Reason: "SRF3", Message: "Incompleto"}}
	}
	_, err := m.e.claims.ReviewReturn(ctx, ms.s.seller, c.returnID, failures)
	ok := c.ret == "delivered" && !c.reviewed
	expect(t, "review", ok, err)
	if !ok {
		return
	}
	c.reviewed = true
	if good {
		m.close(ms)
		m.refund(ms, false)
	} else if c.stage == "claim" {
		c.stage, c.bySeller = "dispute", true
	}
}

func (m *claimsMachine) Resolve(t *rapid.T) {
	ms := m.pick(t)
	forBuyer := rapid.Bool().Draw(t, "for_buyer")
	m.tick(t)
	c := ms.claim
	if c == nil {
		t.Skip("closed by the clock")
	}
	benefited := []string{"respondent"}
	if forBuyer {
		benefited = []string{"complainant"}
	}
	_, err := m.e.claims.Act(ctx, c.id, claims.OperatorAction{Role: "mediator", Action: "resolve",
		Resolution: &claims.OperatorResolution{Reason: "rep_resolution", Benefited: benefited}})
	ok := c.stage == "dispute"
	expect(t, "resolve", ok, err)
	if !ok {
		return
	}
	m.close(ms)
	if forBuyer {
		m.refund(ms, false)
	}
}

func (m *claimsMachine) BuyerCloses(t *rapid.T) {
	ms := m.pick(t)
	m.tick(t)
	if ms.claim == nil {
		t.Skip("closed by the clock")
	}
	_, err := m.e.claims.Act(ctx, ms.claim.id, claims.OperatorAction{Role: "complainant", Action: "close_claim"})
	expect(t, "close", true, err)
	m.close(ms)
}

func (m *claimsMachine) Wait(t *rapid.T) {
	m.e.advance(time.Duration(rapid.IntRange(1, 100).Draw(t, "hours")) * time.Hour)
	m.settle()
	if rapid.Bool().Draw(t, "expire") {
		if _, err := m.e.claims.Expire(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

func (m *claimsMachine) Check(t *rapid.T) {
	for _, ms := range m.sales {
		for _, c := range append(slices.Clone(ms.closed), ms.claim) {
			if c == nil {
				continue
			}
			got := m.e.mustClaim(c.id)
			if got.Status != c.status || got.Stage != c.stage {
				t.Fatalf("claim %d is %s/%s, model %s/%s", c.id, got.Status, got.Stage, c.status, c.stage)
			}
			if c.returnID != 0 {
				rt, err := m.e.claims.ClaimReturn(ctx, claims.Operator, c.id)
				if err != nil || rt.Status != c.ret {
					t.Fatalf("return of claim %d is %s (%v), model %s", c.id, rt.Status, err, c.ret)
				}
			}
		}
	}
	// What reaches the order waits for Expire or the next change: the
	// model's money and units are checked once the sweep ran.
	if _, err := m.e.claims.Expire(ctx); err != nil {
		t.Fatal(err)
	}
	for _, ms := range m.sales {
		o := m.e.mustOrder(ms.s.order.ID)
		refunded := money.FromInt(0)
		for _, p := range o.Payments {
			r, err := money.Parse(string(p.TransactionAmountRefunded))
			if err == nil {
				refunded = refunded.Add(r)
			}
		}
		if refunded.Cmp(ms.refunded) != 0 || refunded.Cmp(ms.paid) > 0 {
			t.Fatalf("order %d refunded %s of %s, model %s", o.ID, refunded, ms.paid, ms.refunded)
		}
	}
	if got := m.e.stockAt(m.seed); got != m.stock {
		t.Fatalf("store has %d units, model %d", got, m.stock)
	}
	m.checkMediationSearch(t)
}

// checkMediationSearch checks that the order search by each
// mediations.status finds the orders the model says.
func (m *claimsMachine) checkMediationSearch(t *rapid.T) {
	want := map[string][]int64{}
	for _, ms := range m.sales {
		for _, c := range append(slices.Clone(ms.closed), ms.claim) {
			if c == nil {
				continue
			}
			status := c.mediationStatus()
			if !slices.Contains(want[status], ms.s.order.ID) {
				want[status] = append(want[status], ms.s.order.ID)
			}
		}
	}
	for _, status := range sales.MediationStatuses {
		res, err := m.e.sales.Search(ctx, m.seed.seller, sales.SearchQuery{Seller: m.seed.seller, MediationStatus: status, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, o := range res.Results {
			got = append(got, o.ID)
		}
		slices.Sort(got)
		slices.Sort(want[status])
		if !slices.Equal(got, want[status]) {
			t.Fatalf("mediations.status=%s finds orders %v, model %v", status, got, want[status])
		}
	}
}

// mediationStatus is where the model's claim stands for the order search.
func (c *modelClaim) mediationStatus() string {
	prefix := "claim_"
	if c.stage == "dispute" {
		prefix = "dispute_"
		if c.bySeller {
			prefix = "seller_dispute_"
		}
	}
	return prefix + c.status
}

func TestClaimsStateMachine_StagesStatusesRefundsAndUnitsFollowTheModel(t *testing.T) {
	owner := t
	rapid.Check(t, func(t *rapid.T) {
		e, done := newPropertyEnv(t, owner)
		defer done()
		t.Repeat(rapid.StateMachineActions(newClaimsMachine(t, e)))
	})
}
