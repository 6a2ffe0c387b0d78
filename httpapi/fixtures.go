package httpapi

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/marketplace/marketplace/fixtures"
)

// handleOperatorLoadFixtures answers PUT /operator/fixtures: the body is a
// fixtures document, the answer the ids of its records by name.
func (s *Server) handleOperatorLoadFixtures(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	b, err := readBody(r)
	if err != nil {
		return err
	}
	d, err := fixtures.Parse(b)
	if err != nil {
		return err
	}
	res, err := s.m.LoadFixtures(r.Context(), d)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, res)
	return nil
}
