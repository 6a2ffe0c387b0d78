package fees_test

import (
	"context"
	"sync"
	"testing"

	"marketplace/fees"
	"marketplace/geo"
)

// Every record a lookup depends on, fee records and geo records alike,
// changes the next answer: the price table never answers from data that
// storage no longer holds.
func TestListingPrice_ChangedReferenceDataIsAnsweredAtOnce(t *testing.T) {
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
			fees.KindRule, `{"site_id":"MLA","listing_type_id":"gold_special","meli_percentage_fee":20}`,
			saleFee, "1381.9", "2126"},
		{"CategoryRule", "MLA", "gold_special", fees.Query{Price: "10630", CategoryID: "MLA1055"},
			fees.KindRule, `{"site_id":"MLA","listing_type_id":"gold_special","category_id":"MLA1055","meli_percentage_fee":10}`,
			saleFee, "1381.9", "1063"},
		{"ListingType", "MLA", "gold_special", fees.Query{},
			fees.KindListingType, `{"site_id":"MLA","id":"gold_special","name":"Clásica 2","exposure":"high","duration_days":1}`,
			func(lp fees.ListingPrice) string { return lp.ListingTypeName + " " + lp.StopTime },
			"Clásica 2046-02-27T15:00:00.000Z", "Clásica 2 2026-03-05T15:00:00.000Z"},
		{"CurrencyDecimalPlaces", "MLA", "gold_special", fees.Query{Price: "10630"},
			geo.KindCurrency, `{"id":"ARS","description":"Peso argentino","symbol":"$","decimal_places":0}`,
			saleFee, "1381.9", "1382"},
		{"ConversionRate", "MLA", "gold_special", fees.Query{Price: "5", CurrencyID: "USD"},
			geo.KindConversion, `{"from":"ARS","to":"USD","rate":0.002}`,
			// 13% of 5 USD plus 200 ARS converted, below 10000 ARS converted.
			saleFee, "0.82", "1.05"},
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
	if got := saleFee(e.one(t, "MLA", "gold_pro", fees.Query{Price: "100", CurrencyID: "XTS"})); got != "136" {
		t.Fatalf("sale fee in XTS: %s, want 136 (36%% of 100, plus 200 ARS below 10000 ARS)", got)
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
	want := map[string]bool{"1381.9": true, "2126": true}
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
		if got, want := saleFee(e.one(t, "MLA", "gold_special", fees.Query{Price: "10630"})), []string{"1381.9", "2126"}[i%2]; got != want {
			t.Fatalf("after import %d: %s, want %s", i, got, want)
		}
	}
	close(stop)
	wg.Wait()
}
