package fees_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/matryer/is"
	"pgregory.net/rapid"

	"marketplace/clock"
	"marketplace/errs"
	"marketplace/fees"
	"marketplace/geo"
	"marketplace/money"
	"marketplace/storage"
	"marketplace/storage/teststore"
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
	g := geo.New(st)
	g.UseClock(clk)
	f := fees.New(st, g)
	f.UseClock(clk)
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

func TestListingPrice_MLAGoldProAt10630Is3826Point8(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	lp := e.one(t, "MLA", "gold_pro", fees.Query{Price: "10630"})
	is.Equal(lp.SaleFeeAmount.String(), "3826.8")
	is.Equal(lp.SaleFeeDetails.PercentageFee.String(), "36")
	is.Equal(lp.SaleFeeDetails.FixedFee.String(), "0") // above the threshold
	is.Equal(lp.CurrencyID, "ARS")
	is.Equal(lp.ListingTypeName, "Premium")
	is.Equal(lp.ListingExposure, "highest")
}

func TestListingPrice_QuantityDoesNotMultiplyTheSaleFee(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	for _, q := range []string{"1", "3", "250"} {
		lp := e.one(t, "MLA", "gold_pro", fees.Query{Price: "10630", Quantity: q})
		is.Equal(lp.SaleFeeAmount.String(), "3826.8") // per unit, whatever the quantity
	}
}

func TestListingPrice_MLAGeneralPercentages(t *testing.T) {
	e := newEnv(t)
	for lt, want := range map[string]string{"gold_special": "13", "gold_pro": "36"} {
		lp := e.one(t, "MLA", lt, fees.Query{Price: "20000", CategoryID: "MLA99999"})
		if lp.SaleFeeDetails.PercentageFee.String() != want {
			t.Errorf("%s percentage = %s, want %s", lt, lp.SaleFeeDetails.PercentageFee, want)
		}
		wantFee := money.FromInt(20000).Percent(money.MustParse(want)).String()
		if lp.SaleFeeAmount.String() != wantFee {
			t.Errorf("%s sale fee = %s, want %s", lt, lp.SaleFeeAmount, wantFee)
		}
	}
}

func TestListingPrice_MLAFixedFeeOf200BelowThresholdOnly(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct {
		price, lt, fee, fixed string
	}{
		{"6649", "gold_special", "1064.37", "200"}, // 864.37 + 200
		{"9999.99", "gold_special", "1499.9987", "200"},
		{"10000", "gold_special", "1300", "0"}, // the threshold itself pays no fixed fee
		{"10345", "gold_special", "1344.85", "0"},
		{"5000", "gold_pro", "2000", "200"}, // 1800 + 200
		{"1", "gold_pro", "200.36", "200"},
	} {
		lp := e.one(t, "MLA", c.lt, fees.Query{Price: c.price})
		want := money.MustParse(c.fee).Round(2).String()
		if lp.SaleFeeAmount.String() != want || lp.SaleFeeDetails.FixedFee.String() != c.fixed {
			t.Errorf("%s at %s: sale fee %s (fixed %s), want %s (fixed %s)", c.lt, c.price, lp.SaleFeeAmount, lp.SaleFeeDetails.FixedFee, want, c.fixed)
		}
	}
}

func TestListingPrice_FreeAndLegacyTypesCostNothing(t *testing.T) {
	e := newEnv(t)
	for _, lt := range []string{"free", "gold_premium", "gold", "silver", "bronze"} {
		lp := e.one(t, "MLA", lt, fees.Query{Price: "5000"})
		if !lp.SaleFeeAmount.IsZero() || !lp.ListingFeeAmount.IsZero() {
			t.Errorf("%s: sale %s listing %s, want 0 and 0", lt, lp.SaleFeeAmount, lp.ListingFeeAmount)
		}
	}
}

func TestListingPrices_AllTypesOfTheSiteFromMostExposed(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	all, err := e.fees.ListingPrices(context.Background(), "MLA", fees.Query{Price: "10630"})
	is.NoErr(err)
	var ids []string
	for _, lp := range all {
		ids = append(ids, lp.ListingTypeID)
	}
	is.Equal(ids, []string{"gold_pro", "gold_premium", "gold_special", "gold", "silver", "bronze", "free"})
	one, err := e.fees.ListingPrices(context.Background(), "MLA", fees.Query{Price: "10630", ListingTypeID: "gold_special"})
	is.NoErr(err)
	is.Equal(len(one), 1)
	is.Equal(one[0].SaleFeeAmount.String(), "1381.9")
}

func TestListingPrice_CategoryRuleWinsOverGeneral(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	lp := e.one(t, "MLA", "gold_special", fees.Query{Price: "20000", CategoryID: "MLA1051"})
	is.Equal(lp.SaleFeeDetails.PercentageFee.String(), "11.5")
	is.Equal(lp.SaleFeeAmount.String(), "2300")
}

func TestListingPrice_RoundsByCurrencyDecimalPlaces(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	// CLP has no decimals: 14% of 12345 is 1728.3.
	lp := e.one(t, "MLC", "gold_special", fees.Query{Price: "12345"})
	is.Equal(lp.SaleFeeAmount.String(), "1728")
	// ARS has two: 13% of 10000.05 is 1300.0065.
	lp = e.one(t, "MLA", "gold_special", fees.Query{Price: "10000.05"})
	is.Equal(lp.SaleFeeAmount.String(), "1300.01")
}

func TestListingPrice_FixedAmountsAreConvertedToTheAskedCurrency(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	is.NoErr(e.importRec(t, geo.KindConversion, `{"from":"ARS","to":"USD","rate":0.001}`))
	// Threshold 10000 ARS = 10 USD; a 5 USD item pays 13% + 200 ARS = 0.65 + 0.20.
	lp := e.one(t, "MLA", "gold_special", fees.Query{Price: "5", CurrencyID: "USD"})
	is.Equal(lp.CurrencyID, "USD")
	is.Equal(lp.SaleFeeAmount.String(), "0.85")
	// 10 USD is at the converted threshold: no fixed fee.
	lp = e.one(t, "MLA", "gold_special", fees.Query{Price: "10", CurrencyID: "USD"})
	is.Equal(lp.SaleFeeAmount.String(), "1.3")
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
	is.NoErr(e.importRec(t, fees.KindRule, `{"site_id":"MLU","listing_type_id":"gold","meli_percentage_fee":7.5,"fixed_fee":20}`))
	lp := e.one(t, "MLU", "gold", fees.Query{Price: "1000"})
	is.Equal(lp.SaleFeeAmount.String(), "95") // 75 + 20, no threshold means every price
	is.Equal(lp.ListingTypeName, "Oro")
}

// TestSaleFee_IsPricePercentagePlusFixedRounded checks the fee formula on
// any price: a plain model using integer cents.
func TestSaleFee_IsPricePercentagePlusFixedRounded(t *testing.T) {
	e := newEnv(t)
	rapid.Check(t, func(t *rapid.T) {
		cents := rapid.Int64Range(0, 100_000_000).Draw(t, "price_cents")
		lt := rapid.SampledFrom([]string{"gold_pro", "gold_special", "free"}).Draw(t, "listing_type")
		pct := map[string]int64{"gold_pro": 36, "gold_special": 13, "free": 0}[lt]
		fixed := int64(0)
		if cents > 0 && cents < 1_000_000 && lt != "free" {
			fixed = 20000
		}
		// cents x pct / 100, rounded half up to whole cents.
		num := cents * pct
		want := num/100 + fixed
		if num%100 >= 50 {
			want++
		}
		price := money.FromInt(cents).Quo(money.FromInt(100), 2)
		lp, err := e.fees.ListingPrice(context.Background(), "MLA", lt, fees.Query{Price: price.String()})
		if err != nil {
			t.Fatal(err)
		}
		if got := lp.SaleFeeAmount.String(); got != money.FromInt(want).Quo(money.FromInt(100), 2).String() {
			t.Fatalf("%s at %s: %s, want %d cents", lt, price, got, want)
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
