package httpapi

import (
	"net/http"

	"github.com/julienschmidt/httprouter"
)

// handleGetResponseTime answers GET /users/:user_id/questions/response_time
// with the figures of the latest daily refresh; who may read them is
// responsetime.CheckReader's rule.
func (s *Server) handleGetResponseTime(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	id, err := int64Param(p, "user_id")
	if err != nil {
		return err
	}
	rt, err := s.m.ResponseTimes.Get(r.Context(), caller, id)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, rt)
	return nil
}
