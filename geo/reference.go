package geo

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/storage"
)

//go:embed data/geo.json
var dataFS embed.FS

// dataset is the embedded file's format: the import format plus a version.
type dataset struct {
	Version int64 `json:"version"`
	Records []struct {
		Kind string          `json:"kind"`
		Data json.RawMessage `json:"data"`
	} `json:"records"`
}

type embeddedData struct {
	set        dataset
	sites      []Site
	currencies []Currency
	err        error
}

var (
	embeddedOnce sync.Once
	embeddedVal  embeddedData
)

// embedded parses the embedded dataset once.
func embedded() *embeddedData {
	embeddedOnce.Do(func() {
		b, err := dataFS.ReadFile("data/geo.json")
		if err == nil {
			err = json.Unmarshal(b, &embeddedVal.set)
		}
		if err != nil {
			embeddedVal.err = fmt.Errorf("embedded geo dataset: %w", err)
			return
		}
		for _, r := range embeddedVal.set.Records {
			if r.Kind == KindCurrency {
				var c Currency
				if err := json.Unmarshal(r.Data, &c); err != nil {
					embeddedVal.err = fmt.Errorf("embedded geo dataset: %w", err)
					return
				}
				embeddedVal.currencies = append(embeddedVal.currencies, c)
			}
			if r.Kind != KindSite {
				continue
			}
			var site Site
			if err := json.Unmarshal(r.Data, &site); err != nil {
				embeddedVal.err = fmt.Errorf("embedded geo dataset: %w", err)
				return
			}
			embeddedVal.sites = append(embeddedVal.sites, site)
		}
	})
	return &embeddedVal
}

func embeddedSite(id string) (Site, bool) {
	for _, site := range embedded().sites {
		if site.ID == id {
			return site, true
		}
	}
	return Site{}, false
}

func embeddedCurrency(id string) (Currency, bool) {
	for _, c := range embedded().currencies {
		if c.ID == id {
			return c, true
		}
	}
	return Currency{}, false
}

// DatasetVersion is the version of the embedded dataset.
func DatasetVersion() int64 { return embedded().set.Version }

// LoadBuiltin loads the reference data embedded in the engine into storage,
// once per dataset version: a store that already holds this version (or a
// newer one) is left alone; an older one gets every embedded record again,
// except the records a user imported, which win over the shipped data.
func (s *Service) LoadBuiltin(ctx context.Context) error {
	e := embedded()
	if e.err != nil {
		return e.err
	}
	return s.store.Update(ctx, func(tx storage.Tx) error {
		var stored int64
		err := kv.GetJSON(tx, versionKey(), &stored)
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		if err == nil && stored >= e.set.Version {
			return nil
		}
		for i, r := range e.set.Records {
			if _, err := s.upsert(tx, r.Kind, r.Data, false); err != nil {
				return fmt.Errorf("embedded geo record %d (%s): %w", i, r.Kind, err)
			}
		}
		return kv.SetJSON(tx, versionKey(), e.set.Version)
	})
}

// UpsertRecord writes one imported reference record of kind inside tx. It
// returns false when kind is not one of this package's kinds. Errors:
// Invalid (a malformed record, or one that names a country, state, city or
// currency that does not exist).
func (s *Service) UpsertRecord(tx storage.Tx, kind string, data json.RawMessage) (bool, error) {
	return s.upsert(tx, kind, data, true)
}

// upsert validates and writes one record. An imported record is marked so
// that a later embedded dataset does not overwrite it; an embedded record
// skips what a user imported.
func (s *Service) upsert(tx storage.Tx, kind string, data json.RawMessage, imported bool) (bool, error) {
	var (
		id    string
		write func() error
	)
	switch kind {
	case KindSite:
		var v Site
		if err := DecodeRecord(data, &v); err != nil {
			return true, err
		}
		if err := validateSite(tx, v); err != nil {
			return true, err
		}
		id, write = v.ID, func() error { return kv.SetJSON(tx, siteKey(v.ID), v) }
	case KindCountry:
		var v Country
		if err := DecodeRecord(data, &v); err != nil {
			return true, err
		}
		if err := validateCountry(tx, v); err != nil {
			return true, err
		}
		id, write = v.ID, func() error { return kv.SetJSON(tx, countryKey(v.ID), v) }
	case KindState:
		var v State
		if err := DecodeRecord(data, &v); err != nil {
			return true, err
		}
		if err := validateState(tx, v); err != nil {
			return true, err
		}
		id, write = v.ID, func() error { return writeState(tx, v) }
	case KindCity:
		var v City
		if err := DecodeRecord(data, &v); err != nil {
			return true, err
		}
		if err := validateCity(tx, v); err != nil {
			return true, err
		}
		id, write = v.ID, func() error { return writeCity(tx, v) }
	case KindCurrency:
		var v Currency
		if err := DecodeRecord(data, &v); err != nil {
			return true, err
		}
		if err := validateCurrency(v); err != nil {
			return true, err
		}
		id, write = v.ID, func() error { return kv.SetJSON(tx, currencyKey(v.ID), v) }
	case KindConversion:
		var v Conversion
		if err := DecodeRecord(data, &v); err != nil {
			return true, err
		}
		if err := validateConversion(tx, v); err != nil {
			return true, err
		}
		if v.CreationDate.IsZero() {
			v.CreationDate = s.clock.Now()
		}
		v.CreationDate = v.CreationDate.UTC().Truncate(time.Millisecond)
		id, write = v.From+"/"+v.To, func() error { return kv.SetJSON(tx, conversionKey(v.From, v.To), v) }
	case KindZipCode:
		var v ZipCode
		if err := DecodeRecord(data, &v); err != nil {
			return true, err
		}
		if err := validateZipCode(tx, v); err != nil {
			return true, err
		}
		id, write = v.CountryID+"/"+v.ZipCode, func() error { return kv.SetJSON(tx, zipKey(v.CountryID, v.ZipCode), v) }
	default:
		return false, nil
	}
	if !imported {
		if _, err := tx.Get(importedKey(kind, id)); err == nil {
			return true, nil
		} else if !errors.Is(err, storage.ErrNotFound) {
			return true, err
		}
	}
	if err := write(); err != nil {
		return true, err
	}
	if imported {
		return true, tx.Set(importedKey(kind, id), []byte{})
	}
	return true, nil
}

func exists(tx storage.Tx, key []byte, format string, args ...any) error {
	_, err := tx.Get(key)
	if errors.Is(err, storage.ErrNotFound) {
		return errs.Invalidf(format, args...)
	}
	return err
}

func validateSite(tx storage.Tx, v Site) error {
	if err := requireMatch("id", v.ID, sitePattern, "three capital letters, such as MLA"); err != nil {
		return err
	}
	if err := requireText("name", v.Name); err != nil {
		return err
	}
	if err := requireMatch("country_id", v.CountryID, countryPattern, "an ISO 3166 alpha-2 code"); err != nil {
		return err
	}
	if err := exists(tx, countryKey(v.CountryID), "Country not found: %s", v.CountryID); err != nil {
		return err
	}
	if err := requireMatch("default_currency_id", v.DefaultCurrencyID, currencyPattern, "an ISO 4217 code"); err != nil {
		return err
	}
	if err := exists(tx, currencyKey(v.DefaultCurrencyID), "Currency not found: %s", v.DefaultCurrencyID); err != nil {
		return err
	}
	if v.TimeZone == "" {
		return errs.Invalidf("The fields [time_zone] are required for requested call")
	}
	if _, err := time.LoadLocation(v.TimeZone); err != nil || v.TimeZone == "Local" {
		return errs.Invalidf("Invalid time_zone: %s. It must be an IANA time zone such as America/Argentina/Buenos_Aires", v.TimeZone)
	}
	if v.Domain != "" && !domainPattern.MatchString(v.Domain) {
		return errs.Invalidf("Invalid domain: %s. It must be a host name such as mercadolibre.com.ar", v.Domain)
	}
	for i, c := range v.OtherCurrencyIDs {
		field := fmt.Sprintf("other_currency_ids[%d]", i)
		if err := requireMatch(field, c, currencyPattern, "an ISO 4217 code"); err != nil {
			return err
		}
		if c == v.DefaultCurrencyID || slices.Contains(v.OtherCurrencyIDs[:i], c) {
			return errs.Invalidf("Invalid %s: %s. It is listed already", field, c)
		}
		if err := exists(tx, currencyKey(c), "Currency not found: %s", c); err != nil {
			return err
		}
	}
	return nil
}

func validateCountry(tx storage.Tx, v Country) error {
	if err := requireMatch("id", v.ID, countryPattern, "an ISO 3166 alpha-2 code"); err != nil {
		return err
	}
	if err := requireText("name", v.Name); err != nil {
		return err
	}
	if err := requireText("locale", v.Locale); err != nil {
		return err
	}
	if err := requireMatch("currency_id", v.CurrencyID, currencyPattern, "an ISO 4217 code"); err != nil {
		return err
	}
	if err := exists(tx, currencyKey(v.CurrencyID), "Currency not found: %s", v.CurrencyID); err != nil {
		return err
	}
	for _, f := range []struct{ name, sep string }{{"decimal_separator", v.DecimalSeparator}, {"thousands_separator", v.ThousandsSeparator}} {
		if f.sep != "." && f.sep != "," && f.sep != " " && f.sep != "'" {
			return errs.Invalidf("Invalid %s: %q. It must be one of \".\", \",\", \" \" or \"'\"", f.name, f.sep)
		}
	}
	if v.DecimalSeparator == v.ThousandsSeparator {
		return errs.Invalidf("decimal_separator and thousands_separator must differ")
	}
	if err := requireText("time_zone", v.TimeZone); err != nil {
		return err
	}
	return checkGeo(v.GeoInformation)
}

func validateState(tx storage.Tx, v State) error {
	if err := requireMatch("id", v.ID, idPattern, "1 to 64 letters, digits, '-' or '_'"); err != nil {
		return err
	}
	if err := requireText("name", v.Name); err != nil {
		return err
	}
	if err := requireMatch("country_id", v.CountryID, countryPattern, "an ISO 3166 alpha-2 code"); err != nil {
		return err
	}
	if err := exists(tx, countryKey(v.CountryID), "Country not found: %s", v.CountryID); err != nil {
		return err
	}
	return checkGeo(v.GeoInformation)
}

func validateCity(tx storage.Tx, v City) error {
	if err := requireMatch("id", v.ID, idPattern, "1 to 64 letters, digits, '-' or '_'"); err != nil {
		return err
	}
	if err := requireText("name", v.Name); err != nil {
		return err
	}
	if err := requireMatch("state_id", v.StateID, idPattern, "a state id"); err != nil {
		return err
	}
	if err := exists(tx, stateKey(v.StateID), "State not found: %s", v.StateID); err != nil {
		return err
	}
	return checkGeo(v.GeoInformation)
}

func validateCurrency(v Currency) error {
	if err := requireMatch("id", v.ID, currencyPattern, "an ISO 4217 code"); err != nil {
		return err
	}
	if err := requireText("description", v.Description); err != nil {
		return err
	}
	if err := requireText("symbol", v.Symbol); err != nil {
		return err
	}
	if v.DecimalPlaces < 0 || v.DecimalPlaces > 4 {
		return errs.Invalidf("Invalid decimal_places: %d. It must lie between 0 and 4", v.DecimalPlaces)
	}
	return nil
}

// Bounds of an imported conversion rate.
var (
	minRate = money.MustParse("0.0000000001")
	maxRate = money.MustParse("10000000000")
)

func validateConversion(tx storage.Tx, v Conversion) error {
	for _, f := range []struct{ name, id string }{{"from", v.From}, {"to", v.To}} {
		if err := requireMatch(f.name, f.id, currencyPattern, "an ISO 4217 code"); err != nil {
			return err
		}
		if err := exists(tx, currencyKey(f.id), "Currency not found: %s", f.id); err != nil {
			return err
		}
	}
	if v.From == v.To {
		return errs.Invalidf("A conversion needs two different currencies")
	}
	// The bounds keep the inverse ratio, written with invRatePlaces
	// decimals, from rounding to 0.
	if v.Rate.Cmp(minRate) < 0 || v.Rate.Cmp(maxRate) > 0 {
		return errs.Invalidf("Invalid rate: %s. It must be a number between 0.0000000001 and 10000000000", v.Rate)
	}
	return nil
}

func validateZipCode(tx storage.Tx, v ZipCode) error {
	if err := requireMatch("zip_code", v.ZipCode, zipPattern, "1 to 10 digits or capital letters"); err != nil {
		return err
	}
	if err := requireMatch("country_id", v.CountryID, countryPattern, "an ISO 3166 alpha-2 code"); err != nil {
		return err
	}
	if err := exists(tx, countryKey(v.CountryID), "Country not found: %s", v.CountryID); err != nil {
		return err
	}
	st, err := getState(tx, v.StateID)
	if err != nil {
		if errs.Is(err, errs.NotFound) {
			return errs.Invalidf("State not found: %s", v.StateID)
		}
		return err
	}
	if st.CountryID != v.CountryID {
		return errs.Invalidf("State %s is not in country %s", v.StateID, v.CountryID)
	}
	c, err := getCity(tx, v.CityID)
	if err != nil {
		if errs.Is(err, errs.NotFound) {
			return errs.Invalidf("City not found: %s", v.CityID)
		}
		return err
	}
	if c.StateID != v.StateID {
		return errs.Invalidf("City %s is not in state %s", v.CityID, v.StateID)
	}
	return nil
}

// writeState stores v and moves its entry in the country's by-name index
// when the name or the country changed.
func writeState(tx storage.Tx, v State) error {
	if old, err := getState(tx, v.ID); err == nil {
		if err := tx.Delete(countryStateKey(old.CountryID, old.Name, old.ID)); err != nil {
			return err
		}
	} else if !errs.Is(err, errs.NotFound) {
		return err
	}
	if err := kv.SetJSON(tx, stateKey(v.ID), v); err != nil {
		return err
	}
	return tx.Set(countryStateKey(v.CountryID, v.Name, v.ID), []byte{})
}

// writeCity stores v and moves its entry in the state's by-name index.
func writeCity(tx storage.Tx, v City) error {
	if old, err := getCity(tx, v.ID); err == nil {
		if err := tx.Delete(stateCityKey(old.StateID, old.Name, old.ID)); err != nil {
			return err
		}
	} else if !errs.Is(err, errs.NotFound) {
		return err
	}
	if err := kv.SetJSON(tx, cityKey(v.ID), v); err != nil {
		return err
	}
	return tx.Set(stateCityKey(v.StateID, v.Name, v.ID), []byte{})
}
