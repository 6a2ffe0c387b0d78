package stock

import (
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/storage"
)

// maxPrice bounds a price: prices stay below 1,000,000,000,000 in any
// currency, so that the price sort of site search can hold them as integers.
var maxPrice = money.MustParse("1000000000000")

// errPrice is the refusal of a price, quoting it as the exact decimal it is.
func errPrice(p money.Dec, why string, args ...any) *errs.Error {
	return errs.Invalidf("Invalid price: %s. "+why, append([]any{p}, args...)...)
}

// checkPriceShape checks what a price needs whatever its currency: greater
// than 0 and below maxPrice. Errors: Invalid.
func checkPriceShape(p money.Dec) error {
	if p.Sign() <= 0 {
		return errPrice(p, "It must be greater than 0")
	}
	if p.Cmp(maxPrice) >= 0 {
		return errPrice(p, "It must be less than %s", maxPrice)
	}
	return nil
}

// checkPricePlaces refuses a price with more decimals than its currency
// writes (the currency's decimal_places in the reference data: 0 for CLP
// and COP, 2 for ARS, BRL, USD...). Errors: Invalid, NotFound (currency).
func checkPricePlaces(tx storage.Tx, p money.Dec, currencyID string) error {
	cur, err := geo.GetCurrency(tx, currencyID)
	if err != nil {
		return err
	}
	if p.Places() > int32(cur.DecimalPlaces) {
		return errPrice(p, "A price in %s may have at most %d decimal places", cur.ID, cur.DecimalPlaces)
	}
	return nil
}

// priceHundredths is the sort key of a stored price in the site search
// index: exact for every currency of up to two decimal places; a price
// with more (a currency imported with 3 or 4) is truncated to hundredths,
// which keeps the order and leaves prices equal to the hundredth in
// publication order.
func priceHundredths(price string) int64 {
	p, err := money.Parse(price)
	if err != nil {
		return 0
	}
	n, _ := p.MinorUnits(2)
	return n
}
