// Package fees computes listing fees: for a site, a listing type, a price, a
// category and a currency, what publishing and selling will cost. Money is
// exact decimal arithmetic, rounded by the currency's decimal places.
package fees

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"marketplace/clock"
	"marketplace/errs"
	"marketplace/geo"
	"marketplace/geo/money"
	"marketplace/storage"
)

// Service answers listing-fee lookups.
type Service struct {
	store storage.Store
	geo   *geo.Service
	clock clock.Clock
}

// UseClock sets the clock that dates stop_time; the default is the wall clock. Call it
// before the service is used.
func (s *Service) UseClock(c clock.Clock) {
	if c != nil {
		s.clock = c
	}
}

// New returns the fees service.
func New(store storage.Store, g *geo.Service) *Service {
	return &Service{store: store, geo: g, clock: clock.Wall{}}
}

// Query is a listing-price lookup as the caller sends it: every field is
// optional text, parsed and checked here.
type Query struct {
	Price         string
	Quantity      string
	ListingTypeID string
	CategoryID    string
	CurrencyID    string
}

// FeeDetails break the listing fee down.
type FeeDetails struct {
	FixedFee    money.Dec `json:"fixed_fee"`
	GrossAmount money.Dec `json:"gross_amount"`
}

// SaleFeeDetails break the sale fee down.
type SaleFeeDetails struct {
	PercentageFee     money.Dec `json:"percentage_fee"`
	MeliPercentageFee money.Dec `json:"meli_percentage_fee"`
	FinancingAddOnFee money.Dec `json:"financing_add_on_fee"`
	FixedFee          money.Dec `json:"fixed_fee"`
	GrossAmount       money.Dec `json:"gross_amount"`
}

// ListingPrice is what a listing type costs.
type ListingPrice struct {
	ListingTypeID     string         `json:"listing_type_id"`
	ListingTypeName   string         `json:"listing_type_name"`
	ListingExposure   string         `json:"listing_exposure"`
	RequiresPicture   bool           `json:"requires_picture"`
	CurrencyID        string         `json:"currency_id"`
	ListingFeeAmount  money.Dec      `json:"listing_fee_amount"`
	ListingFeeDetails FeeDetails     `json:"listing_fee_details"`
	SaleFeeAmount     money.Dec      `json:"sale_fee_amount"`
	SaleFeeDetails    SaleFeeDetails `json:"sale_fee_details"`
	FreeRelist        bool           `json:"free_relist"`
	StopTime          string         `json:"stop_time"`
}

// maxQuantity bounds the quantity parameter.
const maxQuantity = 1_000_000_000

// params is a checked Query.
type params struct {
	price money.Dec
	// rates memoizes the ratio from a rule's currency to the asked one: the
	// rules of one site share a currency, and one lookup prices every type.
	rates    map[string]money.Dec
	category string
	currency geo.Currency
	site     geo.Site
}

// ListingPrices returns the prices of every listing type of the site, from
// the most to the least exposed, or of the one named by q.ListingTypeID.
// Errors: NotFound (unknown site), Invalid (bad price, quantity, category,
// currency, or a listing type the site does not offer).
func (s *Service) ListingPrices(ctx context.Context, siteID string, q Query) ([]ListingPrice, error) {
	now := s.clock.Now()
	var out []ListingPrice
	err := s.store.View(ctx, func(tx storage.Tx) error {
		p, err := readParams(tx, siteID, q)
		if err != nil {
			return err
		}
		var types []ListingType
		if q.ListingTypeID != "" {
			lt, err := getListingType(tx, siteID, q.ListingTypeID)
			if errs.Is(err, errs.NotFound) {
				return errs.Invalidf("Invalid listing_type_id: %s. The site %s does not offer it", q.ListingTypeID, siteID)
			}
			if err != nil {
				return err
			}
			types = []ListingType{lt}
		} else if types, err = siteListingTypes(tx, siteID); err != nil {
			return err
		}
		out = make([]ListingPrice, 0, len(types))
		for _, lt := range types {
			lp, err := price(tx, p, lt, now)
			if err != nil {
				return err
			}
			out = append(out, lp)
		}
		return nil
	})
	return out, err
}

// ListingPrice returns the price of one listing type of the site. Errors:
// NotFound (unknown site, or a listing type the site does not offer),
// Invalid (bad price, quantity, category or currency).
func (s *Service) ListingPrice(ctx context.Context, siteID, listingTypeID string, q Query) (ListingPrice, error) {
	now := s.clock.Now()
	var out ListingPrice
	err := s.store.View(ctx, func(tx storage.Tx) error {
		p, err := readParams(tx, siteID, q)
		if err != nil {
			return err
		}
		lt, err := getListingType(tx, siteID, listingTypeID)
		if err != nil {
			return err
		}
		out, err = price(tx, p, lt, now)
		return err
	})
	return out, err
}

func readParams(tx storage.Tx, siteID string, q Query) (params, error) {
	site, err := geo.GetSite(tx, siteID)
	if err != nil {
		return params{}, err
	}
	p := params{site: site, category: GeneralCategory, rates: map[string]money.Dec{}}
	if q.Price != "" {
		d, err := money.Parse(q.Price)
		if err != nil || d.Sign() < 0 {
			return params{}, errs.Invalidf("Invalid price: %s. It must be a non-negative number", q.Price)
		}
		p.price = d
	}
	if q.Quantity != "" {
		n, err := strconv.Atoi(q.Quantity)
		if err != nil || n < 1 || n > maxQuantity {
			return params{}, errs.Invalidf("Invalid quantity: %s. It must be a positive integer", q.Quantity)
		}
	}
	if q.CategoryID != "" {
		if err := checkCategory(siteID, q.CategoryID); err != nil {
			return params{}, err
		}
		p.category = q.CategoryID
	}
	cur := site.DefaultCurrencyID
	if q.CurrencyID != "" {
		cur = q.CurrencyID
	}
	p.currency, err = geo.GetCurrency(tx, cur)
	if errs.Is(err, errs.NotFound) {
		return params{}, errs.Invalidf("Invalid currency_id: %s", cur)
	}
	if err != nil {
		return params{}, err
	}
	return p, nil
}

// Decoded records, shared by every lookup (see money.DecodeCache).
var (
	listingTypeCache money.DecodeCache[ListingType]
	ruleCache        money.DecodeCache[Rule]
)

func getListingType(tx storage.Tx, siteID, id string) (ListingType, error) {
	b, err := tx.Get(listingTypeKey(siteID, id))
	if errors.Is(err, storage.ErrNotFound) {
		return ListingType{}, errs.NotFoundf("Listing type not found: %s for site %s", id, siteID)
	}
	if err != nil {
		return ListingType{}, errs.Internalf(err, "read listing type")
	}
	lt, err := listingTypeCache.Decode(b)
	if err != nil {
		return ListingType{}, errs.Internalf(err, "decode listing type")
	}
	return lt, nil
}

// siteListingTypes lists the site's listing types in the order of
// ListingTypeIDs: from the most to the least exposed.
func siteListingTypes(tx storage.Tx, siteID string) ([]ListingType, error) {
	var out []ListingType
	it := tx.Iterate(storage.Prefix(listingTypePrefix(siteID)))
	defer it.Close()
	for ; it.Valid(); it.Next() {
		b, err := it.Value()
		if err != nil {
			return nil, err
		}
		lt, err := listingTypeCache.Decode(b)
		if err != nil {
			return nil, err
		}
		out = append(out, lt)
	}
	slices.SortFunc(out, func(a, b ListingType) int {
		return slices.Index(ListingTypeIDs, a.ID) - slices.Index(ListingTypeIDs, b.ID)
	})
	return out, nil
}

// rule returns the rule for the category, else the site's general rule for
// the listing type; a listing type with no rule at all costs nothing.
func rule(tx storage.Tx, site geo.Site, lt ListingType, category string) (Rule, error) {
	for _, c := range []string{category, GeneralCategory} {
		b, err := tx.Get(ruleKey(site.ID, lt.ID, c))
		if err == nil {
			r, err := ruleCache.Decode(b)
			if err != nil {
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

// price computes one listing type's fees: sale fee = price x percentage / 100
// + fixed fee (per unit, when a price above 0 is below the rule's threshold), with
// the rule's amounts converted into the asked currency first and the total
// rounded once, half away from zero, to the currency's decimal places.
func price(tx storage.Tx, p params, lt ListingType, now time.Time) (ListingPrice, error) {
	r, err := rule(tx, p.site, lt, p.category)
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
