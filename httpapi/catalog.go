package httpapi

import (
	"net/http"
	"strconv"

	"github.com/julienschmidt/httprouter"
)

// handleSiteDomains answers GET /sites/:site_id/domains with an array of
// {id, name}.
func (s *Server) handleSiteDomains(w http.ResponseWriter, r *http.Request, p httprouter.Params, _ int64) error {
	ds, err := s.m.Catalog.Domains(r.Context(), p.ByName("site_id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, ds)
	return nil
}

// handleDomainProducts answers GET /catalog_domains/:domain_id/products with
// an array of products in the list shape. limit and offset page it; the
// total is in the X-Total-Count header, as the body is the spec's bare array.
func (s *Server) handleDomainProducts(w http.ResponseWriter, r *http.Request, p httprouter.Params, _ int64) error {
	pg, err := readPage(r, defaultLimit)
	if err != nil {
		return err
	}
	res, err := s.m.Catalog.DomainProducts(r.Context(), p.ByName("domain_id"), pg.Limit, pg.Offset)
	if err != nil {
		return err
	}
	w.Header().Set("X-Total-Count", strconv.Itoa(res.Total))
	s.writeJSON(w, http.StatusOK, res.Products)
	return nil
}

// handleProduct answers GET /products/:product_id with the catalog product.
// The domain hands over the answer already encoded; it is written with the
// same headers and trailing newline as writeJSON.
func (s *Server) handleProduct(w http.ResponseWriter, r *http.Request, p httprouter.Params, _ int64) error {
	body, err := s.m.Catalog.ProductJSON(r.Context(), p.ByName("product_id"))
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(body, '\n'))
	return nil
}
