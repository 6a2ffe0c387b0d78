package httpapi

import (
	"net/http"
	"net/url"
	"strconv"

	"marketplace/errs"
)

// Paging defaults and bounds. The spec gives the defaults (50 and 0) and
// leaves the maximum open; see docs/spec-decisions.md.
const (
	defaultLimit = 50
	maxLimit     = 1000
)

// page is a validated limit/offset pair.
type page struct {
	Limit  int
	Offset int
}

// paging is the paging object of list responses.
type paging struct {
	Total  int `json:"total"`
	Offset int `json:"offset"`
	Limit  int `json:"limit"`
}

// readPage reads limit and offset from the query with the given default
// limit: absent means the default; negative, non-numeric or above maxLimit is
// a 400.
func readPage(r *http.Request, defLimit int) (page, error) {
	return readPageOf(r.URL.Query(), defLimit)
}

// readPageOf is readPage over a query already parsed: each parse of the
// query string allocates again.
func readPageOf(q url.Values, defLimit int) (page, error) {
	p := page{Limit: defLimit}
	var err error
	if p.Limit, err = queryInt(q.Get("limit"), "limit", defLimit, maxLimit); err != nil {
		return page{}, err
	}
	if p.Offset, err = queryInt(q.Get("offset"), "offset", 0, -1); err != nil {
		return page{}, err
	}
	return p, nil
}

func queryInt(raw, name string, def, max int) (int, error) {
	if raw == "" {
		return def, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil {
		return 0, errs.Invalidf("Invalid %s: %s. It must be a non-negative integer", name, raw)
	}
	if n < 0 {
		return 0, errs.Invalidf("Invalid %s: %s. It must be a non-negative integer", name, raw)
	}
	if max >= 0 && n > max {
		return 0, errs.Invalidf("Invalid %s: %s. The maximum is %d", name, raw, max)
	}
	return n, nil
}
