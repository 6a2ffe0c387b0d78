// Package geo holds the marketplace's geography and money reference data:
// sites, countries, states, cities, zip codes, currencies and conversion
// ratios. Other packages ask it which sites exist, which currency a site
// uses and in which time zone its sellers live.
//
// The data ships embedded (data/geo.json), is loaded into storage when the
// engine opens, and can be extended with imported records (UpsertRecord).
package geo

import (
	"slices"
	_ "time/tzdata" // site time zones must work on machines without zone files

	"context"
	"errors"
	"sort"

	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/storage"
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
	// Domain is the site's public web domain (mercadolibre.com.ar): item
	// permalinks are on articulo.<domain>, catalog products on
	// www.<domain>. Empty for a site imported without one.
	Domain string `json:"domain,omitempty"`
	// OtherCurrencyIDs are the currencies besides the default one that an
	// item of the site may be listed in (US dollars in Argentina and
	// Uruguay, where real estate and vehicles are listed in them).
	OtherCurrencyIDs []string `json:"other_currency_ids,omitempty"`
}

// CurrencyIDs returns the currencies an item of the site may be listed in,
// the default one first.
func (s Site) CurrencyIDs() []string {
	return append([]string{s.DefaultCurrencyID}, s.OtherCurrencyIDs...)
}

// Equal reports whether s and o are the same record, field for field.
func (s Site) Equal(o Site) bool {
	return s.ID == o.ID && s.Name == o.Name && s.CountryID == o.CountryID && s.DefaultCurrencyID == o.DefaultCurrencyID &&
		s.TimeZone == o.TimeZone && s.Domain == o.Domain && slices.Equal(s.OtherCurrencyIDs, o.OtherCurrencyIDs)
}

// WebDomain returns the site's public web domain, mercadolibre.com for a
// site that has none.
func (s Site) WebDomain() string {
	if s.Domain == "" {
		return "mercadolibre.com"
	}
	return s.Domain
}

// SiteSummary is a site as GET /sites lists it.
type SiteSummary struct {
	DefaultCurrencyID string `json:"default_currency_id"`
	ID                string `json:"id"`
	Name              string `json:"name"`
}

// Summary returns the site as GET /sites lists it.
func (s Site) Summary() SiteSummary {
	return SiteSummary{DefaultCurrencyID: s.DefaultCurrencyID, ID: s.ID, Name: s.Name}
}

// Service answers geography and currency questions.
type Service struct {
	store storage.Store
	clock clock.Clock
}

// New returns the geo service over store. clk dates the imported conversion
// ratios that carry no creation_date of their own.
func New(store storage.Store, clk clock.Clock) *Service {
	return &Service{store: store, clock: clk}
}

var siteCache money.DecodeCache[Site]

// GetSite reads the site with id inside tx. A site the store does not hold
// yet (the embedded dataset is loaded when the engine opens) is taken from
// the embedded dataset, so that a service over a fresh store still knows the
// shipped sites. Errors: NotFound.
func GetSite(tx storage.Tx, id string) (Site, error) {
	b, err := tx.Get(siteKey(id))
	if err == nil {
		site, err := siteCache.Decode(b)
		if err != nil {
			return Site{}, errs.Internalf(err, "decode site")
		}
		return site, nil
	}
	if !errors.Is(err, storage.ErrNotFound) {
		return Site{}, errs.Internalf(err, "read site")
	}
	if site, ok := embeddedSite(id); ok {
		return site, nil
	}
	return Site{}, errs.NotFoundf("Site not found: %s", id)
}

// SiteKeys returns the keys that GetSite(siteID) and GetCurrency read, the
// currencies being currencyIDs (empty ones left out) or, when there are
// none, the site's usual default, for storage.Prefetch: a caller that reads
// them all reads them in one round trip on a backend at network distance.
func SiteKeys(siteID string, currencyIDs ...string) [][]byte {
	keys := [][]byte{siteKey(siteID)}
	for _, id := range currencyIDs {
		if id != "" {
			keys = append(keys, currencyKey(id))
		}
	}
	if len(keys) == 1 {
		if site, ok := embeddedSite(siteID); ok && site.DefaultCurrencyID != "" {
			keys = append(keys, currencyKey(site.DefaultCurrencyID))
		}
	}
	return keys
}

// Site returns the site with id. Errors: NotFound.
func (s *Service) Site(ctx context.Context, id string) (Site, error) {
	var site Site
	err := s.store.View(ctx, func(tx storage.Tx) error {
		var err error
		site, err = GetSite(tx, id)
		return err
	})
	return site, err
}

// Sites returns every site, ordered by id.
func (s *Service) Sites(ctx context.Context) ([]Site, error) {
	byID := map[string]Site{}
	for _, site := range embedded().sites {
		byID[site.ID] = site
	}
	err := s.store.View(ctx, func(tx storage.Tx) error {
		it := tx.Iterate(storage.Prefix(sitePrefix()))
		defer it.Close()
		for ; it.Valid(); it.Next() {
			var site Site
			if err := valueJSON(it, &site); err != nil {
				return err
			}
			byID[site.ID] = site
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]Site, 0, len(byID))
	for _, site := range byID {
		out = append(out, site)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// SiteList returns every site as GET /sites lists it, ordered by id.
func (s *Service) SiteList(ctx context.Context) ([]SiteSummary, error) {
	sites, err := s.Sites(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]SiteSummary, len(sites))
	for i, site := range sites {
		out[i] = site.Summary()
	}
	return out, nil
}
