package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/redact"
	"github.com/marketplace/marketplace/journal"
)

// Journal returns the server's request journal, for Go tests that read it
// without the operator route.
func (s *Server) Journal() *journal.Journal { return s.journal }

// record adds r's entry to the journal: the path and the query with their
// tokens and secrets redacted by red, r's redactor, and, in a journal with
// bodies, the headers and the body redacted too.
func (s *Server) record(r *http.Request, rec *statusRecorder, red *redact.Redactor, at time.Time, elapsed time.Duration) {
	var e journal.Entry
	if s.journal.KeepsBodies() {
		// The body first: a secret it carries under a credential's name is
		// then replaced wherever else the request repeats it.
		if rec.capture != nil {
			e.Body = red.Body(r.Header.Get("Content-Type"), rec.capture.rest())
		}
		e.Headers = make(map[string][]string, len(r.Header))
		for k, vs := range r.Header {
			kept := make([]string, len(vs))
			for i, v := range vs {
				kept[i] = red.Header(k, v)
			}
			e.Headers[k] = kept
		}
	}
	e.Time = at.UTC()
	e.Method = r.Method
	e.Query = red.Query(r.URL.RawQuery)
	e.Path = keptPath(red, r, rec)
	e.Route = rec.route
	e.Status = rec.status
	e.LatencyMS = float64(elapsed.Microseconds()) / 1000
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
	e.Forwarded = rec.forwarded
	s.journal.Add(e)
}

// requestRedactor returns the redactor of r for its log line and its
// journal entry: the server's secrets, the credentials r presents, and the
// tokens the accounts accept whatever their shape (a fixture may choose
// any), each word asked of the store once (knownToken). When the store
// cannot answer, the word is taken for a token, and the store is not asked
// again.
func (s *Server) requestRedactor(r *http.Request) *redact.Redactor {
	return s.redact.For(r.Context(), s.knownTokenCheck, r.Header, r.URL.RawQuery)
}

// knownToken tells the redactor whether word is a token the accounts
// accept. It runs after the answer, when the request's context may be
// cancelled already: the read must not be.
func (s *Server) knownToken(ctx context.Context, word string) (bool, error) {
	_, err := s.m.Accounts.Authenticate(context.WithoutCancel(ctx), word)
	if err != nil && !errs.Is(err, errs.Unauthorized) {
		return true, err
	}
	return err == nil, nil
}

// keptPath is r's path as its log line and its journal entry keep it. The
// segments of a path that a route of the engine answered with success are
// not asked of the store: the route took each as the id of something it
// found. A fault's, a stub's or the upstream's answer says nothing of the
// sort.
func keptPath(red *redact.Redactor, r *http.Request, rec *statusRecorder) string {
	if rec.route != "" && rec.status >= 200 && rec.status < 400 && rec.fault == 0 && rec.stub == "" && !rec.forwarded {
		return red.RoutedPath(r.URL.Path)
	}
	return red.Path(r.URL.Path)
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
