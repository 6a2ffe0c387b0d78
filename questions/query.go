package questions

import (
	"net/url"
	"strconv"

	"github.com/marketplace/marketplace/errs"
)

// errNoToken answers an anonymous search of a seller's questions.
var errNoToken = errs.WithCode(errs.Unauthorized, "unauthorized", "Missing access token: send Authorization: Bearer <token>")

// ParseSearch reads a search from its query parameters, for caller (0 when
// anonymous): the sorts (ParseSorts), item or its alias item_id, status,
// seller_id or its alias seller (the id available_filters gives the seller
// filter), from, totalDivisions and division. The page and the
// api_version are the caller's to read. A seller's questions are for the
// seller's token only: an anonymous search of them lacks the token rather
// than the right, and is Unauthorized. Errors: Invalid, Unauthorized.
func ParseSearch(params url.Values, caller int64) (SearchQuery, error) {
	sorts, err := ParseSorts(params.Get("sort_fields"), params.Get("sort_types"))
	if err != nil {
		return SearchQuery{}, err
	}
	q := SearchQuery{ItemID: params.Get("item"), Status: params.Get("status"), Sorts: sorts}
	if q.ItemID == "" {
		q.ItemID = params.Get("item_id")
	}
	if q.SellerID, err = optionalID(params, "seller_id"); err != nil {
		return SearchQuery{}, err
	}
	if q.SellerID == 0 {
		if q.SellerID, err = optionalID(params, "seller"); err != nil {
			return SearchQuery{}, err
		}
	}
	if q.SellerID != 0 && caller == 0 {
		return SearchQuery{}, errNoToken
	}
	if q.From, err = optionalID(params, "from"); err != nil {
		return SearchQuery{}, err
	}
	for _, f := range [...]struct {
		name string
		dst  *int64
	}{{"totalDivisions", &q.TotalDivisions}, {"division", &q.Division}} {
		if raw := params.Get(f.name); raw != "" {
			n, err := strconv.ParseInt(raw, 10, 64)
			if err != nil {
				return SearchQuery{}, errs.Invalidf("Invalid %s: %s. It must be a non-negative integer", f.name, raw)
			}
			*f.dst = n
		}
	}
	return q, nil
}

// optionalID reads the parameter name as a positive integer; absent is 0.
func optionalID(params url.Values, name string) (int64, error) {
	raw := params.Get(name)
	if raw == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n <= 0 {
		return 0, errs.Invalidf("Invalid %s: %s. It must be a positive integer", name, raw)
	}
	return n, nil
}
