package httpapi

import (
	"bytes"
	"net/http"
	"strconv"

	"github.com/julienschmidt/httprouter"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/errs"
)

// stateRoutes registers the routes that replace or load the whole state:
// reset, snapshots and fixtures.
func (s *Server) stateRoutes() {
	s.handle(http.MethodPost, "/operator/reset", s.operator(s.handleOperatorReset))
	s.handle(http.MethodPost, "/operator/snapshots", s.operator(s.handleOperatorCreateSnapshot))
	s.handle(http.MethodGet, "/operator/snapshots", s.operator(s.handleOperatorListSnapshots))
	s.handle(http.MethodPost, "/operator/snapshots/:snapshot_id/restore", s.operator(s.handleOperatorRestoreSnapshot))
	s.handle(http.MethodDelete, "/operator/snapshots/:snapshot_id", s.operator(s.handleOperatorDeleteSnapshot))
	s.handle(http.MethodPut, "/operator/fixtures", s.operator(s.handleOperatorLoadFixtures))
}

// gateFree are the routes that take the engine's state gate themselves (to
// hold every other request out): entering it for them would wait forever.
var gateFree = map[string]bool{
	"/operator/reset":                          true,
	"/operator/snapshots":                      true,
	"/operator/snapshots/:snapshot_id/restore": true,
	"/operator/snapshots/:snapshot_id":         true,
	"/operator/fixtures":                       true,
}

// enterState holds the engine's state still for one request on route (see
// marketplace.Marketplace.Enter) and returns the function that lets it go.
func (s *Server) enterState(route string) (leave func()) {
	if gateFree[route] {
		return func() {}
	}
	return s.m.Enter()
}

// handleOperatorReset answers POST /operator/reset[?demo=true].
func (s *Server) handleOperatorReset(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	demo := false
	if raw := r.URL.Query().Get("demo"); raw != "" {
		var err error
		if demo, err = strconv.ParseBool(raw); err != nil {
			return errs.Invalidf("Invalid demo: %s. It must be true or false", raw)
		}
	}
	if err := s.m.Reset(r.Context(), marketplace.ResetOptions{Demo: demo}); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// handleOperatorCreateSnapshot answers POST /operator/snapshots with an
// optional body {name}.
func (s *Server) handleOperatorCreateSnapshot(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	b, err := readBody(r)
	if err != nil {
		return err
	}
	var in struct {
		Name *string `json:"name"`
	}
	if len(bytes.TrimSpace(b)) > 0 {
		if err := decodeBytes(b, &in); err != nil {
			return err
		}
	}
	name := ""
	if in.Name != nil {
		name = *in.Name
	}
	snap, err := s.m.CreateSnapshot(r.Context(), name)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusCreated, snap)
	return nil
}

// handleOperatorListSnapshots answers GET /operator/snapshots.
func (s *Server) handleOperatorListSnapshots(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	list, err := s.m.Snapshots(r.Context())
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, list)
	return nil
}

// handleOperatorRestoreSnapshot answers POST
// /operator/snapshots/:snapshot_id/restore.
func (s *Server) handleOperatorRestoreSnapshot(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	id, err := int64Param(p, "snapshot_id")
	if err != nil {
		return err
	}
	if err := s.m.RestoreSnapshot(r.Context(), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// handleOperatorDeleteSnapshot answers DELETE /operator/snapshots/:snapshot_id.
func (s *Server) handleOperatorDeleteSnapshot(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	id, err := int64Param(p, "snapshot_id")
	if err != nil {
		return err
	}
	if err := s.m.DeleteSnapshot(r.Context(), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
