package fees

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"marketplace/geo"
	"marketplace/geo/money"
)

// jsonText draws strings that exercise every escaping rule: control
// characters, quotes, HTML characters, invalid UTF-8, U+2028 and U+2029.
func jsonText(t *rapid.T, label string) string {
	parts := rapid.SliceOfN(rapid.OneOf(
		rapid.String(),
		rapid.SampledFrom([]string{"\"", "\\", "<", ">", "&", "\b", "\f", "\n", "\r", "\t", "\x00", "\x1f", "\x7f",
			"\u2028", "\u2029", "\xff", "\xe2\x80", "ñ", "😀", "\ufffd"}),
		rapid.Custom(func(t *rapid.T) string { return string(rapid.SliceOf(rapid.Byte()).Draw(t, "raw")) }),
	), 0, 6).Draw(t, label)
	return strings.Join(parts, "")
}

func drawDec(t *rapid.T, label string, maxInt int64) money.Dec {
	if rapid.IntRange(0, 4).Draw(t, label+"_zero") == 0 {
		return money.Dec{}
	}
	return money.MustParse(drawDecimal(t, label, maxInt))
}

// The hand-written answer object is what encoding/json writes for the
// ListingPrice of the same lookup, for any listing type, rule, currency,
// ratio, price and time.
func TestListingPriceEncoding_IsByteForByteEncodingJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pt := &planType{lt: ListingType{ID: jsonText(t, "id"), Name: jsonText(t, "name"), Exposure: jsonText(t, "exposure"),
			RequiresPicture: rapid.Bool().Draw(t, "picture"), FreeRelist: rapid.Bool().Draw(t, "relist"),
			DurationDays: rapid.IntRange(0, 36500).Draw(t, "days")}}
		r := Rule{MeliPercentageFee: drawDec(t, "meli", 60), FinancingAddOnFee: drawDec(t, "financing", 40),
			FixedFee: drawDec(t, "fixed", 1_000_000), FixedFeeBelow: drawDec(t, "below", 1_000_000), ListingFee: drawDec(t, "listing", 1_000_000)}
		rate := money.MustParse(drawDecimal(t, "rate", 5000))
		if rate.IsZero() {
			rate = money.FromInt(1)
		}
		cur := geo.Currency{ID: jsonText(t, "currency"), DecimalPlaces: rapid.IntRange(0, 4).Draw(t, "places")}
		pt.general = newTerms(&pt.lt, r, rate, cur)
		l := lookup{plan: &plan{currency: cur}, price: drawDec(t, "price", 100_000_000), category: GeneralCategory}
		now := time.UnixMilli(rapid.Int64Range(0, 4_000_000_000_000).Draw(t, "now_ms")).
			In(time.FixedZone("", rapid.IntRange(-12, 14).Draw(t, "zone_hours")*3600))

		want := encodeLikeTheServer(t, l.listingPrice(pt, &stopTimes{now: now}))
		if got := l.appendJSON(nil, pt, &stopTimes{now: now}); !bytes.Equal(got, want) {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
	})
}
