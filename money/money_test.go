package money_test

import (
	"encoding/json"
	"fmt"
	"math/big"
	"testing"

	"github.com/matryer/is"
	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/money"
)

func TestParseAndString_KeepExactDecimals(t *testing.T) {
	for in, want := range map[string]string{
		"10630": "10630", "3826.80": "3826.8", "0.1": "0.1", "-0.50": "-0.5", "1e3": "1000",
		"1.5e-2": "0.015", "000200": "200", ".25": "0.25", "7.": "7", "0": "0", "-0": "0",
	} {
		d, err := money.Parse(in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", in, err)
		}
		if d.String() != want {
			t.Errorf("Parse(%q) = %s, want %s", in, d, want)
		}
	}
}

func TestParse_RejectsWhatIsNotANumber(t *testing.T) {
	for _, in := range []string{"", "-", ".", "abc", "1,5", "1.2.3", "1e", "NaN", "Inf", "0x10", "1e999", " 1"} {
		if _, err := money.Parse(in); err == nil {
			t.Errorf("Parse(%q) accepted", in)
		}
	}
}

func TestPercent_IsExact(t *testing.T) {
	is := is.New(t)
	is.Equal(money.MustParse("10630").Percent(money.MustParse("36")).String(), "3826.8") // 36% of 10630
	is.Equal(money.MustParse("0.1").Add(money.MustParse("0.2")).String(), "0.3")         // no float drift
}

func TestRound_HalfAwayFromZero(t *testing.T) {
	for _, c := range []struct {
		in     string
		places int32
		want   string
	}{
		{"2.345", 2, "2.35"}, {"2.344", 2, "2.34"}, {"-2.345", 2, "-2.35"}, {"1499.5", 0, "1500"},
		{"1499.49", 0, "1499"}, {"0.005", 2, "0.01"}, {"12", 2, "12"},
	} {
		if got := money.MustParse(c.in).Round(c.places).String(); got != c.want {
			t.Errorf("Round(%s, %d) = %s, want %s", c.in, c.places, got, c.want)
		}
	}
}

func TestQuo_RoundsToPlaces(t *testing.T) {
	is := is.New(t)
	is.Equal(money.FromInt(1).Quo(money.FromInt(3), 4).String(), "0.3333") // 1/3
	is.Equal(money.FromInt(2).Quo(money.FromInt(3), 4).String(), "0.6667") // 2/3
	is.Equal(money.FromInt(1180).Quo(money.MustParse("0.5"), 2).String(), "2360")
}

// TestArithmetic_MatchesRationals checks Add, Mul and Round against
// math/big.Rat on any decimals.
func TestArithmetic_MatchesRationals(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := decimalString(t, "a")
		b := decimalString(t, "b")
		da, db := money.MustParse(a), money.MustParse(b)
		ra, _ := new(big.Rat).SetString(a)
		rb, _ := new(big.Rat).SetString(b)
		sum, _ := new(big.Rat).SetString(da.Add(db).String())
		if sum.Cmp(new(big.Rat).Add(ra, rb)) != 0 {
			t.Fatalf("%s + %s = %s", a, b, da.Add(db))
		}
		prod, _ := new(big.Rat).SetString(da.Mul(db).String())
		if prod.Cmp(new(big.Rat).Mul(ra, rb)) != 0 {
			t.Fatalf("%s * %s = %s", a, b, da.Mul(db))
		}
		places := int32(rapid.IntRange(0, 4).Draw(t, "places"))
		r, _ := new(big.Rat).SetString(da.Round(places).String())
		diff := new(big.Rat).Abs(new(big.Rat).Sub(r, ra))
		half := new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Mul(big.NewInt(2), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(places)), nil)))
		if diff.Cmp(half) > 0 {
			t.Fatalf("Round(%s, %d) = %s is more than half a unit away", a, places, r.FloatString(6))
		}
	})
}

func decimalString(t *rapid.T, label string) string {
	i := rapid.Int64Range(-1_000_000, 1_000_000).Draw(t, label+"_int")
	f := rapid.IntRange(0, 9999).Draw(t, label+"_frac")
	sign := ""
	if i < 0 {
		sign = "-"
		i = -i
	}
	return fmt.Sprintf("%s%d.%04d", sign, i, f)
}

// FuzzParse checks that no input panics and that what parses prints back to
// the same value.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"10630", "-0.5", "1e3", "3826.80", ".", "1e-30", "99999999999999999999999.5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := money.Parse(s)
		if err != nil {
			return
		}
		back, err := money.Parse(d.String())
		if err != nil || back.Cmp(d) != 0 {
			t.Fatalf("%q -> %s -> %v %v", s, d, back, err)
		}
		_ = d.Round(2).Add(d).Percent(d)
	})
}

// TestParseAndString_RoundTrip: any decimal written by String parses back
// to the same value and is written the same way again (String is
// canonical), and parsing its JSON number or its JSON string gives it too.
func TestParseAndString_RoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		coef := rapid.Int64().Draw(t, "coef")
		places := rapid.Int32Range(0, 12).Draw(t, "places")
		d := money.FromInt(coef).Mul(money.MustParse("1e-" + fmt.Sprint(places))) // coef x 10^-places
		s := d.String()
		back, err := money.Parse(s)
		if err != nil || back.Cmp(d) != 0 || back.String() != s {
			t.Fatalf("%s -> %s %v", s, back, err)
		}
		r, _ := new(big.Rat).SetString(s)
		want := new(big.Rat).SetFrac(big.NewInt(coef), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(places)), nil))
		if r.Cmp(want) != 0 {
			t.Fatalf("%d x 10^-%d written as %s", coef, places, s)
		}
		var fromNumber, fromString money.Dec
		if err := json.Unmarshal([]byte(s), &fromNumber); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(`"`+s+`"`), &fromString); err != nil {
			t.Fatal(err)
		}
		out, _ := json.Marshal(fromString)
		if fromNumber.Cmp(d) != 0 || fromString.Cmp(d) != 0 || string(out) != s {
			t.Fatalf("%s: number %s, string %s, written %s", s, fromNumber, fromString, out)
		}
	})
}

// TestMinorUnitsAndPlaces_MatchRationals: MinorUnits is the value times
// 10^places truncated toward zero, and Places the fewest decimals that
// write the value.
func TestMinorUnitsAndPlaces_MatchRationals(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := decimalString(t, "d")
		d := money.MustParse(s)
		places := rapid.Int32Range(0, 6).Draw(t, "places")
		n, ok := d.MinorUnits(places)
		if !ok {
			t.Fatalf("%s at %d places does not fit", s, places)
		}
		r, _ := new(big.Rat).SetString(s)
		scaled := new(big.Rat).Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(places)), nil)))
		want := new(big.Int).Quo(scaled.Num(), scaled.Denom()) // truncates toward zero
		if want.Int64() != n {
			t.Fatalf("MinorUnits(%s, %d) = %d, want %s", s, places, n, want)
		}
		p := d.Places()
		if d.Round(p).Cmp(d) != 0 || (p > 0 && d.Round(p-1).Cmp(d) == 0) {
			t.Fatalf("Places(%s) = %d", s, p)
		}
	})
}

func TestMarshalJSON_WritesTheShortestExactNumber(t *testing.T) {
	is := is.New(t)
	for in, want := range map[string]string{"350000": "350000", "10.5": "10.5", "10.50": "10.5", "1500.55": "1500.55", "0.01": "0.01", "1e3": "1000"} {
		b, err := json.Marshal(money.MustParse(in))
		is.NoErr(err)
		is.Equal(string(b), want) // a JSON number, no trailing zeros
	}
}

func TestUnmarshalJSON_RefusalQuotesWhatWasSent(t *testing.T) {
	is := is.New(t)
	for body, value := range map[string]string{
		`{"price": true}`: "true", `{"price": {"a": 1}}`: "an object", `{"price": [1]}`: "an array",
		`{"price": "abc"}`: "abc", `{"price": "1,5"}`: "1,5", `{"price": ""}`: "",
	} {
		var v struct {
			Price money.Dec `json:"price"`
		}
		err := json.Unmarshal([]byte(body), &v)
		e, ok := money.InvalidField(err)
		is.True(ok) // refused as an amount
		is.Equal(e.Message, "Invalid price: "+value+". It must be a decimal number such as 1500 or 1500.50")
		is.True(!v.Price.Given()) // nothing was read
	}
	_, ok := money.InvalidField(json.Unmarshal([]byte(`{"n": true}`), &struct{ N int }{}))
	is.True(!ok) // only refusals of amounts
}

func TestGiven_OnlyTheZeroDecIsNotGiven(t *testing.T) {
	is := is.New(t)
	is.True(!money.Dec{}.Given())
	is.True(money.FromInt(0).Given())
	is.True(money.MustParse("0").Given())
	is.True(money.Dec{}.Add(money.Dec{}).Given())
	var d money.Dec
	is.NoErr(json.Unmarshal([]byte("null"), &d))
	is.True(!d.Given()) // null sets nothing
}
