package fees

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/storage"
)

// The lookup as it was first written: every request reads and decodes the
// site's listing types and rules and does all the fee arithmetic. It is kept
// here, frozen, as the model the served answers are compared with; it reads
// storage directly and shares nothing with the code it checks but the key
// layout and checkCategory.

type oracleParams struct {
	price    money.Dec
	rates    map[string]money.Dec
	category string
	currency geo.Currency
	site     geo.Site
}

func oracleListingPrices(ctx context.Context, store storage.Store, now time.Time, siteID string, q Query) ([]ListingPrice, error) {
	var out []ListingPrice
	err := store.View(ctx, func(tx storage.Tx) error {
		p, err := oracleReadParams(tx, siteID, q)
		if err != nil {
			return err
		}
		var types []ListingType
		if q.ListingTypeID != "" {
			lt, err := oracleGetListingType(tx, siteID, q.ListingTypeID)
			if errs.Is(err, errs.NotFound) {
				return errs.Invalidf("Invalid listing_type_id: %s. The site %s does not offer it", q.ListingTypeID, siteID)
			}
			if err != nil {
				return err
			}
			types = []ListingType{lt}
		} else if types, err = oracleSiteListingTypes(tx, siteID); err != nil {
			return err
		}
		out = make([]ListingPrice, 0, len(types))
		for _, lt := range types {
			lp, err := oraclePrice(tx, p, lt, now)
			if err != nil {
				return err
			}
			out = append(out, lp)
		}
		return nil
	})
	return out, err
}

func oracleListingPrice(ctx context.Context, store storage.Store, now time.Time, siteID, listingTypeID string, q Query) (ListingPrice, error) {
	var out ListingPrice
	err := store.View(ctx, func(tx storage.Tx) error {
		p, err := oracleReadParams(tx, siteID, q)
		if err != nil {
			return err
		}
		lt, err := oracleGetListingType(tx, siteID, listingTypeID)
		if err != nil {
			return err
		}
		out, err = oraclePrice(tx, p, lt, now)
		return err
	})
	return out, err
}

func oracleReadParams(tx storage.Tx, siteID string, q Query) (oracleParams, error) {
	site, err := geo.GetSite(tx, siteID)
	if err != nil {
		return oracleParams{}, err
	}
	p := oracleParams{site: site, category: GeneralCategory, rates: map[string]money.Dec{}}
	if q.Price != "" {
		d, err := money.Parse(q.Price)
		if err != nil || d.Sign() < 0 {
			return oracleParams{}, errs.Invalidf("Invalid price: %s. It must be a non-negative number", q.Price)
		}
		p.price = d
	}
	if q.Quantity != "" {
		n, err := strconv.Atoi(q.Quantity)
		if err != nil || n < 1 || n > 1_000_000_000 {
			return oracleParams{}, errs.Invalidf("Invalid quantity: %s. It must be a positive integer", q.Quantity)
		}
	}
	if q.CategoryID != "" {
		if err := checkCategory(siteID, q.CategoryID); err != nil {
			return oracleParams{}, err
		}
		p.category = q.CategoryID
	}
	cur := site.DefaultCurrencyID
	if q.CurrencyID != "" {
		cur = q.CurrencyID
	}
	p.currency, err = geo.GetCurrency(tx, cur)
	if errs.Is(err, errs.NotFound) {
		return oracleParams{}, errs.Invalidf("Invalid currency_id: %s", cur)
	}
	if err != nil {
		return oracleParams{}, err
	}
	return p, nil
}

func oracleGetListingType(tx storage.Tx, siteID, id string) (ListingType, error) {
	b, err := tx.Get(listingTypeKey(siteID, id))
	if errors.Is(err, storage.ErrNotFound) {
		return ListingType{}, errs.NotFoundf("Listing type not found: %s for site %s", id, siteID)
	}
	if err != nil {
		return ListingType{}, errs.Internalf(err, "read listing type")
	}
	var lt ListingType
	if err := json.Unmarshal(b, &lt); err != nil {
		return ListingType{}, errs.Internalf(err, "decode listing type")
	}
	return lt, nil
}

func oracleSiteListingTypes(tx storage.Tx, siteID string) ([]ListingType, error) {
	var out []ListingType
	it := tx.Iterate(storage.Prefix(listingTypePrefix(siteID)))
	defer it.Close()
	for ; it.Valid(); it.Next() {
		b, err := it.Value()
		if err != nil {
			return nil, err
		}
		var lt ListingType
		if err := json.Unmarshal(b, &lt); err != nil {
			return nil, err
		}
		out = append(out, lt)
	}
	slices.SortFunc(out, func(a, b ListingType) int {
		return slices.Index(ListingTypeIDs, a.ID) - slices.Index(ListingTypeIDs, b.ID)
	})
	return out, nil
}

func oracleRule(tx storage.Tx, site geo.Site, lt ListingType, category string) (Rule, error) {
	for _, c := range []string{category, GeneralCategory} {
		b, err := tx.Get(ruleKey(site.ID, lt.ID, c))
		if err == nil {
			var r Rule
			if err := json.Unmarshal(b, &r); err != nil {
				return Rule{}, errs.Internalf(err, "decode fee rule")
			}
			return r, nil
		}
		if !errors.Is(err, storage.ErrNotFound) {
			return Rule{}, errs.Internalf(err, "read fee rule")
		}
	}
	return Rule{SiteID: site.ID, ListingTypeID: lt.ID, CategoryID: GeneralCategory, CurrencyID: site.DefaultCurrencyID}, nil
}

func oraclePrice(tx storage.Tx, p oracleParams, lt ListingType, now time.Time) (ListingPrice, error) {
	r, err := oracleRule(tx, p.site, lt, p.category)
	if err != nil {
		return ListingPrice{}, err
	}
	rate, ok := p.rates[r.CurrencyID]
	if !ok {
		conv, err := geo.GetConversion(tx, r.CurrencyID, p.currency.ID)
		if errs.Is(err, errs.NotFound) {
			return ListingPrice{}, errs.Invalidf("Invalid currency_id: %s. There is no conversion from %s", p.currency.ID, r.CurrencyID)
		}
		if err != nil {
			return ListingPrice{}, err
		}
		rate = conv.Rate
		p.rates[r.CurrencyID] = rate
	}
	places := int32(p.currency.DecimalPlaces)
	pct := r.MeliPercentageFee.Add(r.FinancingAddOnFee)
	fixed := money.Dec{}
	if p.price.Sign() > 0 && r.FixedFee.Sign() > 0 {
		below := r.FixedFeeBelow.Mul(rate)
		if r.FixedFeeBelow.IsZero() || p.price.Cmp(below) < 0 {
			fixed = r.FixedFee.Mul(rate)
		}
	}
	sale := p.price.Percent(pct).Add(fixed).Round(places)
	listing := r.ListingFee.Mul(rate).Round(places)
	return ListingPrice{
		ListingTypeID:     lt.ID,
		ListingTypeName:   lt.Name,
		ListingExposure:   lt.Exposure,
		RequiresPicture:   lt.RequiresPicture,
		CurrencyID:        p.currency.ID,
		ListingFeeAmount:  listing,
		ListingFeeDetails: FeeDetails{FixedFee: listing, GrossAmount: listing},
		SaleFeeAmount:     sale,
		SaleFeeDetails: SaleFeeDetails{PercentageFee: pct, MeliPercentageFee: r.MeliPercentageFee,
			FinancingAddOnFee: r.FinancingAddOnFee, FixedFee: fixed.Round(places), GrossAmount: sale},
		FreeRelist: lt.FreeRelist,
		StopTime:   now.AddDate(0, 0, lt.DurationDays).UTC().Format("2006-01-02T15:04:05.000Z07:00"),
	}, nil
}
