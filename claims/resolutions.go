package claims

import (
	"context"
	"encoding/json"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/storage"
)

// OpenDispute asks for the mediator on claim id: the claim moves to
// dispute, the mediator joins, the buyer and the seller then write to the
// mediator only, and evidences are no longer taken. The caller's player
// must have open_dispute (either party, in the claim stage). Errors:
// Invalid ("Action open_dispute not available for player"), NotFound,
// Forbidden.
func (s *Service) OpenDispute(ctx context.Context, caller, id int64) (Claim, error) {
	var out Claim
	err := s.write(ctx, caller, id, func(tx storage.Tx, r *record, o *outcome, nowMs int64) error {
		if err := s.openDispute(r, o, nowMs, r.roleOf(caller)); err != nil {
			return err
		}
		out = s.view(tx, r)
		return nil
	})
	return out, err
}

func (s *Service) openDispute(r *record, o *outcome, nowMs int64, role string) error {
	if !r.can(role, ActionOpenDispute) {
		return errNotAvailable(ActionOpenDispute)
	}
	o.note(r, ActionOpenDispute, role, nil, nowMs)
	o.acted = true
	r.toDispute(nowMs, role, o)
	return nil
}

// offerPercentages are the partial refunds a seller may offer, in percent
// of the claimed amount, as the public API lists them.
var offerPercentages = []int64{90, 80, 70, 60, 50, 40, 30, 20, 10}

// defaultPercentage is the offer of a request that names none.
const defaultPercentage = 50

// offerAmount is pct percent of the claimed amount, rounded to the
// currency's decimals.
func offerAmount(tx storage.Tx, r *record, pct money.Dec) (money.Dec, int32, error) {
	cur, err := geo.GetCurrency(tx, r.CurrencyID)
	if err != nil {
		return money.Dec{}, 0, err
	}
	places := int32(cur.DecimalPlaces)
	return r.amount().Percent(pct).Round(places), places, nil
}

// errNotEligible answers a partial refund on a claim that cannot have one.
func errNotEligible(id int64) error {
	return errs.WithCode(errs.Invalid, CodeNotEligible, "Claim "+itoa(id)+" is not eligible for a partial refund")
}

// CodeNotEligible is the error code of a partial refund asked on a claim
// that cannot have one (a 422 over HTTP).
const CodeNotEligible = "claim_not_eligible"

// PartialRefundOffers lists the partial refunds the seller may offer on
// claim id: 90 % down to 10 % of the claimed amount, with no
// recommendation nor restriction. A claim is eligible while its seller
// may offer one (a different or defective product, in the claim stage,
// the buyer's return_product pending and no return yet). Errors: Invalid
// (CodeNotEligible), NotFound, Forbidden.
func (s *Service) PartialRefundOffers(ctx context.Context, caller, id int64) (Offers, error) {
	var out Offers
	err := s.read(ctx, caller, id, func(tx storage.Tx, r *record, _ []actionRecord) error {
		if !r.can(RoleRespondent, ActionAllowPartialRefund) {
			return errNotEligible(id)
		}
		out = Offers{CurrencyID: r.CurrencyID, AvailableOffers: []Offer{}, Recommendations: []OfferGuideline{}, Restrictions: []OfferGuideline{}}
		for _, p := range offerPercentages {
			amount, places, err := offerAmount(tx, r, money.FromInt(p))
			if err != nil {
				return err
			}
			out.AvailableOffers = append(out.AvailableOffers, Offer{Amount: fixed(amount, places), Percentage: fixed(money.FromInt(p), 1)})
		}
		return nil
	})
	return out, err
}

// PartialRefund is the seller's offer of part of the claimed amount.
type PartialRefund struct {
	// Percentage is one of the available offers; nil is the default, 50.
	Percentage *json.Number `json:"percentage"`
}

// OfferPartialRefund offers the buyer of claim id the refund of in's
// percentage of the claimed amount instead of a return: the buyer's
// pending return_product is rejected and the seller's partial_refund is
// pending, with the percentage, the amount and its currency in its
// details, until the buyer accepts it (the claim closes, partial_refunded,
// and the amount is refunded) or rejects it (Act). The seller must have
// allow_partial_refund. Errors: Invalid ("Action allow_partial_refund not
// available for player", a percentage not offered: "Percentage not found
// 35.0"), NotFound, Forbidden.
func (s *Service) OfferPartialRefund(ctx context.Context, caller, id int64, in PartialRefund) ([]ExpectedResolution, error) {
	var out []ExpectedResolution
	err := s.write(ctx, caller, id, func(tx storage.Tx, r *record, o *outcome, nowMs int64) error {
		role := r.roleOf(caller)
		if !r.can(role, ActionAllowPartialRefund) {
			return errNotAvailable(ActionAllowPartialRefund)
		}
		pct := money.FromInt(defaultPercentage)
		if in.Percentage != nil {
			p, err := money.Parse(string(*in.Percentage))
			if err != nil || !offered(p) {
				return errs.WithCode(errs.Invalid, "error checking configuration percentage", "Percentage not found "+string(fixed(p, 1)))
			}
			pct = p
		}
		amount, places, err := offerAmount(tx, r, pct)
		if err != nil {
			return err
		}
		r.rejectPending(nowMs)
		r.Expected = append(r.Expected, expectedRecord{Role: RoleRespondent, Kind: ResolutionPartialRefund,
			Details:   []KeyValue{{"percentage", string(fixed(pct, 1))}, {"seller_amount", string(fixed(amount, places))}, {"seller_currency", r.CurrencyID}},
			CreatedMs: nowMs, UpdatedMs: nowMs, Status: ExpectedPending})
		r.UpdatedMs = nowMs
		o.note(r, ActionAllowPartialRefund, role, nil, nowMs)
		o.acted = true
		out = s.expectedView(tx, r)
		return nil
	})
	return out, err
}

func offered(p money.Dec) bool {
	for _, q := range offerPercentages {
		if p.Cmp(money.FromInt(q)) == 0 {
			return true
		}
	}
	return false
}

// Refund gives the buyer of claim id the whole claimed amount back: the
// pending expected resolutions are rejected and the seller's refund is
// accepted, the claim closes (payment_refunded, for the complainant,
// closed by the respondent), the order's payments become refunded, and a
// return not yet delivered is cancelled (one delivered gives its units
// back to their store). The seller must have refund (in the claim stage or
// in dispute). Errors: Invalid ("Action refund not available for player"),
// NotFound, Forbidden.
func (s *Service) Refund(ctx context.Context, caller, id int64) ([]ExpectedResolution, error) {
	var out []ExpectedResolution
	err := s.write(ctx, caller, id, func(tx storage.Tx, r *record, o *outcome, nowMs int64) error {
		role := r.roleOf(caller)
		if !r.can(role, ActionRefund) {
			return errNotAvailable(ActionRefund)
		}
		o.note(r, ActionRefund, role, nil, nowMs)
		o.acted = true
		r.rejectPending(nowMs)
		r.Expected = append(r.Expected, expectedRecord{Role: RoleRespondent, Kind: ResolutionRefund, Details: []KeyValue{},
			CreatedMs: nowMs, UpdatedMs: nowMs, Status: ExpectedAccepted})
		r.close(nowMs, "payment_refunded", []string{RoleComplainant}, RoleRespondent, o)
		r.refund(nowMs, o)
		out = s.expectedView(tx, r)
		return nil
	})
	return out, err
}

// AllowReturn accepts that the buyer of claim id returns the product: a
// return is created with its label (label_generated, the money retained
// until the seller receives the product and reviews it, or ReviewWindow
// after delivery), the claim names it in related_entities, and the
// buyer's return_product stays pending until then (another pending
// resolution is rejected for the seller's return_product). The seller
// must have allow_return (a different or defective product, in the claim
// stage, no return yet). Errors: Invalid ("Action allow_return not
// available for player"), NotFound, Forbidden.
func (s *Service) AllowReturn(ctx context.Context, caller, id int64) ([]ExpectedResolution, error) {
	return s.allowReturn(ctx, caller, id, ActionAllowReturn, ResolutionReturnProduct)
}

// AllowReplace offers the buyer of claim id a new unit of the product for
// the one it returns: a return is created as by AllowReturn, and the
// seller's change_product is pending until the buyer accepts it (Act,
// accept_change_product: the claim then names the change in
// related_entities). The seller must have allow_replace: only a
// fulfillment sale's product is replaced. Errors: Invalid ("Action
// allow_replace not available for player"), NotFound, Forbidden.
func (s *Service) AllowReplace(ctx context.Context, caller, id int64) ([]ExpectedResolution, error) {
	return s.allowReturn(ctx, caller, id, ActionAllowReplace, ResolutionChangeProduct)
}

func (s *Service) allowReturn(ctx context.Context, caller, id int64, action, wanted string) ([]ExpectedResolution, error) {
	retNo, shipNo := kv.NewOnceID(s.store, returnSequence), kv.NewOnceID(s.store, returnShipmentSequence)
	var out []ExpectedResolution
	err := s.write(ctx, caller, id, func(tx storage.Tx, r *record, o *outcome, nowMs int64) error {
		role := r.roleOf(caller)
		if !r.can(role, action) {
			return errNotAvailable(action)
		}
		if err := kv.DrawOnce(ctx, retNo, shipNo); err != nil {
			return err
		}
		ret, _ := retNo.Get(ctx)
		ship, _ := shipNo.Get(ctx)
		rt := &returnRecord{ID: int64(ret) - 1 + firstReturnID, ShipmentID: int64(ship) - 1 + firstReturnShipmentID,
			Status: ReturnLabelGenerated, Subtype: SubtypeTotal, StatusMoney: MoneyRetained, CreatedMs: nowMs, UpdatedMs: nowMs}
		if r.Quantity < r.OrderQuantity {
			rt.Subtype = SubtypePartial
		}
		r.Return = rt
		if err := tx.Set(returnKey(rt.ID), keyInt(r.ID)); err != nil {
			return err
		}
		if r.pendingExpected(RoleComplainant, wanted) < 0 {
			r.rejectPending(nowMs)
			r.Expected = append(r.Expected, expectedRecord{Role: RoleRespondent, Kind: wanted, Details: []KeyValue{},
				CreatedMs: nowMs, UpdatedMs: nowMs, Status: ExpectedPending})
		}
		r.UpdatedMs = nowMs
		o.note(r, action, role, nil, nowMs)
		o.note(r, ActionGenerateReturn, role, nil, nowMs)
		o.acted = true
		out = s.expectedView(tx, r)
		return nil
	})
	return out, err
}
