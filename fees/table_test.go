package fees_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/marketplace/marketplace/fees"
	"github.com/marketplace/marketplace/geo"
)

// Every record a lookup depends on, fee records and geo records alike,
// changes the next answer: the price table never answers from data that
// storage no longer holds.
func TestListingPrice_ChangedReferenceDataIsAnsweredAtOnce(t *testing.T) {
	general := shippedRule(t, "MLA", "gold_special", "general")
	fee := func(r fees.Rule, price, rate string, places int) string {
		sale, _ := feeModel(r, price, rate, places)
		return sale
	}
	const newRule = `{"site_id":"MLA","listing_type_id":"gold_special","meli_percentage_fee":20}`
	const newCategoryRule = `{"site_id":"MLA","listing_type_id":"gold_special","category_id":"MLA1055","meli_percentage_fee":10}`
	usdRate := newEnv(t).conversionRate(t, "ARS", "USD")
	for _, c := range []struct {
		name       string
		site, lt   string
		q          fees.Query
		kind, data string
		field      func(fees.ListingPrice) string
		before     string
		after      string
	}{
		{"FeeRule", "MLA", "gold_special", fees.Query{Price: "10630"},
			fees.KindRule, newRule,
			saleFee, fee(general, "10630", "1", 2), fee(ruleOf(t, newRule), "10630", "1", 2)},
		{"CategoryRule", "MLA", "gold_special", fees.Query{Price: "10630", CategoryID: "MLA1055"},
			fees.KindRule, newCategoryRule,
			saleFee, fee(shippedRule(t, "MLA", "gold_special", "MLA1055"), "10630", "1", 2), fee(ruleOf(t, newCategoryRule), "10630", "1", 2)},
		{"ListingType", "MLA", "gold_special", fees.Query{},
			fees.KindListingType, `{"site_id":"MLA","id":"gold_special","name":"Clásica 2","exposure":"high","duration_days":1}`,
			func(lp fees.ListingPrice) string { return lp.ListingTypeName + " " + lp.StopTime },
			"Clásica 2046-02-27T15:00:00.000Z", "Clásica 2 2026-03-05T15:00:00.000Z"},
		{"CurrencyDecimalPlaces", "MLA", "gold_special", fees.Query{Price: "10630"},
			geo.KindCurrency, `{"id":"ARS","description":"Peso argentino","symbol":"$","decimal_places":0}`,
			saleFee, fee(general, "10630", "1", 2), fee(general, "10630", "1", 0)},
		{"ConversionRate", "MLA", "gold_special", fees.Query{Price: "5", CurrencyID: "USD"},
			geo.KindConversion, `{"from":"ARS","to":"USD","rate":0.002}`,
			// The rule's ARS fixed fee and threshold converted at each rate.
			saleFee, fee(general, "5", usdRate, 2), fee(general, "5", "0.002", 2)},
		{"SiteDefaultCurrency", "MLU", "gold_special", fees.Query{Price: "100"},
			geo.KindSite, `{"id":"MLU","name":"Uruguay","country_id":"UY","default_currency_id":"USD","time_zone":"America/Montevideo"}`,
			func(lp fees.ListingPrice) string { return lp.CurrencyID }, "UYU", "USD"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			if got := c.field(e.one(t, c.site, c.lt, c.q)); got != c.before {
				t.Fatalf("before the import: %s, want %s", got, c.before)
			}
			if err := e.importRec(t, c.kind, c.data); err != nil {
				t.Fatal(err)
			}
			if got := c.field(e.one(t, c.site, c.lt, c.q)); got != c.after {
				t.Fatalf("after the import: %s, want %s", got, c.after)
			}
		})
	}
}

func saleFee(lp fees.ListingPrice) string { return lp.SaleFeeAmount.String() }

func TestListingPrices_ImportedTypeAndNewRatioAreAnsweredAtOnce(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	all, err := e.fees.ListingPrices(ctx, "MLU", fees.Query{})
	if err != nil || len(all) != 3 {
		t.Fatalf("MLU types before: %d, %v", len(all), err)
	}
	if err := e.importRec(t, fees.KindListingType, `{"site_id":"MLU","id":"silver","name":"Plata","exposure":"mid","duration_days":30}`); err != nil {
		t.Fatal(err)
	}
	if all, err = e.fees.ListingPrices(ctx, "MLU", fees.Query{}); err != nil || len(all) != 4 || all[2].ListingTypeID != "silver" {
		t.Fatalf("MLU types after: %+v, %v", all, err)
	}

	if err := e.importRec(t, geo.KindCurrency, `{"id":"XTS","description":"Test","symbol":"T","decimal_places":2}`); err != nil {
		t.Fatal(err)
	}
	if _, err := e.fees.ListingPrice(ctx, "MLA", "gold_pro", fees.Query{Price: "100", CurrencyID: "XTS"}); err == nil {
		t.Fatal("priced in XTS before any ratio to it")
	}
	if err := e.importRec(t, geo.KindConversion, `{"from":"ARS","to":"XTS","rate":0.5}`); err != nil {
		t.Fatal(err)
	}
	want, _ := feeModel(shippedRule(t, "MLA", "gold_pro", "general"), "100", "0.5", 2)
	if got := saleFee(e.one(t, "MLA", "gold_pro", fees.Query{Price: "100", CurrencyID: "XTS"})); got != want {
		t.Fatalf("sale fee in XTS: %s, want %s (the ARS rule converted at 0.5)", got, want)
	}
}

// Lookups running while rules are imported see one version or the other,
// never a mix, and the last import once it has returned.
func TestListingPrice_ConcurrentLookupsAndImports(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	rules := []string{
		`{"site_id":"MLA","listing_type_id":"gold_special","meli_percentage_fee":13,"fixed_fee":200,"fixed_fee_below":10000}`,
		`{"site_id":"MLA","listing_type_id":"gold_special","meli_percentage_fee":20}`,
	}
	sale := [2]string{}
	for i, r := range rules {
		sale[i], _ = feeModel(ruleOf(t, r), "10630", "1", 2)
	}
	want := map[string]bool{sale[0]: true, sale[1]: true}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				lps, err := e.fees.ListingPrices(ctx, "MLA", fees.Query{Price: "10630"})
				if err != nil {
					t.Error(err)
					return
				}
				if got := lps[2].SaleFeeAmount.String(); !want[got] {
					t.Errorf("gold_special sale fee %s during imports", got)
					return
				}
			}
		}()
	}
	for i := range 50 {
		if err := e.importRec(t, fees.KindRule, rules[i%2]); err != nil {
			t.Fatal(err)
		}
		if got, want := saleFee(e.one(t, "MLA", "gold_special", fees.Query{Price: "10630"})), sale[i%2]; got != want {
			t.Fatalf("after import %d: %s, want %s", i, got, want)
		}
	}
	close(stop)
	wg.Wait()
}

// ruleOf decodes a rule record as a test imports it.
func ruleOf(t testing.TB, data string) fees.Rule {
	t.Helper()
	var r fees.Rule
	if err := json.Unmarshal([]byte(data), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// conversionRate is the stored rate from one currency to another.
func (e env) conversionRate(t testing.TB, from, to string) string {
	t.Helper()
	c, err := e.geo.Conversion(context.Background(), from, to)
	if err != nil {
		t.Fatal(err)
	}
	return c.Rate.String()
}
