package geo

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/internal/teststore"
	"github.com/marketplace/marketplace/storage"
)

var testNow = time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC)

func newLoaded(t *testing.T) (*Service, storage.Store) {
	t.Helper()
	st := teststore.New(t)
	g := New(st, clock.NewManual(testNow))
	if err := g.LoadBuiltin(context.Background()); err != nil {
		t.Fatalf("load builtin: %v", err)
	}
	return g, st
}

func importRec(t *testing.T, g *Service, st storage.Store, kind, data string) error {
	t.Helper()
	return st.Update(context.Background(), func(tx storage.Tx) error {
		ok, err := g.UpsertRecord(tx, kind, json.RawMessage(data))
		if err == nil && !ok {
			t.Fatalf("kind %s not handled", kind)
		}
		return err
	})
}

func TestLoadBuiltin_ShipsTheRequiredSites(t *testing.T) {
	is := is.New(t)
	g, _ := newLoaded(t)
	for id, want := range map[string][3]string{
		"MLA": {"AR", "ARS", "America/Argentina/Buenos_Aires"}, "MLB": {"BR", "BRL", "America/Sao_Paulo"},
		"MLM": {"MX", "MXN", "America/Mexico_City"}, "MLC": {"CL", "CLP", "America/Santiago"},
		"MCO": {"CO", "COP", "America/Bogota"}, "MLU": {"UY", "UYU", "America/Montevideo"}, "MPE": {"PE", "PEN", "America/Lima"},
	} {
		s, err := g.Site(context.Background(), id)
		is.NoErr(err)
		is.Equal([3]string{s.CountryID, s.DefaultCurrencyID, s.TimeZone}, want) // site country, currency, zone
	}
}

func TestSite_FreshStoreStillKnowsEmbeddedSites(t *testing.T) {
	is := is.New(t)
	g := New(teststore.New(t), clock.NewManual(testNow))
	s, err := g.Site(context.Background(), "MLB")
	is.NoErr(err)
	is.Equal(s.DefaultCurrencyID, "BRL")
	_, err = g.Site(context.Background(), "XXX")
	is.True(errs.Is(err, errs.NotFound)) // unknown site
}

func TestLoadBuiltin_AllArgentineStatesAndNoZipCodesForChilePeruEcuador(t *testing.T) {
	is := is.New(t)
	g, st := newLoaded(t)
	ar, err := g.Country(context.Background(), "AR")
	is.NoErr(err)
	is.Equal(len(ar.States), 24) // 23 provinces and the capital
	for _, c := range []string{"CL", "PE", "EC"} {
		page, err := g.ZipCodesBetween(context.Background(), c, "0", "ZZZZZZZZZZ", 0, 10)
		is.NoErr(err)
		is.Equal(page.Total, 0) // no zip codes in this country
	}
	_ = st
}

func TestLoadBuiltin_SameVersionIsNotLoadedTwice(t *testing.T) {
	is := is.New(t)
	g, st := newLoaded(t)
	// A change made behind the dataset's back stays when the version is current.
	is.NoErr(st.Update(context.Background(), func(tx storage.Tx) error {
		return kv.SetJSON(tx, currencyKey("BRL"), Currency{ID: "BRL", Description: "changed", Symbol: "R$", DecimalPlaces: 2})
	}))
	is.NoErr(g.LoadBuiltin(context.Background()))
	c, err := g.Currency(context.Background(), "BRL")
	is.NoErr(err)
	is.Equal(c.Description, "changed")
}

func TestLoadBuiltin_NewerVersionReloadsButKeepsImportedRecords(t *testing.T) {
	is := is.New(t)
	g, st := newLoaded(t)
	is.NoErr(importRec(t, g, st, KindCurrency, `{"id":"ARS","description":"Mi peso","symbol":"$","decimal_places":2}`))
	is.NoErr(st.Update(context.Background(), func(tx storage.Tx) error {
		if err := kv.SetJSON(tx, currencyKey("BRL"), Currency{ID: "BRL", Description: "stale", Symbol: "R$", DecimalPlaces: 2}); err != nil {
			return err
		}
		// An engine with an older dataset wrote this store.
		return kv.SetJSON(tx, versionKey(), DatasetVersion()-1)
	}))
	is.NoErr(g.LoadBuiltin(context.Background()))
	brl, err := g.Currency(context.Background(), "BRL")
	is.NoErr(err)
	is.Equal(brl.Description, "Real") // shipped record refreshed
	ars, err := g.Currency(context.Background(), "ARS")
	is.NoErr(err)
	is.Equal(ars.Description, "Mi peso") // the user's import survives the upgrade
}

func TestUpsertRecord_InvalidRecordsAreRejected(t *testing.T) {
	g, st := newLoaded(t)
	for _, c := range []struct{ kind, data, msg string }{
		{KindCurrency, `{"id":"ars","description":"x","symbol":"$","decimal_places":2}`, "Invalid id: ars. It must be an ISO 4217 code"},
		{KindCurrency, `{"id":"XAA","description":"x","symbol":"$","decimal_places":9}`, "Invalid decimal_places: 9. It must lie between 0 and 4"},
		{KindCurrency, `{"id":"XAA","symbol":"$"}`, "The fields [description] are required for requested call"},
		{KindCurrency, `{"id":"XAA","description":"x","symbol":"$","decimals":2}`, ""},
		{KindCurrency, `[1]`, ""},
		{KindConversion, `{"from":"ARS","to":"ZZZ","rate":1}`, "Currency not found: ZZZ"},
		{KindConversion, `{"from":"ARS","to":"USD","rate":0}`, "Invalid rate: 0. It must be a number between 0.0000000001 and 10000000000"},
		{KindConversion, `{"from":"ARS","to":"USD","rate":"abc"}`, ""},
		{KindState, `{"id":"XX-1","name":"Nowhere","country_id":"XX"}`, "Country not found: XX"},
		{KindCity, `{"id":"C1","name":"Nowhere","state_id":"AR-ZZ"}`, "State not found: AR-ZZ"},
		{KindZipCode, `{"zip_code":"1425","country_id":"AR","state_id":"AR-B","city_id":"TUxBQ0lUQ1BhbGVybW8"}`, "City TUxBQ0lUQ1BhbGVybW8 is not in state AR-B"},
		{KindZipCode, `{"zip_code":"14-25","country_id":"AR","state_id":"AR-C","city_id":"TUxBQ0lUQ1BhbGVybW8"}`, "Invalid zip_code: 14-25. It must be 1 to 10 digits or capital letters"},
		{KindSite, `{"id":"MXX","name":"X","country_id":"AR","default_currency_id":"ARS","time_zone":"Mars/Olympus"}`, "Invalid time_zone: Mars/Olympus. It must be an IANA time zone such as America/Argentina/Buenos_Aires"},
		{KindCountry, `{"id":"AR","name":"Argentina","locale":"es_AR","currency_id":"ARS","decimal_separator":",","thousands_separator":",","time_zone":"GMT-03:00"}`, "decimal_separator and thousands_separator must differ"},
	} {
		err := importRec(t, g, st, c.kind, c.data)
		if !errs.Is(err, errs.Invalid) {
			t.Errorf("%s %s: err = %v, want Invalid", c.kind, c.data, err)
			continue
		}
		if c.msg != "" && errs.As(err).Message != c.msg {
			t.Errorf("%s %s: message %q, want %q", c.kind, c.data, errs.As(err).Message, c.msg)
		}
	}
}

func TestUpsertRecord_UnknownKindIsNotHandled(t *testing.T) {
	is := is.New(t)
	g, st := newLoaded(t)
	is.NoErr(st.Update(context.Background(), func(tx storage.Tx) error {
		ok, err := g.UpsertRecord(tx, "listing_type", json.RawMessage(`{}`))
		is.True(!ok) // not a geo kind
		return err
	}))
}

func TestUpsertRecord_RenamedStateMovesInCountryList(t *testing.T) {
	is := is.New(t)
	g, st := newLoaded(t)
	is.NoErr(importRec(t, g, st, KindState, `{"id":"AR-C","name":"Ciudad Autónoma de Buenos Aires","country_id":"AR"}`))
	ar, err := g.Country(context.Background(), "AR")
	is.NoErr(err)
	is.Equal(len(ar.States), 24) // renamed, not duplicated
	found := 0
	for _, s := range ar.States {
		if s.ID == "AR-C" {
			found++
			is.Equal(s.Name, "Ciudad Autónoma de Buenos Aires")
		}
	}
	is.Equal(found, 1)
}

func TestConversion_OppositeRatioIsInvertedAndImportDatesNow(t *testing.T) {
	is := is.New(t)
	g, st := newLoaded(t)
	is.NoErr(importRec(t, g, st, KindCurrency, `{"id":"XTS","description":"Test","symbol":"T","decimal_places":2}`))
	is.NoErr(importRec(t, g, st, KindConversion, `{"from":"XTS","to":"USD","rate":4}`))
	c, err := g.Conversion(context.Background(), "USD", "XTS")
	is.NoErr(err)
	is.Equal(c.Rate.String(), "0.25")
	is.Equal(c.InvRate.String(), "4")
	is.Equal(c.CreationDate, "2026-03-04T15:00:00.000Z") // the clock dates an undated import
	_, err = g.Conversion(context.Background(), "XTS", "EUR")
	is.Equal(errs.As(err).Message, "Conversion not found: from XTS to EUR")
}

func TestZipCodesBetween_BothEndsIncludedAndLongerCodesOutside(t *testing.T) {
	is := is.New(t)
	g, st := newLoaded(t)
	for _, z := range []string{"10000", "1001"} {
		is.NoErr(importRec(t, g, st, KindZipCode, `{"zip_code":"`+z+`","country_id":"AR","state_id":"AR-C","city_id":"TUxBQ0lUQ1BhbGVybW8"}`))
	}
	page, err := g.ZipCodesBetween(context.Background(), "AR", "1000", "1000", 0, 50)
	is.NoErr(err)
	is.Equal(page.Total, 1) // only 1000 itself, not 10000
	is.Equal(page.Results[0].ZipCode, "1000")
	page, err = g.ZipCodesBetween(context.Background(), "AR", "1000", "1001", 0, 50)
	is.NoErr(err)
	var codes []string
	for _, r := range page.Results {
		codes = append(codes, r.ZipCode)
	}
	is.Equal(codes, []string{"1000", "10000", "1001"}) // text order within the country
}

// A rate outside the bounds would have an inverse that rounds to 0 at the
// inverse's 10 decimals, and a conversion lookup of 0 cannot be inverted.
func TestUpsertRecord_ConversionRateIsBoundedSoThatItsInverseIsNeverZero(t *testing.T) {
	g, st := newLoaded(t)
	// XTS has no shipped ratio: the opposite pair is derived by inversion.
	if err := importRec(t, g, st, KindCurrency, `{"id":"XTS","description":"Test","symbol":"T","decimal_places":2}`); err != nil {
		t.Fatal(err)
	}
	for rate, ok := range map[string]bool{
		"0.0000000001": true, "10000000000": true, "0.00000000009": false, "10000000000.5": false,
	} {
		err := importRec(t, g, st, KindConversion, `{"from":"XTS","to":"ARS","rate":"`+rate+`"}`)
		if (err == nil) != ok {
			t.Errorf("rate %s: err = %v, want accepted %v", rate, err, ok)
			continue
		}
		if !ok {
			continue
		}
		for _, pair := range [][2]string{{"XTS", "ARS"}, {"ARS", "XTS"}} {
			c, err := g.Conversion(context.Background(), pair[0], pair[1])
			if err != nil || c.Rate.Sign() <= 0 || c.InvRate.Sign() <= 0 {
				t.Errorf("rate %s, %s to %s: %+v %v", rate, pair[0], pair[1], c, err)
			}
		}
	}
}

func TestConversion_SameCurrencyIsOne(t *testing.T) {
	is := is.New(t)
	g, _ := newLoaded(t)
	c, err := g.Conversion(context.Background(), "ARS", "ARS")
	is.NoErr(err)
	is.Equal(c.Rate.String(), "1")
	is.Equal(c.InvRate.String(), "1")
}

// TestValidation_TwoBadFieldsNameTheFirstOneEveryTime: when several fields
// are at fault, the message names the first in the documented order, the
// same one on every call.
func TestValidation_TwoBadFieldsNameTheFirstOneEveryTime(t *testing.T) {
	g, st := newLoaded(t)
	for _, c := range []struct {
		name string
		try  func() error
		msg  string
	}{
		{"ZipCodesBetween", func() error {
			_, err := g.ZipCodesBetween(context.Background(), "AR", "a-1", "b-2", 0, 10)
			return err
		}, "Invalid zip_code_from: a-1. It must be 1 to 10 digits or capital letters"},
		{"Conversion", func() error {
			return importRec(t, g, st, KindConversion, `{"from":"ars","to":"usd","rate":1}`)
		}, "Invalid from: ars. It must be an ISO 4217 code"},
		{"CountrySeparators", func() error {
			return importRec(t, g, st, KindCountry, `{"id":"AR","name":"Argentina","locale":"es_AR","currency_id":"ARS","decimal_separator":"x","thousands_separator":"y","time_zone":"GMT-03:00"}`)
		}, `Invalid decimal_separator: "x". It must be one of ".", ",", " " or "'"`},
	} {
		for range 50 {
			err := c.try()
			if !errs.Is(err, errs.Invalid) || errs.As(err).Message != c.msg {
				t.Fatalf("%s: err = %v, want %q", c.name, err, c.msg)
			}
		}
	}
}
