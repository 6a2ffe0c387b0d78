package httpapi

import (
	"net/http"

	"github.com/julienschmidt/httprouter"
)

// responseTimeRoutes registers the route of the seller response time.
func (s *Server) responseTimeRoutes() {
	s.handle(http.MethodGet, "/users/:user_id/questions/response_time", s.user(s.handleGetResponseTime))
}

// handleGetResponseTime answers GET /users/:user_id/questions/response_time
// with the figures of the latest daily refresh. Any authenticated caller may
// read any seller's figures: they describe public behaviour, as the public
// API's do.
func (s *Server) handleGetResponseTime(w http.ResponseWriter, r *http.Request, p httprouter.Params, _ int64) error {
	id, err := int64Param(p, "user_id")
	if err != nil {
		return err
	}
	rt, err := s.m.ResponseTimes.Get(r.Context(), id)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, rt)
	return nil
}
