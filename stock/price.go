package stock

import (
	"encoding/json"
	"strconv"
	"strings"

	"marketplace/errs"
)

// Price limits. Every currency of the shipped sites is written with at most
// two decimals, so prices are kept in hundredths: exact, and comparable as
// integers for the price sorts of site search.
const (
	// PriceDecimals is the most decimals a price may have (beyond trailing
	// zeros).
	PriceDecimals = 2
	// MaxPriceIntegerDigits bounds the integer part: prices stay below
	// 1,000,000,000,000.
	MaxPriceIntegerDigits = 12
)

// Price is an exact item price.
type Price struct {
	// Cents is the price in hundredths of the currency unit.
	Cents int64
}

// ParsePrice reads a price sent as a JSON number. It must be a plain decimal
// (no exponent), greater than 0, with at most PriceDecimals decimals and
// MaxPriceIntegerDigits integer digits. Errors: Invalid.
func ParsePrice(n json.Number) (Price, error) {
	s := string(n)
	bad := func(why string) (Price, error) {
		return Price{}, errs.Invalidf("Invalid price: %s. %s", s, why)
	}
	if strings.HasPrefix(s, "-") {
		return bad("It must be greater than 0")
	}
	intPart, frac, _ := strings.Cut(s, ".")
	if intPart == "" || !allDigits(intPart) || !allDigits(frac) || (strings.Contains(s, ".") && frac == "") {
		return bad("It must be a decimal number such as 1500 or 1500.50")
	}
	frac = strings.TrimRight(frac, "0")
	if len(frac) > PriceDecimals {
		return bad("It may have at most 2 decimals")
	}
	intPart = strings.TrimLeft(intPart, "0")
	if len(intPart) > MaxPriceIntegerDigits {
		return bad("It must be less than 1000000000000")
	}
	frac += strings.Repeat("0", PriceDecimals-len(frac))
	cents, err := strconv.ParseInt(intPart+frac, 10, 64)
	if err != nil && intPart+frac != "" {
		return bad("It must be a decimal number such as 1500 or 1500.50")
	}
	if cents <= 0 {
		return bad("It must be greater than 0")
	}
	return Price{Cents: cents}, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Number writes the price as the shortest exact decimal: 1500, 1500.5,
// 1500.55.
func (p Price) Number() json.Number {
	whole := strconv.FormatInt(p.Cents/100, 10)
	c := p.Cents % 100
	switch {
	case c == 0:
		return json.Number(whole)
	case c%10 == 0:
		return json.Number(whole + "." + strconv.FormatInt(c/10, 10))
	default:
		return json.Number(whole + "." + strconv.FormatInt(c/10, 10) + strconv.FormatInt(c%10, 10))
	}
}
