package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/matryer/is"
	"pgregory.net/rapid"

	"github.com/marketplace/marketplace"
)

// get sends a GET with the token and decodes the answer.
func (ts *testServer) get(path, token string) response {
	ts.t.Helper()
	return ts.do(http.MethodGet, path, token, nil)
}

func TestListingPrices_RoutesAnswerEveryFieldOfTheTable(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	u := ts.mustUser("MLA")

	res := ts.get("/sites/MLA/listing_prices/gold_pro?price=10630", u.Token)
	is.Equal(res.Status, http.StatusOK)
	is.Equal(res.Header.Get("Content-Type"), "application/json; charset=utf-8")
	o := res.Obj()
	for field, want := range map[string]any{
		"listing_type_id": "gold_pro", "listing_type_name": "Premium", "listing_exposure": "highest",
		"requires_picture": true, "currency_id": "ARS", "listing_fee_amount": 0.0, "sale_fee_amount": 3826.8,
		"free_relist": false, "stop_time": "2046-02-27T15:00:00.000Z",
	} {
		is.Equal(o[field], want) // field of the Listing price table
	}
	d := o["sale_fee_details"].(map[string]any)
	is.Equal(d["percentage_fee"], 36.0)
	is.Equal(d["meli_percentage_fee"], 13.0)
	is.Equal(d["financing_add_on_fee"], 23.0)

	// The number is written exactly, not through a float.
	is.True(json.Valid(res.Raw))
	is.True(strings.Contains(string(res.Raw), `"sale_fee_amount":3826.8,`)) // exact digits in the body
}

func TestListingPrices_ArrayOfAllTypesOrOneObjectWithListingTypeID(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	u := ts.mustUser("MLA")

	res := ts.get("/sites/MLA/listing_prices?price=10630&quantity=3", u.Token)
	is.Equal(res.Status, http.StatusOK)
	arr := res.Arr()
	is.Equal(len(arr), 7) // every MLA listing type
	fees := map[string]any{}
	for _, e := range arr {
		m := e.(map[string]any)
		fees[m["listing_type_id"].(string)] = m["sale_fee_amount"]
	}
	is.Equal(fees, map[string]any{"gold_pro": 3826.8, "gold_premium": 0.0, "gold_special": 1381.9, "gold": 0.0, "silver": 0.0, "bronze": 0.0, "free": 0.0})

	res = ts.get("/sites/MLA/listing_prices?price=5000&listing_type_id=gold_special&category_id=MLA1055&currency_id=ARS", u.Token)
	is.Equal(res.Status, http.StatusOK)
	is.Equal(res.Obj()["listing_type_id"], "gold_special") // one object, not an array
	is.Equal(res.Obj()["sale_fee_amount"], 850.0)          // 13% of 5000 + 200 fixed below the threshold
}

// Every combination of the optional query parameters of both routes is
// accepted and shapes the answer: an object exactly when listing_type_id is
// given, fees in currency_id (the site's by default). At price 10630 gold_pro
// costs 36% in ARS and in USD alike (no fixed fee above the threshold), the
// category has no rule of its own and quantity multiplies nothing.
func TestListingPrices_EveryCombinationOfQueryParameters(t *testing.T) {
	ts := newTestServer(t)
	u := ts.mustUser("MLA")
	params := []struct{ name, value string }{
		{"price", "10630"}, {"listing_type_id", "gold_pro"}, {"quantity", "4"},
		{"category_id", "MLA1055"}, {"currency_id", "USD"},
	}
	for mask := 0; mask < 1<<len(params); mask++ {
		var q []string
		has := map[string]bool{}
		for i, p := range params {
			if mask&(1<<i) != 0 {
				q = append(q, p.name+"="+p.value)
				has[p.name] = true
			}
		}
		path := "/sites/MLA/listing_prices?" + strings.Join(q, "&")
		t.Run(strings.Join(q, "&"), func(t *testing.T) {
			res := ts.get(path, u.Token)
			if res.Status != http.StatusOK {
				t.Fatalf("%s: status %d %s", path, res.Status, res.Raw)
			}
			var objs []map[string]any
			if has["listing_type_id"] {
				objs = []map[string]any{res.Obj()}
			} else {
				for _, e := range res.Arr() {
					objs = append(objs, e.(map[string]any))
				}
				if len(objs) != 7 {
					t.Fatalf("%d objects, want one per MLA listing type", len(objs))
				}
			}
			wantCurrency, wantFee := "ARS", 0.0
			if has["currency_id"] {
				wantCurrency = "USD"
			}
			if has["price"] {
				wantFee = 3826.8
			}
			found := false
			for _, o := range objs {
				for _, f := range []string{"listing_type_id", "listing_type_name", "listing_exposure", "requires_picture",
					"currency_id", "listing_fee_amount", "sale_fee_amount", "free_relist", "stop_time"} {
					if _, ok := o[f]; !ok {
						t.Fatalf("field %s missing: %v", f, o)
					}
				}
				if o["currency_id"] != wantCurrency {
					t.Fatalf("currency_id %v, want %s", o["currency_id"], wantCurrency)
				}
				if o["listing_type_id"] == "gold_pro" {
					found = true
					if o["sale_fee_amount"] != wantFee {
						t.Fatalf("gold_pro sale_fee_amount %v, want %v", o["sale_fee_amount"], wantFee)
					}
				}
			}
			if !found {
				t.Fatal("no gold_pro object")
			}
			if has["listing_type_id"] {
				return
			}
			// The same parameters on the listing type's own route: one object.
			one := ts.get("/sites/MLA/listing_prices/gold_pro?"+strings.Join(q, "&"), u.Token)
			if one.Status != http.StatusOK || one.Obj()["sale_fee_amount"] != wantFee || one.Obj()["currency_id"] != wantCurrency {
				t.Fatalf("gold_pro route: %d %s", one.Status, one.Raw)
			}
		})
	}
}

func TestReferenceRoutes_Errors(t *testing.T) {
	ts := newTestServer(t)
	u := ts.mustUser("MLA")
	for _, c := range []struct {
		name, path string
		token      string
		status     int
		message    string
	}{
		{"BadToken", "/currencies", "APP_USR-nope", 401, "Invalid access token"},
		{"UnknownSite", "/sites/XXX/listing_prices", u.Token, 404, "Site not found: XXX"},
		{"UnknownSiteOneType", "/sites/XXX/listing_prices/gold_pro", u.Token, 404, "Site not found: XXX"},
		{"UnknownListingTypePath", "/sites/MLU/listing_prices/gold", u.Token, 404, "Listing type not found: gold for site MLU"},
		{"UnknownListingTypeQuery", "/sites/MLA/listing_prices?listing_type_id=platinum", u.Token, 400, "Invalid listing_type_id: platinum. The site MLA does not offer it"},
		{"BadPrice", "/sites/MLA/listing_prices?price=1,5", u.Token, 400, "Invalid price: 1,5. It must be a non-negative number"},
		{"NegativePrice", "/sites/MLA/listing_prices/gold_pro?price=-3", u.Token, 400, "Invalid price: -3. It must be a non-negative number"},
		{"BadQuantity", "/sites/MLA/listing_prices?quantity=two", u.Token, 400, "Invalid quantity: two. It must be a positive integer"},
		{"BadCategory", "/sites/MLA/listing_prices?category_id=MLB1055", u.Token, 400, "Invalid category_id: MLB1055. It must be the site id followed by digits, such as MLA1055"},
		{"UnknownCurrency", "/sites/MLA/listing_prices?currency_id=XYZ", u.Token, 400, "Invalid currency_id: XYZ"},
		{"UnknownCountry", "/classified_locations/countries/ZZ", u.Token, 404, "Country not found: ZZ"},
		{"UnknownState", "/classified_locations/states/AR-ZZ", u.Token, 404, "State not found: AR-ZZ"},
		{"UnknownCity", "/classified_locations/cities/nowhere", u.Token, 404, "City not found: nowhere"},
		{"UnknownCurrencyID", "/currencies/XYZ", u.Token, 404, "Currency not found: XYZ"},
		{"ConversionMissingFrom", "/currency_conversions/search?to=ARS", u.Token, 400, "The parameter [from] is required"},
		{"ConversionMissingTo", "/currency_conversions/search?from=ARS", u.Token, 400, "The parameter [to] is required"},
		{"ConversionUnknownCurrency", "/currency_conversions/search?from=ARS&to=XYZ", u.Token, 404, "Currency not found: XYZ"},
		{"UnknownZip", "/countries/AR/zip_codes/0001", u.Token, 404, "Zip code not found: 0001"},
		{"ZipUnknownCountry", "/countries/ZZ/zip_codes/1425", u.Token, 404, "Country not found: ZZ"},
		{"RangeUnknownCountry", "/country/ZZ/zip_codes/search_between?zip_code_from=1&zip_code_to=2", u.Token, 404, "Country not found: ZZ"},
		{"RangeMissingFrom", "/country/AR/zip_codes/search_between?zip_code_to=2000", u.Token, 400, "The parameter [zip_code_from] is required"},
		{"RangeReversed", "/country/AR/zip_codes/search_between?zip_code_from=5000&zip_code_to=1000", u.Token, 400, "zip_code_from 5000 is after zip_code_to 1000"},
		{"RangeBadLimit", "/country/AR/zip_codes/search_between?zip_code_from=1000&zip_code_to=2000&limit=-1", u.Token, 400, "Invalid limit: -1. It must be a non-negative integer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, ts.get(c.path, c.token), c.status, c.message)
		})
	}
}

func TestCountries_ListAndOneCountryWithStates(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	u := ts.mustUser("MLA")

	res := ts.get("/classified_locations/countries", u.Token)
	is.Equal(res.Status, http.StatusOK)
	var ar map[string]any
	for _, c := range res.Arr() {
		if m := c.(map[string]any); m["id"] == "AR" {
			ar = m
		}
	}
	is.Equal(ar, map[string]any{"id": "AR", "name": "Argentina", "locale": "es_AR", "currency_id": "ARS"}) // list shape

	res = ts.get("/classified_locations/countries/AR", u.Token)
	is.Equal(res.Status, http.StatusOK)
	o := res.Obj()
	is.Equal(o["decimal_separator"], ",")
	is.Equal(o["thousands_separator"], ".")
	is.Equal(o["time_zone"], "GMT-03:00")
	is.Equal(o["geo_information"], map[string]any{"location": map[string]any{"latitude": -38.416096, "longitude": -63.616673}})
	states := o["states"].([]any)
	is.Equal(len(states), 24)
	is.True(containsRef(states, "AR-C", "Capital Federal"))
}

func containsRef(list []any, id, name string) bool {
	for _, e := range list {
		if m := e.(map[string]any); m["id"] == id && m["name"] == name && len(m) == 2 {
			return true
		}
	}
	return false
}

func TestStateAndCity_Shapes(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	u := ts.mustUser("MLA")

	res := ts.get("/classified_locations/states/AR-C", u.Token)
	is.Equal(res.Status, http.StatusOK)
	o := res.Obj()
	is.Equal(o["id"], "AR-C")
	is.Equal(o["name"], "Capital Federal")
	is.Equal(o["country"], map[string]any{"id": "AR", "name": "Argentina"})
	is.True(o["geo_information"] != nil)
	is.True(containsRef(o["cities"].([]any), "TUxBQ0lUQ1BhbGVybW8", "Palermo"))

	res = ts.get("/classified_locations/cities/TUxBQ0lUQ1BhbGVybW8", u.Token)
	is.Equal(res.Status, http.StatusOK)
	o = res.Obj()
	is.Equal(o["name"], "Palermo")
	is.Equal(o["state"], map[string]any{"id": "AR-C", "name": "Capital Federal"})
	is.Equal(o["country"], map[string]any{"id": "AR", "name": "Argentina"})
	is.True(o["geo_information"] != nil)
}

func TestCurrencies_ListOneAndConversion(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	u := ts.mustUser("MLA")

	res := ts.get("/currencies", u.Token)
	is.Equal(res.Status, http.StatusOK)
	byID := map[string]any{}
	for _, c := range res.Arr() {
		byID[c.(map[string]any)["id"].(string)] = c
	}
	for id, want := range map[string][2]any{
		"ARS": {"$", 2.0}, "BRL": {"R$", 2.0}, "MXN": {"$", 2.0}, "CLP": {"$", 0.0}, "COP": {"$", 0.0},
		"UYU": {"$", 2.0}, "PEN": {"S/", 2.0}, "USD": {"U$S", 2.0},
	} {
		c := byID[id].(map[string]any)
		is.Equal([2]any{c["symbol"], c["decimal_places"]}, want) // symbol and decimal places
	}

	res = ts.get("/currencies/ARS", u.Token)
	is.Equal(res.Status, http.StatusOK)
	is.Equal(res.Obj(), map[string]any{"id": "ARS", "description": "Peso argentino", "symbol": "$", "decimal_places": 2.0})

	res = ts.get("/currency_conversions/search?from=USD&to=ARS", u.Token)
	is.Equal(res.Status, http.StatusOK)
	is.Equal(res.Obj(), map[string]any{"currency_base": "USD", "currency_quote": "ARS", "rate": 1180.0,
		"inv_rate": 0.0008474576, "creation_date": "2025-06-30T12:00:00.000Z"})
}

func TestZipCode_LocationOfACode(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	u := ts.mustUser("MLA")
	res := ts.get("/countries/AR/zip_codes/1425", u.Token)
	is.Equal(res.Status, http.StatusOK)
	is.Equal(res.Obj(), map[string]any{
		"zip_code": "1425",
		"city":     map[string]any{"id": "TUxBQ0lUQ1BhbGVybW8", "name": "Palermo"},
		"state":    map[string]any{"id": "AR-C", "name": "Capital Federal"},
		"country":  map[string]any{"id": "AR", "name": "Argentina"},
	})
}

func TestZipCodesBetween_PagingDefaultsAndBounds(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	u := ts.mustUser("MLA")
	res := ts.get("/country/AR/zip_codes/search_between?zip_code_from=1000&zip_code_to=1900", u.Token)
	is.Equal(res.Status, http.StatusOK)
	o := res.Obj()
	is.Equal(o["paging"], map[string]any{"total": 7.0, "offset": 0.0, "limit": 50.0}) // default limit 50
	var codes []string
	for _, r := range o["results"].([]any) {
		codes = append(codes, r.(map[string]any)["zip_code"].(string))
	}
	is.Equal(codes, []string{"1000", "1113", "1406", "1425", "1426", "1878", "1900"}) // both ends included, in order

	res = ts.get("/country/AR/zip_codes/search_between?zip_code_from=1000&zip_code_to=1900&limit=3&offset=6", u.Token)
	is.Equal(res.Status, http.StatusOK)
	is.Equal(res.Obj()["paging"], map[string]any{"total": 7.0, "offset": 6.0, "limit": 3.0})
	is.Equal(len(res.Obj()["results"].([]any)), 1) // only the last code is left after offset 6
}

// TestZipCodesBetween_AnyLimitAndOffsetWalkEveryCodeOnceInOrder imports a
// random set of zip codes and walks a random range page by page.
func TestZipCodesBetween_AnyLimitAndOffsetWalkEveryCodeOnceInOrder(t *testing.T) {
	ts := newTestServer(t)
	tok := ts.mustUser("MLA").Token
	run := 0
	rapid.Check(t, func(t *rapid.T) {
		// Each check gets a country of its own, so earlier checks' codes
		// stay out of its ranges.
		country := fmt.Sprintf("%c%c", 'A'+run/26%26, 'A'+run%26)
		run++
		recs := []marketplace.ReferenceRecord{
			{Kind: "country", Data: json.RawMessage(fmt.Sprintf(`{"id":"%s","name":"Test %s","locale":"es_AR","currency_id":"ARS","decimal_separator":",","thousands_separator":".","time_zone":"GMT-03:00"}`, country, country))},
			{Kind: "state", Data: json.RawMessage(fmt.Sprintf(`{"id":"%s-S","name":"State","country_id":"%s"}`, country, country))},
			{Kind: "city", Data: json.RawMessage(fmt.Sprintf(`{"id":"%s-C","name":"City","state_id":"%s-S"}`, country, country))},
		}
		set := rapid.SliceOfNDistinct(rapid.IntRange(10000, 10999), 0, 40, rapid.ID[int]).Draw(t, "zip_codes")
		for _, z := range set {
			recs = append(recs, marketplace.ReferenceRecord{Kind: "zip_code",
				Data: json.RawMessage(fmt.Sprintf(`{"zip_code":"%d","country_id":"%s","state_id":"%s-S","city_id":"%s-C"}`, z, country, country, country))})
		}
		if _, err := ts.m.ImportReference(context.Background(), marketplace.ReferenceDocument{Records: recs}); err != nil {
			t.Fatalf("import: %v", err)
		}
		from := rapid.IntRange(10000, 10999).Draw(t, "from")
		to := rapid.IntRange(from, 10999).Draw(t, "to")
		limit := rapid.IntRange(1, 12).Draw(t, "limit")
		start := rapid.IntRange(0, 5).Draw(t, "first_offset")

		want := []string{}
		for _, z := range set {
			if z >= from && z <= to {
				want = append(want, strconv.Itoa(z))
			}
		}
		sort.Strings(want)
		if start > len(want) {
			start = len(want)
		}
		got := []string{}
		for offset := start; ; offset += limit {
			res := ts.get(fmt.Sprintf("/country/%s/zip_codes/search_between?zip_code_from=%d&zip_code_to=%d&limit=%d&offset=%d", country, from, to, limit, offset), tok)
			if res.Status != http.StatusOK {
				t.Fatalf("status %d: %s", res.Status, res.Raw)
			}
			pg := res.Obj()["paging"].(map[string]any)
			if int(pg["total"].(float64)) != len(want) {
				t.Fatalf("total %v, want %d", pg["total"], len(want))
			}
			results := res.Obj()["results"].([]any)
			if len(results) > limit {
				t.Fatalf("%d results for limit %d", len(results), limit)
			}
			for _, r := range results {
				got = append(got, r.(map[string]any)["zip_code"].(string))
			}
			if offset+limit >= len(want) {
				break
			}
		}
		if !reflect.DeepEqual(got, want[start:]) {
			t.Fatalf("walked %v, want %v", got, want[start:])
		}
	})
}

func TestImport_CustomCurrencyListingTypeAndFeeRuleShowThroughRoutes(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	u := ts.mustUser("MLU")
	doc := map[string]any{"records": []any{
		map[string]any{"kind": "currency", "data": map[string]any{"id": "XTS", "description": "Test coin", "symbol": "T$", "decimal_places": 1}},
		map[string]any{"kind": "currency_conversion", "data": map[string]any{"from": "UYU", "to": "XTS", "rate": 2, "creation_date": "2026-01-02T03:04:05Z"}},
		map[string]any{"kind": "listing_type", "data": map[string]any{"site_id": "MLU", "id": "silver", "name": "Plata", "exposure": "mid", "requires_picture": true, "free_relist": true, "duration_days": 30}},
		map[string]any{"kind": "fee_rule", "data": map[string]any{"site_id": "MLU", "listing_type_id": "silver", "category_id": "MLU1234", "meli_percentage_fee": 8.25, "fixed_fee": 10, "fixed_fee_below": 500}},
	}}
	res := ts.do(http.MethodPut, "/operator/reference", testOperatorToken, doc)
	is.Equal(res.Status, http.StatusOK)
	is.Equal(res.Obj()["total"], 4.0)

	res = ts.get("/currencies/XTS", u.Token)
	is.Equal(res.Obj(), map[string]any{"id": "XTS", "description": "Test coin", "symbol": "T$", "decimal_places": 1.0})

	res = ts.get("/currency_conversions/search?from=XTS&to=UYU", u.Token)
	is.Equal(res.Status, http.StatusOK)
	is.Equal(res.Obj()["rate"], 0.5) // the opposite ratio, inverted

	// 8.25% of 300 XTS = 24.75, plus 10 UYU = 20 XTS below 500 UYU = 1000 XTS: 44.75, rounded to 1 place.
	res = ts.get("/sites/MLU/listing_prices/silver?price=300&category_id=MLU1234&currency_id=XTS", u.Token)
	is.Equal(res.Status, http.StatusOK)
	is.Equal(res.Obj()["listing_type_name"], "Plata")
	is.Equal(res.Obj()["currency_id"], "XTS")
	is.Equal(res.Obj()["sale_fee_amount"], 44.8)

	res = ts.get("/sites/MLU/listing_prices?price=300", u.Token)
	is.Equal(len(res.Arr()), 4) // the imported type joins the site's three
}

func TestImport_InvalidRecordChangesNothing(t *testing.T) {
	ts := newTestServer(t)
	u := ts.mustUser("MLA")
	doc := map[string]any{"records": []any{
		map[string]any{"kind": "currency", "data": map[string]any{"id": "XTS", "description": "Test coin", "symbol": "T$", "decimal_places": 1}},
		map[string]any{"kind": "fee_rule", "data": map[string]any{"site_id": "MLA", "listing_type_id": "gold_pro", "meli_percentage_fee": -5}},
	}}
	res := ts.do(http.MethodPut, "/operator/reference", testOperatorToken, doc)
	wantError(t, res, http.StatusBadRequest, "Record 1 (fee_rule): Invalid meli_percentage_fee: -5. It must not be negative")
	wantError(t, ts.get("/currencies/XTS", u.Token), http.StatusNotFound, "Currency not found: XTS")
}

// benchReference compares a reference route through the whole stack
// (routing, token lookup, storage reads, fee math, JSON) with a bare
// httprouter handler on the same route pattern answering the same bytes.
func benchReference(b *testing.B, pattern, target string) {
	ts := newTestServer(b)
	tok := ts.mustUser("MLA").Token
	res := ts.get(target, tok)
	if res.Status != http.StatusOK {
		b.Fatalf("%s: %d %s", target, res.Status, res.Raw)
	}
	b.Run("stack", func(b *testing.B) { benchServe(b, ts.handler, http.MethodGet, target, tok) })
	b.Run("bare", func(b *testing.B) {
		benchServe(b, bareHandler(http.MethodGet, pattern, res.Raw), http.MethodGet, target, tok)
	})
}

// BenchmarkListingPricesAllTypes prices the seven MLA listing types.
func BenchmarkListingPricesAllTypes(b *testing.B) {
	benchReference(b, "/sites/:site_id/listing_prices", "/sites/MLA/listing_prices?price=10630&category_id=MLA1051")
}

// BenchmarkListingPrices is the lookup that go run ./bench measures: the
// seven MLA listing types at one price.
func BenchmarkListingPrices(b *testing.B) {
	benchReference(b, "/sites/:site_id/listing_prices", "/sites/MLA/listing_prices?price=10630")
}

// BenchmarkListingPriceOneType prices one listing type in another currency
// than the site's, below the fixed fee's threshold.
func BenchmarkListingPriceOneType(b *testing.B) {
	benchReference(b, "/sites/:site_id/listing_prices/:listing_type_id", "/sites/MLA/listing_prices/gold_special?price=5.5&currency_id=USD&quantity=2")
}

// BenchmarkZipCodeLookup looks one zip code up.
func BenchmarkZipCodeLookup(b *testing.B) {
	benchReference(b, "/countries/:country_id/zip_codes/:zip_code", "/countries/AR/zip_codes/1425")
}

// TestImportedSite_ItsDomainAndOtherCurrenciesApplyToItsItems: a site's web
// domain and the currencies besides its default are data of the site, so a
// site imported with them gets permalinks on its domain and items in those
// currencies, and one imported without a domain gets the generic domain.
func TestImportedSite_ItsDomainAndOtherCurrenciesApplyToItsItems(t *testing.T) {
	ts := newTestServer(t)
	res := ts.do("PUT", "/operator/reference", testOperatorToken, map[string]any{"records": []any{
		map[string]any{"kind": "site", "data": map[string]any{"id": "MLX", "name": "Equis", "country_id": "AR",
			"default_currency_id": "ARS", "time_zone": "America/Argentina/Buenos_Aires",
			"domain": "equis.example.com", "other_currency_ids": []string{"USD"}}},
		map[string]any{"kind": "site", "data": map[string]any{"id": "MLY", "name": "Ye", "country_id": "AR",
			"default_currency_id": "ARS", "time_zone": "America/Argentina/Buenos_Aires"}},
	}})
	if res.Status != http.StatusOK {
		t.Fatalf("import: %d %s", res.Status, res.Raw)
	}
	publish := func(site, currency string) response {
		u := ts.mustUser(site)
		return ts.do("POST", "/items", u.Token, map[string]any{"title": "Mate de calabaza", "category_id": site + "1055",
			"price": 10, "listing_type_id": "gold_special", "currency_id": currency, "available_quantity": 1})
	}
	res = publish("MLX", "USD")
	if res.Status != http.StatusCreated {
		t.Fatalf("publish in USD on MLX: %d %s", res.Status, res.Raw)
	}
	if got := res.Obj()["permalink"].(string); !strings.HasPrefix(got, "https://articulo.equis.example.com/MLX-") {
		t.Errorf("permalink %q, want one on the site's domain", got)
	}
	wantError(t, publish("MLY", "USD"), http.StatusBadRequest, "Invalid currency_id: USD. Valid values for site MLY are: [ARS]")
	res = publish("MLY", "ARS")
	if got := res.Obj()["permalink"].(string); !strings.HasPrefix(got, "https://articulo.mercadolibre.com/MLY-") {
		t.Errorf("permalink %q, want the generic domain", got)
	}
}

// TestImportSite_BadDomainOrOtherCurrencyIsRefusedNamingTheField checks the
// site's own fields in their order.
func TestImportSite_BadDomainOrOtherCurrencyIsRefusedNamingTheField(t *testing.T) {
	ts := newTestServer(t)
	site := func(extra map[string]any) map[string]any {
		data := map[string]any{"id": "MLX", "name": "Equis", "country_id": "AR", "default_currency_id": "ARS",
			"time_zone": "America/Argentina/Buenos_Aires"}
		for k, v := range extra {
			data[k] = v
		}
		return map[string]any{"records": []any{map[string]any{"kind": "site", "data": data}}}
	}
	for _, c := range []struct {
		extra map[string]any
		msg   string
	}{
		{map[string]any{"domain": "not a host"}, "Invalid domain: not a host. It must be a host name such as mercadolibre.com.ar"},
		{map[string]any{"domain": "EQUIS.COM"}, "Invalid domain: EQUIS.COM. It must be a host name such as mercadolibre.com.ar"},
		{map[string]any{"other_currency_ids": []string{"usd"}}, "Invalid other_currency_ids[0]: usd. It must be an ISO 4217 code"},
		{map[string]any{"other_currency_ids": []string{"USD", "ARS"}}, "Invalid other_currency_ids[1]: ARS. It is listed already"},
		{map[string]any{"other_currency_ids": []string{"USD", "USD"}}, "Invalid other_currency_ids[1]: USD. It is listed already"},
		{map[string]any{"other_currency_ids": []string{"QQQ"}}, "Currency not found: QQQ"},
	} {
		res := ts.do("PUT", "/operator/reference", testOperatorToken, site(c.extra))
		if res.Status != http.StatusBadRequest || !strings.Contains(string(res.Raw), c.msg) {
			t.Errorf("%v: %d %s; want 400 with %q", c.extra, res.Status, res.Raw, c.msg)
		}
	}
}
