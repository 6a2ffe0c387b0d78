package messages

import (
	"time"

	"github.com/marketplace/marketplace/sales"
)

// Conversation statuses.
const (
	ConversationActive  = "active"
	ConversationBlocked = "blocked"
)

// Substatuses of a blocked conversation that the engine's state produces
// (spec 3.10). The others of the spec (a buyer's block, a deactivated
// account, restrictions, reviews, the AI assistant's, a cancellation for
// fraud or hidden) follow from states the engine does not have.
const (
	SubstatusCancelledOrder = "blocked_by_cancelled_order"
	SubstatusPayment        = "blocked_by_payment"
	SubstatusFulfillment    = "blocked_by_fulfillment"
	SubstatusMediation      = "blocked_by_mediation"
	SubstatusMediationFBM   = "blocked_by_mediation_fbm"
	SubstatusRefund         = "blocked_by_refund"
	SubstatusExpired        = "blocked_by_conversation_expired"
	SubstatusTime           = "blocked_by_time"
	SubstatusSellerLimited  = "blocked_by_conversation_initiated_by_seller_limited"
	SubstatusUseMessageAPI  = "blocked_by_conversation_use_message_api"
	SubstatusExceptedCase   = "blocked_by_excepted_case"
)

// Periods of the rules.
const (
	// TimeLimit is how long a conversation stays open after its last
	// message (blocked_by_time).
	TimeLimit = 30 * 24 * time.Hour
	// ExpiryMonths is how long after the purchase a conversation ends for
	// good (blocked_by_conversation_expired).
	ExpiryMonths = 18
	// AttachmentTTL is how long an attachment no message links is kept.
	AttachmentTTL = 48 * time.Hour
)

// saleFacts is what the rules read of the sale.
type saleFacts struct {
	orderID, packID, sellerID, buyerID int64
	siteID                             string
	status                             string
	created, paid, cancelled           time.Time
	shipmentID                         int64
	logisticMode, logisticType         string
	shipmentStatus, shipmentSubstatus  string
	shipmentCreated, delivered         time.Time
	deliveryEstimate                   time.Time
}

func saleFactsOf(s sales.Sale) saleFacts {
	o, sh := s.Order, s.Shipment
	f := saleFacts{orderID: o.ID, packID: o.PackID, sellerID: o.Seller.ID, buyerID: o.Buyer.ID, siteID: o.Context.Site,
		status: o.Status, created: s.Created.UTC(), shipmentID: sh.ID, logisticMode: sh.Logistic.Mode,
		logisticType: sh.Logistic.Type, shipmentStatus: sh.Status}
	if f.packID == 0 {
		f.packID = o.ID
	}
	if o.DateClosed != nil && len(o.Payments) > 0 {
		f.paid = parseSalesTime(*o.DateClosed)
	}
	if o.CancelDetail != nil {
		f.cancelled = parseSalesTime(o.CancelDetail.Date)
	}
	if sh.Substatus != nil {
		f.shipmentSubstatus = *sh.Substatus
	}
	f.shipmentCreated = parseSalesTime(sh.DateCreated)
	if sh.Status == sales.ShipmentDelivered {
		// Delivered is final: the shipment's last change is its delivery.
		f.delivered = parseSalesTime(sh.LastUpdated)
	}
	if d := sh.LeadTime.EstimatedDeliveryTime.Date; d != nil {
		f.deliveryEstimate = parseSalesTime(*d)
	}
	return f
}

func parseSalesTime(s string) time.Time {
	t, err := time.Parse(sales.TimeLayout, s)
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

func (f saleFacts) unpaid() bool {
	switch f.status {
	case sales.StatusPaymentRequired, sales.StatusPaymentInProcess, sales.StatusPartiallyPaid:
		return true
	}
	return false
}

func (f saleFacts) fulfillment() bool { return f.logisticType == sales.LogisticFulfillment }

// me2 says whether the sale ships with Mercado Envíos 2 (fulfillment,
// cross docking, drop off, Flex): the seller starts its conversation only
// through the action guide.
func (f saleFacts) me2() bool { return f.logisticMode == "me2" }

// exceptedCase: a product made to order, whose seller writes freely and
// has no action guide.
func (f saleFacts) exceptedCase() bool { return f.shipmentSubstatus == "manufacturing" }

// state is a conversation's status: blocked or not, why, and since when.
type state struct {
	blocked   bool
	substatus string
	since     time.Time
}

// derive is the conversation's status from the state of its sale, its
// claims and its messages at now, by the precedence of spec 3.10 (the
// first rule that matches wins): cancelled order, payment, fulfillment not
// delivered, open mediation, refund, expired (18 months), time (30 days
// since the last message). The rules of who starts a conversation are the
// callers' (derive reports none of them). When no rule matches the
// conversation is active since the latest of its purchase, its payment,
// its fulfillment's delivery and a buyer's message that reopened it.
func derive(now time.Time, sale saleFacts, claim ClaimState, c conversation) state {
	expires := sale.created.AddDate(0, ExpiryMonths, 0)
	switch {
	case sale.status == sales.StatusCancelled:
		return state{true, SubstatusCancelledOrder, sale.cancelled}
	case sale.unpaid():
		return state{true, SubstatusPayment, sale.created}
	case sale.fulfillment() && sale.shipmentStatus != sales.ShipmentDelivered:
		return state{true, SubstatusFulfillment, latest(sale.shipmentCreated, sale.paid)}
	case claim.Mediation:
		if sale.fulfillment() {
			return state{true, SubstatusMediationFBM, claim.MediationSince}
		}
		return state{true, SubstatusMediation, claim.MediationSince}
	case claim.Refunded && !c.LastBuyer.After(claim.RefundedAt):
		return state{true, SubstatusRefund, claim.RefundedAt}
	case !now.Before(expires):
		return state{true, SubstatusExpired, expires}
	case !c.Last.IsZero() && !now.Before(c.Last.Add(TimeLimit)):
		return state{true, SubstatusTime, c.Last.Add(TimeLimit)}
	}
	since := latest(sale.created, sale.paid, c.Reopened)
	if sale.fulfillment() {
		since = latest(since, sale.delivered)
	}
	return state{since: since}
}

func latest(ts ...time.Time) time.Time {
	var out time.Time
	for _, t := range ts {
		if t.After(out) {
			out = t
		}
	}
	return out
}

// reopenedByBuyer says whether a block ends when the buyer writes: the
// buyer may write through it, and the message reopens the conversation.
func reopenedByBuyer(st state) bool {
	return st.substatus == SubstatusTime || st.substatus == SubstatusRefund
}

// hidesMessages says whether a block hides the conversation's messages.
func hidesMessages(st state) bool { return st.substatus == SubstatusExpired }

// shown is the status a party sees: the conversation's own, and to the
// seller of an ME2 sale whose conversation has no message yet, the block
// on starting it with a direct message (until a message exists).
func shown(st state, sale saleFacts, c conversation, role string) state {
	if !st.blocked && role == roleSeller && sale.me2() && !c.exists() {
		return state{true, SubstatusSellerLimited, sale.created}
	}
	return st
}

func (st state) view(sale saleFacts, claim ClaimState) ConversationStatus {
	cs := ConversationStatus{Path: resourcePath(sale.packID, sale.sellerID), Status: ConversationActive,
		StatusDate: stamp(st.since)}
	if st.blocked {
		cs.Status = ConversationBlocked
		sub := st.substatus
		cs.Substatus = &sub
	}
	if claim.ClaimID != 0 {
		id := claim.ClaimID
		cs.ClaimID = &id
	}
	if sale.shipmentID != 0 {
		id := sale.shipmentID
		cs.ShippingID = &id
	}
	return cs
}
