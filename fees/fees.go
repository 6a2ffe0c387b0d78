// Package fees computes listing fees: for a site, a listing type, a price, a
// category and a currency, what publishing and selling will cost. Money is
// exact decimal arithmetic, rounded by the currency's decimal places.
package fees

import (
	"context"
	"errors"
	"strconv"

	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/storage"
)

// Service answers listing-fee lookups.
type Service struct {
	store storage.Store
	geo   *geo.Service
	clock clock.Clock
	tableHolder
}

// New returns the fees service. clk dates stop_time; g knows the sites and
// their currencies.
func New(store storage.Store, clk clock.Clock, g *geo.Service) *Service {
	return &Service{store: store, geo: g, clock: clk}
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

// lookup is a checked query with the plan that prices it (see table.go).
type lookup struct {
	plan     *plan
	price    money.Dec
	priceI   fixedPoint // price as integers, when it is a plain decimal that fits
	category string
	// one is the listing type asked for; without one, every type of the
	// plan is priced.
	one *planType
}

// count and at walk the listing types the lookup prices, in order.
func (l *lookup) count() int {
	if l.one != nil {
		return 1
	}
	return len(l.plan.types)
}

func (l *lookup) at(i int) *planType {
	if l.one != nil {
		return l.one
	}
	return l.plan.types[i]
}

// check returns the first error of pricing the lookup's listing types, in
// their order, if any.
func (l *lookup) check() error {
	for i := 0; i < l.count(); i++ {
		if err := l.at(i).termsFor(l.category).err; err != nil {
			return err
		}
	}
	return nil
}

// prepare checks q for the site inside tx and finds its plan. Errors, in
// this order: NotFound (unknown site), Invalid (bad price, quantity,
// category, unknown currency).
func (s *Service) prepare(tx storage.Tx, siteID string, q Query) (lookup, error) {
	if _, ok := tx.(storage.Prefetcher); ok {
		if err := storage.Prefetch(tx, PriceKeys(siteID, q.CurrencyID)...); err != nil {
			return lookup{}, err
		}
	}
	site, err := geo.GetSite(tx, siteID)
	if err != nil {
		return lookup{}, err
	}
	l := lookup{category: GeneralCategory, priceI: fixedPoint{ok: true}}
	if q.Price != "" {
		d, err := money.Parse(q.Price)
		if err != nil || d.Sign() < 0 {
			return lookup{}, errs.Invalidf("Invalid price: %s. It must be a non-negative number", q.Price)
		}
		l.price, l.priceI = d, parsePlain(q.Price)
	}
	if q.Quantity != "" {
		n, err := strconv.Atoi(q.Quantity)
		if err != nil || n < 1 || n > maxQuantity {
			return lookup{}, errs.Invalidf("Invalid quantity: %s. It must be a positive integer", q.Quantity)
		}
	}
	if q.CategoryID != "" {
		if err := checkCategory(siteID, q.CategoryID); err != nil {
			return lookup{}, err
		}
		l.category = q.CategoryID
	}
	cur := site.DefaultCurrencyID
	if q.CurrencyID != "" {
		cur = q.CurrencyID
	}
	currency, err := geo.GetCurrency(tx, cur)
	if errs.Is(err, errs.NotFound) {
		return lookup{}, errs.Invalidf("Invalid currency_id: %s", cur)
	}
	if err != nil {
		return lookup{}, err
	}
	l.plan, err = s.currentPlan(tx, site, currency)
	return l, err
}

// lookupAll prepares the lookup of ListingPrices.
func (s *Service) lookupAll(ctx context.Context, siteID string, q Query) (lookup, error) {
	var l lookup
	err := s.store.View(ctx, func(tx storage.Tx) error {
		var err error
		if l, err = s.prepare(tx, siteID, q); err != nil {
			return err
		}
		if q.ListingTypeID != "" {
			pt := l.plan.byID[q.ListingTypeID]
			if pt == nil {
				return errs.Invalidf("Invalid listing_type_id: %s. The site %s does not offer it", q.ListingTypeID, siteID)
			}
			if pt.err != nil {
				return pt.err
			}
			l.one = pt
		} else if l.plan.listErr != nil {
			return l.plan.listErr
		}
		return l.check()
	})
	return l, err
}

// lookupOne prepares the lookup of ListingPrice.
func (s *Service) lookupOne(ctx context.Context, siteID, listingTypeID string, q Query) (lookup, error) {
	var l lookup
	err := s.store.View(ctx, func(tx storage.Tx) error {
		var err error
		l, err = s.lookupOneIn(tx, siteID, listingTypeID, q)
		return err
	})
	return l, err
}

func (s *Service) lookupOneIn(tx storage.Tx, siteID, listingTypeID string, q Query) (lookup, error) {
	l, err := s.prepare(tx, siteID, q)
	if err != nil {
		return lookup{}, err
	}
	pt := l.plan.byID[listingTypeID]
	if pt == nil {
		return lookup{}, errs.NotFoundf("Listing type not found: %s for site %s", listingTypeID, siteID)
	}
	if pt.err != nil {
		return lookup{}, pt.err
	}
	l.one = pt
	return l, l.check()
}

// ListingPriceIn is ListingPrice read inside tx, a transaction of the
// service's store: for a caller that prices inside its own transaction,
// having prefetched PriceKeys with its first reads.
func (s *Service) ListingPriceIn(tx storage.Tx, siteID, listingTypeID string, q Query) (ListingPrice, error) {
	st := stopTimes{now: s.clock.Now()}
	l, err := s.lookupOneIn(tx, siteID, listingTypeID, q)
	if err != nil {
		return ListingPrice{}, err
	}
	return l.listingPrice(l.one, &st), nil
}

// PriceKeys are the keys that pricing on site siteID in currencyID reads
// first, for a caller's prefetch.
func PriceKeys(siteID, currencyID string) [][]byte {
	return append(geo.SiteKeys(siteID, currencyID), revKey())
}

// ListingPrices returns the prices of every listing type of the site, from
// the most to the least exposed, or of the one named by q.ListingTypeID.
// Errors: NotFound (unknown site), Invalid (bad price, quantity, category,
// currency, or a listing type the site does not offer).
func (s *Service) ListingPrices(ctx context.Context, siteID string, q Query) ([]ListingPrice, error) {
	st := stopTimes{now: s.clock.Now()}
	l, err := s.lookupAll(ctx, siteID, q)
	if err != nil {
		return nil, err
	}
	out := make([]ListingPrice, 0, l.count())
	for i := 0; i < l.count(); i++ {
		out = append(out, l.listingPrice(l.at(i), &st))
	}
	return out, nil
}

// ListingPrice returns the price of one listing type of the site. Errors:
// NotFound (unknown site, or a listing type the site does not offer),
// Invalid (bad price, quantity, category or currency).
func (s *Service) ListingPrice(ctx context.Context, siteID, listingTypeID string, q Query) (ListingPrice, error) {
	st := stopTimes{now: s.clock.Now()}
	l, err := s.lookupOne(ctx, siteID, listingTypeID, q)
	if err != nil {
		return ListingPrice{}, err
	}
	return l.listingPrice(l.one, &st), nil
}

// AppendListingPricesJSON appends the answer of ListingPrices to dst,
// encoded as encoding/json encodes it (HTML characters not escaped, no final
// newline): an array, or the one object when q.ListingTypeID is given. On
// an error nothing is appended. Errors: those of ListingPrices.
func (s *Service) AppendListingPricesJSON(ctx context.Context, dst []byte, siteID string, q Query) ([]byte, error) {
	st := stopTimes{now: s.clock.Now()}
	l, err := s.lookupAll(ctx, siteID, q)
	if err != nil {
		return dst, err
	}
	if l.one != nil {
		return l.appendJSON(dst, l.one, &st), nil
	}
	dst = append(dst, '[')
	for i := 0; i < l.count(); i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = l.appendJSON(dst, l.at(i), &st)
	}
	return append(dst, ']'), nil
}

// AppendListingPriceJSON appends the answer of ListingPrice to dst, encoded
// as encoding/json encodes it (HTML characters not escaped, no final
// newline). On an error nothing is appended. Errors: those of ListingPrice.
func (s *Service) AppendListingPriceJSON(ctx context.Context, dst []byte, siteID, listingTypeID string, q Query) ([]byte, error) {
	st := stopTimes{now: s.clock.Now()}
	l, err := s.lookupOne(ctx, siteID, listingTypeID, q)
	if err != nil {
		return dst, err
	}
	return l.appendJSON(dst, l.one, &st), nil
}

// listingPrice prices one listing type of the lookup.
func (l *lookup) listingPrice(pt *planType, st *stopTimes) ListingPrice {
	t := pt.termsFor(l.category)
	sale, fixed := t.saleFee(l.price)
	return ListingPrice{
		ListingTypeID:     t.lt.ID,
		ListingTypeName:   t.lt.Name,
		ListingExposure:   t.lt.Exposure,
		RequiresPicture:   t.lt.RequiresPicture,
		CurrencyID:        l.plan.currency.ID,
		ListingFeeAmount:  t.listing,
		ListingFeeDetails: FeeDetails{FixedFee: t.listing, GrossAmount: t.listing},
		SaleFeeAmount:     sale,
		SaleFeeDetails: SaleFeeDetails{PercentageFee: t.pct, MeliPercentageFee: t.meli,
			FinancingAddOnFee: t.fin, FixedFee: fixed, GrossAmount: sale},
		FreeRelist: t.lt.FreeRelist,
		StopTime:   string(st.get(t.lt.DurationDays)),
	}
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
