package httpapi

// The routes of returns (GET /post-purchase/v2/claims/:claim_id/returns,
// /post-purchase/v1/returns/...) and a claim's return cost: they answer
// their errors in the returns' own shape (returnsAnswer).

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/julienschmidt/httprouter"

	"github.com/marketplace/marketplace/claims"
	"github.com/marketplace/marketplace/errs"
)

// handleReturnCost answers GET
// /post-purchase/v1/claims/:claim_id/charges/return-cost[?calculate_amount_usd=true].
func (s *Server) handleReturnCost(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	id, err := claimID(p)
	if err != nil {
		return err
	}
	usd := false
	if raw := r.URL.Query().Get("calculate_amount_usd"); raw != "" {
		if usd, err = strconv.ParseBool(raw); err != nil {
			return errs.WithCode(errs.Invalid, "bad_request_error", "Invalid calculate_amount_usd: "+raw+". It must be true or false")
		}
	}
	cost, err := s.m.Claims.ReturnCost(r.Context(), caller, id, usd)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, cost)
	return nil
}

// handleClaimReturn answers GET /post-purchase/v2/claims/:claim_id/returns.
func (s *Server) handleClaimReturn(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	return claimRead(s, s.m.Claims.ClaimReturn)(w, r, p, caller)
}

// returnID reads the return of the path. Errors: Invalid.
func returnID(p httprouter.Params) (int64, error) { return int64Param(p, "return_id") }

// handleReturnReviews answers GET /post-purchase/v1/returns/:return_id/reviews.
func (s *Server) handleReturnReviews(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	return readByID(s, "return_id", s.m.Claims.ReturnReviews)(w, r, p, caller)
}

// handleReviewReturn answers POST
// /post-purchase/v1/returns/:return_id/return-review: {} is the seller's
// OK, an array of {reason, message, attachments, order_id} its failed
// review; 200 with the return.
func (s *Server) handleReviewReturn(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	id, err := returnID(p)
	if err != nil {
		return err
	}
	b, err := readBody(r)
	if err != nil {
		return err
	}
	var failures []claims.ReviewFailure
	trimmed := bytes.TrimSpace(b)
	switch {
	case len(trimmed) > 0 && trimmed[0] == '{' && json.Valid(trimmed):
	case len(trimmed) > 0 && trimmed[0] == '[':
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.UseNumber()
		if err := dec.Decode(&failures); err != nil || dec.More() || failures == nil {
			return errs.WithCode(errs.Invalid, "bad_request_error", "Required request body is missing or incorrect, please see the documentation.")
		}
	default:
		return errs.WithCode(errs.Invalid, "bad_request_error", "Required request body is missing or incorrect, please see the documentation.")
	}
	rt, err := s.m.Claims.ReviewReturn(r.Context(), caller, id, failures)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, rt)
	return nil
}

// handleReturnReasons answers GET
// /post-purchase/v1/returns/reasons?flow=seller_return_failed[&claim_id=].
func (s *Server) handleReturnReasons(w http.ResponseWriter, r *http.Request, _ httprouter.Params, caller int64) error {
	qv := r.URL.Query()
	var claim int64
	if raw := qv.Get("claim_id"); raw != "" {
		n, ok := positive(raw)
		if !ok {
			return errs.WithCode(errs.Invalid, "bad_request_error", "Invalid claim_id: "+raw+". It must be a positive integer")
		}
		claim = n
	}
	reasons, err := s.m.Claims.ReturnReasonsFor(r.Context(), caller, qv.Get("flow"), claim)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, reasons)
	return nil
}
