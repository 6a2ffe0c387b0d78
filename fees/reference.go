package fees

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/storage"
)

//go:embed data/fees.json
var dataFS embed.FS

// Record kinds owned by fees.
const (
	KindListingType = "listing_type"
	KindRule        = "fee_rule"
)

// GeneralCategory is the category of the rule that applies when no rule
// names the asked category.
const GeneralCategory = "general"

// Exposures are the listing exposures, from the most to the least visible.
var Exposures = []string{"highest", "high", "mid", "low", "lowest"}

// ListingType is one listing type offered on a site.
type ListingType struct {
	SiteID          string `json:"site_id"`
	ID              string `json:"id"`
	Name            string `json:"name"`
	Exposure        string `json:"exposure"`
	RequiresPicture bool   `json:"requires_picture"`
	FreeRelist      bool   `json:"free_relist"`
	// DurationDays is how long a listing lasts: stop_time is now plus this.
	DurationDays int `json:"duration_days"`
}

// Rule is the fee schedule of a listing type of a site for one category (or
// GeneralCategory). Amounts are in CurrencyID, and converted to the
// currency asked for.
type Rule struct {
	SiteID        string `json:"site_id"`
	ListingTypeID string `json:"listing_type_id"`
	CategoryID    string `json:"category_id"`
	CurrencyID    string `json:"currency_id"`
	// MeliPercentageFee plus FinancingAddOnFee is the percentage of the
	// price charged on a sale.
	MeliPercentageFee money.Dec `json:"meli_percentage_fee"`
	FinancingAddOnFee money.Dec `json:"financing_add_on_fee"`
	// FixedFee is charged per unit sold at a price below FixedFeeBelow; a
	// zero FixedFeeBelow means at every price.
	FixedFee      money.Dec `json:"fixed_fee"`
	FixedFeeBelow money.Dec `json:"fixed_fee_below"`
	// ListingFee is charged for publishing.
	ListingFee money.Dec `json:"listing_fee"`
}

type dataset struct {
	Version int64 `json:"version"`
	Records []struct {
		Kind string          `json:"kind"`
		Data json.RawMessage `json:"data"`
	} `json:"records"`
}

var (
	embeddedOnce sync.Once
	embeddedSet  dataset
	embeddedErr  error
)

func embedded() (dataset, error) {
	embeddedOnce.Do(func() {
		b, err := dataFS.ReadFile("data/fees.json")
		if err == nil {
			err = json.Unmarshal(b, &embeddedSet)
		}
		if err != nil {
			embeddedErr = fmt.Errorf("embedded fees dataset: %w", err)
		}
	})
	return embeddedSet, embeddedErr
}

// DatasetVersion is the version of the embedded dataset.
func DatasetVersion() int64 {
	set, _ := embedded()
	return set.Version
}

// LoadBuiltin loads the reference data embedded in the engine into storage,
// once per dataset version; records a user imported are kept over newer
// embedded ones. It needs the geo dataset loaded first (sites, currencies).
func (s *Service) LoadBuiltin(ctx context.Context) error {
	set, err := embedded()
	if err != nil {
		return err
	}
	return s.store.Update(ctx, func(tx storage.Tx) error {
		var stored int64
		err := kv.GetJSON(tx, versionKey(), &stored)
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		if err == nil && stored >= set.Version {
			return nil
		}
		for i, r := range set.Records {
			if _, err := s.upsert(tx, r.Kind, r.Data, false); err != nil {
				return fmt.Errorf("embedded fees record %d (%s): %w", i, r.Kind, err)
			}
		}
		return kv.SetJSON(tx, versionKey(), set.Version)
	})
}

// UpsertRecord writes one imported reference record of kind inside tx. It
// returns false when kind is not one of this package's kinds. Errors:
// Invalid (a malformed record, an unknown site, currency or listing type).
func (s *Service) UpsertRecord(tx storage.Tx, kind string, data json.RawMessage) (bool, error) {
	return s.upsert(tx, kind, data, true)
}

func (s *Service) upsert(tx storage.Tx, kind string, data json.RawMessage, imported bool) (bool, error) {
	var (
		id  string
		key []byte
		val any
	)
	switch kind {
	case KindListingType:
		var v ListingType
		if err := geo.DecodeRecord(data, &v); err != nil {
			return true, err
		}
		if err := validateListingType(tx, v); err != nil {
			return true, err
		}
		id, key, val = v.SiteID+"/"+v.ID, listingTypeKey(v.SiteID, v.ID), v
	case KindRule:
		var v Rule
		if err := geo.DecodeRecord(data, &v); err != nil {
			return true, err
		}
		v, err := validateRule(tx, v)
		if err != nil {
			return true, err
		}
		id, key, val = v.SiteID+"/"+v.ListingTypeID+"/"+v.CategoryID, ruleKey(v.SiteID, v.ListingTypeID, v.CategoryID), v
	default:
		return false, nil
	}
	if !imported {
		if _, err := tx.Get(importedKey(kind, id)); err == nil {
			return true, nil
		} else if !errors.Is(err, storage.ErrNotFound) {
			return true, err
		}
	}
	if err := kv.SetJSON(tx, key, val); err != nil {
		return true, err
	}
	// A new revision for the lookups' price table (see table.go).
	if err := tx.Set(revKey(), []byte(rand.Text())); err != nil {
		return true, err
	}
	if imported {
		return true, tx.Set(importedKey(kind, id), []byte{})
	}
	return true, nil
}

func checkSite(tx storage.Tx, siteID string) (geo.Site, error) {
	if siteID == "" {
		return geo.Site{}, errs.Invalidf("The fields [site_id] are required for requested call")
	}
	site, err := geo.GetSite(tx, siteID)
	if errs.Is(err, errs.NotFound) {
		return geo.Site{}, errs.Invalidf("Site not found: %s", siteID)
	}
	return site, err
}

func validateListingType(tx storage.Tx, v ListingType) error {
	if _, err := checkSite(tx, v.SiteID); err != nil {
		return err
	}
	if v.ID == "" {
		return errs.Invalidf("The fields [id] are required for requested call")
	}
	if !IsListingType(v.ID) {
		return errs.Invalidf("Invalid id: %s. It must be one of %s", v.ID, strings.Join(ListingTypeIDs, ", "))
	}
	if strings.TrimSpace(v.Name) == "" {
		return errs.Invalidf("The fields [name] are required for requested call")
	}
	if utf8.RuneCountInString(v.Name) > 100 || strings.ContainsRune(v.Name, 0) {
		return errs.Invalidf("Invalid name: at most 100 characters of text")
	}
	if !isExposure(v.Exposure) {
		return errs.Invalidf("Invalid exposure: %q. It must be one of %s", v.Exposure, strings.Join(Exposures, ", "))
	}
	if v.DurationDays < 1 || v.DurationDays > 36500 {
		return errs.Invalidf("Invalid duration_days: %d. It must lie between 1 and 36500", v.DurationDays)
	}
	return nil
}

func isExposure(e string) bool {
	for _, x := range Exposures {
		if x == e {
			return true
		}
	}
	return false
}

// validateRule checks v and fills its defaults (the site's currency).
func validateRule(tx storage.Tx, v Rule) (Rule, error) {
	site, err := checkSite(tx, v.SiteID)
	if err != nil {
		return v, err
	}
	if v.ListingTypeID == "" {
		return v, errs.Invalidf("The fields [listing_type_id] are required for requested call")
	}
	if _, err := getListingType(tx, v.SiteID, v.ListingTypeID); err != nil {
		if errs.Is(err, errs.NotFound) {
			return v, errs.Invalidf("Listing type %s is not offered on site %s; import it first", v.ListingTypeID, v.SiteID)
		}
		return v, err
	}
	if v.CategoryID == "" {
		v.CategoryID = GeneralCategory
	}
	if v.CategoryID != GeneralCategory {
		if err := checkCategory(v.SiteID, v.CategoryID); err != nil {
			return v, err
		}
	}
	if v.CurrencyID == "" {
		v.CurrencyID = site.DefaultCurrencyID
	}
	if _, err := geo.GetCurrency(tx, v.CurrencyID); err != nil {
		if errs.Is(err, errs.NotFound) {
			return v, errs.Invalidf("Currency not found: %s", v.CurrencyID)
		}
		return v, err
	}
	for _, f := range []struct {
		name string
		fee  money.Dec
	}{
		{"meli_percentage_fee", v.MeliPercentageFee}, {"financing_add_on_fee", v.FinancingAddOnFee},
		{"fixed_fee", v.FixedFee}, {"fixed_fee_below", v.FixedFeeBelow}, {"listing_fee", v.ListingFee},
	} {
		if f.fee.Sign() < 0 {
			return v, errs.Invalidf("Invalid %s: %s. It must not be negative", f.name, f.fee)
		}
	}
	if v.MeliPercentageFee.Add(v.FinancingAddOnFee).Cmp(money.FromInt(100)) > 0 {
		return v, errs.Invalidf("meli_percentage_fee plus financing_add_on_fee must not exceed 100")
	}
	return v, nil
}

// checkCategory checks that a category id is the site's id (three capital
// letters) followed by 1 to 12 digits: there is no category tree to look it
// up in.
func checkCategory(siteID, categoryID string) error {
	if !isCategoryOf(siteID, categoryID) {
		return errs.Invalidf("Invalid category_id: %s. It must be the site id followed by digits, such as %s1055", categoryID, siteID)
	}
	return nil
}

func isCategoryOf(siteID, id string) bool {
	if n := len(id) - 3; n < 1 || n > 12 || id[:3] != siteID {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; i < 3 && (c < 'A' || c > 'Z') || i >= 3 && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}
