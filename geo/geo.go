// Package geo holds the marketplace's geography and money reference data:
// sites, countries, states, cities, zip codes, currencies and conversion
// ratios. Other packages ask it which sites exist, which currency a site
// uses and in which time zone its sellers live.
package geo

import (
	_ "time/tzdata" // site time zones must work on machines without zone files

	"context"
	"sort"

	"marketplace/errs"
	"marketplace/storage"
)

// Site is one marketplace site (a country's marketplace), such as MLA.
type Site struct {
	ID                string `json:"id"`
	Name              string `json:"name"`
	CountryID         string `json:"country_id"`
	DefaultCurrencyID string `json:"default_currency_id"`
	// TimeZone is the IANA zone used for the site's time rules (response
	// time periods, daily refresh hour).
	TimeZone string `json:"time_zone"`
}

// builtinSites are the sites the engine knows before any reference data is
// loaded; they are also what the embedded dataset starts from.
var builtinSites = []Site{
	{ID: "MLA", Name: "Argentina", CountryID: "AR", DefaultCurrencyID: "ARS", TimeZone: "America/Argentina/Buenos_Aires"},
	{ID: "MLB", Name: "Brasil", CountryID: "BR", DefaultCurrencyID: "BRL", TimeZone: "America/Sao_Paulo"},
	{ID: "MLM", Name: "Mexico", CountryID: "MX", DefaultCurrencyID: "MXN", TimeZone: "America/Mexico_City"},
	{ID: "MLC", Name: "Chile", CountryID: "CL", DefaultCurrencyID: "CLP", TimeZone: "America/Santiago"},
	{ID: "MCO", Name: "Colombia", CountryID: "CO", DefaultCurrencyID: "COP", TimeZone: "America/Bogota"},
	{ID: "MLU", Name: "Uruguay", CountryID: "UY", DefaultCurrencyID: "UYU", TimeZone: "America/Montevideo"},
	{ID: "MPE", Name: "Perú", CountryID: "PE", DefaultCurrencyID: "PEN", TimeZone: "America/Lima"},
	{ID: "MEC", Name: "Ecuador", CountryID: "EC", DefaultCurrencyID: "USD", TimeZone: "America/Guayaquil"},
	{ID: "MLV", Name: "Venezuela", CountryID: "VE", DefaultCurrencyID: "VES", TimeZone: "America/Caracas"},
}

// Service answers geography questions.
type Service struct {
	store storage.Store
}

// New returns the geo service over store.
func New(store storage.Store) *Service {
	return &Service{store: store}
}

// Site returns the site with id. Errors: NotFound.
func (s *Service) Site(ctx context.Context, id string) (Site, error) {
	for _, site := range builtinSites {
		if site.ID == id {
			return site, nil
		}
	}
	return Site{}, errs.NotFoundf("Site not found: %s", id)
}

// Sites returns every site, ordered by id.
func (s *Service) Sites(ctx context.Context) ([]Site, error) {
	out := append([]Site(nil), builtinSites...)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}
