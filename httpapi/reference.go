package httpapi

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/marketplace/marketplace/fees"
)

func feesQuery(r *http.Request) fees.Query {
	q := r.URL.Query()
	return fees.Query{Price: q.Get("price"), Quantity: q.Get("quantity"), ListingTypeID: q.Get("listing_type_id"),
		CategoryID: q.Get("category_id"), CurrencyID: q.Get("currency_id")}
}

// handleListingPrices answers GET /sites/:site_id/listing_prices: an array
// with one object per listing type, or one object when listing_type_id is
// given. fees encodes the answer.
func (s *Server) handleListingPrices(w http.ResponseWriter, r *http.Request, p httprouter.Params, _ int64) error {
	return writeAppended(w, http.StatusOK, func(b []byte) ([]byte, error) {
		return s.m.Fees.AppendListingPricesJSON(r.Context(), b, p.ByName("site_id"), feesQuery(r))
	})
}

// handleListingPrice answers GET /sites/:site_id/listing_prices/:listing_type_id.
func (s *Server) handleListingPrice(w http.ResponseWriter, r *http.Request, p httprouter.Params, _ int64) error {
	return writeAppended(w, http.StatusOK, func(b []byte) ([]byte, error) {
		return s.m.Fees.AppendListingPriceJSON(r.Context(), b, p.ByName("site_id"), p.ByName("listing_type_id"), feesQuery(r))
	})
}

// handleCountries answers GET /classified_locations/countries.
func (s *Server) handleCountries(w http.ResponseWriter, r *http.Request, _ httprouter.Params, _ int64) error {
	out, err := s.m.Geo.Countries(r.Context())
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, out)
	return nil
}

// handleCountry answers GET /classified_locations/countries/:country_id.
func (s *Server) handleCountry(w http.ResponseWriter, r *http.Request, p httprouter.Params, _ int64) error {
	out, err := s.m.Geo.Country(r.Context(), p.ByName("country_id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, out)
	return nil
}

// handleState answers GET /classified_locations/states/:state_id.
func (s *Server) handleState(w http.ResponseWriter, r *http.Request, p httprouter.Params, _ int64) error {
	out, err := s.m.Geo.State(r.Context(), p.ByName("state_id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, out)
	return nil
}

// handleCity answers GET /classified_locations/cities/:city_id.
func (s *Server) handleCity(w http.ResponseWriter, r *http.Request, p httprouter.Params, _ int64) error {
	out, err := s.m.Geo.City(r.Context(), p.ByName("city_id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, out)
	return nil
}

// handleCurrencies answers GET /currencies.
func (s *Server) handleCurrencies(w http.ResponseWriter, r *http.Request, _ httprouter.Params, _ int64) error {
	out, err := s.m.Geo.Currencies(r.Context())
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, out)
	return nil
}

// handleCurrency answers GET /currencies/:currency_id.
func (s *Server) handleCurrency(w http.ResponseWriter, r *http.Request, p httprouter.Params, _ int64) error {
	out, err := s.m.Geo.Currency(r.Context(), p.ByName("currency_id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, out)
	return nil
}

// handleCurrencyConversion answers GET /currency_conversions/search?from=&to=.
func (s *Server) handleCurrencyConversion(w http.ResponseWriter, r *http.Request, _ httprouter.Params, _ int64) error {
	q := r.URL.Query()
	out, err := s.m.Geo.Conversion(r.Context(), q.Get("from"), q.Get("to"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, out)
	return nil
}

// handleZipCode answers GET /countries/:country_id/zip_codes/:zip_code.
func (s *Server) handleZipCode(w http.ResponseWriter, r *http.Request, p httprouter.Params, _ int64) error {
	out, err := s.m.Geo.ZipCode(r.Context(), p.ByName("country_id"), p.ByName("zip_code"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, out)
	return nil
}

// zipCodeRange is the answer of the zip code range search.
type zipCodeRange struct {
	Paging  paging `json:"paging"`
	Results any    `json:"results"`
}

// handleZipCodesBetween answers GET
// /country/:country_id/zip_codes/search_between?zip_code_from=&zip_code_to=
// with paging (limit 50 by default).
func (s *Server) handleZipCodesBetween(w http.ResponseWriter, r *http.Request, p httprouter.Params, _ int64) error {
	pg, err := readPage(r, defaultLimit)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	out, err := s.m.Geo.ZipCodesBetween(r.Context(), p.ByName("country_id"), q.Get("zip_code_from"), q.Get("zip_code_to"), pg.Offset, pg.Limit)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, zipCodeRange{Paging: paging{Total: out.Total, Offset: pg.Offset, Limit: pg.Limit}, Results: out.Results})
	return nil
}
