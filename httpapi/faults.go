package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/faults"
)

// requestTemplate is the template of a request to path on a route of
// template tmpl.
func requestTemplate(tmpl string, statics []string, path string) string {
	for _, st := range statics {
		if path == st {
			return st
		}
	}
	return tmpl
}

// fault applies the first fault rule that fires on r, if any: it waits the
// rule's latency, then answers the rule's status and body or does its wire
// fault, or lets the request be served, trickled when the rule says so. It
// reports whether r was answered.
func (s *Server) fault(rec *statusRecorder, r *http.Request) bool {
	asked := false
	who := func() (int64, int64) {
		asked = true
		if !hasCredentials(r) {
			return 0, 0
		}
		// An invalid token has no caller; the route itself answers it,
		// unless a rule answers first.
		user, err := s.m.Accounts.Authenticate(r.Context(), token(r))
		if err != nil {
			return 0, 0
		}
		rec.user, rec.app = user, tokenApp(token(r))
		return rec.user, rec.app
	}
	var query url.Values
	act, ok, err := s.m.Faults.Decide(r.Context(), faults.Request{Method: r.Method, Route: rec.route,
		Caller: who,
		Query: func(name string) []string {
			if query == nil {
				query = r.URL.Query()
			}
			return query[name]
		},
		Body: func() []byte { return peekBody(r) },
	})
	if err != nil {
		s.writeError(rec, r, err)
		return true
	}
	if !ok {
		return false
	}
	rec.fault = act.RuleID
	answered := act.Status != 0 || act.Fault != ""
	if answered && !asked {
		// The journal names the caller of a faulted request as of a served
		// one; the route, which would have read the token, is not reached.
		who()
	}
	if act.Latency > 0 {
		t := time.NewTimer(act.Latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			// The client is gone: nothing to serve.
			t.Stop()
			return true
		}
	}
	if act.BytesPerSecond > 0 {
		rec.ResponseWriter = newTrickleWriter(r.Context(), rec.ResponseWriter, act.BytesPerSecond, s.sleep)
	}
	if act.Fault != "" {
		closeConn, err := writeWireFault(rec, act.Fault)
		rec.closeConn = closeConn
		if err != nil {
			// A writer whose connection cannot be taken (HTTP/2, a
			// recorder) gets the answer aborted, as net/http aborts one.
			panic(http.ErrAbortHandler)
		}
		if act.Fault == faults.MalformedResponseChunk {
			rec.status = http.StatusOK // written on the connection itself
		}
		return true
	}
	if act.Status == 0 {
		return false
	}
	rec.Header().Set("Content-Type", "application/json; charset=utf-8")
	rec.WriteHeader(act.Status)
	// The body belongs to the rules kept in memory: written as it is, not
	// appended to.
	_, _ = rec.Write(act.Body)
	_, _ = rec.Write([]byte("\n"))
	return true
}

// peekBody reads r's body for the fault rules that select on its fields,
// and puts it back for the route. A body over maxBodyBytes selects
// nothing; the route refuses it as it would have.
func peekBody(r *http.Request) []byte {
	if r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(b), r.Body), r.Body}
	if err != nil || len(b) > maxBodyBytes {
		return nil
	}
	return b
}

// faultRuleFields are the fields of a fault rule, for refusing a field
// that is none of them: a misspelt selector would make a rule that faults
// every request.
var faultRuleFields = []string{"method", "route", "user_id", "application_id", "query", "body_fields",
	"status", "body", "fault", "latency_ms", "bytes_per_second", "probability", "times", "requests_per_minute", "per"}

// checkRuleFields refuses a rule body with a field that no rule has, the
// first in name order.
func checkRuleFields(b []byte) error {
	var fields map[string]json.RawMessage
	if json.Unmarshal(b, &fields) != nil {
		// decodeBytes says what is wrong with the body.
		return nil
	}
	names := make([]string, 0, len(fields))
	for name := range fields {
		if !slices.Contains(faultRuleFields, name) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	slices.Sort(names)
	return errs.Invalidf("Invalid field: %s. A fault rule has the fields %s", names[0], strings.Join(faultRuleFields, ", "))
}

// handleCreateFault answers POST /operator/faults.
func (s *Server) handleCreateFault(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	b, err := readBody(r)
	if err != nil {
		return err
	}
	if err := checkRuleFields(b); err != nil {
		return err
	}
	var in faults.NewRule
	if err := decodeBytes(b, &in); err != nil {
		return err
	}
	if in.Route != nil {
		route := strings.TrimSpace(*in.Route)
		if err := faults.CheckRoute(route); err != nil {
			return err
		}
		if !s.routeKeys[faults.TemplateKey(route)] {
			return errs.Invalidf("Invalid route: %s. No route of the API has that template", route)
		}
	}
	rule, err := s.m.Faults.Create(r.Context(), in)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusCreated, rule)
	return nil
}

// faultsResponse is the answer of GET /operator/faults.
type faultsResponse struct {
	Results []faults.Rule `json:"results"`
}

// handleListFaults answers GET /operator/faults: every rule, in the order
// they are tried.
func (s *Server) handleListFaults(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	rules, err := s.m.Faults.List(r.Context())
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, faultsResponse{Results: rules})
	return nil
}

// handleGetFault answers GET /operator/faults/:fault_id.
func (s *Server) handleGetFault(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	id, err := int64Param(p, "fault_id")
	if err != nil {
		return err
	}
	rule, err := s.m.Faults.Rule(r.Context(), id)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, rule)
	return nil
}

// handleDeleteFault answers DELETE /operator/faults/:fault_id.
func (s *Server) handleDeleteFault(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	id, err := int64Param(p, "fault_id")
	if err != nil {
		return err
	}
	if err := s.m.Faults.Delete(r.Context(), id); err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"id": id, "deleted": true})
	return nil
}

// handleDeleteFaults answers DELETE /operator/faults: every rule is removed,
// and their number answered. Every answer of the API is JSON, hence 200
// rather than 204.
func (s *Server) handleDeleteFaults(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	n, err := s.m.Faults.DeleteAll(r.Context())
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"deleted": n})
	return nil
}

// handleRedeliver answers POST
// /operator/applications/:app_id/deliveries/:delivery_id/redeliver: the
// notification is POSTed again now, and the attempt is answered.
func (s *Server) handleRedeliver(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	app, err := int64Param(p, "app_id")
	if err != nil {
		return err
	}
	id, err := int64Param(p, "delivery_id")
	if err != nil {
		return err
	}
	a, err := s.m.Notify.Redeliver(r.Context(), app, uint64(id))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusCreated, a)
	return nil
}
