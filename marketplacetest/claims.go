package marketplacetest

import (
	"context"
	"testing"

	"github.com/marketplace/marketplace/claims"
)

// OpenClaim opens the buyer's claim of reason (PNR3430: not received;
// PDD9549, PDD9550, PDD9551, PDD9939: damaged, incomplete, different,
// repentant, once the shipment is delivered) on order orderID, as the
// buyer does on the website: the claim is in its claim stage, and the
// seller has 48 hours to answer. It fails t when the claim is refused.
func (s *Server) OpenClaim(t testing.TB, orderID int64, reason string) claims.Claim {
	t.Helper()
	c, err := s.Marketplace.Claims.Open(context.Background(), claims.NewClaim{OrderID: orderID, ReasonID: reason})
	if err != nil {
		t.Fatalf("marketplacetest: open a %s claim on order %d: %v", reason, orderID, err)
	}
	return c
}

// ResolveClaim has the mediator decide claim claimID with reason
// (coverage_decision, rep_resolution, warehouse_decision, ...) for the
// players benefited (complainant and/or respondent; the complainant when
// none is named): the claim closes, and a decision for the buyer refunds
// it. A claim still in its claim stage is taken to dispute first, as the
// buyer would. It fails t when the decision is refused.
func (s *Server) ResolveClaim(t testing.TB, claimID int64, reason string, benefited ...string) claims.Claim {
	t.Helper()
	ctx := context.Background()
	if len(benefited) == 0 {
		benefited = []string{claims.RoleComplainant}
	}
	c, err := s.Marketplace.Claims.Claim(ctx, claims.Operator, claimID)
	if err != nil {
		t.Fatalf("marketplacetest: read claim %d: %v", claimID, err)
	}
	if c.Status == claims.StatusOpened && c.Stage == claims.StageClaim {
		if _, err := s.Marketplace.Claims.Act(ctx, claimID, claims.OperatorAction{Role: claims.RoleComplainant, Action: claims.ActionOpenDispute}); err != nil {
			t.Fatalf("marketplacetest: open the dispute of claim %d: %v", claimID, err)
		}
	}
	c, err = s.Marketplace.Claims.Act(ctx, claimID, claims.OperatorAction{Role: claims.RoleMediator, Action: claims.ActionResolve,
		Resolution: &claims.OperatorResolution{Reason: reason, Benefited: benefited}})
	if err != nil {
		t.Fatalf("marketplacetest: resolve claim %d: %v", claimID, err)
	}
	return c
}

// MoveReturn moves return returnID to status along the return flow
// (label_generated, scheduled, shipped, delivered, not_delivered,
// cancelled, expired, ...; docs/claims.md), its shipment with it. It
// fails t when the move is refused.
func (s *Server) MoveReturn(t testing.TB, returnID int64, status string) claims.Return {
	t.Helper()
	rt, err := s.Marketplace.Claims.MoveReturn(context.Background(), returnID, claims.ReturnMove{Status: status})
	if err != nil {
		t.Fatalf("marketplacetest: move return %d to %s: %v", returnID, status, err)
	}
	return rt
}
