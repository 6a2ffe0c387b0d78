package httpapi

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/marketplace/marketplace/errs"
	listpaging "github.com/marketplace/marketplace/paging"
)

// defaultLimit is the limit of a list whose query gives none; the window's
// rule (non-negative, capped) is the domain's, in package paging.
const defaultLimit = listpaging.DefaultLimit

// page is the limit and offset read from a query.
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
// limit: absent means the default, and what is not an integer is a 400.
// Whether the window is allowed is the list's to say (package paging).
func readPage(r *http.Request, defLimit int) (page, error) {
	return readPageOf(r.URL.Query(), defLimit)
}

// readPageOf is readPage over a query already parsed: each parse of the
// query string allocates again.
func readPageOf(q url.Values, defLimit int) (page, error) {
	p := page{Limit: defLimit}
	var err error
	if p.Limit, err = queryInt(q.Get("limit"), "limit", defLimit); err != nil {
		return page{}, err
	}
	if p.Offset, err = queryInt(q.Get("offset"), "offset", 0); err != nil {
		return page{}, err
	}
	return p, nil
}

func queryInt(raw, name string, def int) (int, error) {
	if raw == "" {
		return def, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil {
		return 0, errs.Invalidf("Invalid %s: %s. It must be a non-negative integer", name, raw)
	}
	return n, nil
}
