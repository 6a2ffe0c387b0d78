package claims

import (
	"slices"
	"time"

	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/sales"
)

// record is a claim as stored: what its public shape is derived from, with
// its return. The players' available actions are not stored: they follow
// from the state and the clock (available), so that a due date passed by a
// moved clock is seen at once, before Expire writes its consequence.
type record struct {
	ID          int64  `json:"id"`
	OrderID     int64  `json:"order_id"`
	SellerID    int64  `json:"seller_id"`
	BuyerID     int64  `json:"buyer_id"`
	SiteID      string `json:"site_id"`
	ItemID      string `json:"item_id"`
	VariationID *int64 `json:"variation_id,omitempty"`
	CurrencyID  string `json:"currency_id"`
	// Amount is what the claimed units cost the buyer: the unit price
	// times the claimed quantity; a refund gives it back.
	Amount string `json:"amount"`
	// ShippingCost is the sale's shipping cost: what a return's shipping
	// costs the seller.
	ShippingCost  string  `json:"shipping_cost"`
	OrderQuantity int64   `json:"order_quantity"`
	Quantity      int64   `json:"quantity"`
	PaymentIDs    []int64 `json:"payment_ids,omitempty"`
	ReasonID      string  `json:"reason_id"`
	Fulfilled     bool    `json:"fulfilled"`
	Stage         string  `json:"stage"`
	Status        string  `json:"status"`
	CreatedMs     int64   `json:"created_ms"`
	UpdatedMs     int64   `json:"updated_ms"`
	// DisputeMs is when the claim entered dispute (0: never).
	DisputeMs int64 `json:"dispute_ms,omitempty"`
	// Answered: the respondent sent its mandatory message to the
	// complainant.
	Answered bool `json:"answered,omitempty"`
	// TimedOut: the respondent missed the due date of its mandatory
	// message, and the claim went to dispute for it.
	TimedOut bool `json:"timed_out,omitempty"`
	// RefundedMs is when the claim gave money back (0: never), Refunded
	// how much.
	RefundedMs int64             `json:"refunded_ms,omitempty"`
	Refunded   string            `json:"refunded,omitempty"`
	Resolution *resolutionRecord `json:"resolution,omitempty"`
	Expected   []expectedRecord  `json:"expected"`
	Evidences  []Evidence        `json:"evidences,omitempty"`
	Statuses   []statusRecord    `json:"statuses"`
	Return     *returnRecord     `json:"return,omitempty"`
	Address    ReturnAddress     `json:"address"`
	// Actions and Messages count the entries of the actions history and
	// the messages, kept under keys of their own.
	Actions  int64 `json:"actions"`
	Messages int64 `json:"messages"`
	// Reviewed: the seller reviewed the return (or its window passed).
	Reviewed bool `json:"reviewed,omitempty"`
	// Coverage: the mediator's decision applied the marketplace's
	// coverage.
	Coverage bool `json:"coverage,omitempty"`
	// DueMs is the claim's entry in the due index (0: none).
	DueMs int64 `json:"due_ms,omitempty"`
	// Mediator: the mediator joined (the claim went to dispute).
	Mediator bool `json:"mediator,omitempty"`
	// Logistic is how the sale's shipment travelled (its logistic type):
	// a fulfillment sale's product may be replaced.
	Logistic string `json:"logistic"`
	// Change: the buyer accepted the seller's replacement of the product.
	Change bool `json:"change,omitempty"`
}

type resolutionRecord struct {
	Reason    string   `json:"reason"`
	Benefited []string `json:"benefited"`
	ClosedBy  string   `json:"closed_by"`
	AtMs      int64    `json:"at_ms"`
}

type expectedRecord struct {
	Role      string     `json:"role"`
	Kind      string     `json:"kind"`
	Details   []KeyValue `json:"details"`
	CreatedMs int64      `json:"created_ms"`
	UpdatedMs int64      `json:"updated_ms"`
	Status    string     `json:"status"`
}

type statusRecord struct {
	Stage  string `json:"stage"`
	Status string `json:"status"`
	AtMs   int64  `json:"at_ms"`
	By     string `json:"by"`
}

// actionRecord is an entry of the actions history, kept under a key of
// its own (the history grows with every message).
type actionRecord struct {
	Name   string  `json:"name"`
	Role   string  `json:"role"`
	Reason *string `json:"reason"`
	Stage  *string `json:"stage"`
	Status *string `json:"status"`
	AtMs   int64   `json:"at_ms"`
}

// Timed changes of a claim.
const (
	// AnswerWindow is how long the respondent has to send its mandatory
	// message to the complainant; a claim still unanswered then goes to
	// dispute.
	AnswerWindow = 48 * time.Hour
	// ReviewWindow is how long the seller has to review a return delivered
	// to it; then the buyer is refunded as if the review were OK.
	ReviewWindow = 72 * time.Hour
)

// logisticFulfillment is the logistic type of a sale the marketplace
// ships from its own warehouse (Full): its product may be replaced.
const logisticFulfillment = "fulfillment"

// kind is the reason's family: PNR (paid, not received) or PDD (different
// or defective product).
func (r *record) kind() string { return reasonKind(r.ReasonID) }

func (r *record) opened() bool { return r.Status == StatusOpened }

// roleOf is the caller's role in the claim, "" for a stranger.
func (r *record) roleOf(caller int64) string {
	switch caller {
	case r.BuyerID:
		return RoleComplainant
	case r.SellerID:
		return RoleRespondent
	}
	return ""
}

// avail is an available action, its due date in Unix ms (0: none).
type avail struct {
	name      string
	mandatory bool
	dueMs     int64
}

// answerDue is when the respondent's mandatory message is due.
func (r *record) answerDue() int64 { return r.CreatedMs + AnswerWindow.Milliseconds() }

// reviewDue is when the seller's review of a delivered return is due (0:
// no review is awaited).
func (r *record) reviewDue() int64 {
	if !r.opened() || r.Return == nil || r.Return.Status != ReturnDelivered || r.Reviewed {
		return 0
	}
	return r.Return.DeliveredMs + ReviewWindow.Milliseconds()
}

// available lists what role may do in the claim as it stands, in the
// order the public API lists actions.
func (r *record) available(role string) []avail {
	if !r.opened() {
		return nil
	}
	var out []avail
	add := func(name string, ok bool) {
		if ok {
			out = append(out, avail{name: name})
		}
	}
	review := func() {
		if due := r.reviewDue(); due != 0 {
			out = append(out, avail{name: ActionReturnReviewOK, mandatory: true, dueMs: due},
				avail{name: ActionReturnReviewFail, mandatory: true, dueMs: due})
		}
	}
	switch {
	case role == RoleComplainant && r.Stage == StageClaim:
		add(ActionSendToRespondent, true)
		add(ActionOpenDispute, true)
	case role == RoleComplainant:
		add(ActionSendToMediator, true)
	case role == RoleRespondent && r.Stage == StageClaim:
		if r.Answered {
			add(ActionSendToComplainant, true)
		} else {
			out = append(out, avail{name: ActionSendToComplainant, mandatory: true, dueMs: r.answerDue()})
		}
		pdd := r.kind() == kindPDD
		add(ActionRefund, true)
		add(ActionAllowReturn, pdd && r.Return == nil)
		add(ActionAllowReplace, pdd && r.Return == nil && r.Logistic == logisticFulfillment)
		add(ActionAllowPartialRefund, pdd && r.Return == nil && r.pendingExpected(RoleComplainant, ResolutionReturnProduct) >= 0)
		add(ActionOpenDispute, true)
		pnr := r.kind() == kindPNR
		add(ActionAddShippingEvidence, pnr && !r.hasEvidence(EvidenceShipping))
		add(ActionSendPotentialShipping, pnr && !r.Fulfilled && !r.hasEvidence(EvidenceHandlingShipping))
		review()
	case role == RoleRespondent:
		add(ActionSendToMediator, true)
		add(ActionRefund, true)
		review()
	case role == RoleMediator && r.Stage == StageDispute:
		add(ActionSendToComplainant, true)
		add(ActionSendToRespondent, true)
	}
	return out
}

// can reports whether role may take action now.
func (r *record) can(role, action string) bool {
	return slices.ContainsFunc(r.available(role), func(a avail) bool { return a.name == action })
}

func (r *record) hasEvidence(typ string) bool {
	return slices.ContainsFunc(r.Evidences, func(e Evidence) bool { return e.Type == typ })
}

// pendingExpected is the index of role's pending expected resolution of
// kind ("" for any), or -1.
func (r *record) pendingExpected(role, kind string) int {
	for i := len(r.Expected) - 1; i >= 0; i-- {
		e := r.Expected[i]
		if e.Role == role && e.Status == ExpectedPending && (kind == "" || e.Kind == kind) {
			return i
		}
	}
	return -1
}

// rejectPending turns every pending expected resolution rejected, at ms:
// a new resolution replaces them.
func (r *record) rejectPending(ms int64) {
	r.Expected = slices.Clone(r.Expected)
	for i := range r.Expected {
		if r.Expected[i].Status == ExpectedPending {
			r.Expected[i].Status, r.Expected[i].UpdatedMs = ExpectedRejected, ms
		}
	}
}

// nextDue is the next timed change of the claim, in Unix ms (0: none).
func (r *record) nextDue() int64 {
	var due int64
	if r.opened() && r.Stage == StageClaim && !r.Answered {
		due = r.answerDue()
	}
	if d := r.reviewDue(); d != 0 && (due == 0 || d < due) {
		due = d
	}
	return due
}

// amount is the claimed amount.
func (r *record) amount() money.Dec { return money.MustParse(r.Amount) }

// outcome is what one change of a claim does beyond its record: the
// entries of its actions history, its notifications and the change of
// its order, written with the record (Service.save).
type outcome struct {
	actions []actionRecord
	// changed: the stage or the status changed (post_purchase "claims",
	// and the order's orders_v2).
	changed bool
	// acted: an action ran or the return changed (post_purchase
	// "claims_actions").
	acted bool
	order orderChange
}

// orderChange is what the claim does to its order, merged over one change.
type orderChange struct {
	touched         bool
	addTags, rmTags []string
	refund          *money.Dec
	restock         int64 // units back to their store
	action          string
}

// note records an action of role in the actions history at ms, with the
// claim's stage and status at the time.
func (o *outcome) note(r *record, name, role string, reason *string, ms int64) {
	stage, status := r.Stage, r.Status
	o.actions = append(o.actions, actionRecord{Name: name, Role: role, Reason: reason, Stage: &stage, Status: &status, AtMs: ms})
}

// settle applies to the claim the timed changes due by nowMs, each at its
// due date, so that the claim reads the same whenever it is read after
// them: a respondent who let its mandatory message pass takes the claim to
// dispute; a return delivered and left unreviewed refunds the buyer.
func (r *record) settle(nowMs int64, out *outcome) {
	for {
		due := r.nextDue()
		if due == 0 || due > nowMs {
			return
		}
		if r.opened() && r.Stage == StageClaim && !r.Answered && due == r.answerDue() {
			reason := "respondent_timeout"
			out.note(r, ActionOpenDispute, RoleMediator, &reason, due)
			r.TimedOut = true
			r.toDispute(due, RoleMediator, out)
			continue
		}
		// The review window passed: the return counts as received in
		// good order.
		r.Reviewed = true
		rt := r.Return
		rt.Reviews = append(rt.Reviews, reviewRecord{Stage: "timeout", Benefited: "buyer", AtMs: due})
		out.note(r, ActionReturnReviewOK, RoleMediator, ptr("timeout"), due)
		out.acted = true
		r.close(due, "item_returned", []string{RoleComplainant}, RoleMediator, out)
		r.refund(due, out)
	}
}

// mediationStatus is where the claim stands for the order search's
// mediations.status filter: a dispute the respondent (the seller) opened is
// a seller dispute; one the complainant opened, or the mediator when the
// seller let the answer's due date pass, is a dispute.
func (r *record) mediationStatus() string {
	if r.DisputeMs == 0 {
		if r.opened() {
			return sales.MediationClaimOpened
		}
		return sales.MediationClaimClosed
	}
	first := slices.IndexFunc(r.Statuses, func(s statusRecord) bool { return s.Stage == StageDispute })
	bySeller := first >= 0 && r.Statuses[first].By == RoleRespondent
	switch {
	case bySeller && r.opened():
		return sales.MediationSellerDisputeOpened
	case bySeller:
		return sales.MediationSellerDisputeClosed
	case r.opened():
		return sales.MediationDisputeOpened
	}
	return sales.MediationDisputeClosed
}

// toDispute moves the claim to dispute at ms: the mediator joins.
func (r *record) toDispute(ms int64, by string, out *outcome) {
	r.Stage, r.Mediator, r.DisputeMs, r.UpdatedMs = StageDispute, true, ms, ms
	r.Statuses = append(r.Statuses, statusRecord{Stage: StageDispute, Status: r.Status, AtMs: ms, By: by})
	out.changed = true
	out.order.touched = true
	out.order.action = "claim_dispute"
}

// close closes the claim at ms with reason. A return still on its way is
// cancelled (its money follows the claim: refunded when the buyer is).
func (r *record) close(ms int64, reason string, benefited []string, by string, out *outcome) {
	r.Status, r.UpdatedMs = StatusClosed, ms
	r.Resolution = &resolutionRecord{Reason: reason, Benefited: benefited, ClosedBy: by, AtMs: ms}
	r.Statuses = append(r.Statuses, statusRecord{Stage: r.Stage, Status: StatusClosed, AtMs: ms, By: by})
	out.changed = true
	o := &out.order
	o.touched = true
	o.addTags = append(o.addTags, TagClaimClosed)
	o.rmTags = append(o.rmTags, TagClaimOpened)
	o.action = "claim_closed"
	if rt := r.Return; rt != nil && !finalReturn(rt.Status) {
		rt.move(ReturnCancelled, ms)
		rt.StatusMoney = MoneyAvailable
		out.acted = true
	} else if rt != nil && rt.StatusMoney == MoneyRetained {
		// Unless the closing refunds the buyer (refund, after this),
		// the money retained goes to the seller.
		rt.StatusMoney = MoneyAvailable
		rt.UpdatedMs = ms
		out.acted = true
	}
}

// refund gives the claimed amount back to the buyer at ms, once: the
// order's payments become refunded, and a return the seller received gives
// its units back to their store.
func (r *record) refund(ms int64, out *outcome) {
	if r.RefundedMs != 0 {
		return
	}
	r.giveBack(ms, r.amount(), out)
}

// giveBack refunds amount at ms.
func (r *record) giveBack(ms int64, amount money.Dec, out *outcome) {
	if r.RefundedMs != 0 {
		return
	}
	r.RefundedMs, r.Refunded = ms, amount.String()
	o := &out.order
	o.touched = true
	if o.refund != nil {
		amount = amount.Add(*o.refund)
	}
	o.refund = &amount
	if rt := r.Return; rt != nil {
		rt.StatusMoney = MoneyRefunded
		if rt.Status == ReturnDelivered && !rt.Restocked {
			rt.Restocked = true
			o.restock += r.Quantity
		}
	}
}

// Order tags a claim sets.
const (
	TagClaimOpened = "claim_opened"
	TagClaimClosed = "claim_closed"
)

func ptr[T any](v T) *T { return &v }
