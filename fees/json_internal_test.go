package fees

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/internal/jsonenc/jsonenctest"
	"github.com/marketplace/marketplace/money"
)

// jsonText draws strings that exercise every escaping rule.
var jsonText = jsonenctest.Text

func drawDec(t *rapid.T, label string, maxInt int64) money.Dec {
	if rapid.IntRange(0, 4).Draw(t, label+"_zero") == 0 {
		return money.Dec{}
	}
	return money.MustParse(drawDecimal(t, label, maxInt))
}

// drawRate draws a conversion ratio: a few decimals, or ten as the shipped
// ratios have.
func drawRate(t *rapid.T) money.Dec {
	s := drawDecimal(t, "rate", 5000)
	if rapid.Bool().Draw(t, "rate_ten_places") {
		s = fmt.Sprintf("%d.%010d", rapid.Int64Range(0, 50).Draw(t, "rate_int"), rapid.Int64Range(0, 9_999_999_999).Draw(t, "rate_frac"))
	}
	d := money.MustParse(s)
	if d.IsZero() {
		return money.FromInt(1)
	}
	return d
}

// The hand-written answer object is what encoding/json writes for the
// ListingPrice of the same lookup, for any listing type, rule, currency,
// ratio, price and time, whether the sale fee is computed in integers or,
// when they would overflow, with money.Dec.
func TestListingPriceEncoding_IsByteForByteEncodingJSON(t *testing.T) {
	var fast, all int
	rapid.Check(t, func(t *rapid.T) {
		pt := &planType{lt: ListingType{ID: jsonText(t, "id"), Name: jsonText(t, "name"), Exposure: jsonText(t, "exposure"),
			RequiresPicture: rapid.Bool().Draw(t, "picture"), FreeRelist: rapid.Bool().Draw(t, "relist"),
			DurationDays: rapid.IntRange(0, 36500).Draw(t, "days")}}
		r := Rule{MeliPercentageFee: drawDec(t, "meli", 60), FinancingAddOnFee: drawDec(t, "financing", 40),
			FixedFee:      drawDec(t, "fixed", rapid.SampledFrom([]int64{1000, 1e12}).Draw(t, "fixed_max")),
			FixedFeeBelow: drawDec(t, "below", rapid.SampledFrom([]int64{1e5, 1e12}).Draw(t, "below_max")),
			ListingFee:    drawDec(t, "listing", 1_000_000)}
		cur := geo.Currency{ID: jsonText(t, "currency"), DecimalPlaces: rapid.IntRange(0, 4).Draw(t, "places")}
		pt.general = newTerms(&pt.lt, r, drawRate(t), cur)
		price := rapid.OneOf(
			rapid.Custom(func(t *rapid.T) string {
				return drawDecimal(t, "price", rapid.SampledFrom([]int64{20, 20_000, 1e9, 1e17}).Draw(t, "price_max"))
			}),
			rapid.SampledFrom([]string{"0", "00012.3400", "1e3", "5.", ".5", "+7", "123456789012345678.9", "0.000000000000000000001"}),
		).Draw(t, "price")
		l := lookup{plan: &plan{currency: cur}, price: money.MustParse(price), priceI: parsePlain(price), category: GeneralCategory}
		now := time.UnixMilli(rapid.Int64Range(0, 4_000_000_000_000).Draw(t, "now_ms")).
			In(time.FixedZone("", rapid.IntRange(-12, 14).Draw(t, "zone_hours")*3600))

		want := encodeLikeTheServer(t, l.listingPrice(pt, &stopTimes{now: now}))
		if got := l.appendJSON(nil, pt, &stopTimes{now: now}); !bytes.Equal(got, want) {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
		all++
		if _, _, ok := pt.general.fastSale(l.priceI); ok && !pt.general.constant {
			fast++
		}
	})
	t.Logf("%d of %d sale fees computed in integers", fast, all)
	if fast < all/3 || fast == all {
		t.Fatalf("%d of %d sale fees computed in integers: both ways must be exercised", fast, all)
	}
}
