package httpapi

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"

	"github.com/julienschmidt/httprouter"

	"github.com/marketplace/marketplace/claims"
	"github.com/marketplace/marketplace/errs"
)

// claimsVia is the catch-all the GET routes of claims and returns are
// served through: httprouter cannot hold GET
// /post-purchase/v1/claims/search beside .../claims/:claim_id, nor
// .../returns/reasons beside .../returns/:return_id (dispatch.go).
const claimsVia = "/post-purchase/*path"

// claimsPath and returnsPath start the routes of claims and returns.
const (
	claimsPath  = "/post-purchase/v1/claims"
	claimPath   = claimsPath + "/:claim_id"
	returnsPath = "/post-purchase/v1/returns"
)

// claimRoutes are the routes of claims and returns (docs/claims.md). The
// routes of returns answer their errors in their own shape (variant C).
func (s *Server) claimRoutes() []route {
	return []route{
		get(claimsPath+"/search", byUser(s.handleSearchClaims)).search().through(claimsVia),
		get(claimPath, byUser(s.handleGetClaim)).through(claimsVia),
		get(claimPath+"/detail", byUser(s.handleClaimDetail)).through(claimsVia),
		get(claimsPath+"/reasons/:reason_id", byUser(s.handleClaimReason)).through(claimsVia),
		get(claimPath+"/messages", byUser(s.handleClaimMessages)).through(claimsVia),
		post(claimPath+"/messages", byUser(s.handlePostClaimMessages)).keyed(),
		post(claimPath+"/actions/send-message", byUser(s.handleSendClaimMessage)).reads(objectBody).keyed(),
		post(claimPath+"/attachments", byUser(s.handleUploadClaimFile(claims.FileMessage))).reads(multipartBody).keyed(),
		get(claimPath+"/attachments", byUser(s.handleListClaimAttachments)).through(claimsVia),
		get(claimPath+"/attachments/:filename", byUser(s.handleClaimFile(claims.FileMessage, "filename", false))).through(claimsVia),
		get(claimPath+"/attachments/:filename/download", byUser(s.handleClaimFile(claims.FileMessage, "filename", true))).through(claimsVia),
		post(claimPath+"/actions/open-dispute", byUser(s.handleOpenDispute)).keyed(),
		get(claimPath+"/expected-resolutions", byUser(s.handleExpectedResolutions)).through(claimsVia),
		get(claimPath+"/partial-refund/available-offers", byUser(s.handlePartialRefundOffers)).through(claimsVia),
		post(claimPath+"/expected-resolutions/partial-refund", byUser(s.handleOfferPartialRefund)).reads(optionalObjectBody).keyed(),
		post(claimPath+"/expected-resolutions/refund", byUser(s.handleRefund)).keyed(),
		post(claimPath+"/expected-resolutions/allow-return", byUser(s.handleAllowReturn)).keyed(),
		post(claimPath+"/expected-resolutions/allow-replace", byUser(s.handleAllowReplace)).keyed(),
		get(claimPath+"/evidences", byUser(s.handleEvidences)).through(claimsVia),
		post(claimPath+"/actions/evidences", byUser(s.handleAddEvidence)).reads(objectBody).keyed(),
		post(claimPath+"/evidences", byUser(s.handleAddHandlingEvidence)).reads(objectBody).keyed(),
		post(claimPath+"/attachments-evidences", byUser(s.handleUploadClaimFile(claims.FileEvidence))).reads(multipartBody).keyed(),
		get(claimPath+"/attachments-evidences/:file_name", byUser(s.handleClaimFile(claims.FileEvidence, "file_name", false))).through(claimsVia),
		get(claimPath+"/attachments-evidences/:file_name/download", byUser(s.handleClaimFile(claims.FileEvidence, "file_name", true))).through(claimsVia),
		get(claimPath+"/actions-history", byUser(s.handleActionsHistory)).through(claimsVia),
		get(claimPath+"/status-history", byUser(s.handleStatusHistory)).through(claimsVia),
		// The Go SDK's and the Mercado Pago reference's names of the
		// status history.
		get(claimPath+"/history", byUser(s.handleStatusHistory)).through(claimsVia),
		get(claimPath+"/status_history", byUser(s.handleStatusHistory)).through(claimsVia),
		get(claimPath+"/affects-reputation", byUser(s.handleAffectsReputation)).through(claimsVia),
		get(claimPath+"/changes", byUser(s.handleClaimChanges)).through(claimsVia),

		// Returns.
		get(claimPath+"/charges/return-cost", byUser(s.returnsAnswer(s.handleReturnCost))).through(claimsVia),
		get("/post-purchase/v2/claims/:claim_id/returns", byUser(s.returnsAnswer(s.handleClaimReturn))).through(claimsVia),
		get(returnsPath+"/:return_id/reviews", byUser(s.returnsAnswer(s.handleReturnReviews))).through(claimsVia),
		post(returnsPath+"/:return_id/return-review", byUser(s.returnsAnswer(s.handleReviewReturn))).keyed(),
		get(returnsPath+"/reasons", byUser(s.returnsAnswer(s.handleReturnReasons))).through(claimsVia),
		post(claimPath+"/returns/attachments", byUser(s.returnsAnswer(s.handleUploadClaimFile(claims.FileReturn)))).reads(multipartBody).keyed(),

		// What the buyer and the mediator do on the website.
		post("/operator/claims", byOperator(s.handleOperatorOpenClaim)).reads(objectBody).keyed(),
		post("/operator/claims/:claim_id/actions", byOperator(s.handleOperatorClaimAction)).reads(objectBody).keyed(),
		put("/operator/returns/:return_id/status", byOperator(s.handleOperatorMoveReturn)).reads(objectBody),
	}
}

// returnsBody is the error body of the routes of returns (the spec's
// variant C): the status as "code", and no cause.
type returnsBody struct {
	Code    int    `json:"code"`
	Error   string `json:"error"`
	Message string `json:"message"`
	Cause   any    `json:"cause"`
}

// returnsAnswer answers the errors of h in the shape of the routes of
// returns; an internal error, or the store's, keeps the common shape.
func (s *Server) returnsAnswer(h authedFunc) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
		err := h(w, r, p, caller)
		de := errs.As(err)
		var he *httpError
		if err == nil || (de == nil || de.Kind == errs.Internal || de.Kind == errs.Unavailable || de.Kind == errs.InsufficientStorage) && !errors.As(err, &he) {
			return err
		}
		body := s.errorBodyOf(r, err)
		s.writeJSON(w, body.Status, returnsBody{Code: body.Status, Error: body.Error, Message: body.Message})
		return nil
	}
}

// claimID reads the claim of the path. Errors: Invalid.
func claimID(p httprouter.Params) (int64, error) { return int64Param(p, "claim_id") }

// handleSearchClaims answers GET /post-purchase/v1/claims/search: the
// caller's claims, filtered and paged.
func (s *Server) handleSearchClaims(w http.ResponseWriter, r *http.Request, _ httprouter.Params, caller int64) error {
	q, err := claims.ParseSearch(r.URL.Query())
	if err != nil {
		return err
	}
	res, err := s.m.Claims.Search(r.Context(), caller, q)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, res)
	return nil
}

// claimRead answers a read of the claim of the path with what read
// returns.
func claimRead[T any](s *Server, read func(ctx context.Context, caller, id int64) (T, error)) authedFunc {
	return readByID(s, "claim_id", read)
}

// handleGetClaim answers GET /post-purchase/v1/claims/:claim_id.
func (s *Server) handleGetClaim(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	return claimRead(s, s.m.Claims.Claim)(w, r, p, caller)
}

// handleClaimDetail answers GET /post-purchase/v1/claims/:claim_id/detail.
func (s *Server) handleClaimDetail(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	return claimRead(s, s.m.Claims.Detail)(w, r, p, caller)
}

// handleClaimReason answers GET /post-purchase/v1/claims/reasons/:reason_id:
// a reason of the catalogue, the same for everyone. The optional query
// (flow, delivered, deep, name) changes nothing.
func (s *Server) handleClaimReason(w http.ResponseWriter, _ *http.Request, p httprouter.Params, _ int64) error {
	reason, err := claims.GetReason(p.ByName("reason_id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, reason)
	return nil
}

// handleClaimMessages answers GET /post-purchase/v1/claims/:claim_id/messages.
func (s *Server) handleClaimMessages(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	return claimRead(s, s.m.Claims.Messages)(w, r, p, caller)
}

// errClaimMethod answers the methods a claim's resource does not take.
func errClaimMethod(r *http.Request) error {
	return &httpError{status: http.StatusMethodNotAllowed, code: "method_not_allowed",
		message: "Method " + r.Method + " not allowed on " + r.URL.Path}
}

// handlePostClaimMessages answers POST
// /post-purchase/v1/claims/:claim_id/messages, which the public API does
// not have (a message is sent with .../actions/send-message): 405.
func (s *Server) handlePostClaimMessages(_ http.ResponseWriter, r *http.Request, p httprouter.Params, _ int64) error {
	if _, err := claimID(p); err != nil {
		return err
	}
	return errClaimMethod(r)
}

// handleListClaimAttachments answers GET
// /post-purchase/v1/claims/:claim_id/attachments, which the public API
// answers 405: a file is read by its name.
func (s *Server) handleListClaimAttachments(_ http.ResponseWriter, r *http.Request, p httprouter.Params, _ int64) error {
	if _, err := claimID(p); err != nil {
		return err
	}
	return errClaimMethod(r)
}

// handleSendClaimMessage answers POST
// /post-purchase/v1/claims/:claim_id/actions/send-message {receiver_role,
// message, attachments}: 201 with no body.
func (s *Server) handleSendClaimMessage(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	id, err := claimID(p)
	if err != nil {
		return err
	}
	var in claims.NewMessage
	if err := decode(r, &in); err != nil {
		return err
	}
	if err := s.m.Claims.Send(r.Context(), caller, id, in); err != nil {
		return err
	}
	w.WriteHeader(http.StatusCreated)
	return nil
}

// maxClaimUpload bounds the body of an upload: the largest file a claim
// takes and the multipart form around it.
const maxClaimUpload = claims.MaxFileSize + 64<<10

// readClaimUpload reads the file of an upload's multipart field "file";
// an upload without one is an empty file, which the rules refuse. Errors:
// Invalid (a body that is not multipart, or too large).
func readClaimUpload(w http.ResponseWriter, r *http.Request) (claims.Upload, error) {
	ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || ct != "multipart/form-data" {
		return claims.Upload{}, errs.Invalidf("Current request is not a multipart request")
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxClaimUpload)
	mr, err := r.MultipartReader()
	if err != nil {
		return claims.Upload{}, errs.Invalidf("Current request is not a multipart request")
	}
	for {
		part, err := mr.NextPart()
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return claims.Upload{}, errs.Invalidf("File attachment is bigger than 5 Mb.")
		}
		if err != nil {
			return claims.Upload{}, nil
		}
		if part.FormName() != "file" {
			continue
		}
		// The name as sent: Part.FileName keeps only its last element,
		// and a name with a slash is the rules' to refuse.
		_, params, _ := mime.ParseMediaType(part.Header.Get("Content-Disposition"))
		var buf bytes.Buffer
		if _, err := io.Copy(&buf, io.LimitReader(part, claims.MaxFileSize+1)); err != nil {
			if errors.As(err, &mbe) {
				return claims.Upload{}, errs.Invalidf("File attachment is bigger than 5 Mb.")
			}
			return claims.Upload{}, errs.Invalidf("Could not read the request body")
		}
		return claims.Upload{Name: params["filename"], Data: buf.Bytes()}, nil
	}
}

// uploadBody is what an upload of a claim's file answers: the message
// attachments name it filename, evidences and returns file_name.
type uploadBody struct {
	UserID   int64  `json:"user_id"`
	Filename string `json:"filename,omitempty"`
	FileName string `json:"file_name,omitempty"`
}

// handleUploadClaimFile answers POST .../claims/:claim_id/attachments,
// .../attachments-evidences and .../returns/attachments (multipart, field
// file): 201 with the file's name in the claim.
func (s *Server) handleUploadClaimFile(kind string) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
		id, err := claimID(p)
		if err != nil {
			return err
		}
		f, err := readClaimUpload(w, r)
		if err != nil {
			return err
		}
		up, err := s.m.Claims.AddFile(r.Context(), caller, id, kind, f)
		if err != nil {
			return err
		}
		body := uploadBody{UserID: up.UserID, FileName: up.Name}
		if kind == claims.FileMessage {
			body = uploadBody{UserID: up.UserID, Filename: up.Name}
		}
		s.writeJSON(w, http.StatusCreated, body)
		return nil
	}
}

// handleClaimFile answers GET .../attachments/:filename and
// .../attachments-evidences/:file_name (the file's metadata), and their
// /download (its bytes, with its type).
func (s *Server) handleClaimFile(kind, param string, download bool) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
		id, err := claimID(p)
		if err != nil {
			return err
		}
		name := p.ByName(param)
		if len(name) > maxPathID {
			return errs.NotFoundf("Resource not found: the %s has %d bytes, and no id has more than %d", param, len(name), maxPathID)
		}
		if !download {
			info, err := s.m.Claims.File(r.Context(), caller, id, kind, name)
			if err != nil {
				return err
			}
			s.writeJSON(w, http.StatusOK, info)
			return nil
		}
		info, data, err := s.m.Claims.FileData(r.Context(), caller, id, kind, name)
		if err != nil {
			return err
		}
		h := w.Header()
		h.Set("Content-Type", info.Type)
		h.Set("Content-Length", strconv.Itoa(len(data)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(data)
		return nil
	}
}

// handleOpenDispute answers POST
// /post-purchase/v1/claims/:claim_id/actions/open-dispute with the claim
// in dispute. It takes no body.
func (s *Server) handleOpenDispute(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	return claimRead(s, s.m.Claims.OpenDispute)(w, r, p, caller)
}

// handleExpectedResolutions answers GET
// /post-purchase/v1/claims/:claim_id/expected-resolutions.
func (s *Server) handleExpectedResolutions(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	return claimRead(s, s.m.Claims.ExpectedResolutions)(w, r, p, caller)
}

// handlePartialRefundOffers answers GET
// /post-purchase/v1/claims/:claim_id/partial-refund/available-offers; a
// claim that cannot have a partial refund is a 422.
func (s *Server) handlePartialRefundOffers(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	return unprocessable(claimRead(s, s.m.Claims.PartialRefundOffers)(w, r, p, caller))
}

// unprocessable answers a claim not eligible for a partial refund with
// 422, the status the public API gives it.
func unprocessable(err error) error {
	if de := errs.As(err); de != nil && de.Code == claims.CodeNotEligible {
		return &httpError{status: http.StatusUnprocessableEntity, code: de.Code, message: de.Message}
	}
	return err
}

// handleOfferPartialRefund answers POST
// /post-purchase/v1/claims/:claim_id/expected-resolutions/partial-refund
// {percentage} with the expected resolutions.
func (s *Server) handleOfferPartialRefund(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	id, err := claimID(p)
	if err != nil {
		return err
	}
	var in claims.PartialRefund
	if b, err := readBody(r); err != nil {
		return err
	} else if len(bytes.TrimSpace(b)) > 0 {
		if err := decodeBytes(b, &in); err != nil {
			return err
		}
	}
	res, err := s.m.Claims.OfferPartialRefund(r.Context(), caller, id, in)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, res)
	return nil
}

// handleRefund answers POST
// /post-purchase/v1/claims/:claim_id/expected-resolutions/refund with the
// expected resolutions. It takes no body.
func (s *Server) handleRefund(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	return claimRead(s, s.m.Claims.Refund)(w, r, p, caller)
}

// handleAllowReturn answers POST
// /post-purchase/v1/claims/:claim_id/expected-resolutions/allow-return
// with the expected resolutions. It takes no body.
func (s *Server) handleAllowReturn(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	return claimRead(s, s.m.Claims.AllowReturn)(w, r, p, caller)
}

// handleAllowReplace answers POST
// /post-purchase/v1/claims/:claim_id/expected-resolutions/allow-replace
// with the expected resolutions. It takes no body.
func (s *Server) handleAllowReplace(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	return claimRead(s, s.m.Claims.AllowReplace)(w, r, p, caller)
}

// handleEvidences answers GET /post-purchase/v1/claims/:claim_id/evidences.
func (s *Server) handleEvidences(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	return claimRead(s, s.m.Claims.Evidences)(w, r, p, caller)
}

// handleAddEvidence answers POST
// /post-purchase/v1/claims/:claim_id/actions/evidences {an evidence} with
// the claim's evidences.
func (s *Server) handleAddEvidence(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	return writeByID(s, "claim_id", s.m.Claims.AddEvidence)(w, r, p, caller)
}

// handleAddHandlingEvidence answers POST
// /post-purchase/v1/claims/:claim_id/evidences {type:
// handling_shipping_evidence, handling_date} with the evidence.
func (s *Server) handleAddHandlingEvidence(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	return writeByID(s, "claim_id", s.m.Claims.AddHandlingEvidence)(w, r, p, caller)
}

// handleActionsHistory answers GET
// /post-purchase/v1/claims/:claim_id/actions-history.
func (s *Server) handleActionsHistory(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	return claimRead(s, s.m.Claims.ActionsHistory)(w, r, p, caller)
}

// handleStatusHistory answers GET
// /post-purchase/v1/claims/:claim_id/status-history and its aliases
// /history and /status_history.
func (s *Server) handleStatusHistory(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	return claimRead(s, s.m.Claims.StatusHistory)(w, r, p, caller)
}

// handleAffectsReputation answers GET
// /post-purchase/v1/claims/:claim_id/affects-reputation.
func (s *Server) handleAffectsReputation(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	return claimRead(s, s.m.Claims.AffectsReputation)(w, r, p, caller)
}

// handleClaimChanges answers GET /post-purchase/v1/claims/:claim_id/changes:
// the engine makes no product change, so a claim its caller may see has
// none (404).
func (s *Server) handleClaimChanges(_ http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	id, err := claimID(p)
	if err != nil {
		return err
	}
	return s.m.Claims.Changes(r.Context(), caller, id)
}

// handleOperatorOpenClaim answers POST /operator/claims {order_id,
// reason_id, type, quantity, expected_resolution}: the buyer's claim,
// which no public route opens; 201 with the claim.
func (s *Server) handleOperatorOpenClaim(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var in claims.NewClaim
	if err := decode(r, &in); err != nil {
		return err
	}
	c, err := s.m.Claims.Open(r.Context(), in)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusCreated, c)
	return nil
}

// handleOperatorClaimAction answers POST /operator/claims/:claim_id/actions
// {role, action, message, resolution}: what the buyer or the mediator does
// on the website; 200 with the claim.
func (s *Server) handleOperatorClaimAction(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	return operatorWriteByID(s, "claim_id", s.m.Claims.Act)(w, r, p)
}

// handleOperatorMoveReturn answers PUT /operator/returns/:return_id/status
// {status} with the moved return.
func (s *Server) handleOperatorMoveReturn(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	return operatorWriteByID(s, "return_id", s.m.Claims.MoveReturn)(w, r, p)
}
