package stock

import (
	"strings"

	"github.com/marketplace/marketplace/geo"
)

// permalink is the item's public page, in the public API's form
// https://articulo.<domain>/MLA-1400000001-title-words-_JM, on the site's
// domain.
func permalink(it Item, site geo.Site) string {
	domain := site.WebDomain()
	num := strings.TrimPrefix(it.ID, it.SiteID)
	slug := strings.Join(tokens(it.Title), "-")
	if slug != "" {
		slug += "-"
	}
	return "https://articulo." + domain + "/" + it.SiteID + "-" + num + "-" + slug + "_JM"
}
