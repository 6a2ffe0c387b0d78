package claims

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/storage"
)

// The routes of returns answer their errors in their own words and shape
// (variant C of the spec): these are their codes and messages.

func errReturnNotFound() error {
	return errs.WithCode(errs.NotFound, "not_found_error", "return not found")
}

func errReviewNotFound() error {
	return errs.WithCode(errs.NotFound, "not_found_error", "return review not found")
}

// errBodyC answers a review whose body the route cannot take.
func errBodyC() error {
	return errs.WithCode(errs.Invalid, "bad_request_error", "Required request body is missing or incorrect, please see the documentation.")
}

// ClaimReturn returns the return of claim id (GET
// /post-purchase/v2/claims/{id}/returns). Errors (variant C): NotFound
// ("claim id: {id} not found", "return not found"), Invalid (the caller is
// not a player: "Invalid roleId :{user} in claim :{claim}").
func (s *Service) ClaimReturn(ctx context.Context, caller, id int64) (Return, error) {
	var out Return
	err := s.readReturnSide(ctx, caller, id, func(tx storage.Tx, r *record) error {
		if r.Return == nil {
			return errReturnNotFound()
		}
		out = returnView(r)
		return nil
	})
	return out, err
}

// returnStamp writes a return's dates: UTC with milliseconds and +00:00.
func returnStamp(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000-07:00")
}

// reviewStamp writes a review's dates: UTC with milliseconds and Z.
func reviewStamp(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}

func returnView(r *record) Return {
	rt := r.Return
	out := Return{ID: rt.ID, ClaimID: r.ID, ResourceType: "order", ResourceID: r.OrderID, Status: rt.Status,
		Subtype: rt.Subtype, StatusMoney: rt.StatusMoney, RefundAt: "delivered",
		Shipments: []ReturnShipment{{ShipmentID: rt.ShipmentID, Status: returnShipmentStatus(rt.Status), Type: "return",
			Destination: ReturnDestination{Name: "seller_address", ShippingAddress: r.Address}}},
		Orders: []ReturnOrder{{OrderID: r.OrderID, ItemID: r.ItemID, VariationID: r.VariationID, ContextType: "total",
			TotalQuantity: quantity(r.OrderQuantity), ReturnQuantity: quantity(r.Quantity)}},
		RelatedEntities: []string{}, Resources: []ReturnResource{{Resource: "claim", ResourceID: itoa(r.ID)}},
		DateCreated: returnStamp(rt.CreatedMs), LastUpdated: returnStamp(rt.UpdatedMs)}
	if rt.Subtype == SubtypePartial {
		out.Orders[0].ContextType = "partial"
	}
	if len(rt.Reviews) > 0 {
		out.RelatedEntities = append(out.RelatedEntities, "reviews")
	}
	if rt.ClosedMs != 0 {
		d := returnStamp(rt.ClosedMs)
		out.DateClosed = &d
	}
	return out
}

// claimOfReturn is the claim return id belongs to. Errors: NotFound
// ("return not found").
func claimOfReturn(tx storage.Tx, id int64) (int64, error) {
	b, err := tx.Get(returnKey(id))
	if errors.Is(err, storage.ErrNotFound) {
		return 0, errReturnNotFound()
	}
	if err != nil {
		return 0, errs.Internalf(err, "read return %d", id)
	}
	rd := keycodec.Read(b)
	claim := rd.Int()
	if err := rd.Err(); err != nil {
		return 0, errs.Internalf(err, "decode return %d", id)
	}
	return claim, nil
}

func keyInt(n int64) []byte { return keycodec.Raw().Int(n) }

// ReturnReviews lists the reviews of return id: the seller's, or the one
// that stands for it when its window passed. Errors (variant C): NotFound
// ("return not found", "return review not found"), Invalid (the caller is
// not a player).
func (s *Service) ReturnReviews(ctx context.Context, caller, id int64) (Reviews, error) {
	var out Reviews
	now := s.clock.Now()
	err := s.store.View(ctx, func(tx storage.Tx) error {
		claimID, err := claimOfReturn(tx, id)
		if err != nil {
			return err
		}
		r, err := getRecord(tx, claimID)
		if err != nil {
			return errs.Internalf(err, "return %d names claim %d", id, claimID)
		}
		if caller != Operator && r.roleOf(caller) == "" {
			return errRoleC(caller, claimID)
		}
		var o outcome
		r.settle(now.UnixMilli(), &o)
		if len(r.Return.Reviews) == 0 {
			return errReviewNotFound()
		}
		out = Reviews{Reviews: []Review{}}
		for _, rv := range r.Return.Reviews {
			out.Reviews = append(out.Reviews, reviewView(&r, rv))
		}
		return nil
	})
	return out, err
}

func reviewView(r *record, rv reviewRecord) Review {
	str := func(v string) *string { return &v }
	rr := ResourceReview{Stage: rv.Stage, SellerStatus: str(rv.SellerStatus), MissingQuantity: ptr(int64(0))}
	if rv.Benefited != "" {
		rr.Benefited = str(rv.Benefited)
	}
	switch rv.SellerStatus {
	case "success":
		rr.ProductCondition, rr.ProductDestination, rr.ReasonID = str("saleable"), str("seller"), str("accepted")
	case "claimed":
		rr.SellerReason = str(rv.Failures[0].Reason)
		rr.ProductDestination = str("seller")
	}
	out := Review{Resource: "order", ResourceID: r.OrderID, Method: "none", ResourceReviews: []ResourceReview{rr},
		DateCreated: reviewStamp(rv.AtMs), LastUpdated: reviewStamp(rv.AtMs)}
	for _, f := range rv.Failures[min(1, len(rv.Failures)):] {
		more := rr
		more.SellerReason = str(f.Reason)
		out.ResourceReviews = append(out.ResourceReviews, more)
	}
	return out
}

// ReviewReturn records the seller's review of return id, once it is
// delivered: OK (failures nil) refunds the buyer (the return's money is
// refunded, the units go back to their store for a whole return, the
// claim closes: item_returned), or failed, with the reasons of
// ReturnReasons (SRF2 and SRF4 with files the seller uploaded, AddFile,
// FileReturn): the claim goes to dispute for the mediator to decide. The
// seller must have return_review_ok or return_review_fail. Errors
// (variant C): NotFound ("return not found"), Invalid (the caller is not
// a player, the review is not available: "Not valid action
// return_review_ok for player role respondent", a failure that breaks the
// rules: "Required request body is missing or incorrect, please see the
// documentation.").
func (s *Service) ReviewReturn(ctx context.Context, caller, id int64, failures []ReviewFailure) (Return, error) {
	var out Return
	now := s.clock.Now()
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		claimID, err := claimOfReturn(tx, id)
		if err != nil {
			return err
		}
		r, err := getRecord(tx, claimID)
		if err != nil {
			return errs.Internalf(err, "return %d names claim %d", id, claimID)
		}
		role := r.roleOf(caller)
		if role == "" {
			return errRoleC(caller, claimID)
		}
		err = s.apply(ctx, tx, &r, now, func(tx storage.Tx, r *record, o *outcome, nowMs int64) error {
			action := ActionReturnReviewOK
			if failures != nil {
				action = ActionReturnReviewFail
			}
			if !r.can(role, action) {
				return errs.WithCode(errs.Invalid, "bad_request_error", fmt.Sprintf("Not valid action %s for player role %s", action, role))
			}
			rt := r.Return
			o.note(r, action, role, nil, nowMs)
			o.acted = true
			r.Reviewed = true
			rt.UpdatedMs = nowMs
			if failures == nil {
				rt.Reviews = append(rt.Reviews, reviewRecord{Stage: "closed", SellerStatus: "success", Benefited: "buyer", AtMs: nowMs})
				s.returned(r, o, nowMs, RoleRespondent)
				return nil
			}
			if err := s.checkFailures(tx, r, caller, failures); err != nil {
				return err
			}
			rt.Reviews = append(rt.Reviews, reviewRecord{Stage: "closed", SellerStatus: "claimed", Failures: failures, AtMs: nowMs})
			if r.Stage == StageClaim {
				r.toDispute(nowMs, RoleRespondent, o)
			}
			r.UpdatedMs = nowMs
			return nil
		})
		if err != nil {
			return err
		}
		out = returnView(&r)
		return nil
	})
	return out, err
}

// returned closes claim r for a return received in good order at ms: the
// buyer's return_product (or the seller's change_product the buyer
// accepted) is accepted, and the buyer is refunded unless it takes a new
// unit instead.
func (s *Service) returned(r *record, o *outcome, ms int64, by string) {
	for i := range r.Expected {
		if e := &r.Expected[i]; e.Status == ExpectedPending && (e.Kind == ResolutionReturnProduct || e.Kind == ResolutionChangeProduct) {
			e.Status, e.UpdatedMs = ExpectedAccepted, ms
		}
	}
	if r.Change {
		r.close(ms, "item_changed", []string{RoleComplainant}, by, o)
		rt := r.Return
		rt.StatusMoney = MoneyAvailable
		if !rt.Restocked {
			rt.Restocked, o.order.touched = true, true
			o.order.restock += r.Quantity
		}
		return
	}
	r.close(ms, "item_returned", []string{RoleComplainant}, by, o)
	r.refund(ms, o)
}

// checkFailures checks the reasons of a failed review.
func (s *Service) checkFailures(tx storage.Tx, r *record, caller int64, failures []ReviewFailure) error {
	if len(failures) == 0 {
		return errBodyC()
	}
	for _, f := range failures {
		reason, ok := returnReason(f.Reason)
		if !ok || strings.TrimSpace(f.Message) == "" {
			return errBodyC()
		}
		if slices.Contains(reviewReasonsWithFiles, f.Reason) && len(f.Attachments) == 0 {
			return errBodyC()
		}
		if f.OrderID != nil && (*f.OrderID != r.OrderID || !slices.Contains(reason.Apply, "order")) {
			return errBodyC()
		}
		if _, err := s.messageFiles(tx, r, caller, kindReturn, f.Attachments, func(name string) error {
			return errs.WithCode(errs.Invalid, "bad_request_error", "Invalid file_name: "+name)
		}); err != nil {
			return err
		}
	}
	return nil
}

// ReturnReasonsFor lists the reasons of a failed review (flow
// seller_return_failed, the only flow) for claim claimID (0: any claim).
// Errors (variant C): Invalid (another flow: "flow: {flow} does not
// exist. claimId: {id}"; the caller is not a player), NotFound
// ("claim_Not Found").
func (s *Service) ReturnReasonsFor(ctx context.Context, caller int64, flow string, claimID int64) ([]ReturnReason, error) {
	if flow != "seller_return_failed" {
		return nil, errs.WithCode(errs.Invalid, "bad_request_error", fmt.Sprintf("flow: %s does not exist. claimId: %d", flow, claimID))
	}
	if claimID == 0 {
		return ReturnReasons(), nil
	}
	err := s.store.View(ctx, func(tx storage.Tx) error {
		r, err := getRecord(tx, claimID)
		if errs.Is(err, errs.NotFound) {
			return errs.WithCode(errs.NotFound, "not_found_error", "claim_Not Found")
		}
		if err != nil {
			return err
		}
		if caller != Operator && r.roleOf(caller) == "" {
			return errRoleC(caller, claimID)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ReturnReasons(), nil
}

// ReturnMove is the operator's move of a return (PUT
// /operator/returns/{id}/status).
type ReturnMove struct {
	Status string `json:"status"`
}

// MoveReturn moves return id to in.Status along the flow of 8.5
// (ReturnStatuses; a pending_* status may be skipped), and its shipment
// with it (pending, ready_to_ship, shipped, delivered, not_delivered,
// cancelled). A return cancelled, failed or expired gives the money to
// the seller, and a cancelled or expired one closes its claim
// (return_canceled, return_expired); a delivered one awaits the seller's
// review (return_review_ok or _fail, mandatory, due ReviewWindow later).
// Errors: Invalid (an unknown status, a move the flow does not allow),
// NotFound ("return not found").
func (s *Service) MoveReturn(ctx context.Context, id int64, in ReturnMove) (Return, error) {
	if in.Status == "" {
		return Return{}, errs.Invalidf("The field [status] is required: one of [%s]", strings.Join(ReturnStatuses(), ", "))
	}
	if _, ok := nextReturn(in.Status); !ok {
		return Return{}, errs.Invalidf("Invalid status: %s. Valid values are: [%s]", in.Status, strings.Join(ReturnStatuses(), ", "))
	}
	var out Return
	now := s.clock.Now()
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		claimID, err := claimOfReturn(tx, id)
		if err != nil {
			return err
		}
		r, err := getRecord(tx, claimID)
		if err != nil {
			return errs.Internalf(err, "return %d names claim %d", id, claimID)
		}
		err = s.apply(ctx, tx, &r, now, func(tx storage.Tx, r *record, o *outcome, nowMs int64) error {
			rt := r.Return
			next, _ := nextReturn(rt.Status)
			if !slices.Contains(next, in.Status) {
				if len(next) == 0 {
					return errs.Invalidf("Return %d is %s: it moves no more", id, rt.Status)
				}
				return errs.Invalidf("Return %d is %s: it cannot move to %s. Next statuses: [%s]", id, rt.Status, in.Status, strings.Join(next, ", "))
			}
			rt.move(in.Status, nowMs)
			r.UpdatedMs = nowMs
			o.note(r, ActionReturnStatusChanged, RoleMediator, ptr(in.Status), nowMs)
			o.acted = true
			if r.opened() {
				switch in.Status {
				case ReturnCancelled:
					r.close(nowMs, "return_canceled", []string{RoleRespondent}, RoleComplainant, o)
				case ReturnExpired:
					r.close(nowMs, "return_expired", []string{RoleRespondent}, RoleMediator, o)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		out = returnView(&r)
		return nil
	})
	return out, err
}
