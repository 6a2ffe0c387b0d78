package fees_test

import (
	"encoding/json"
	"math/big"
	"os"
	"testing"

	"github.com/marketplace/marketplace/fees"
)

// The rule tests take their expectations from the rule itself: the shipped
// rule records (read from the dataset file, the engine's input) or a rule
// the test imports, priced by feeModel. The dataset's figures appear once,
// in TestDataset_ShippedFeeFigures.

// shippedRules reads the rule records of the shipped dataset.
func shippedRules(t testing.TB) []fees.Rule {
	t.Helper()
	b, err := os.ReadFile("data/fees.json")
	if err != nil {
		t.Fatal(err)
	}
	var set struct {
		Records []struct {
			Kind string          `json:"kind"`
			Data json.RawMessage `json:"data"`
		} `json:"records"`
	}
	if err := json.Unmarshal(b, &set); err != nil {
		t.Fatal(err)
	}
	var out []fees.Rule
	for _, r := range set.Records {
		if r.Kind != fees.KindRule {
			continue
		}
		var rule fees.Rule
		if err := json.Unmarshal(r.Data, &rule); err != nil {
			t.Fatal(err)
		}
		out = append(out, rule)
	}
	return out
}

// shippedRule is the rule that prices a category of a site's listing type:
// the category's own rule, else the site's general one.
func shippedRule(t testing.TB, site, lt, category string) fees.Rule {
	t.Helper()
	var general *fees.Rule
	for _, r := range shippedRules(t) {
		if r.SiteID != site || r.ListingTypeID != lt {
			continue
		}
		if r.CategoryID == category {
			return r
		}
		if r.CategoryID == "general" {
			general = &r
		}
	}
	if general == nil {
		t.Fatalf("no shipped rule for %s %s", site, lt)
	}
	return *general
}

// rat reads a decimal (a money.Dec's text, or a literal) as a rational.
func rat(s string) *big.Rat {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		panic("not a decimal: " + s)
	}
	return r
}

// feeModel is the sale fee rule on rationals, independent of money.Dec:
// price x (meli_percentage_fee + financing_add_on_fee) / 100, plus the
// fixed fee when the price is above 0 and below fixed_fee_below (at every
// price when there is no threshold), the rule's amounts converted with
// rate, rounded once, half away from zero, to places. It returns the fee
// and the fixed part, written as money.Dec writes them.
func feeModel(r fees.Rule, price, rate string, places int) (sale, fixed string) {
	p := rat(price)
	pct := new(big.Rat).Add(rat(r.MeliPercentageFee.String()), rat(r.FinancingAddOnFee.String()))
	fee := new(big.Rat).Mul(p, pct)
	fee.Quo(fee, big.NewRat(100, 1))
	fx := new(big.Rat).Mul(rat(r.FixedFee.String()), rat(rate))
	below := new(big.Rat).Mul(rat(r.FixedFeeBelow.String()), rat(rate))
	fixedPart := new(big.Rat)
	if fx.Sign() > 0 && p.Sign() > 0 && (below.Sign() == 0 || p.Cmp(below) < 0) {
		fee.Add(fee, fx)
		fixedPart = fx
	}
	return roundRat(fee, places), roundRat(fixedPart, places)
}

// roundRat rounds half away from zero to places and writes the result with
// no trailing zeros.
func roundRat(r *big.Rat, places int) string {
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(places)), nil)
	v := new(big.Rat).Mul(r, new(big.Rat).SetInt(scale))
	neg := v.Sign() < 0
	v.Abs(v)
	q, rem := new(big.Int).QuoRem(v.Num(), v.Denom(), new(big.Int))
	if new(big.Int).Mul(rem, big.NewInt(2)).Cmp(v.Denom()) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	if neg {
		q.Neg(q)
	}
	out := new(big.Rat).SetFrac(q, scale)
	s := out.FloatString(places)
	if places > 0 {
		for s[len(s)-1] == '0' {
			s = s[:len(s)-1]
		}
		if s[len(s)-1] == '.' {
			s = s[:len(s)-1]
		}
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

func TestFeeModel_RoundsHalfAwayFromZeroAndTrimsZeros(t *testing.T) {
	for _, c := range []struct {
		in     string
		places int
		want   string
	}{{"1300.0065", 2, "1300.01"}, {"1728.3", 0, "1728"}, {"1499.5", 0, "1500"}, {"3826.80", 2, "3826.8"}, {"0", 2, "0"}} {
		if got := roundRat(rat(c.in), c.places); got != c.want {
			t.Errorf("roundRat(%s, %d) = %s, want %s", c.in, c.places, got, c.want)
		}
	}
}
