// Package paging holds the one paging rule of every list the marketplace
// answers: a window of Limit entries after skipping Offset, both
// non-negative, Limit at most MaxLimit. Each list checks its window with
// Page.Check, through the Go API and over HTTP alike; the HTTP server only
// reads the numbers from the query and gives a list its default limit when
// the query has none.
package paging

import "github.com/marketplace/marketplace/errs"

const (
	// DefaultLimit is the limit of a list whose request gives none, unless
	// the list has its own default (missed feeds: notify).
	DefaultLimit = 50
	// MaxLimit bounds the window of every list, so that no request reads
	// an unbounded part of the store at once.
	MaxLimit = 1000
)

// Page is a window of a list.
type Page struct {
	Offset int
	Limit  int
}

// Check returns the Invalid error of a window outside the rule, naming limit
// before offset, or nil.
func (p Page) Check() error { return p.CheckMax(MaxLimit) }

// CheckMax is Check for a list with a smaller maximum window than
// MaxLimit: a limit above most is refused in the same words.
func (p Page) CheckMax(most int) error {
	switch {
	case p.Limit < 0:
		return errs.Invalidf("Invalid limit: %d. It must be a non-negative integer", p.Limit)
	case p.Limit > most:
		return errs.Invalidf("Invalid limit: %d. The maximum is %d", p.Limit, most)
	case p.Offset < 0:
		return errs.Invalidf("Invalid offset: %d. It must be a non-negative integer", p.Offset)
	}
	return nil
}

// Check is Page{offset, limit}.Check, for lists that take the two apart.
func Check(offset, limit int) error { return Page{Offset: offset, Limit: limit}.Check() }
