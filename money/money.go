// Package money is exact decimal arithmetic for amounts, percentages and
// conversion rates. A float cannot hold 0.1 or 3826.8 exactly, and fee
// lookups must give the same cents every time, so values are kept as an
// integer coefficient and a count of decimal places.
package money

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"strconv"
	"strings"

	"github.com/marketplace/marketplace/errs"
)

// maxPlaces bounds the decimal places a parsed value may carry, and
// maxDigits its significant digits, so that a hostile input cannot make the
// arithmetic allocate without bound.
const (
	maxPlaces = 30
	maxDigits = 40
)

// Dec is an exact decimal: coef x 10^-places. The zero value is 0.
type Dec struct {
	coef   *big.Int
	places int32
}

var (
	bigTen = big.NewInt(10)
	bigOne = big.NewInt(1)
)

func (d Dec) c() *big.Int {
	if d.coef == nil {
		return new(big.Int)
	}
	return d.coef
}

// FromInt returns n as a Dec.
func FromInt(n int64) Dec { return Dec{coef: big.NewInt(n)} }

// Parse reads a decimal such as "10630", "-0.5", "3826.80" or "1e3".
func Parse(s string) (Dec, error) {
	orig := s
	if s == "" {
		return Dec{}, fmt.Errorf("empty number")
	}
	exp := int64(0)
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.ParseInt(s[i+1:], 10, 32)
		if err != nil || e > maxPlaces || e < -maxPlaces {
			return Dec{}, fmt.Errorf("invalid number %q", orig)
		}
		exp = e
		s = s[:i]
	}
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	intPart, frac, hasDot := strings.Cut(s, ".")
	if intPart == "" && frac == "" || (hasDot && frac == "" && intPart == "") {
		return Dec{}, fmt.Errorf("invalid number %q", orig)
	}
	digits := intPart + frac
	if digits == "" {
		return Dec{}, fmt.Errorf("invalid number %q", orig)
	}
	for _, r := range digits {
		if r < '0' || r > '9' {
			return Dec{}, fmt.Errorf("invalid number %q", orig)
		}
	}
	trimmed := strings.TrimLeft(digits, "0")
	if len(trimmed) > maxDigits {
		return Dec{}, fmt.Errorf("number %q has too many digits", orig)
	}
	places := int64(len(frac)) - exp
	coef, _ := new(big.Int).SetString("0"+digits, 10)
	if places < 0 {
		coef.Mul(coef, pow10(int32(-places)))
		places = 0
	}
	if places > maxPlaces {
		return Dec{}, fmt.Errorf("number %q has too many decimal places", orig)
	}
	if neg {
		coef.Neg(coef)
	}
	return Dec{coef: coef, places: int32(places)}.normalize(), nil
}

// MustParse is Parse for constants; it panics on a bad literal.
func MustParse(s string) Dec {
	d, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return d
}

func pow10(n int32) *big.Int {
	return new(big.Int).Exp(bigTen, big.NewInt(int64(n)), nil)
}

// normalize drops trailing zero decimals, so equal values look alike. Values
// are never modified in place, so a result may share d's coefficient.
func (d Dec) normalize() Dec {
	if d.places == 0 && d.coef != nil {
		return d
	}
	if d.c().IsInt64() {
		// Amounts fit in 64 bits: skip the big.Int divisions.
		v, p := d.c().Int64(), d.places
		if v%10 != 0 && d.coef != nil {
			return d
		}
		for p > 0 && v%10 == 0 {
			v /= 10
			p--
		}
		if v == 0 {
			p = 0
		}
		return Dec{coef: big.NewInt(v), places: p}
	}
	c := new(big.Int).Set(d.c())
	p := d.places
	if c.Sign() == 0 {
		return Dec{coef: c}
	}
	q, r := new(big.Int), new(big.Int)
	for p > 0 {
		q.QuoRem(c, bigTen, r)
		if r.Sign() != 0 {
			break
		}
		c.Set(q)
		p--
	}
	return Dec{coef: c, places: p}
}

// align returns the coefficients of a and b at the same number of places.
func align(a, b Dec) (*big.Int, *big.Int, int32) {
	ac, bc := new(big.Int).Set(a.c()), new(big.Int).Set(b.c())
	switch {
	case a.places < b.places:
		ac.Mul(ac, pow10(b.places-a.places))
		return ac, bc, b.places
	case b.places < a.places:
		bc.Mul(bc, pow10(a.places-b.places))
		return ac, bc, a.places
	}
	return ac, bc, a.places
}

// Add returns d + e.
func (d Dec) Add(e Dec) Dec {
	a, b, p := align(d, e)
	return Dec{coef: a.Add(a, b), places: p}.normalize()
}

// Sub returns d - e.
func (d Dec) Sub(e Dec) Dec {
	a, b, p := align(d, e)
	return Dec{coef: a.Sub(a, b), places: p}.normalize()
}

// Mul returns d x e, exactly.
func (d Dec) Mul(e Dec) Dec {
	return Dec{coef: new(big.Int).Mul(d.c(), e.c()), places: d.places + e.places}.normalize()
}

// Percent returns d x pct / 100, exactly.
func (d Dec) Percent(pct Dec) Dec {
	return Dec{coef: new(big.Int).Mul(d.c(), pct.c()), places: d.places + pct.places + 2}.normalize()
}

// Quo returns d / e rounded half away from zero to places decimals; e must
// not be zero.
func (d Dec) Quo(e Dec, places int32) Dec {
	if e.Sign() == 0 {
		panic("money: division by zero")
	}
	// d/e = (dc/10^dp) / (ec/10^ep); scale so the integer quotient has
	// places+1 decimals, then round the last one away.
	num := new(big.Int).Mul(d.c(), pow10(places+1+e.places))
	den := new(big.Int).Mul(e.c(), pow10(d.places))
	q := new(big.Int).Quo(num, den)
	return Dec{coef: q, places: places + 1}.Round(places)
}

// Round returns d rounded half away from zero to places decimals (the
// commercial rounding of amounts).
func (d Dec) Round(places int32) Dec {
	if d.places <= places {
		return d.normalize()
	}
	div := pow10(d.places - places)
	c := d.c()
	q, r := new(big.Int).QuoRem(new(big.Int).Abs(c), div, new(big.Int))
	r.Mul(r, big.NewInt(2))
	if r.Cmp(div) >= 0 {
		q.Add(q, bigOne)
	}
	if c.Sign() < 0 {
		q.Neg(q)
	}
	return Dec{coef: q, places: places}.normalize()
}

// Cmp compares d and e: -1, 0 or +1.
func (d Dec) Cmp(e Dec) int {
	a, b, _ := align(d, e)
	return a.Cmp(b)
}

// Sign returns -1, 0 or +1.
func (d Dec) Sign() int { return d.c().Sign() }

// IsZero reports whether d is 0.
func (d Dec) IsZero() bool { return d.Sign() == 0 }

// Given reports whether d was set: the zero Dec (Dec{}) counts as 0 in
// arithmetic but stands for an amount nobody gave, such as a price left out
// of a request. Every Dec from Parse, MustParse, FromInt or arithmetic is
// given, 0 included.
func (d Dec) Given() bool { return d.coef != nil }

// Places returns how many decimals d has once trailing zeros are dropped:
// 0 for 1500 and 1500.00, 1 for 1500.5, 2 for 1500.55. A currency with
// decimal_places p accepts an amount when Places() <= p.
func (d Dec) Places() int32 { return d.normalize().places }

// MinorUnits returns d x 10^places truncated toward zero, as an int64 (the
// hundredths of 1500.55 at places 2 are 150055); ok is false when it does
// not fit.
func (d Dec) MinorUnits(places int32) (n int64, ok bool) {
	c := new(big.Int).Set(d.c())
	switch {
	case places > d.places:
		c.Mul(c, pow10(places-d.places))
	case places < d.places:
		c.Quo(c, pow10(d.places-places))
	}
	if !c.IsInt64() {
		return 0, false
	}
	return c.Int64(), true
}

// String writes d in plain decimal notation with no trailing zeros, such as
// "3826.8" or "200".
func (d Dec) String() string {
	n := d.normalize()
	var s string
	neg := n.c().Sign() < 0
	if n.c().IsInt64() {
		v := n.c().Int64()
		if neg {
			v = -v
		}
		s = strconv.FormatUint(uint64(v), 10)
	} else {
		s = new(big.Int).Abs(n.c()).String()
	}
	if n.places == 0 {
		if neg {
			return "-" + s
		}
		return s
	}
	if n.places > 0 {
		if int32(len(s)) <= n.places {
			s = strings.Repeat("0", int(n.places)-len(s)+1) + s
		}
		cut := len(s) - int(n.places)
		s = s[:cut] + "." + s[cut:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// MarshalJSON writes d as a JSON number.
func (d Dec) MarshalJSON() ([]byte, error) { return []byte(d.String()), nil }

// decType is the type named by the refusals of UnmarshalJSON.
var decType = reflect.TypeOf(Dec{})

// UnmarshalJSON reads a JSON number or a string holding one ("350000",
// "1500.5"): the one place where an amount sent as JSON is read, so that a
// value decoded by an embedder and one sent over HTTP are the same value.
// null leaves d as it is (a Dec never set stays not Given). Any other value
// is refused with a *json.UnmarshalTypeError whose Value is what was sent
// ("true", "an object", "an array", "abc"), so that the refusal can quote
// it; InvalidField turns it into the error callers are shown.
func (d *Dec) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return nil
	}
	text := string(b)
	switch {
	case len(b) > 0 && b[0] == '"':
		s, err := strconv.Unquote(text)
		if err != nil {
			return &json.UnmarshalTypeError{Value: text, Type: decType}
		}
		text = s
	case len(b) > 0 && b[0] == '{':
		return &json.UnmarshalTypeError{Value: "an object", Type: decType}
	case len(b) > 0 && b[0] == '[':
		return &json.UnmarshalTypeError{Value: "an array", Type: decType}
	}
	v, err := Parse(text)
	if err != nil {
		return &json.UnmarshalTypeError{Value: text, Type: decType}
	}
	*d = v
	return nil
}

// InvalidField returns the error shown for a JSON value that a Dec field
// refused (see UnmarshalJSON), naming the field and quoting the value:
// "Invalid price: true. It must be a decimal number such as 1500 or
// 1500.50". ok is false when err is no such refusal.
func InvalidField(err error) (e *errs.Error, ok bool) {
	var ute *json.UnmarshalTypeError
	if !errors.As(err, &ute) || ute.Type != decType || ute.Field == "" {
		return nil, false
	}
	field := ute.Field
	if i := strings.LastIndexByte(field, '.'); i >= 0 {
		field = field[i+1:]
	}
	return errs.Invalidf("Invalid %s: %s. It must be a decimal number such as 1500 or 1500.50", field, ute.Value), true
}
