package questions

import (
	"context"
	"slices"
	"strings"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/paging"
	"github.com/marketplace/marketplace/storage"
)

// Sort fields of the search.
const (
	SortItemID      = "item_id"
	SortSellerID    = "seller_id"
	SortFromID      = "from_id"
	SortDateCreated = "date_created"
)

// SortFields lists the fields a search can be sorted by, as the search
// envelope's available_sorts shows them.
var SortFields = []string{SortItemID, SortFromID, SortDateCreated, SortSellerID}

// Sort is one sort key of a search.
type Sort struct {
	Field string `json:"field"`
	Type  string `json:"type"`
}

// ParseSorts reads the sort_fields and sort_types parameters: comma-separated
// lists matched in order. A field without a matching type sorts ASC; a type
// without a field is an error. Errors: Invalid.
func ParseSorts(fields, types string) ([]Sort, error) {
	var fs, ts []string
	if fields != "" {
		fs = strings.Split(fields, ",")
	}
	if types != "" {
		ts = strings.Split(types, ",")
	}
	if len(ts) > len(fs) {
		return nil, errs.Invalidf("Invalid sort_types: %s. There are more sort types than sort fields", types)
	}
	out := make([]Sort, 0, len(fs))
	for i, f := range fs {
		f = strings.TrimSpace(f)
		if !slices.Contains(SortFields, f) {
			return nil, errs.Invalidf("Invalid sort_fields: %s. Valid values are: [item_id, seller_id, from_id, date_created]", fields)
		}
		for _, prev := range out {
			if prev.Field == f {
				return nil, errs.Invalidf("Invalid sort_fields: %s. A field may appear only once", fields)
			}
		}
		typ := "ASC"
		if i < len(ts) {
			typ = strings.ToUpper(strings.TrimSpace(ts[i]))
			if typ != "ASC" && typ != "DESC" {
				return nil, errs.Invalidf("Invalid sort_types: %s. Valid values are: [ASC, DESC]", types)
			}
		}
		out = append(out, Sort{Field: f, Type: typ})
	}
	return out, nil
}

// CheckStatus reports whether status is one of the seven question statuses.
// Errors: Invalid.
func CheckStatus(status string) error {
	if !slices.Contains(Statuses, status) {
		return errs.Invalidf("Invalid status: %s. Valid values are: [%s]", status, strings.Join(Statuses, ", "))
	}
	return nil
}

// SearchQuery selects questions. SellerID or ItemID is required; From
// narrows either. Zero values mean "not given".
type SearchQuery struct {
	SellerID int64
	ItemID   string
	From     int64
	Status   string
	// Sorts are applied in order; none means date_created DESC.
	Sorts []Sort
	// TotalDivisions and Division split the results into disjoint parts by
	// question id (id mod TotalDivisions == Division), for parallel readers.
	TotalDivisions int64
	Division       int64
	Offset         int
	Limit          int
	// V4 selects the api_version 4 shape (adds suspected_spam).
	V4 bool
}

// SearchResult is one page of a search and the number of matches.
type SearchResult struct {
	Total     int
	Questions []Question
}

// Search lists questions by seller, by item, or by item and asker.
// Searching by seller_id is for that seller only. Every order and filter
// the search offers is read from an index (keys.go): a page reads the index
// keys up to its end and the records of its own questions, and the total
// is a sum of tallies, whatever the number of questions. The one exception
// is a totalDivisions above divisionMax, whose total counts the matching
// keys (docs/questions.md). Errors: Invalid, Forbidden.
func (s *Service) Search(ctx context.Context, caller int64, q SearchQuery) (SearchResult, error) {
	if err := checkSearch(caller, q); err != nil {
		return SearchResult{}, err
	}
	var res SearchResult
	err := s.store.View(ctx, func(tx storage.Tx) error {
		if err := storage.Prefetch(tx, likelyReads(caller, q)...); err != nil {
			return err
		}
		p, err := planSearch(tx, caller, q)
		if err != nil {
			return err
		}
		res, err = s.runSearch(ctx, tx, q, p)
		return err
	})
	return res, wrap(err, "search questions")
}

func checkSearch(caller int64, q SearchQuery) error {
	if err := paging.Check(q.Offset, q.Limit); err != nil {
		return err
	}
	if q.SellerID == 0 && q.ItemID == "" {
		return errs.Invalidf("The parameters [seller_id] or [item] are required for requested call")
	}
	if q.SellerID != 0 && q.SellerID != caller {
		return errs.Forbiddenf("Only user %d can search the questions it received", q.SellerID)
	}
	if q.ItemID != "" {
		if err := checkItemID(q.ItemID); err != nil {
			return err
		}
	}
	if q.Status != "" {
		if err := CheckStatus(q.Status); err != nil {
			return err
		}
	}
	if q.TotalDivisions < 0 || q.Division < 0 || (q.TotalDivisions == 0 && q.Division != 0) ||
		(q.TotalDivisions > 0 && q.Division >= q.TotalDivisions) {
		return errs.Invalidf("Invalid division: it must be at least 0 and below totalDivisions")
	}
	return nil
}

// runSearch reads the page and the total that p plans.
func (s *Service) runSearch(ctx context.Context, tx storage.Tx, q SearchQuery, p searchPlan) (SearchResult, error) {
	out := SearchResult{Questions: []Question{}}
	if len(p.streams) == 0 {
		return out, nil
	}
	total, err := p.total(ctx, tx, q.TotalDivisions, q.Division)
	if err != nil {
		return SearchResult{}, err
	}
	out.Total = int(total)
	if q.Limit == 0 || int64(q.Offset) >= total {
		return out, nil
	}
	// The merge reads one entry past the page.
	expect := 0
	if q.TotalDivisions <= 1 {
		expect = q.Offset + q.Limit + 1
	}
	m := p.merge(tx, q.TotalDivisions, q.Division, expect)
	defer m.close()
	ids := make([]int64, 0, min(q.Limit, 1000))
	for n := 0; len(ids) < q.Limit; n++ {
		if n%1024 == 1023 {
			if err := ctx.Err(); err != nil {
				return SearchResult{}, err
			}
		}
		e, ok := m.next()
		if !ok {
			break
		}
		if n >= q.Offset {
			ids = append(ids, e.id)
		}
	}
	keys := make([][]byte, len(ids))
	for i, id := range ids {
		keys[i] = questionKey(id)
	}
	if err := storage.Prefetch(tx, keys...); err != nil {
		return SearchResult{}, err
	}
	for _, id := range ids {
		r, err := getRecord(tx, id)
		if err != nil {
			return SearchResult{}, err
		}
		out.Questions = append(out.Questions, s.searchView(tx, r, q.V4))
	}
	return out, nil
}

func (s *Service) searchView(tx storage.Tx, r record, v4 bool) Question {
	v := s.view(tx, r, nil)
	if v4 {
		spam := r.SuspectedSpam
		v.SuspectedSpam = &spam
	}
	return v
}

// Filter describes one filter of the search, as the envelope's
// available_filters lists it.
type Filter struct {
	ID     string   `json:"id"`
	Name   string   `json:"name"`
	Type   string   `json:"type"`
	Values []string `json:"values,omitempty"`
}

// AvailableFilters are the search's filters: the spec's five ids, the status
// filter with its seven values.
var AvailableFilters = []Filter{
	{ID: "from", Name: "From user id", Type: "number"},
	{ID: "seller", Name: "Seller id", Type: "number"},
	{ID: "totalDivisions", Name: "Total divisions", Type: "number"},
	{ID: "division", Name: "Division", Type: "number"},
	{ID: "status", Name: "Status", Type: "text", Values: Statuses},
}

// ParseAPIVersion reads the api_version parameter: absent means 1, else an
// integer from 1 to 4; 4 selects the current shape. Errors: Invalid.
func ParseAPIVersion(raw string) (int, error) {
	if raw == "" {
		return 1, nil
	}
	switch raw {
	case "1", "2", "3", "4":
		return int(raw[0] - '0'), nil
	}
	return 0, errs.Invalidf("Invalid api_version: %s. Valid values are: [1, 2, 3, 4]", raw)
}
