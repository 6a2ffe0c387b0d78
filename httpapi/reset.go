package httpapi

import (
	"bytes"
	"net/http"
	"strconv"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/errs"
)

// enterState holds the engine's state still for one request (see
// marketplace.Marketplace.Enter) and returns the function that lets it go.
func (s *Server) enterState() (leave func()) {
	return s.m.Enter()
}

// clockParam reads the optional clock query parameter of a reset or a
// restore: the time the manual clock is set to, earlier or later.
func clockParam(r *http.Request) (time.Time, error) {
	raw := r.URL.Query().Get("clock")
	if raw == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, raw)
	if err != nil {
		return time.Time{}, errs.Invalidf("Invalid clock: %q. It must be an RFC 3339 time, such as 2026-03-04T12:00:00-03:00", raw)
	}
	return t, nil
}

// handleOperatorReset answers POST /operator/reset[?demo=true][&clock=<RFC 3339>].
func (s *Server) handleOperatorReset(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	at, err := clockParam(r)
	if err != nil {
		return err
	}
	demo := false
	if raw := r.URL.Query().Get("demo"); raw != "" {
		var err error
		if demo, err = strconv.ParseBool(raw); err != nil {
			return errs.Invalidf("Invalid demo: %s. It must be true or false", raw)
		}
	}
	if err := s.m.Reset(r.Context(), marketplace.ResetOptions{Demo: demo, Clock: at}); err != nil {
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
// /operator/snapshots/:snapshot_id/restore[?clock=<RFC 3339>].
func (s *Server) handleOperatorRestoreSnapshot(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	id, err := int64Param(p, "snapshot_id")
	if err != nil {
		return err
	}
	at, err := clockParam(r)
	if err != nil {
		return err
	}
	if err := s.m.Restore(r.Context(), id, marketplace.RestoreOptions{Clock: at}); err != nil {
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
