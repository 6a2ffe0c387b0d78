package httpapi

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/marketplace/marketplace/drift"
	"github.com/marketplace/marketplace/journal"
)

// maxValidatedBody bounds the request body that -validate-requests reads
// before the handler; a larger one is left to the handler, which refuses
// oversize bodies with its own message.
const maxValidatedBody = 1 << 20

// refuseInvalid answers r with 400 bad_request, the validator's findings
// as causes, when r breaks the OpenAPI document, and reports whether it
// did. Requests the document does not describe are left to the router.
func (s *Server) refuseInvalid(w http.ResponseWriter, r *http.Request) bool {
	if !s.validator.Documented(r) {
		return false
	}
	if r.Body != nil && r.Body != http.NoBody {
		b, err := io.ReadAll(io.LimitReader(r.Body, maxValidatedBody+1))
		// The handler reads the body again, whole.
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(b), r.Body), r.Body}
		if err != nil || len(b) > maxValidatedBody {
			return false
		}
		vr := r.Clone(r.Context())
		vr.Body = io.NopCloser(bytes.NewReader(b))
		findings := s.validator.Request(vr)
		if len(findings) == 0 {
			return false
		}
		s.writeRefusal(w, r, findings)
		return true
	}
	findings := s.validator.Request(r)
	if len(findings) == 0 {
		return false
	}
	s.writeRefusal(w, r, findings)
	return true
}

func (s *Server) writeRefusal(w http.ResponseWriter, r *http.Request, findings []string) {
	causes := make([]any, 0, len(findings))
	for _, f := range findings {
		causes = append(causes, map[string]string{"code": "openapi", "message": f})
	}
	s.writeJSON(w, http.StatusBadRequest, errorBody{
		Message: fmt.Sprintf("The request does not match the API document: %s %s", r.Method, r.URL.Path),
		Error:   "bad_request", Status: http.StatusBadRequest, Cause: causes,
	})
}

// checkResponse tells CheckResponse of an answer that breaks the OpenAPI
// document.
func (s *Server) checkResponse(r *http.Request, rec *statusRecorder) {
	status := rec.status
	if status == 0 {
		status = http.StatusOK
	}
	body := rec.body.Bytes()
	if r.Method == http.MethodHead {
		// net/http drops the body of an answer to HEAD; a recorder keeps it.
		body = nil
	}
	res := &http.Response{StatusCode: status, Header: rec.Header().Clone(),
		Body: io.NopCloser(bytes.NewReader(body)), Request: r}
	findings := s.validator.Response(r, res)
	if rec.route != "" {
		// The router's own answers (no route, a wrong method) are no
		// route's.
		findings = append(findings, driftFindings(r, status, rec.Header().Get("Content-Type"), body)...)
	}
	if len(findings) == 0 {
		return
	}
	s.cfg.CheckResponse(fmt.Sprintf("openapi: %s %s (route %s) answered %d against the document: %s\nbody: %.300s",
		r.Method, r.URL.RequestURI(), rec.route, status, strings.Join(findings, "; "), rec.body.Bytes()))
}

var (
	contractOnce sync.Once
	contract     *drift.Contract
	contractErr  error
)

// driftFindings holds an answer to what the drift report holds a recorded
// one to (package drift): a status the route lists, every field declared,
// and an error answer's code and message among the route's x-errors. So
// the document stays complete, and the engine's own exchanges never drift.
func driftFindings(r *http.Request, status int, contentType string, body []byte) []string {
	contractOnce.Do(func() { contract, contractErr = drift.Engine() })
	if contractErr != nil {
		return []string{"drift: " + contractErr.Error()}
	}
	_, found, ok := contract.Check(drift.Exchange{Method: r.Method, URL: r.URL.RequestURI(), Status: status,
		ContentType: contentType, Body: body})
	if !ok {
		return nil
	}
	out := make([]string, 0, len(found))
	for _, f := range found {
		out = append(out, "drift: "+f.String())
	}
	return out
}

// registerGauges adds to the metrics the figures read at scrape time that
// the server holds: the journal's entries.
func (s *Server) registerGauges() {
	if s.cfg.Metrics == nil {
		return
	}
	j := s.journal
	s.cfg.Metrics.Gauge("marketplace_journal_entries", "Requests kept in the request journal (GET /operator/requests).",
		func() float64 {
			_, n, _ := j.List(journal.Query{Limit: 1})
			return float64(n)
		})
}
