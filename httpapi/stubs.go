package httpapi

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/faults"
	"github.com/marketplace/marketplace/journal"
	"github.com/marketplace/marketplace/stubs"
)

// The paths of the server's own routes are no stub's to answer; they are
// reserved when the program starts, before any mapping is read (a -stubs
// folder, a fixtures document, marketplacetest), from the route table.
func init() { stubs.Reserve(ownPaths()...) }

// ownPaths are the paths of the server's own routes, read from the route
// table: the first segment of every operator route as a prefix (the
// operator's whole namespace, /operator/, so that no stub answers even a
// path there that no route serves), and every bare route (the console, its
// files, the icon its pages ask for) and operations route, a parameter or
// a catch-all making the part before it a prefix.
func ownPaths() []string {
	var out []string
	for _, rt := range (&Server{}).routeTable() {
		switch {
		case rt.bare == nil && rt.who == theOperator:
			first, _, _ := strings.Cut(strings.TrimPrefix(rt.path, "/"), "/")
			out = append(out, "/"+first+"/")
		case rt.bare != nil || rt.ops:
			if i := strings.IndexAny(rt.path, ":*"); i >= 0 {
				out = append(out, rt.path[:i])
			} else {
				out = append(out, rt.path)
			}
		}
	}
	return out
}

// stubRequest is r as the stubs match it. Its body is read (to the API's
// bound) and put back, so that a route can still read it.
func stubRequest(r *http.Request) (*stubs.Request, error) {
	sr := &stubs.Request{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Header: r.Header}
	if r.Body != nil && r.Body != http.NoBody {
		b, err := readBody(r)
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		sr.Body = b
	}
	return sr, nil
}

// serveStub answers r with a stub, if one answers it: on a request that no
// route serves (who is then aUser), or, with override, before the route,
// whose access who is. It reports whether r was answered.
func (s *Server) serveStub(rec *statusRecorder, r *http.Request, override bool, who access) bool {
	sr, err := stubRequest(r)
	if err != nil {
		s.writeError(rec, r, err)
		return true
	}
	a, ok, err := s.m.Stubs.Answer(r.Context(), sr, override, func(*stubs.Mapping) error { return s.admit(rec, r, who) })
	if err != nil {
		if r.Context().Err() != nil {
			return true // the caller is gone: nobody reads an answer
		}
		s.writeError(rec, r, err)
		return true
	}
	if !ok {
		return false
	}
	rec.stub = a.Mapping.ID
	if a.Delay > 0 {
		t := time.NewTimer(a.Delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return true
		}
	}
	if a.Fault != "" {
		closeConn, err := writeWireFault(rec, a.Fault)
		rec.closeConn = closeConn
		if err != nil {
			// A writer whose connection cannot be taken (HTTP/2, a
			// recorder) gets the answer aborted, as net/http aborts one.
			panic(http.ErrAbortHandler)
		}
		if a.Fault == faults.MalformedResponseChunk {
			rec.status = http.StatusOK // written on the connection itself
		}
		return true
	}
	h := rec.Header()
	for _, kv := range a.Header {
		h.Add(kv[0], kv[1])
	}
	// The body's true length, whatever its size: the mapping's own framing
	// headers are dropped when it is read (stubs.Parse).
	if len(a.Body) > 0 && a.Status != http.StatusNoContent && a.Status != http.StatusNotModified {
		h.Set("Content-Length", strconv.Itoa(len(a.Body)))
	}
	rec.WriteHeader(a.Status)
	_, _ = rec.Write(a.Body)
	return true
}

// admit checks r's credentials as a route of access who would.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, who access) error {
	switch who {
	case anyone:
		return nil
	case anyoneWithToken:
		if !hasCredentials(r) {
			return nil
		}
	case theOperator:
		if !hasCredentials(r) {
			return errNoToken
		}
		if s.cfg.OperatorToken != "" && subtle.ConstantTimeCompare([]byte(token(r)), []byte(s.cfg.OperatorToken)) == 1 {
			return nil
		}
		if _, err := s.m.Accounts.Authenticate(r.Context(), token(r)); err != nil {
			return err
		}
		return errs.Forbiddenf("Operator routes need the operator token")
	default:
		if !hasCredentials(r) {
			return errNoToken
		}
	}
	caller, err := s.m.Accounts.Authenticate(r.Context(), token(r))
	if err != nil {
		return err
	}
	noteCaller(w, r, caller)
	return nil
}

// handleCreateStub answers POST /operator/stubs: one mapping in WireMock's
// format.
func (s *Server) handleCreateStub(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var b json.RawMessage
	if err := decode(r, &b); err != nil {
		return err
	}
	m, err := s.m.Stubs.Create(r.Context(), b)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusCreated, m)
	return nil
}

// stubsResponse is the answer of GET /operator/stubs, WireMock's shape.
type stubsResponse struct {
	Mappings []*stubs.Mapping `json:"mappings"`
	Meta     struct {
		Total int `json:"total"`
	} `json:"meta"`
}

// handleListStubs answers GET /operator/stubs: every mapping, in the order
// they are tried.
func (s *Server) handleListStubs(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	list, err := s.m.Stubs.List(r.Context())
	if err != nil {
		return err
	}
	out := stubsResponse{Mappings: list}
	out.Meta.Total = len(list)
	s.writeJSON(w, http.StatusOK, out)
	return nil
}

// handleGetStub answers GET /operator/stubs/:stub_id.
func (s *Server) handleGetStub(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	m, err := s.m.Stubs.Get(r.Context(), p.ByName("stub_id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, m)
	return nil
}

// handleDeleteStub answers DELETE /operator/stubs/:stub_id.
func (s *Server) handleDeleteStub(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	id := p.ByName("stub_id")
	if err := s.m.Stubs.Delete(r.Context(), id); err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"id": id, "deleted": true})
	return nil
}

// handleDeleteStubs answers DELETE /operator/stubs.
func (s *Server) handleDeleteStubs(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	n, err := s.m.Stubs.DeleteAll(r.Context())
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"deleted": n})
	return nil
}

// readPattern reads the body of a verification: a request pattern, as
// WireMock's, or the same wrapped as {"request": pattern}.
func readPattern(r *http.Request) (*stubs.Pattern, error) {
	var b json.RawMessage
	if err := decode(r, &b); err != nil {
		return nil, err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err == nil && len(obj) == 1 && obj["request"] != nil {
		b = obj["request"]
	}
	return stubs.ParsePattern(b)
}

// handleCountRequests answers POST /operator/requests/count: how many of
// the journal's requests match the pattern.
func (s *Server) handleCountRequests(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	p, err := readPattern(r)
	if err != nil {
		return err
	}
	n := s.journal.Count(p)
	s.writeJSON(w, http.StatusOK, map[string]int{"count": n})
	return nil
}

// handleFindRequests answers POST /operator/requests/find: the journal's
// requests that match the pattern, newest first.
func (s *Server) handleFindRequests(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	p, err := readPattern(r)
	if err != nil {
		return err
	}
	found := s.journal.Find(p)
	s.writeJSON(w, http.StatusOK, map[string][]journal.Entry{"requests": found})
	return nil
}

// bodyCapture keeps what a handler reads of a request body, to its
// journal's bound.
type bodyCapture struct {
	io.ReadCloser
	buf   []byte
	limit int
	eof   bool
}

func (c *bodyCapture) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	if room := c.limit - len(c.buf); room > 0 && n > 0 {
		c.buf = append(c.buf, p[:min(n, room)]...)
	}
	if err == io.EOF {
		c.eof = true
	}
	return n, err
}

// rest reads what the handler left of the body, to the bound.
func (c *bodyCapture) rest() []byte {
	if !c.eof && len(c.buf) < c.limit {
		more, _ := io.ReadAll(io.LimitReader(c.ReadCloser, int64(c.limit-len(c.buf))))
		c.buf = append(c.buf, more...)
	}
	return c.buf
}
