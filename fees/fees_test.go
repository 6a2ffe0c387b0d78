package fees_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/matryer/is"
	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/fees"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/internal/teststore"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/storage"
)

var testNow = time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC)

type env struct {
	st   storage.Store
	geo  *geo.Service
	fees *fees.Service
}

func newEnv(t testing.TB) env {
	t.Helper()
	st := teststore.New(t)
	clk := clock.NewManual(testNow)
	g := geo.New(st, clk)
	f := fees.New(st, clk, g)
	ctx := context.Background()
	if err := g.LoadBuiltin(ctx); err != nil {
		t.Fatalf("load geo: %v", err)
	}
	if err := f.LoadBuiltin(ctx); err != nil {
		t.Fatalf("load fees: %v", err)
	}
	return env{st: st, geo: g, fees: f}
}

func (e env) importRec(t testing.TB, kind, data string) error {
	t.Helper()
	return e.st.Update(context.Background(), func(tx storage.Tx) error {
		if ok, err := e.geo.UpsertRecord(tx, kind, json.RawMessage(data)); ok || err != nil {
			return err
		}
		ok, err := e.fees.UpsertRecord(tx, kind, json.RawMessage(data))
		if err == nil && !ok {
			t.Fatalf("kind %s not handled", kind)
		}
		return err
	})
}

func (e env) one(t testing.TB, site, lt string, q fees.Query) fees.ListingPrice {
	t.Helper()
	lp, err := e.fees.ListingPrice(context.Background(), site, lt, q)
	if err != nil {
		t.Fatalf("ListingPrice(%s, %s, %+v): %v", site, lt, q, err)
	}
	return lp
}

// places is the decimal places of a currency, as the reference data has it.
func (e env) places(t interface {
	Helper()
	Fatal(...any)
}, currencyID string) int {
	t.Helper()
	c, err := e.geo.Currency(context.Background(), currencyID)
	if err != nil {
		t.Fatal(err)
	}
	return c.DecimalPlaces
}

// pricesAround are prices that exercise a rule: the smallest unit of the
// currency, a price just below the fixed fee's threshold, the threshold,
// above it, and prices whose fee needs rounding.
func pricesAround(r fees.Rule, places int) []string {
	unit := money.MustParse("1e-" + strconv.Itoa(places))
	out := []string{unit.String(), "1", "10630", "12345", "10000.05", "999999.99"}
	if b := r.FixedFeeBelow; b.Sign() > 0 {
		out = append(out, b.Sub(unit).String(), b.String(), b.Add(unit).String())
	}
	return out
}

func TestListingPrice_SaleFeeFollowsTheRuleOfEveryShippedListingType(t *testing.T) {
	e := newEnv(t)
	for _, r := range shippedRules(t) {
		site, err := e.geo.Site(context.Background(), r.SiteID)
		if err != nil {
			t.Fatal(err)
		}
		places := e.places(t, site.DefaultCurrencyID)
		category := ""
		if r.CategoryID != "general" {
			category = r.CategoryID
		}
		for _, price := range pricesAround(r, places) {
			lp := e.one(t, r.SiteID, r.ListingTypeID, fees.Query{Price: price, CategoryID: category})
			sale, fixed := feeModel(r, price, "1", places)
			d := lp.SaleFeeDetails
			if lp.SaleFeeAmount.String() != sale || d.FixedFee.String() != fixed || d.GrossAmount.String() != sale {
				t.Errorf("%s %s %s at %s: sale fee %s (fixed %s), want %s (fixed %s) by the rule %+v",
					r.SiteID, r.ListingTypeID, r.CategoryID, price, lp.SaleFeeAmount, d.FixedFee, sale, fixed, r)
			}
			if d.MeliPercentageFee.Cmp(r.MeliPercentageFee) != 0 || d.FinancingAddOnFee.Cmp(r.FinancingAddOnFee) != 0 ||
				d.PercentageFee.Cmp(r.MeliPercentageFee.Add(r.FinancingAddOnFee)) != 0 {
				t.Errorf("%s %s %s: percentages %+v, want those of the rule %+v", r.SiteID, r.ListingTypeID, r.CategoryID, d, r)
			}
			if lp.ListingFeeAmount.Cmp(r.ListingFee.Round(int32(places))) != 0 || lp.CurrencyID != site.DefaultCurrencyID {
				t.Errorf("%s %s: listing fee %s %s, want %s %s", r.SiteID, r.ListingTypeID, lp.ListingFeeAmount, lp.CurrencyID, r.ListingFee, site.DefaultCurrencyID)
			}
			if lp.SaleFeeAmount.Places() > int32(places) {
				t.Errorf("%s at %s: %s has more decimals than %s writes", r.SiteID, price, lp.SaleFeeAmount, lp.CurrencyID)
			}
		}
	}
}

func TestListingPrice_CategoryWithoutARuleOfItsOwnIsPricedByTheGeneralRule(t *testing.T) {
	e := newEnv(t)
	general := shippedRule(t, "MLA", "gold_special", "general")
	own := shippedRule(t, "MLA", "gold_special", "MLA1051")
	if own.CategoryID != "MLA1051" || own.MeliPercentageFee.Cmp(general.MeliPercentageFee) == 0 {
		t.Fatalf("the dataset no longer has a category rule that differs from the general one: %+v", own)
	}
	for category, r := range map[string]fees.Rule{"MLA99999": general, "": general, "MLA1051": own} {
		lp := e.one(t, "MLA", "gold_special", fees.Query{Price: "20000", CategoryID: category})
		if want, _ := feeModel(r, "20000", "1", 2); lp.SaleFeeAmount.String() != want {
			t.Errorf("category %q: sale fee %s, want %s", category, lp.SaleFeeAmount, want)
		}
	}
}

func TestListingPrice_QuantityDoesNotMultiplyTheSaleFee(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	want, _ := feeModel(shippedRule(t, "MLA", "gold_pro", "general"), "10630", "1", 2)
	for _, q := range []string{"1", "3", "250"} {
		lp := e.one(t, "MLA", "gold_pro", fees.Query{Price: "10630", Quantity: q})
		is.Equal(lp.SaleFeeAmount.String(), want) // per unit, whatever the quantity
	}
}

func TestListingPrices_AllTypesOfTheSiteFromMostExposed(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	all, err := e.fees.ListingPrices(context.Background(), "MLA", fees.Query{Price: "10630"})
	is.NoErr(err)
	offered := map[string]bool{}
	for _, r := range shippedRules(t) {
		if r.SiteID == "MLA" {
			offered[r.ListingTypeID] = true
		}
	}
	var ids, want []string
	for _, lp := range all {
		ids = append(ids, lp.ListingTypeID)
	}
	for _, id := range fees.ListingTypeIDs { // most exposed first
		if offered[id] {
			want = append(want, id)
		}
	}
	is.Equal(ids, want)
	one, err := e.fees.ListingPrices(context.Background(), "MLA", fees.Query{Price: "10630", ListingTypeID: "gold_special"})
	is.NoErr(err)
	is.Equal(len(one), 1)
	sale, _ := feeModel(shippedRule(t, "MLA", "gold_special", "general"), "10630", "1", 2)
	is.Equal(one[0].SaleFeeAmount.String(), sale)
}

func TestListingPrice_RoundsByCurrencyDecimalPlaces(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct{ site, currency, price string }{
		{"MLC", "CLP", "12345"}, {"MCO", "COP", "12345"}, {"MLA", "ARS", "10000.05"}, {"MLB", "BRL", "99.99"},
	} {
		places := e.places(t, c.currency)
		lp := e.one(t, c.site, "gold_special", fees.Query{Price: c.price})
		want, _ := feeModel(shippedRule(t, c.site, "gold_special", "general"), c.price, "1", places)
		if lp.SaleFeeAmount.String() != want || lp.SaleFeeAmount.Places() > int32(places) {
			t.Errorf("%s at %s: %s, want %s (%d decimal places)", c.site, c.price, lp.SaleFeeAmount, want, places)
		}
	}
}

func TestListingPrice_FixedAmountsAreConvertedToTheAskedCurrency(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	const rate = "0.001"
	is.NoErr(e.importRec(t, geo.KindConversion, `{"from":"ARS","to":"USD","rate":`+rate+`}`))
	r := shippedRule(t, "MLA", "gold_special", "general")
	threshold := r.FixedFeeBelow.Mul(money.MustParse(rate)) // in USD
	for _, price := range []string{"5", threshold.Sub(money.MustParse("0.01")).String(), threshold.String()} {
		lp := e.one(t, "MLA", "gold_special", fees.Query{Price: price, CurrencyID: "USD"})
		is.Equal(lp.CurrencyID, "USD")
		want, _ := feeModel(r, price, rate, e.places(t, "USD"))
		is.Equal(lp.SaleFeeAmount.String(), want) // the rule's ARS amounts and threshold converted
	}
}

func TestListingPrice_BadInputIsRejected(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, c := range []struct {
		site, lt string
		q        fees.Query
		kind     errs.Kind
		msg      string
	}{
		{"XXX", "gold_pro", fees.Query{}, errs.NotFound, "Site not found: XXX"},
		{"MLA", "platinum", fees.Query{}, errs.NotFound, "Listing type not found: platinum for site MLA"},
		{"MLU", "gold", fees.Query{}, errs.NotFound, "Listing type not found: gold for site MLU"},
		{"MLA", "gold_pro", fees.Query{Price: "-1"}, errs.Invalid, "Invalid price: -1. It must be a non-negative number"},
		{"MLA", "gold_pro", fees.Query{Price: "abc"}, errs.Invalid, "Invalid price: abc. It must be a non-negative number"},
		{"MLA", "gold_pro", fees.Query{Quantity: "0"}, errs.Invalid, "Invalid quantity: 0. It must be a positive integer"},
		{"MLA", "gold_pro", fees.Query{CategoryID: "MLB1055"}, errs.Invalid, "Invalid category_id: MLB1055. It must be the site id followed by digits, such as MLA1055"},
		{"MLA", "gold_pro", fees.Query{CurrencyID: "XYZ"}, errs.Invalid, "Invalid currency_id: XYZ"},
	} {
		_, err := e.fees.ListingPrice(ctx, c.site, c.lt, c.q)
		if !errs.Is(err, c.kind) || errs.As(err).Message != c.msg {
			t.Errorf("%s %s %+v: err = %v, want %v %q", c.site, c.lt, c.q, err, c.kind, c.msg)
		}
	}
	_, err := e.fees.ListingPrices(ctx, "MLU", fees.Query{ListingTypeID: "gold"})
	if !errs.Is(err, errs.Invalid) || errs.As(err).Message != "Invalid listing_type_id: gold. The site MLU does not offer it" {
		t.Errorf("listing_type_id not on site: %v", err)
	}
}

func TestListingPrice_CurrencyWithoutARatioFromTheRuleCurrencyIsRejected(t *testing.T) {
	e := newEnv(t)
	if err := e.importRec(t, geo.KindCurrency, `{"id":"XTS","description":"Test","symbol":"T","decimal_places":2}`); err != nil {
		t.Fatal(err)
	}
	_, err := e.fees.ListingPrice(context.Background(), "MLA", "gold_pro", fees.Query{Price: "100", CurrencyID: "XTS"})
	if !errs.Is(err, errs.Invalid) || errs.As(err).Message != "Invalid currency_id: XTS. There is no conversion from ARS" {
		t.Fatalf("err = %v", err)
	}
}

func TestListingPrice_StopTimeIsNowPlusTheTypeDuration(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	is.Equal(e.one(t, "MLA", "free", fees.Query{}).StopTime, "2026-05-03T15:00:00.000Z")     // 60 days
	is.Equal(e.one(t, "MLA", "gold_pro", fees.Query{}).StopTime, "2046-02-27T15:00:00.000Z") // 7300 days
}

func TestUpsertRecord_InvalidFeeRecordsAreRejected(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct{ kind, data, msg string }{
		{fees.KindListingType, `{"site_id":"MLU","id":"platinum","name":"P","exposure":"high","duration_days":1}`, "Invalid id: platinum. It must be one of gold_pro, gold_premium, gold_special, gold, silver, bronze, free"},
		{fees.KindListingType, `{"site_id":"MLU","id":"gold","name":"Oro","exposure":"top","duration_days":1}`, `Invalid exposure: "top". It must be one of highest, high, mid, low, lowest`},
		{fees.KindListingType, `{"site_id":"ZZZ","id":"gold","name":"Oro","exposure":"high","duration_days":1}`, "Site not found: ZZZ"},
		{fees.KindRule, `{"site_id":"MLU","listing_type_id":"gold","meli_percentage_fee":10}`, "Listing type gold is not offered on site MLU; import it first"},
		{fees.KindRule, `{"site_id":"MLA","listing_type_id":"gold","meli_percentage_fee":-1}`, "Invalid meli_percentage_fee: -1. It must not be negative"},
		{fees.KindRule, `{"site_id":"MLA","listing_type_id":"gold","meli_percentage_fee":90,"financing_add_on_fee":11}`, "meli_percentage_fee plus financing_add_on_fee must not exceed 100"},
		{fees.KindRule, `{"site_id":"MLA","listing_type_id":"gold","category_id":"MLA","meli_percentage_fee":1}`, "Invalid category_id: MLA. It must be the site id followed by digits, such as MLA1055"},
		{fees.KindRule, `{"site_id":"MLA","listing_type_id":"gold","currency_id":"QQQ"}`, "Currency not found: QQQ"},
		{fees.KindRule, `{"site_id":"MLA","listing_type_id":"gold","fixed_fee":true}`, "Invalid fixed_fee: true. It must be a decimal number such as 1500 or 1500.50"},
		{fees.KindRule, `{"site_id":"MLA","listing_type_id":"gold","meli_percentage_fee":"abc"}`, "Invalid meli_percentage_fee: abc. It must be a decimal number such as 1500 or 1500.50"},
	} {
		err := e.importRec(t, c.kind, c.data)
		if !errs.Is(err, errs.Invalid) || errs.As(err).Message != c.msg {
			t.Errorf("%s: err = %v, want %q", c.data, err, c.msg)
		}
	}
}

func TestUpsertRecord_ImportedListingTypeAndRuleAreUsed(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	is.NoErr(e.importRec(t, fees.KindListingType, `{"site_id":"MLU","id":"gold","name":"Oro","exposure":"mid","requires_picture":true,"duration_days":30}`))
	rule := `{"site_id":"MLU","listing_type_id":"gold","meli_percentage_fee":7.5,"fixed_fee":20}`
	is.NoErr(e.importRec(t, fees.KindRule, rule))
	var r fees.Rule
	is.NoErr(json.Unmarshal([]byte(rule), &r))
	lp := e.one(t, "MLU", "gold", fees.Query{Price: "1000"})
	want, fixed := feeModel(r, "1000", "1", e.places(t, "UYU"))
	is.Equal(lp.SaleFeeAmount.String(), want)                // the imported rule's figures
	is.Equal(lp.SaleFeeDetails.FixedFee.String(), fixed)     // no threshold means every price
	is.True(lp.SaleFeeDetails.FixedFee.Cmp(r.FixedFee) == 0) // ... so the fixed fee applies at 1000
	is.Equal(lp.ListingTypeName, "Oro")
}

// TestSaleFee_IsPricePercentagePlusFixedRounded checks the fee rule on
// any price, site and listing type, against feeModel over the shipped rule.
func TestSaleFee_IsPricePercentagePlusFixedRounded(t *testing.T) {
	e := newEnv(t)
	rules := shippedRules(t)
	rapid.Check(t, func(t *rapid.T) {
		r := rapid.SampledFrom(rules).Draw(t, "rule")
		site, err := e.geo.Site(context.Background(), r.SiteID)
		if err != nil {
			t.Fatal(err)
		}
		places := e.places(t, site.DefaultCurrencyID)
		units := rapid.Int64Range(0, 100_000_000).Draw(t, "price_units")
		price := money.FromInt(units).Quo(money.MustParse("1e"+strconv.Itoa(places)), int32(places)).String()
		category := ""
		if r.CategoryID != "general" {
			category = r.CategoryID
		}
		lp, err := e.fees.ListingPrice(context.Background(), r.SiteID, r.ListingTypeID, fees.Query{Price: price, CategoryID: category})
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := feeModel(r, price, "1", places); lp.SaleFeeAmount.String() != want {
			t.Fatalf("%+v at %s: %s, want %s", r, price, lp.SaleFeeAmount, want)
		}
	})
}

// TestValidation_TwoNegativeFeesNameTheFirstOneEveryTime: the fee fields
// are checked in their documented order, so the same field is named on
// every call.
func TestValidation_TwoNegativeFeesNameTheFirstOneEveryTime(t *testing.T) {
	e := newEnv(t)
	for range 50 {
		err := e.importRec(t, fees.KindRule, `{"site_id":"MLA","listing_type_id":"gold","listing_fee":-2,"fixed_fee":-1,"meli_percentage_fee":-3}`)
		if !errs.Is(err, errs.Invalid) || errs.As(err).Message != "Invalid meli_percentage_fee: -3. It must not be negative" {
			t.Fatalf("err = %v", err)
		}
	}
}
