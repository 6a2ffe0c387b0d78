package fees

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/storage"
)

// A lookup's answer depends on the price and the clock, which change with
// every request, and on reference data, which changes only with an import or
// a newer embedded dataset. Everything that depends on reference data alone
// (which listing types a site offers and in what order, which rule applies to
// each type and category, the rule's amounts converted into the asked
// currency and rounded, the encoded JSON around the price-dependent figures)
// is computed once into a plan and reused while that data stays the same.
//
// How a plan knows it is still current, on every lookup, in the lookup's own
// storage snapshot:
//   - fee records (listing types, rules): every write of one also writes a new
//     random token under fees/rev (keys.go). The plans are held in a table
//     for one token; a lookup that reads another token starts a new table.
//     A token is never reused, so an import undone from its journal, which
//     puts the old token back with the old records, finds the old data again.
//   - geo records (the site, the asked currency, the ratios from each rule's
//     currency), which another package writes: the plan keeps the values it
//     was built from and compares them with the ones the lookup reads.
//
// Plans are keyed by site and currency, both of which must exist in storage
// before a plan is built, so the table is bounded by the reference data and
// not by what requests ask; maxPlans bounds it further.

// maxPlans bounds the plans of one table; beyond it, plans are built for the
// lookup and not kept.
const maxPlans = 1024

// priceTable holds the plans of one revision of the fee records.
type priceTable struct {
	rev   string
	mu    sync.RWMutex
	plans map[planKey]*plan
}

type planKey struct{ site, currency string }

// plan is what pricing a site's listing types in one currency needs, apart
// from the price and the time. It is never modified once built.
type plan struct {
	site     geo.Site
	currency geo.Currency
	// convs are the ratios the plan converted rule amounts with, from each
	// rule currency into the plan's currency.
	convs []planConv
	// types are the site's listing types, from the most to the least
	// exposed; listErr is what listing them all fails with, if anything.
	types   []*planType
	listErr error
	byID    map[string]*planType
}

type planConv struct {
	from  string
	rate  money.Dec
	found bool
}

// planType is one listing type of the site, with the terms of its general
// rule and of each category that has a rule of its own.
type planType struct {
	lt         ListingType
	err        error // the listing type's record could not be read
	general    *terms
	byCategory map[string]*terms
}

// termsFor returns the terms that apply to category.
func (pt *planType) termsFor(category string) *terms {
	if t, ok := pt.byCategory[category]; ok {
		return t
	}
	return pt.general
}

// terms are one rule of one listing type in the plan's currency.
type terms struct {
	// err is the error of pricing with this rule: no ratio from the rule's
	// currency, or a record that cannot be read.
	err error
	lt  *ListingType

	places   int32
	pct      money.Dec // meli_percentage_fee + financing_add_on_fee
	meli     money.Dec
	fin      money.Dec
	listing  money.Dec // the listing fee, converted and rounded
	hasFixed bool      // the rule charges a fixed fee
	anyPrice bool      // ... at every price above 0, not only below a threshold
	below    money.Dec // the threshold, converted
	fixed    money.Dec // the fixed fee, converted
	// fixedRounded is fixed rounded, and zero the rounded zero: the
	// sale_fee_details fixed_fee when the fixed fee applies and when not.
	fixedRounded money.Dec
	zero         money.Dec
	// constant is set when the sale fee is 0 at every price.
	constant bool
	// The figures as integers, for fastSale, and fixedRounded written.
	pctI, fixedI, belowI fixedPoint
	fixedText            []byte

	// The answer object encoded, around the figures that depend on the
	// price: head + sale + mid + fixed fee + `,"gross_amount":` + sale + tail
	// + stop time + `"}`.
	head, mid, tail []byte
}

// saleFee returns the sale fee and the fixed fee part of it, rounded, at
// price: price x percentage / 100 + the fixed fee (when the price is above 0
// and, with a threshold, below it), rounded once to the currency's places.
func (t *terms) saleFee(price money.Dec) (sale, fixed money.Dec) {
	if t.constant {
		return t.zero, t.zero
	}
	add := money.Dec{}
	fixed = t.zero
	if t.hasFixed && price.Sign() > 0 && (t.anyPrice || price.Cmp(t.below) < 0) {
		add, fixed = t.fixed, t.fixedRounded
	}
	return price.Percent(t.pct).Add(add).Round(t.places), fixed
}

// currentPlan returns the plan for the site and the currency as they are in
// tx, building it when there is none or the data it was built from changed.
func (s *Service) currentPlan(tx storage.Tx, site geo.Site, cur geo.Currency) (*plan, error) {
	rev, err := tx.Get(revKey())
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return nil, errs.Internalf(err, "read fees revision")
	}
	tab := s.table.Load()
	if tab == nil || tab.rev != string(rev) {
		tab = &priceTable{rev: string(rev), plans: map[planKey]*plan{}}
		s.table.Store(tab)
	}
	key := planKey{site.ID, cur.ID}
	tab.mu.RLock()
	pl := tab.plans[key]
	tab.mu.RUnlock()
	if pl != nil {
		ok, err := pl.current(tx, site, cur)
		if err != nil {
			return nil, err
		}
		if ok {
			return pl, nil
		}
	}
	pl, err = buildPlan(tx, site, cur)
	if err != nil {
		return nil, err
	}
	tab.mu.Lock()
	if _, ok := tab.plans[key]; ok || len(tab.plans) < maxPlans {
		tab.plans[key] = pl
	}
	tab.mu.Unlock()
	return pl, nil
}

// current reports whether the geo data pl was built from is still what tx
// holds. The fee records are checked by the table's revision.
func (pl *plan) current(tx storage.Tx, site geo.Site, cur geo.Currency) (bool, error) {
	if !pl.site.Equal(site) || pl.currency != cur {
		return false, nil
	}
	for _, c := range pl.convs {
		if c.from == cur.ID {
			continue // the same currency: a ratio of 1
		}
		conv, err := geo.GetConversion(tx, c.from, cur.ID)
		if errs.Is(err, errs.NotFound) {
			if c.found {
				return false, nil
			}
			continue
		}
		if err != nil {
			return false, err
		}
		if !c.found || conv.Rate.Cmp(c.rate) != 0 {
			return false, nil
		}
	}
	return true, nil
}

// buildPlan reads the site's listing types and rules in tx and prices them
// in cur as far as the price allows.
func buildPlan(tx storage.Tx, site geo.Site, cur geo.Currency) (*plan, error) {
	pl := &plan{site: site, currency: cur, byID: map[string]*planType{}}
	prefix := listingTypePrefix(site.ID)
	it := tx.Iterate(storage.Prefix(prefix))
	for ; it.Valid(); it.Next() {
		id := keycodec.Read(it.Key()[len(prefix):]).Str()
		pt := &planType{}
		b, err := it.Value()
		if err == nil {
			pt.lt, err = listingTypeCache.Decode(b)
			if err != nil {
				pt.err = errs.Internalf(err, "decode listing type")
			}
		} else {
			pt.err = errs.Internalf(err, "read listing type")
		}
		if err != nil && pl.listErr == nil {
			pl.listErr = err
		}
		pl.byID[id] = pt
		pl.types = append(pl.types, pt)
	}
	it.Close()
	slices.SortFunc(pl.types, func(a, b *planType) int {
		return slices.Index(ListingTypeIDs, a.lt.ID) - slices.Index(ListingTypeIDs, b.lt.ID)
	})

	rates := map[string]int{} // rule currency -> index in pl.convs
	for _, pt := range pl.types {
		if pt.err != nil {
			continue
		}
		general := Rule{SiteID: site.ID, ListingTypeID: pt.lt.ID, CategoryID: GeneralCategory, CurrencyID: site.DefaultCurrencyID}
		prefix := rulePrefix(site.ID, pt.lt.ID)
		it := tx.Iterate(storage.Prefix(prefix))
		for ; it.Valid(); it.Next() {
			category := keycodec.Read(it.Key()[len(prefix):]).Str()
			t, err := pl.ruleTerms(tx, &pt.lt, it, rates)
			if err != nil {
				it.Close()
				return nil, err
			}
			if category == GeneralCategory {
				pt.general = t
				continue
			}
			if pt.byCategory == nil {
				pt.byCategory = map[string]*terms{}
			}
			pt.byCategory[category] = t
		}
		it.Close()
		if pt.general == nil {
			t, err := pl.terms(tx, &pt.lt, general, rates)
			if err != nil {
				return nil, err
			}
			pt.general = t
		}
	}
	return pl, nil
}

// ruleTerms returns the terms of the rule at it; a rule that cannot be read
// gives terms that fail with the reason.
func (pl *plan) ruleTerms(tx storage.Tx, lt *ListingType, it storage.Iterator, rates map[string]int) (*terms, error) {
	b, err := it.Value()
	if err != nil {
		return &terms{err: errs.Internalf(err, "read fee rule")}, nil
	}
	r, err := ruleCache.Decode(b)
	if err != nil {
		return &terms{err: errs.Internalf(err, "decode fee rule")}, nil
	}
	return pl.terms(tx, lt, r, rates)
}

// terms converts rule r of listing type lt into the plan's currency; rates
// memoizes the ratios already read (indexes into pl.convs).
func (pl *plan) terms(tx storage.Tx, lt *ListingType, r Rule, rates map[string]int) (*terms, error) {
	i, ok := rates[r.CurrencyID]
	if !ok {
		c := planConv{from: r.CurrencyID}
		conv, err := geo.GetConversion(tx, r.CurrencyID, pl.currency.ID)
		switch {
		case err == nil:
			c.rate, c.found = conv.Rate, true
		case !errs.Is(err, errs.NotFound):
			return nil, err
		}
		i = len(pl.convs)
		rates[r.CurrencyID] = i
		pl.convs = append(pl.convs, c)
	}
	c := pl.convs[i]
	if !c.found {
		return &terms{err: errs.Invalidf("Invalid currency_id: %s. There is no conversion from %s", pl.currency.ID, r.CurrencyID)}, nil
	}
	return newTerms(lt, r, c.rate, pl.currency), nil
}

// newTerms returns the terms of rule r of listing type lt in currency cur,
// the rule's amounts converted with rate.
func newTerms(lt *ListingType, r Rule, rate money.Dec, cur geo.Currency) *terms {
	places := int32(cur.DecimalPlaces)
	t := &terms{
		lt:       lt,
		places:   places,
		pct:      r.MeliPercentageFee.Add(r.FinancingAddOnFee),
		meli:     r.MeliPercentageFee,
		fin:      r.FinancingAddOnFee,
		listing:  r.ListingFee.Mul(rate).Round(places),
		hasFixed: r.FixedFee.Sign() > 0,
		anyPrice: r.FixedFeeBelow.IsZero(),
		below:    r.FixedFeeBelow.Mul(rate),
		fixed:    r.FixedFee.Mul(rate),
		zero:     money.Dec{}.Round(places),
	}
	t.fixedRounded = t.fixed.Round(places)
	t.constant = t.pct.IsZero() && !t.hasFixed
	t.pctI, t.fixedI, t.belowI = fixedPointOf(t.pct), fixedPointOf(t.fixed), fixedPointOf(t.below)
	t.fixedText = []byte(t.fixedRounded.String())
	t.encode(cur.ID)
	return t
}

// tableHolder is embedded in Service: the price table of the fee records'
// latest revision seen.
type tableHolder struct {
	table atomic.Pointer[priceTable]
}
