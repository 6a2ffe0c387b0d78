package stock

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/marketplace/marketplace/catalog"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/fees"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/internal/textcheck"
	"github.com/marketplace/marketplace/storage"
)

func errFieldsRequired(field string) *errs.Error {
	return errs.WithCode(errs.Invalid, "bad_request", "The fields ["+field+"] are required for requested call")
}

func errFieldsInvalid(field string) *errs.Error {
	return errs.WithCode(errs.Invalid, "bad_request", "The fields ["+field+"] are invalid for requested call")
}

// checkShape validates what needs no stored data.
func checkShape(in *NewItem, multiOrigin bool) error {
	in.Title = strings.TrimSpace(in.Title)
	if in.Title == "" {
		return errFieldsRequired("title")
	}
	if n := utf8.RuneCountInString(in.Title); n > MaxTitleLength {
		return errs.Invalidf("The field [title] must be at most %d characters; it has %d", MaxTitleLength, n)
	}
	if err := textcheck.Line("title", in.Title); err != nil {
		return err
	}
	if in.CategoryID == "" {
		return errFieldsRequired("category_id")
	}
	if !in.Price.Given() {
		return errFieldsRequired("price")
	}
	if err := checkPriceShape(in.Price); err != nil {
		return err
	}
	if in.ListingTypeID == "" {
		return errFieldsRequired("listing_type_id")
	}
	if !fees.IsListingType(in.ListingTypeID) {
		return errs.Invalidf("Invalid listing_type_id: %s. Valid values are: [%s]", in.ListingTypeID, strings.Join(fees.ListingTypeIDs, ", "))
	}
	switch in.Condition {
	case "":
		in.Condition = ConditionNew
	case ConditionNew, ConditionUsed, ConditionNotSpecified:
	default:
		return errs.Invalidf("Invalid condition: %s. Valid values are: [new, used, not_specified]", in.Condition)
	}
	if len(in.Channels) == 0 {
		in.Channels = []string{"marketplace"}
	}
	for _, c := range in.Channels {
		if c != "marketplace" && c != "mshops" {
			return errs.Invalidf("Invalid channel: %s. Valid values are: [marketplace, mshops]", c)
		}
	}
	if len(in.Thumbnail) > 500 {
		return errs.Invalidf("The field [thumbnail] must be at most 500 characters")
	}
	if q := in.AvailableQuantity; !multiOrigin && q != nil && (*q < 0 || *q > MaxQuantity) {
		return errs.Invalidf("Invalid available_quantity: %d. It must be between 0 and %d", *q, MaxQuantity)
	}
	return nil
}

// checkCurrency reads the site inside the Update's tx: a View of its own
// would need a second connection while the Update holds one, which a pool
// of one never has.
func checkCurrency(tx storage.Tx, siteID string, in *NewItem) (geo.Site, error) {
	site, err := geo.GetSite(tx, siteID)
	if err != nil {
		return geo.Site{}, err
	}
	if in.CurrencyID == "" {
		in.CurrencyID = site.DefaultCurrencyID
		return site, nil
	}
	valid := site.CurrencyIDs()
	if slices.Contains(valid, in.CurrencyID) {
		return site, nil
	}
	return geo.Site{}, errs.Invalidf("Invalid currency_id: %s. Valid values for site %s are: [%s]", in.CurrencyID, siteID, strings.Join(valid, ", "))
}

func checkCategory(siteID, categoryID string) error {
	rest, ok := strings.CutPrefix(categoryID, siteID)
	if !ok || rest == "" || len(rest) > 12 || strings.Trim(rest, "0123456789") != "" {
		return errs.Invalidf("Invalid category_id: %s. A category id of site %s is %s followed by digits, such as %s1055", categoryID, siteID, siteID, siteID)
	}
	return nil
}

// checkCatalogProduct applies the catalog item rules: catalog_listing needs
// a catalog_product_id, which must name an active product of the site.
func checkCatalogProduct(tx storage.Tx, siteID string, in NewItem) error {
	if in.CatalogProductID == "" {
		if in.CatalogListing {
			return errFieldsRequired("catalog_product_id")
		}
		return nil
	}
	p, err := catalog.GetProduct(tx, in.CatalogProductID)
	if errs.Is(err, errs.NotFound) || (err == nil && !strings.HasPrefix(p.ID, siteID)) {
		return errs.Invalidf("Invalid catalog_product_id: %s. It must be a catalog product of site %s", in.CatalogProductID, siteID)
	}
	if err != nil {
		return err
	}
	if p.Status != "active" {
		return errs.Invalidf("Invalid catalog_product_id: %s. The catalog product is inactive", in.CatalogProductID)
	}
	return nil
}
