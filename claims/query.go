package claims

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/marketplace/marketplace/errs"
)

// SearchQuery is a claim search (GET /post-purchase/v1/claims/search).
// Zero fields filter nothing.
type SearchQuery struct {
	ID                int64
	Type, Stage       string
	Status            string
	Resource          string
	ResourceID        int64
	ReasonID, SiteID  string
	PlayerRole        string
	PlayerUserID      int64
	OrderID, PackID   int64
	PaymentID         int64
	ParentID          int64
	CreatedFrom       *time.Time
	CreatedTo         *time.Time
	UpdatedFrom       *time.Time
	UpdatedTo         *time.Time
	SortByLastUpdated bool
	SortAscending     bool
	Offset, Limit     int
}

// SearchResult is a page of claims.
type SearchResult struct {
	Paging Paging  `json:"paging"`
	Data   []Claim `json:"data"`
}

// Paging is the search's window and total.
type Paging struct {
	Total  int `json:"total"`
	Offset int `json:"offset"`
	Limit  int `json:"limit"`
}

// searchFilters are the parameters that filter a search, in the order the
// public API's message names them; range is the way date_created and
// last_updated are given.
var searchFilters = []string{"id", "type", "stage", "status", "resource", "resource_id", "reason_id", "site_id",
	"players.role", "players.user_id", "order_id", "pack_id", "payment_id", "parent_id", "date_created", "last_updated"}

// Values of the search's filters.
var (
	searchTypes     = []string{"mediations", "return", "fulfillment", "ml_case", "cancel_sale", "cancel_purchase", "change", "service"}
	searchStages    = []string{"claim", "dispute", "recontact", "stale", "none"}
	searchStatuses  = []string{StatusOpened, StatusClosed}
	searchResources = []string{"order", "payment", "shipment", "purchase"}
	searchRoles     = []string{RoleComplainant, RoleRespondent}
)

func errInvalidParams(msg string) error {
	return errs.WithCode(errs.Invalid, "invalid_params", msg)
}

// ParseSearch reads a claim search from the query of its request. Errors:
// Invalid: no filter ("invalid_query"), one member of a pair, order_id
// with pack_id, a value that is not one of its filter's ("invalid_params"),
// a window or a sort outside the rules.
func ParseSearch(v url.Values) (SearchQuery, error) {
	if !slices.ContainsFunc(append(slices.Clone(searchFilters), "range"), v.Has) {
		return SearchQuery{}, errs.WithCode(errs.Invalid, "invalid_query", "at least any of these filters: "+strings.Join(searchFilters, ", "))
	}
	if v.Has("resource") != v.Has("resource_id") || v.Has("players.role") != v.Has("players.user_id") {
		return SearchQuery{}, errInvalidParams("Invalid parameters. At least submit some of these filters: [resource and resource_id] [players.role and players.user_id]...")
	}
	if v.Has("order_id") && v.Has("pack_id") {
		return SearchQuery{}, errInvalidParams("Invalid parameters. order_id and pack_id cannot be combined")
	}
	q := SearchQuery{Limit: DefaultLimit}
	var err error
	ints := []struct {
		name string
		to   *int64
	}{{"id", &q.ID}, {"resource_id", &q.ResourceID}, {"players.user_id", &q.PlayerUserID}, {"order_id", &q.OrderID},
		{"pack_id", &q.PackID}, {"payment_id", &q.PaymentID}, {"parent_id", &q.ParentID}}
	for _, p := range ints {
		if !v.Has(p.name) {
			continue
		}
		n, err := strconv.ParseInt(v.Get(p.name), 10, 64)
		if err != nil || n <= 0 {
			return SearchQuery{}, errInvalidParams(fmt.Sprintf("Invalid parameters. %s: %s is not a valid id", p.name, v.Get(p.name)))
		}
		*p.to = n
	}
	strs := []struct {
		name   string
		to     *string
		values []string
	}{{"type", &q.Type, searchTypes}, {"stage", &q.Stage, searchStages}, {"status", &q.Status, searchStatuses},
		{"resource", &q.Resource, searchResources}, {"players.role", &q.PlayerRole, searchRoles},
		{"reason_id", &q.ReasonID, nil}, {"site_id", &q.SiteID, nil}}
	for _, p := range strs {
		if !v.Has(p.name) {
			continue
		}
		val := v.Get(p.name)
		if val == "" || (p.values != nil && !slices.Contains(p.values, val)) {
			return SearchQuery{}, errInvalidParams(fmt.Sprintf("Invalid parameters. %s: %s is not a valid value", p.name, val))
		}
		*p.to = val
	}
	for _, field := range []string{"date_created", "last_updated"} {
		if v.Has(field) {
			if err := q.setRange(field, v.Get(field)); err != nil {
				return SearchQuery{}, err
			}
		}
	}
	for _, raw := range v["range"] {
		field, spec, _ := strings.Cut(raw, ":")
		if field != "date_created" && field != "last_updated" {
			return SearchQuery{}, errInvalidParams(fmt.Sprintf("Invalid parameters. range: %s names no date field (date_created, last_updated)", raw))
		}
		if err := q.setRange(field, spec); err != nil {
			return SearchQuery{}, err
		}
	}
	if q.Limit, err = windowInt(v, "limit", DefaultLimit); err != nil {
		return SearchQuery{}, err
	}
	if q.Offset, err = windowInt(v, "offset", 0); err != nil {
		return SearchQuery{}, err
	}
	switch {
	case q.Limit < 1:
		return SearchQuery{}, errs.Invalidf("Invalid limit: %d. It must be a positive integer", q.Limit)
	case q.Offset > MaxOffset:
		return SearchQuery{}, errs.Invalidf("Invalid offset: %d. The maximum is %d", q.Offset, MaxOffset)
	}
	q.Limit = min(q.Limit, MaxLimit)
	if sort := v.Get("sort"); sort != "" {
		field, dir, _ := strings.Cut(sort, ":")
		if (field != "date_created" && field != "last_updated") || (dir != "asc" && dir != "desc") {
			return SearchQuery{}, errs.Invalidf("Invalid sort: %s. Valid values are: [date_created:asc, date_created:desc, last_updated:asc, last_updated:desc]", sort)
		}
		q.SortByLastUpdated, q.SortAscending = field == "last_updated", dir == "asc"
	}
	return q, nil
}

func windowInt(v url.Values, name string, def int) (int, error) {
	raw := v.Get(name)
	if raw == "" {
		return def, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 0 {
		return 0, errs.Invalidf("Invalid %s: %s. It must be a non-negative integer", name, raw)
	}
	return n, nil
}

// rangeLayouts are the dates a range takes: the public API's
// (2024-01-01T00:00:00.000-0300), RFC 3339, and a day (UTC).
var rangeLayouts = []string{"2006-01-02T15:04:05.000-0700", time.RFC3339Nano, "2006-01-02T15:04:05-0700", time.DateOnly}

// setRange reads after:DATE,before:DATE (either may be left out) into the
// bounds of field.
func (q *SearchQuery) setRange(field, spec string) error {
	from, to := &q.CreatedFrom, &q.CreatedTo
	if field == "last_updated" {
		from, to = &q.UpdatedFrom, &q.UpdatedTo
	}
	bad := errInvalidParams(fmt.Sprintf("Invalid parameters. range: %s:%s must be after:DATE,before:DATE", field, spec))
	if spec == "" {
		return bad
	}
	for _, part := range strings.Split(spec, ",") {
		side, date, ok := strings.Cut(part, ":")
		if !ok {
			return bad
		}
		var t time.Time
		var err error
		for _, l := range rangeLayouts {
			if t, err = time.Parse(l, date); err == nil {
				break
			}
		}
		if err != nil {
			return bad
		}
		switch side {
		case "after":
			*from = &t
		case "before":
			*to = &t
		default:
			return bad
		}
	}
	return nil
}

// byRecord reports whether the search filters or sorts on what only the
// claims' records say.
func (q SearchQuery) byRecord(caller int64) bool {
	return q.Stage != "" || q.ReasonID != "" || q.SiteID != "" || q.UpdatedFrom != nil || q.UpdatedTo != nil ||
		q.SortByLastUpdated || (q.PlayerUserID != 0 && q.PlayerUserID != caller)
}

// matches applies to claim r every filter of q that the list it was found
// in does not.
func (q SearchQuery) matches(r *record, caller int64) bool {
	if q.ID != 0 && r.ID != q.ID || q.Stage != "" && r.Stage != q.Stage || q.Status != "" && r.Status != q.Status ||
		q.ReasonID != "" && r.ReasonID != q.ReasonID || q.SiteID != "" && r.SiteID != q.SiteID {
		return false
	}
	if q.PlayerUserID != 0 {
		id := r.BuyerID
		if q.PlayerRole == RoleRespondent {
			id = r.SellerID
		}
		if id != q.PlayerUserID {
			return false
		}
	}
	if r.roleOf(caller) == "" {
		return false
	}
	return within(r.CreatedMs, q.CreatedFrom, q.CreatedTo) && within(r.UpdatedMs, q.UpdatedFrom, q.UpdatedTo)
}

func within(ms int64, from, to *time.Time) bool {
	return (from == nil || ms >= from.UnixMilli()) && (to == nil || ms <= to.UnixMilli())
}
