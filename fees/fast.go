package fees

import (
	"math/bits"
	"strconv"
	"strings"

	"github.com/marketplace/marketplace/money"
)

// The sale fee of a lookup in integers: when the price, the percentage and
// the converted fixed fee and threshold are plain decimals that fit in 64
// bits scaled by their decimal places, and no step overflows, the fee is
// computed and written without money.Dec's big integers. Otherwise the
// lookup falls back to money.Dec. Both give the same digits: the rapid test
// of the encoder compares the encoded answer with encoding/json's encoding
// of the money.Dec figures.

// fixedPoint is v x 10^-places.
type fixedPoint struct {
	v      uint64
	places int32
	ok     bool
}

// maxFastPlaces bounds the places of a fixedPoint, so that scaling stays
// within pow10s.
const maxFastPlaces = 18

var pow10s = func() (p [20]uint64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// parsePlain reads digits with an optional fraction ("10630", "99.95"),
// at most 18 significant digits and maxFastPlaces places; anything else is
// not ok (money.Parse handles it).
func parsePlain(s string) fixedPoint {
	intPart, frac, hasDot := strings.Cut(s, ".")
	if intPart == "" || hasDot && frac == "" || len(frac) > maxFastPlaces {
		return fixedPoint{}
	}
	digits := strings.TrimLeft(intPart+frac, "0")
	if len(digits) > 18 {
		return fixedPoint{}
	}
	var v uint64
	for _, c := range []byte(intPart + frac) {
		if c < '0' || c > '9' {
			return fixedPoint{}
		}
		v = v*10 + uint64(c-'0')
	}
	return fixedPoint{v: v, places: int32(len(frac)), ok: true}
}

// fixedPointOf returns d as a fixedPoint, when d is not negative and fits.
func fixedPointOf(d money.Dec) fixedPoint {
	if d.Sign() < 0 {
		return fixedPoint{}
	}
	return parsePlain(d.String())
}

// scale returns v x 10^n, and false on overflow.
func scale(v uint64, n int32) (uint64, bool) {
	if n <= 0 {
		return v, true
	}
	if n >= int32(len(pow10s)) {
		return 0, v == 0
	}
	hi, lo := bits.Mul64(v, pow10s[n])
	return lo, hi == 0
}

// fastSale returns the sale fee at price x 10^-places of the terms, scaled
// by 10^t.places, and whether the fixed fee applies; ok is false when the
// integers would overflow.
func (t *terms) fastSale(price fixedPoint) (sale uint64, withFixed, ok bool) {
	if !price.ok || !t.pctI.ok || !t.fixedI.ok || !t.belowI.ok {
		return 0, false, false
	}
	if t.hasFixed && price.v > 0 {
		withFixed = t.anyPrice
		if !withFixed {
			// price < below, at the places of the finer one.
			p, b := price.v, t.belowI.v
			var ok1, ok2 bool
			p, ok1 = scale(p, t.belowI.places-price.places)
			b, ok2 = scale(b, price.places-t.belowI.places)
			if !ok1 || !ok2 {
				return 0, false, false
			}
			withFixed = p < b
		}
	}
	// price x pct / 100 has price.places + pct places + 2 places.
	hi, prod := bits.Mul64(price.v, t.pctI.v)
	if hi != 0 {
		return 0, false, false
	}
	places := price.places + t.pctI.places + 2
	if withFixed {
		fixed := t.fixedI.v
		var ok1, ok2 bool
		prod, ok1 = scale(prod, t.fixedI.places-places)
		fixed, ok2 = scale(fixed, places-t.fixedI.places)
		if !ok1 || !ok2 {
			return 0, false, false
		}
		places = max(places, t.fixedI.places)
		var carry uint64
		if prod, carry = bits.Add64(prod, fixed, 0); carry != 0 {
			return 0, false, false
		}
	}
	// Round half away from zero to t.places.
	if places <= t.places {
		sale, ok = scale(prod, t.places-places)
		return sale, withFixed, ok
	}
	if places-t.places >= int32(len(pow10s)) {
		return 0, false, false
	}
	d := pow10s[places-t.places]
	sale, r := prod/d, prod%d
	if r >= d-r {
		sale++
	}
	return sale, withFixed, true
}

// appendScaled appends v x 10^-places as money.Dec.String writes it: no
// trailing zeros in the fraction, no fraction when there is none left.
func appendScaled(b []byte, v uint64, places int32) []byte {
	for places > 0 && v%10 == 0 {
		v /= 10
		places--
	}
	if places == 0 || v == 0 {
		return strconv.AppendUint(b, v, 10)
	}
	var buf [24]byte
	s := strconv.AppendUint(buf[:0], v, 10)
	if n := int(places) + 1 - len(s); n > 0 {
		b = append(b, "0."...)
		for ; n > 1; n-- {
			b = append(b, '0')
		}
		return append(b, s...)
	}
	cut := len(s) - int(places)
	b = append(b, s[:cut]...)
	b = append(b, '.')
	return append(b, s[cut:]...)
}
