package catalog

import (
	"context"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/storage"
)

// SiteCurrency is a currency of a site as GET /sites/{site_id} lists it.
type SiteCurrency struct {
	ID     string `json:"id"`
	Symbol string `json:"symbol"`
}

// SiteView is a site as GET /sites/{site_id} shows it: the site, the
// currencies its items may be listed in and its root categories.
type SiteView struct {
	ID                string         `json:"id"`
	Name              string         `json:"name"`
	CountryID         string         `json:"country_id"`
	DefaultCurrencyID string         `json:"default_currency_id"`
	Currencies        []SiteCurrency `json:"currencies"`
	Categories        []CategoryRef  `json:"categories"`
}

// Site returns the site with id, its currencies and its root categories in
// one snapshot. Errors: NotFound.
func (s *Service) Site(ctx context.Context, id string) (SiteView, error) {
	var v SiteView
	err := s.store.View(ctx, func(tx storage.Tx) error {
		// The site, its usual currency and its categories' list are
		// read together.
		categories, done := openSiteCategories(tx, id)
		defer done()
		if err := storage.Prefetch(tx, geo.SiteKeys(id)...); err != nil {
			return err
		}
		site, err := geo.GetSite(tx, id)
		if err != nil {
			return err
		}
		v = SiteView{ID: site.ID, Name: site.Name, CountryID: site.CountryID, DefaultCurrencyID: site.DefaultCurrencyID,
			Currencies: []SiteCurrency{}}
		if _, ok := tx.(storage.Prefetcher); ok {
			if err := storage.Prefetch(tx, geo.SiteKeys(id, site.CurrencyIDs()...)...); err != nil {
				return err
			}
		}
		for _, cid := range site.CurrencyIDs() {
			c, err := geo.GetCurrency(tx, cid)
			if errs.Is(err, errs.NotFound) {
				continue // a site imported before its currency
			}
			if err != nil {
				return err
			}
			v.Currencies = append(v.Currencies, SiteCurrency{ID: c.ID, Symbol: c.Symbol})
		}
		v.Categories, err = categories()
		return err
	})
	return v, err
}
