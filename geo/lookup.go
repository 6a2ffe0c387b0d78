package geo

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/paging"
	"github.com/marketplace/marketplace/storage"
)

// Ref names another record: {id, name}.
type Ref struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// CountrySummary is a country in the list of countries.
type CountrySummary struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Locale     string `json:"locale"`
	CurrencyID string `json:"currency_id"`
}

// CountryDetail is one country with its states.
type CountryDetail struct {
	CountrySummary
	DecimalSeparator   string          `json:"decimal_separator"`
	ThousandsSeparator string          `json:"thousands_separator"`
	TimeZone           string          `json:"time_zone"`
	GeoInformation     *GeoInformation `json:"geo_information"`
	States             []Ref           `json:"states"`
}

// StateDetail is one state with its country and cities.
type StateDetail struct {
	ID             string          `json:"id"`
	Name           string          `json:"name"`
	Country        Ref             `json:"country"`
	GeoInformation *GeoInformation `json:"geo_information"`
	Cities         []Ref           `json:"cities"`
}

// CityDetail is one city with its state and country.
type CityDetail struct {
	ID             string          `json:"id"`
	Name           string          `json:"name"`
	State          Ref             `json:"state"`
	Country        Ref             `json:"country"`
	GeoInformation *GeoInformation `json:"geo_information"`
}

// ConversionDetail is the answer of a conversion lookup.
type ConversionDetail struct {
	CurrencyBase  string    `json:"currency_base"`
	CurrencyQuote string    `json:"currency_quote"`
	Rate          money.Dec `json:"rate"`
	InvRate       money.Dec `json:"inv_rate"`
	CreationDate  string    `json:"creation_date"`
}

// ZipCodeDetail is the location of a zip code.
type ZipCodeDetail struct {
	ZipCode string `json:"zip_code"`
	City    Ref    `json:"city"`
	State   Ref    `json:"state"`
	Country Ref    `json:"country"`
}

// invRatePlaces is the precision of an inverse rate that is computed rather
// than stored.
const invRatePlaces = 10

// timeLayout is how dates are written: milliseconds, UTC.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

func valueJSON(it storage.Iterator, v any) error {
	b, err := it.Value()
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// Decoded records, shared by every lookup (see money.DecodeCache).
var (
	currencyCache   money.DecodeCache[Currency]
	conversionCache money.DecodeCache[Conversion]
	countryCache    money.DecodeCache[Country]
	stateCache      money.DecodeCache[State]
	cityCache       money.DecodeCache[City]
	zipCache        money.DecodeCache[ZipCode]
)

// getCached reads the record at key through a decode cache; a missing key
// is notFound().
func getCached[T any](tx storage.Tx, c *money.DecodeCache[T], key []byte, notFound func() error) (T, error) {
	var zero T
	b, err := tx.Get(key)
	if errors.Is(err, storage.ErrNotFound) {
		return zero, notFound()
	}
	if err != nil {
		return zero, errs.Internalf(err, "read reference record")
	}
	v, err := c.Decode(b)
	if err != nil {
		return zero, errs.Internalf(err, "decode reference record")
	}
	return v, nil
}

func getCountry(tx storage.Tx, id string) (Country, error) {
	return getCached(tx, &countryCache, countryKey(id), func() error { return errs.NotFoundf("Country not found: %s", id) })
}

func getState(tx storage.Tx, id string) (State, error) {
	return getCached(tx, &stateCache, stateKey(id), func() error { return errs.NotFoundf("State not found: %s", id) })
}

func getCity(tx storage.Tx, id string) (City, error) {
	return getCached(tx, &cityCache, cityKey(id), func() error { return errs.NotFoundf("City not found: %s", id) })
}

// GetCurrency reads a currency inside tx. As with GetSite, a currency the
// store does not hold yet is taken from the embedded dataset, so that a
// service over a fresh store still knows the decimal places of the shipped
// sites' currencies. Errors: NotFound.
func GetCurrency(tx storage.Tx, id string) (Currency, error) {
	c, err := getCached(tx, &currencyCache, currencyKey(id), func() error { return errs.NotFoundf("Currency not found: %s", id) })
	if errs.Is(err, errs.NotFound) {
		if e, ok := embeddedCurrency(id); ok {
			return e, nil
		}
	}
	return c, err
}

// GetConversion returns the ratio that converts an amount of from into to,
// inside tx: 1 for the same currency, the stored ratio, or else the inverse
// of the stored opposite ratio (rounded to 10 decimals). Errors: NotFound
// (unknown currency, or no ratio either way).
func GetConversion(tx storage.Tx, from, to string) (Conversion, error) {
	for _, id := range []string{from, to} {
		if _, err := GetCurrency(tx, id); err != nil {
			return Conversion{}, err
		}
	}
	if from == to {
		return Conversion{From: from, To: to, Rate: money.FromInt(1)}, nil
	}
	c, err := getCached(tx, &conversionCache, conversionKey(from, to), func() error { return errs.NotFoundf("no direct ratio") })
	if err == nil {
		return c, nil
	}
	if !errs.Is(err, errs.NotFound) {
		return Conversion{}, err
	}
	inv, err := getCached(tx, &conversionCache, conversionKey(to, from), func() error {
		return errs.NotFoundf("Conversion not found: from %s to %s", from, to)
	})
	if err != nil {
		return Conversion{}, err
	}
	return Conversion{From: from, To: to, Rate: money.FromInt(1).Quo(inv.Rate, invRatePlaces), CreationDate: inv.CreationDate}, nil
}

func (s *Service) view(ctx context.Context, fn func(tx storage.Tx) error) error {
	return s.store.View(ctx, fn)
}

// Countries returns every country, ordered by id.
func (s *Service) Countries(ctx context.Context) ([]CountrySummary, error) {
	out := []CountrySummary{}
	err := s.view(ctx, func(tx storage.Tx) error {
		it := tx.Iterate(storage.Prefix(countryPrefix()))
		defer it.Close()
		for ; it.Valid(); it.Next() {
			var c Country
			if err := valueJSON(it, &c); err != nil {
				return err
			}
			out = append(out, summary(c))
		}
		return nil
	})
	return out, err
}

func summary(c Country) CountrySummary {
	return CountrySummary{ID: c.ID, Name: c.Name, Locale: c.Locale, CurrencyID: c.CurrencyID}
}

// refsOf lists the {id, name} entries of a by-name index (keys
// <prefix>/<name>/<id>) from an iterator opened over its prefix of
// prefixLen bytes: opened before a record's read, the list goes to the
// store with it.
func refsOf(it storage.Iterator, prefixLen int) ([]Ref, error) {
	out := []Ref{}
	for ; it.Valid(); it.Next() {
		r := keycodec.Read(it.Key()[prefixLen:])
		name, id := r.Str(), r.Str()
		if err := r.Err(); err != nil {
			return nil, err
		}
		out = append(out, Ref{ID: id, Name: name})
	}
	return out, nil
}

// Country returns one country with its states (by name). Errors: NotFound.
func (s *Service) Country(ctx context.Context, id string) (CountryDetail, error) {
	var out CountryDetail
	err := s.view(ctx, func(tx storage.Tx) error {
		prefix := countryStatePrefix(id) // opened first: one round trip with the country
		it := tx.Iterate(storage.Prefix(prefix))
		defer it.Close()
		c, err := getCountry(tx, id)
		if err != nil {
			return err
		}
		states, err := refsOf(it, len(prefix))
		if err != nil {
			return err
		}
		out = CountryDetail{CountrySummary: summary(c), DecimalSeparator: c.DecimalSeparator,
			ThousandsSeparator: c.ThousandsSeparator, TimeZone: c.TimeZone, GeoInformation: c.GeoInformation, States: states}
		return nil
	})
	return out, err
}

// State returns one state with its country and cities (by name). Errors:
// NotFound.
func (s *Service) State(ctx context.Context, id string) (StateDetail, error) {
	var out StateDetail
	err := s.view(ctx, func(tx storage.Tx) error {
		// The state and its cities in one round trip, its country in one
		// more.
		prefix := stateCityPrefix(id)
		it := tx.Iterate(storage.Prefix(prefix))
		defer it.Close()
		st, err := getState(tx, id)
		if err != nil {
			return err
		}
		c, err := getCountry(tx, st.CountryID)
		if err != nil {
			return errs.Internalf(err, "state %s without its country", id)
		}
		cities, err := refsOf(it, len(prefix))
		if err != nil {
			return err
		}
		out = StateDetail{ID: st.ID, Name: st.Name, Country: Ref{ID: c.ID, Name: c.Name}, GeoInformation: st.GeoInformation, Cities: cities}
		return nil
	})
	return out, err
}

// City returns one city with its state and country. Errors: NotFound.
func (s *Service) City(ctx context.Context, id string) (CityDetail, error) {
	var out CityDetail
	err := s.view(ctx, func(tx storage.Tx) error {
		c, err := getCity(tx, id)
		if err != nil {
			return err
		}
		st, err := getState(tx, c.StateID)
		if err != nil {
			return errs.Internalf(err, "city %s without its state", id)
		}
		co, err := getCountry(tx, st.CountryID)
		if err != nil {
			return errs.Internalf(err, "state %s without its country", st.ID)
		}
		out = CityDetail{ID: c.ID, Name: c.Name, State: Ref{ID: st.ID, Name: st.Name},
			Country: Ref{ID: co.ID, Name: co.Name}, GeoInformation: c.GeoInformation}
		return nil
	})
	return out, err
}

// Currencies returns every currency, ordered by id.
func (s *Service) Currencies(ctx context.Context) ([]Currency, error) {
	out := []Currency{}
	err := s.view(ctx, func(tx storage.Tx) error {
		it := tx.Iterate(storage.Prefix(currencyPrefix()))
		defer it.Close()
		for ; it.Valid(); it.Next() {
			var c Currency
			if err := valueJSON(it, &c); err != nil {
				return err
			}
			out = append(out, c)
		}
		return nil
	})
	return out, err
}

// Currency returns one currency. Errors: NotFound.
func (s *Service) Currency(ctx context.Context, id string) (Currency, error) {
	var out Currency
	err := s.view(ctx, func(tx storage.Tx) error {
		var err error
		out, err = GetCurrency(tx, id)
		return err
	})
	return out, err
}

// Conversion returns the ratio from one currency to another. Errors: Invalid
// (a currency not given), NotFound (unknown currency or no ratio).
func (s *Service) Conversion(ctx context.Context, from, to string) (ConversionDetail, error) {
	if from == "" {
		return ConversionDetail{}, errs.Invalidf("The parameter [from] is required")
	}
	if to == "" {
		return ConversionDetail{}, errs.Invalidf("The parameter [to] is required")
	}
	var out ConversionDetail
	err := s.view(ctx, func(tx storage.Tx) error {
		c, err := GetConversion(tx, from, to)
		if err != nil {
			return err
		}
		if c.Rate.Sign() <= 0 {
			return errs.Internalf(nil, "conversion from %s to %s has rate %s", from, to, c.Rate)
		}
		created := c.CreationDate
		if created.IsZero() {
			// The identity ratio is timeless; date it now.
			created = s.clock.Now()
		}
		out = ConversionDetail{CurrencyBase: from, CurrencyQuote: to, Rate: c.Rate,
			InvRate:      money.FromInt(1).Quo(c.Rate, invRatePlaces),
			CreationDate: created.UTC().Format(timeLayout)}
		return nil
	})
	return out, err
}

// ZipCode returns the location of a zip code of a country. Errors: NotFound.
func (s *Service) ZipCode(ctx context.Context, countryID, zip string) (ZipCodeDetail, error) {
	var out ZipCodeDetail
	err := s.view(ctx, func(tx storage.Tx) error {
		// The country and the zip code in one round trip, their city,
		// state and country in one more.
		if err := storage.Prefetch(tx, countryKey(countryID), zipKey(countryID, zip)); err != nil {
			return err
		}
		if _, err := getCountry(tx, countryID); err != nil {
			return err
		}
		z, err := getCached(tx, &zipCache, zipKey(countryID, zip), func() error {
			return errs.NotFoundf("Zip code not found: %s", zip)
		})
		if err != nil {
			return err
		}
		if err := prefetchZipDetails(tx, z); err != nil {
			return err
		}
		out, err = zipDetail(tx, z)
		return err
	})
	return out, err
}

// prefetchZipDetails asks for the cities, states and countries of zs
// together, before zipDetail reads them.
func prefetchZipDetails(tx storage.Tx, zs ...ZipCode) error {
	if _, ok := tx.(storage.Prefetcher); !ok || len(zs) == 0 {
		return nil
	}
	keys := make([][]byte, 0, 3*len(zs))
	for _, z := range zs {
		keys = append(keys, cityKey(z.CityID), stateKey(z.StateID), countryKey(z.CountryID))
	}
	return storage.Prefetch(tx, keys...)
}

func zipDetail(tx storage.Tx, z ZipCode) (ZipCodeDetail, error) {
	c, err := getCity(tx, z.CityID)
	if err != nil {
		return ZipCodeDetail{}, errs.Internalf(err, "zip code %s without its city", z.ZipCode)
	}
	st, err := getState(tx, z.StateID)
	if err != nil {
		return ZipCodeDetail{}, errs.Internalf(err, "zip code %s without its state", z.ZipCode)
	}
	co, err := getCountry(tx, z.CountryID)
	if err != nil {
		return ZipCodeDetail{}, errs.Internalf(err, "zip code %s without its country", z.ZipCode)
	}
	return ZipCodeDetail{ZipCode: z.ZipCode, City: Ref{ID: c.ID, Name: c.Name},
		State: Ref{ID: st.ID, Name: st.Name}, Country: Ref{ID: co.ID, Name: co.Name}}, nil
}

// ZipCodePage is one page of a zip code range.
type ZipCodePage struct {
	Total   int
	Results []ZipCodeDetail
}

// ZipCodesBetween returns the zip codes of a country from zip code from to
// zip code to, both included, in zip order, skipping offset and returning at
// most limit of them; Total counts the whole range. Errors: Invalid (a bound
// missing, or from after to), NotFound (unknown country).
func (s *Service) ZipCodesBetween(ctx context.Context, countryID, from, to string, offset, limit int) (ZipCodePage, error) {
	if err := paging.Check(offset, limit); err != nil {
		return ZipCodePage{}, err
	}
	if from == "" {
		return ZipCodePage{}, errs.Invalidf("The parameter [zip_code_from] is required")
	}
	if to == "" {
		return ZipCodePage{}, errs.Invalidf("The parameter [zip_code_to] is required")
	}
	for _, f := range []struct{ name, zip string }{{"zip_code_from", from}, {"zip_code_to", to}} {
		if !zipPattern.MatchString(f.zip) {
			return ZipCodePage{}, errs.Invalidf("Invalid %s: %s. It must be 1 to 10 digits or capital letters", f.name, f.zip)
		}
	}
	if from > to {
		return ZipCodePage{}, errs.Invalidf("zip_code_from %s is after zip_code_to %s", from, to)
	}
	out := ZipCodePage{Results: []ZipCodeDetail{}}
	err := s.view(ctx, func(tx storage.Tx) error {
		out = ZipCodePage{Results: []ZipCodeDetail{}}
		// The range is [from, to] on whole zip codes: the end bound is just
		// past to's key, so longer codes that merely start with to stay out.
		// It is opened before the country is read, so that both go in one
		// round trip; the page's cities, states and countries in one more.
		it := tx.Iterate(storage.Range{Start: zipKey(countryID, from), End: append(zipKey(countryID, to), 0)})
		defer it.Close()
		if _, err := getCountry(tx, countryID); err != nil {
			return err
		}
		page, total, err := scanZipRange(it, offset, limit)
		if err != nil {
			return err
		}
		if err := prefetchZipDetails(tx, page...); err != nil {
			return err
		}
		out.Total = total
		for _, z := range page {
			d, err := zipDetail(tx, z)
			if err != nil {
				return err
			}
			out.Results = append(out.Results, d)
		}
		return nil
	})
	return out, err
}

// scanZipRange counts the zip codes of it and reads those of the page.
func scanZipRange(it storage.Iterator, offset, limit int) ([]ZipCode, int, error) {
	var page []ZipCode
	total := 0
	for ; it.Valid(); it.Next() {
		if total >= offset && len(page) < limit {
			var z ZipCode
			if err := valueJSON(it, &z); err != nil {
				return nil, 0, err
			}
			page = append(page, z)
		}
		total++
	}
	return page, total, nil
}
