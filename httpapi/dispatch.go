package httpapi

import (
	"net/http"
	"strings"

	"github.com/julienschmidt/httprouter"
)

// dispatcher serves the routes of one method mounted under one catch-all
// path. httprouter v1.3.0 cannot hold a static segment and a parameter at
// one position (GET /messages/unread beside GET /messages/{message_id},
// GET /post-purchase/v1/claims/search beside .../claims/{claim_id}), nor
// two parameter names at one position; the public API has many such
// paths in its post-sale areas, so those routes are matched here
// instead, by their segments.
type dispatcher struct {
	routes []mounted
}

// mounted is one route of a dispatcher: its path split into segments
// (a parameter segment starts with ':') and its prepared handler.
type mounted struct {
	segments []string
	statics  int
	h        httprouter.Handle
}

// mount registers h for rt: on the router, or, for a route served through
// a catch-all, on that catch-all's dispatcher.
func (s *Server) mount(rt route, h httprouter.Handle) {
	if rt.via == "" {
		s.router.Handle(rt.method, rt.path, h)
		return
	}
	if s.dispatchers == nil {
		s.dispatchers = map[string]*dispatcher{}
	}
	key := rt.method + " " + rt.via
	d := s.dispatchers[key]
	if d == nil {
		d = &dispatcher{}
		s.dispatchers[key] = d
	}
	m := mounted{segments: strings.Split(strings.Trim(rt.path, "/"), "/"), h: h}
	for _, seg := range m.segments {
		if !strings.HasPrefix(seg, ":") {
			m.statics++
		}
	}
	d.routes = append(d.routes, m)
}

// mountDispatchers registers each dispatcher's catch-all on the router.
func (s *Server) mountDispatchers() {
	for key, d := range s.dispatchers {
		method, via, _ := strings.Cut(key, " ")
		s.router.Handle(method, via, func(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
			h, p := d.match(r.URL.Path)
			if h == nil {
				s.router.NotFound.ServeHTTP(w, r)
				return
			}
			h(w, r, p)
		})
	}
}

// match finds the route that path is a request to, with its parameters.
// Where two routes match, the one with more static segments wins
// (/messages/unread over /messages/{message_id}), as it would on a router
// that could hold both.
func (d *dispatcher) match(path string) (httprouter.Handle, httprouter.Params) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	best := -1
	for i, m := range d.routes {
		if len(m.segments) != len(segs) || (best >= 0 && d.routes[best].statics >= m.statics) {
			continue
		}
		if m.matches(segs) {
			best = i
		}
	}
	if best < 0 {
		return nil, nil
	}
	m := d.routes[best]
	var p httprouter.Params
	for i, seg := range m.segments {
		if strings.HasPrefix(seg, ":") {
			p = append(p, httprouter.Param{Key: seg[1:], Value: segs[i]})
		}
	}
	return m.h, p
}

func (m mounted) matches(segs []string) bool {
	for i, seg := range m.segments {
		if segs[i] == "" || (!strings.HasPrefix(seg, ":") && seg != segs[i]) {
			return false
		}
	}
	return true
}
