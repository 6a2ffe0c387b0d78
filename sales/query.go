package sales

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/marketplace/marketplace/errs"
)

// dateLayouts are the forms a search date may take: the public API's
// (2015-07-01T00:00:00.000-00:00) and RFC 3339.
var dateLayouts = []string{"2006-01-02T15:04:05.000-07:00", time.RFC3339Nano}

// ParseSearch reads an order search from a request's query, as the public
// API names its parameters. Errors: Invalid (a number, a date or a sort
// that does not parse).
func ParseSearch(v url.Values, offset, limit int) (SearchQuery, error) {
	q := SearchQuery{Status: v.Get("order.status"), Item: v.Get("item"), Q: strings.TrimSpace(v.Get("q")),
		Sort: v.Get("sort"), Offset: offset, Limit: limit}
	for _, p := range []struct {
		name string
		to   *int64
	}{{"seller", &q.Seller}, {"buyer", &q.Buyer}} {
		raw := v.Get(p.name)
		if raw == "" {
			continue
		}
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || n <= 0 {
			return SearchQuery{}, errs.Invalidf("Invalid %s: %s. It must be a user id", p.name, raw)
		}
		*p.to = n
	}
	q.Tags, q.TagsNot = splitList(v.Get("tags")), splitList(v.Get("tags.not"))
	q.MediationStatus = strings.TrimSpace(v.Get("mediations.status"))
	for _, d := range []struct {
		name string
		to   **time.Time
	}{
		{"order.date_created.from", &q.CreatedFrom}, {"order.date_created.to", &q.CreatedTo},
		{"order.date_closed.from", &q.ClosedFrom}, {"order.date_closed.to", &q.ClosedTo},
		{"order.date_last_updated.from", &q.UpdatedFrom}, {"order.date_last_updated.to", &q.UpdatedTo},
	} {
		raw := v.Get(d.name)
		if raw == "" {
			continue
		}
		t, err := parseDate(raw)
		if err != nil {
			return SearchQuery{}, errs.Invalidf("Invalid %s: %s. Dates are written as 2015-07-01T00:00:00.000-00:00", d.name, raw)
		}
		*d.to = &t
	}
	return q, nil
}

func parseDate(raw string) (time.Time, error) {
	var err error
	for _, l := range dateLayouts {
		var t time.Time
		if t, err = time.Parse(l, raw); err == nil {
			return t, nil
		}
	}
	return time.Time{}, err
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
