package httpapi

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/journal"
)

// Journal returns the server's request journal, for Go tests that read it
// without the operator route.
func (s *Server) Journal() *journal.Journal { return s.journal }

// record adds r's entry to the journal: the path and the query with their
// tokens and secrets redacted, and, in a journal with bodies, the headers
// and the body redacted too.
func (s *Server) record(r *http.Request, rec *statusRecorder, at time.Time, elapsed time.Duration) {
	e := journal.Entry{
		Time:      at.UTC(),
		Method:    r.Method,
		Path:      s.redact.Path(r.URL.Path),
		Query:     s.redact.Query(r.URL.RawQuery),
		Route:     rec.route,
		Status:    rec.status,
		LatencyMS: float64(elapsed.Microseconds()) / 1000,
	}
	// Copies: the recorder goes back to its pool.
	if user := rec.user; user != 0 {
		e.UserID = &user
	}
	if app := rec.app; app != 0 {
		e.ApplicationID = &app
	}
	if fault := rec.fault; fault != 0 {
		e.FaultID = &fault
	}
	e.StubID = rec.stub
	if s.journal.KeepsBodies() {
		e.Headers = make(map[string][]string, len(r.Header))
		for k, vs := range r.Header {
			kept := make([]string, len(vs))
			for i, v := range vs {
				kept[i] = s.redact.Header(k, v)
			}
			e.Headers[k] = kept
		}
		if rec.capture != nil {
			e.Body = s.redact.Body(r.Header.Get("Content-Type"), rec.capture.rest())
		}
	}
	s.journal.Add(e)
}

// noteCaller tells the journal and the fault rules who made r, once the
// token is known to be valid.
func noteCaller(w http.ResponseWriter, r *http.Request, caller int64) {
	if rec, ok := w.(*statusRecorder); ok {
		rec.user = caller
		rec.app = tokenApp(token(r))
	}
}

// tokenApp returns the application that token was issued to, which the
// public API's OAuth tokens carry as their second part
// (APP_USR-<client_id>-<MMddHH>-<random>-<user_id>); 0 for a token issued by
// the operator, which names no application.
func tokenApp(token string) int64 {
	rest, ok := strings.CutPrefix(token, "APP_USR-")
	if !ok || strings.Count(rest, "-") != 3 {
		return 0
	}
	id, _, _ := strings.Cut(rest, "-")
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// requestsResponse is the answer of GET /operator/requests.
type requestsResponse struct {
	Paging  paging          `json:"paging"`
	Results []journal.Entry `json:"results"`
}

// handleListRequests answers GET
// /operator/requests?method=&route=&status=&user_id=&limit=&offset=: the
// journal's entries, newest first.
func (s *Server) handleListRequests(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	q := r.URL.Query()
	pg, err := readPageOf(q, defaultLimit)
	if err != nil {
		return err
	}
	jq := journal.Query{Method: q.Get("method"), Route: q.Get("route"), Offset: pg.Offset, Limit: pg.Limit}
	if raw := q.Get("status"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 100 || n > 599 {
			return errs.Invalidf("Invalid status: %s. It must be an HTTP status, from 100 to 599", raw)
		}
		jq.Status = n
	}
	if raw := q.Get("user_id"); raw != "" {
		n, err := positiveInt("user_id", raw)
		if err != nil {
			return err
		}
		jq.UserID = n
	}
	entries, total, err := s.journal.List(jq)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, requestsResponse{
		Paging:  paging{Total: total, Offset: pg.Offset, Limit: pg.Limit},
		Results: entries,
	})
	return nil
}

// handleClearRequests answers DELETE /operator/requests: the journal is
// emptied, and the number of entries it held answered.
func (s *Server) handleClearRequests(w http.ResponseWriter, _ *http.Request, _ httprouter.Params) error {
	n := s.journal.Clear()
	s.writeJSON(w, http.StatusOK, map[string]any{"deleted": n})
	return nil
}
