package httpapi

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/marketplace/marketplace/httpapi/openapi"
	"github.com/marketplace/marketplace/internal/buildinfo"
	"github.com/marketplace/marketplace/storage"
)

// readyTimeout bounds the storage read of GET /ready.
const readyTimeout = 2 * time.Second

// readyKey is read by GET /ready; it need not exist.
var readyKey = []byte("ready-probe")

// handleReady answers GET and HEAD /ready: 200 when the storage answers a
// read, 503 service_unavailable when it does not.
func (s *Server) handleReady(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	err := s.m.Store().View(ctx, func(tx storage.Tx) error {
		_, err := tx.Get(readyKey)
		if errors.Is(err, storage.ErrNotFound) {
			return nil
		}
		return err
	})
	if err != nil {
		s.logger.Warn("not ready: storage read failed", "err", err)
		return errUnavailable
	}
	s.writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

// handleVersion answers GET and HEAD /version with the binary's build.
func (s *Server) handleVersion(w http.ResponseWriter, _ *http.Request, _ httprouter.Params) error {
	s.writeJSON(w, http.StatusOK, buildinfo.Get())
	return nil
}

// handleOpenAPI answers GET /openapi.json with the OpenAPI document.
func (s *Server) handleOpenAPI(w http.ResponseWriter, _ *http.Request, _ httprouter.Params) error {
	b, err := openapi.JSON()
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
	return nil
}

// handleMetrics answers GET /metrics in the Prometheus text format, unless
// the metrics are off or served on their own address (-metrics-addr).
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	if s.cfg.Metrics == nil || s.cfg.MetricsOwnAddress {
		return &httpError{status: http.StatusNotFound, code: "not_found",
			message: "Metrics are not served on this address"}
	}
	s.cfg.Metrics.Handler().ServeHTTP(w, r)
	return nil
}
