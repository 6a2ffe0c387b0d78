package httpapi

import (
	"bytes"
	"net/http"
	"strconv"

	"github.com/julienschmidt/httprouter"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/errs"
)

// enterState holds the engine's state still for one request (see
// marketplace.Marketplace.Enter) and returns the function that lets it go.
func (s *Server) enterState() (leave func()) {
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
