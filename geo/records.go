package geo

import (
	"encoding/json"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/money"
)

// Location is a point on the map.
type Location struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
}

// GeoInformation is where a country, state or city lies, as the public API
// shows it.
type GeoInformation struct {
	Location *Location `json:"location"`
}

// Country is a country record.
type Country struct {
	ID                 string          `json:"id"`
	Name               string          `json:"name"`
	Locale             string          `json:"locale"`
	CurrencyID         string          `json:"currency_id"`
	DecimalSeparator   string          `json:"decimal_separator"`
	ThousandsSeparator string          `json:"thousands_separator"`
	TimeZone           string          `json:"time_zone"`
	GeoInformation     *GeoInformation `json:"geo_information"`
}

// State is a state (province, department, region) of a country.
type State struct {
	ID             string          `json:"id"`
	Name           string          `json:"name"`
	CountryID      string          `json:"country_id"`
	GeoInformation *GeoInformation `json:"geo_information"`
}

// City is a city (or a neighbourhood of a capital, as the public API lists
// them) of a state.
type City struct {
	ID             string          `json:"id"`
	Name           string          `json:"name"`
	StateID        string          `json:"state_id"`
	GeoInformation *GeoInformation `json:"geo_information"`
}

// Currency is a currency record.
type Currency struct {
	ID            string `json:"id"`
	Description   string `json:"description"`
	Symbol        string `json:"symbol"`
	DecimalPlaces int    `json:"decimal_places"`
}

// Conversion is the ratio to convert an amount of From into To: amount x
// Rate.
type Conversion struct {
	From         string    `json:"from"`
	To           string    `json:"to"`
	Rate         money.Dec `json:"rate"`
	CreationDate time.Time `json:"creation_date"`
}

// ZipCode places a zip code of a country in a state and a city.
type ZipCode struct {
	ZipCode   string `json:"zip_code"`
	CountryID string `json:"country_id"`
	StateID   string `json:"state_id"`
	CityID    string `json:"city_id"`
}

// Record kinds owned by geo.
const (
	KindSite       = "site"
	KindCountry    = "country"
	KindState      = "state"
	KindCity       = "city"
	KindCurrency   = "currency"
	KindConversion = "currency_conversion"
	KindZipCode    = "zip_code"
)

var (
	idPattern       = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	countryPattern  = regexp.MustCompile(`^[A-Z]{2}$`)
	currencyPattern = regexp.MustCompile(`^[A-Z]{3}$`)
	sitePattern     = regexp.MustCompile(`^[A-Z]{3}$`)
	// domainPattern is a lowercase host name of at least two labels.
	domainPattern = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$`)
	zipPattern    = regexp.MustCompile(`^[0-9A-Z]{1,10}$`)
)

// maxTextLength bounds names and descriptions.
const maxTextLength = 200

// DecodeRecord decodes an imported record's data strictly: an unknown field
// is more likely a typo in a user's file than something to ignore silently.
// Errors: Invalid.
func DecodeRecord(data json.RawMessage, v any) error {
	if len(data) == 0 || string(data) == "null" {
		return errs.Invalidf("The record has no data")
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if e, ok := money.InvalidField(err); ok {
			return e // an amount or rate that is not a number, named
		}
		return errs.Invalidf("Malformed record: %v", err)
	}
	return nil
}

func requireText(field, v string) error {
	if strings.TrimSpace(v) == "" {
		return errs.Invalidf("The fields [%s] are required for requested call", field)
	}
	if utf8.RuneCountInString(v) > maxTextLength || strings.ContainsRune(v, 0) || !utf8.ValidString(v) {
		return errs.Invalidf("Invalid %s: at most %d characters of text", field, maxTextLength)
	}
	return nil
}

func requireMatch(field, v string, re *regexp.Regexp, what string) error {
	if v == "" {
		return errs.Invalidf("The fields [%s] are required for requested call", field)
	}
	if !re.MatchString(v) {
		return errs.Invalidf("Invalid %s: %s. It must be %s", field, v, what)
	}
	return nil
}

func checkGeo(g *GeoInformation) error {
	if g == nil || g.Location == nil {
		return nil
	}
	if g.Location.Latitude < -90 || g.Location.Latitude > 90 || g.Location.Longitude < -180 || g.Location.Longitude > 180 {
		return errs.Invalidf("Invalid geo_information: latitude must lie in [-90, 90] and longitude in [-180, 180]")
	}
	return nil
}
