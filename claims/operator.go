package claims

import (
	"context"
	"slices"
	"strings"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/storage"
)

// OperatorAction is what the operator makes the complainant or the
// mediator of a claim do (POST /operator/claims/{id}/actions): the buyer
// and the mediator act on the website, which the public API has no route
// for.
type OperatorAction struct {
	// Role is complainant or mediator.
	Role string `json:"role"`
	// Action is one of ComplainantActions or MediatorActions.
	Action string `json:"action"`
	// Message is the text of a message (the send_message_to_* actions).
	Message string `json:"message"`
	// Resolution is how close_claim and resolve end the claim.
	Resolution *OperatorResolution `json:"resolution"`
}

// OperatorResolution is the reason a claim closes with and who benefits.
type OperatorResolution struct {
	Reason    string   `json:"reason"`
	Benefited []string `json:"benefited"`
}

// The actions the operator takes for the complainant and for the mediator.
var (
	ComplainantActions = []string{ActionSendToRespondent, ActionSendToMediator, ActionOpenDispute,
		ActionAcceptPartialRefund, ActionRejectPartialRefund, ActionAcceptChangeProduct, ActionRejectChangeProduct, ActionCloseClaim}
	MediatorActions = []string{ActionSendToComplainant, ActionSendToRespondent, ActionResolve}
)

// The buyer's answers to the seller's offers.
const (
	ActionAcceptChangeProduct = "accept_change_product"
	ActionRejectChangeProduct = "reject_change_product"
)

// BuyerCloseReasons are the reasons the buyer closes a claim with
// (worked_out_with_seller by default).
var BuyerCloseReasons = []string{"worked_out_with_seller", "opened_claim_by_mistake", "prefered_to_keep_product"}

// MediatorReasons are the reasons the mediator resolves a claim with.
var MediatorReasons = []string{"coverage_decision", "rep_resolution", "warehouse_decision", "item_returned",
	"not_delivered", "product_delivered", "seller_sent_product", "seller_did_not_help", "already_shipped", "no_bpp", "reimbursed"}

// Act makes the complainant or the mediator of claim id take in.Action:
//
//   - the complainant: send_message_to_respondent (claim stage) or
//     send_message_to_mediator (dispute) with in.Message; open_dispute;
//     accept_partial_refund (the claim closes, partial_refunded, and the
//     offered amount is refunded) or reject_partial_refund (the offer is
//     rejected: the buyer may open a dispute); accept_change_product or
//     reject_change_product (the seller's replacement); close_claim with
//     in.Resolution.Reason among BuyerCloseReasons (to the respondent's
//     benefit).
//   - the mediator, in dispute: send_message_to_complainant or
//     send_message_to_respondent; resolve with a reason among
//     MediatorReasons and who benefits (complainant and/or respondent):
//     the buyer's benefit refunds it (and a return the seller received
//     gives its units back to their store), coverage_decision applies the
//     marketplace's coverage.
//
// It answers the claim as it stands after. Errors: Invalid (an unknown
// role, action or reason; an action not available now: "Action {action}
// not available for player"), NotFound.
func (s *Service) Act(ctx context.Context, id int64, in OperatorAction) (Claim, error) {
	if err := checkOperatorAction(&in); err != nil {
		return Claim{}, err
	}
	var out Claim
	err := s.write(ctx, Operator, id, func(tx storage.Tx, r *record, o *outcome, nowMs int64) error {
		if err := s.act(tx, r, o, nowMs, in); err != nil {
			return err
		}
		out = s.view(tx, r)
		return nil
	})
	return out, err
}

// checkOperatorAction checks an operator's action in a fixed order: role,
// action, then what the action needs.
func checkOperatorAction(in *OperatorAction) error {
	var allowed []string
	switch in.Role {
	case "":
		return errs.Invalidf("The field [role] is required: complainant or mediator")
	case RoleComplainant:
		allowed = ComplainantActions
	case RoleMediator:
		allowed = MediatorActions
	default:
		return errs.Invalidf("Invalid role: %s. Valid values are: [complainant, mediator]; the respondent acts through the public routes", in.Role)
	}
	switch {
	case in.Action == "":
		return errs.Invalidf("The field [action] is required: one of [%s]", strings.Join(allowed, ", "))
	case !slices.Contains(allowed, in.Action):
		return errs.Invalidf("Invalid action: %s. Valid values for the %s are: [%s]", in.Action, in.Role, strings.Join(allowed, ", "))
	}
	if strings.HasPrefix(in.Action, "send_message_to_") {
		receiver := strings.TrimPrefix(in.Action, "send_message_to_")
		return checkMessage(NewMessage{ReceiverRole: receiver, Message: in.Message})
	}
	switch in.Action {
	case ActionCloseClaim:
		if in.Resolution == nil || in.Resolution.Reason == "" {
			in.Resolution = &OperatorResolution{Reason: BuyerCloseReasons[0]}
		}
		if !slices.Contains(BuyerCloseReasons, in.Resolution.Reason) {
			return errs.Invalidf("Invalid resolution.reason: %s. Valid values for the complainant are: [%s]", in.Resolution.Reason, strings.Join(BuyerCloseReasons, ", "))
		}
	case ActionResolve:
		switch {
		case in.Resolution == nil || in.Resolution.Reason == "":
			return errs.Invalidf("The field [resolution.reason] is required: one of [%s]", strings.Join(MediatorReasons, ", "))
		case !slices.Contains(MediatorReasons, in.Resolution.Reason):
			return errs.Invalidf("Invalid resolution.reason: %s. Valid values for the mediator are: [%s]", in.Resolution.Reason, strings.Join(MediatorReasons, ", "))
		case len(in.Resolution.Benefited) == 0:
			return errs.Invalidf("The field [resolution.benefited] is required: complainant and/or respondent")
		}
		for _, b := range in.Resolution.Benefited {
			if b != RoleComplainant && b != RoleRespondent {
				return errs.Invalidf("Invalid resolution.benefited: %s. Valid values are: [complainant, respondent]", b)
			}
		}
	}
	return nil
}

// act runs the operator's action in on r.
func (s *Service) act(tx storage.Tx, r *record, o *outcome, nowMs int64, in OperatorAction) error {
	role := in.Role
	if strings.HasPrefix(in.Action, "send_message_to_") {
		receiver := strings.TrimPrefix(in.Action, "send_message_to_")
		caller := r.BuyerID
		if role == RoleMediator {
			caller = MediatorID
		}
		return s.sendAs(tx, r, o, nowMs, role, caller, NewMessage{ReceiverRole: receiver, Message: in.Message})
	}
	switch in.Action {
	case ActionOpenDispute:
		return s.openDispute(r, o, nowMs, role)
	case ActionAcceptPartialRefund, ActionRejectPartialRefund, ActionAcceptChangeProduct, ActionRejectChangeProduct:
		return s.answerOffer(tx, r, o, nowMs, in.Action)
	case ActionCloseClaim:
		if !r.opened() {
			return errNotAvailable(in.Action)
		}
		o.note(r, ActionCloseClaim, role, &in.Resolution.Reason, nowMs)
		o.acted = true
		r.close(nowMs, in.Resolution.Reason, []string{RoleRespondent}, RoleComplainant, o)
		return nil
	}
	// resolve
	if !r.opened() || r.Stage != StageDispute {
		return errNotAvailable(ActionResolve)
	}
	o.note(r, ActionResolve, RoleMediator, &in.Resolution.Reason, nowMs)
	o.acted = true
	r.Coverage = in.Resolution.Reason == "coverage_decision"
	benefited := slices.Clone(in.Resolution.Benefited)
	slices.Sort(benefited)
	benefited = slices.Compact(benefited)
	r.close(nowMs, in.Resolution.Reason, benefited, RoleMediator, o)
	if slices.Contains(benefited, RoleComplainant) {
		r.refund(nowMs, o)
	}
	return nil
}

// answerOffer is the buyer's answer to the seller's pending partial
// refund or replacement.
func (s *Service) answerOffer(tx storage.Tx, r *record, o *outcome, nowMs int64, action string) error {
	kind := ResolutionPartialRefund
	if action == ActionAcceptChangeProduct || action == ActionRejectChangeProduct {
		kind = ResolutionChangeProduct
	}
	i := r.pendingExpected(RoleRespondent, kind)
	if !r.opened() || i < 0 {
		return errNotAvailable(action)
	}
	accept := action == ActionAcceptPartialRefund || action == ActionAcceptChangeProduct
	e := &r.Expected[i]
	e.UpdatedMs = nowMs
	o.note(r, action, RoleComplainant, nil, nowMs)
	o.acted = true
	r.UpdatedMs = nowMs
	if !accept {
		e.Status = ExpectedRejected
		return nil
	}
	e.Status = ExpectedAccepted
	if kind == ResolutionChangeProduct {
		// The new unit is the claim's end once the product is back: the
		// return goes on (returned).
		r.Change = true
		return nil
	}
	var amount string
	for _, d := range e.Details {
		if d.Key == "seller_amount" {
			amount = d.Value
		}
	}
	r.close(nowMs, "partial_refunded", []string{RoleComplainant}, RoleComplainant, o)
	v, err := money.Parse(amount)
	if err != nil {
		return errs.Internalf(err, "claim %d offer amount %q", r.ID, amount)
	}
	r.giveBack(nowMs, v, o)
	return nil
}
