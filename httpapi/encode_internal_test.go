package httpapi

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"

	"pgregory.net/rapid"

	"marketplace/accounts"
	"marketplace/fees"
	"marketplace/geo/money"
)

func drawTags(t *rapid.T) []string {
	if rapid.Bool().Draw(t, "nil_tags") {
		return nil
	}
	return rapid.SliceOfN(rapid.Custom(func(t *rapid.T) string { return jsonText(t, "tag") }), 0, 4).Draw(t, "tags")
}

func TestUserEncoding_IsByteForByteEncodingJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		u := accounts.User{ID: rapid.Int64().Draw(t, "id"), Nickname: jsonText(t, "nickname"),
			RegistrationDate: jsonText(t, "date"), FirstName: jsonText(t, "first"), LastName: jsonText(t, "last"),
			Gender: jsonText(t, "gender"), CountryID: jsonText(t, "country"), SiteID: jsonText(t, "site"), Tags: drawTags(t)}
		if got, want := append(appendUser(nil, u), '\n'), encodingJSON(t, u); !bytes.Equal(got, want) {
			t.Fatalf("user: got  %s\nwant %s", got, want)
		}
		pu := u.Public()
		if got, want := append(appendPublicUser(nil, pu), '\n'), encodingJSON(t, pu); !bytes.Equal(got, want) {
			t.Fatalf("public user: got  %s\nwant %s", got, want)
		}
	})
}

func drawDec(t *rapid.T, label string) money.Dec {
	if rapid.Bool().Draw(t, label+"_zero_value") {
		return money.Dec{}
	}
	digits := fmt.Sprint(rapid.Uint64().Draw(t, label+"_digits"))
	places := rapid.IntRange(0, len(digits)-1).Draw(t, label+"_places")
	s := digits[:len(digits)-places]
	if places > 0 {
		s += "." + digits[len(digits)-places:]
	}
	if rapid.Bool().Draw(t, label+"_negative") {
		s = "-" + s
	}
	d, err := money.Parse(s)
	if err != nil {
		t.Fatalf("parse %s: %v", s, err)
	}
	return d
}

func drawListingPrice(t *rapid.T) fees.ListingPrice {
	return fees.ListingPrice{
		ListingTypeID: jsonText(t, "type"), ListingTypeName: jsonText(t, "name"), ListingExposure: jsonText(t, "exposure"),
		RequiresPicture: rapid.Bool().Draw(t, "picture"), CurrencyID: jsonText(t, "currency"),
		ListingFeeAmount:  drawDec(t, "listing_fee"),
		ListingFeeDetails: fees.FeeDetails{FixedFee: drawDec(t, "l_fixed"), GrossAmount: drawDec(t, "l_gross")},
		SaleFeeAmount:     drawDec(t, "sale_fee"),
		SaleFeeDetails: fees.SaleFeeDetails{PercentageFee: drawDec(t, "pct"), MeliPercentageFee: drawDec(t, "meli_pct"),
			FinancingAddOnFee: drawDec(t, "financing"), FixedFee: drawDec(t, "s_fixed"), GrossAmount: drawDec(t, "s_gross")},
		FreeRelist: rapid.Bool().Draw(t, "relist"), StopTime: jsonText(t, "stop"),
	}
}

func TestListingPriceEncoding_IsByteForByteEncodingJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var prices []fees.ListingPrice
		if rapid.Bool().Draw(t, "non_nil") {
			prices = rapid.SliceOfN(rapid.Custom(drawListingPrice), 0, 3).Draw(t, "prices")
		}
		one := len(prices) > 0 && rapid.Bool().Draw(t, "one")
		var want []byte
		if one {
			want = encodingJSON(t, prices[0])
		} else {
			want = encodingJSON(t, prices)
		}
		var buf bytes.Buffer
		rec := &recorderStub{header: map[string][]string{}, body: &buf}
		writeListingPrices(rec, prices, one)
		if !bytes.Equal(buf.Bytes(), want) || rec.status != 200 {
			t.Fatalf("got  %d %s\nwant %s", rec.status, buf.Bytes(), want)
		}
	})
}

// recorderStub is the least http.ResponseWriter, for encoders under rapid.
type recorderStub struct {
	header map[string][]string
	body   *bytes.Buffer
	status int
}

func (r *recorderStub) Header() http.Header         { return r.header }
func (r *recorderStub) WriteHeader(status int)      { r.status = status }
func (r *recorderStub) Write(b []byte) (int, error) { return r.body.Write(b) }
