package questions

import (
	"context"
	"slices"
	"strings"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/kv"
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

var defaultSort = []Sort{{Field: SortDateCreated, Type: "DESC"}}

// publicStatuses are the statuses that anyone may see in a listing.
var publicStatuses = []string{StatusUnanswered, StatusAnswered, StatusClosedUnanswered}

// visible reports whether caller (0 when anonymous) sees r in a listing: the
// seller sees every question on its items; the asker its own, unless deleted
// or banned; anyone else only public, not hidden questions.
func visible(r record, caller int64) bool {
	if caller != 0 && caller == r.SellerID {
		return true
	}
	if caller != 0 && caller == r.BuyerID && r.Status != StatusDeleted && r.Status != StatusBanned {
		return true
	}
	return !r.DeletedFromListing && slices.Contains(publicStatuses, r.Status)
}

// Search lists questions by seller, by item, or by item and asker. Searching
// by seller_id is for that seller only. A seller's search in any order the
// seller indexes hold (date_created, item_id then date_created, from_id then
// date_created, all in one direction; seller_id is the same for every
// question and adds nothing), with or without a status filter, reads only
// the index keys up to the page's end; narrowed by from and ordered by date,
// it reads only that asker's keys. Errors: Invalid, Forbidden.
func (s *Service) Search(ctx context.Context, caller int64, q SearchQuery) (SearchResult, error) {
	return s.search(ctx, caller, q, true)
}

func (s *Service) search(ctx context.Context, caller int64, q SearchQuery, useIndex bool) (SearchResult, error) {
	if err := paging.Check(q.Offset, q.Limit); err != nil {
		return SearchResult{}, err
	}
	if q.SellerID == 0 && q.ItemID == "" {
		return SearchResult{}, errs.Invalidf("The parameters [seller_id] or [item] are required for requested call")
	}
	if q.SellerID != 0 && q.SellerID != caller {
		return SearchResult{}, errs.Forbiddenf("Only user %d can search the questions it received", q.SellerID)
	}
	if q.ItemID != "" {
		if err := checkItemID(q.ItemID); err != nil {
			return SearchResult{}, err
		}
	}
	if q.Status != "" {
		if err := CheckStatus(q.Status); err != nil {
			return SearchResult{}, err
		}
	}
	if q.TotalDivisions < 0 || q.Division < 0 || (q.TotalDivisions == 0 && q.Division != 0) ||
		(q.TotalDivisions > 0 && q.Division >= q.TotalDivisions) {
		return SearchResult{}, errs.Invalidf("Invalid division: it must be at least 0 and below totalDivisions")
	}
	sorts := q.Sorts
	if len(sorts) == 0 {
		sorts = defaultSort
	}
	var res SearchResult
	err := s.store.View(ctx, func(tx storage.Tx) error {
		var err error
		prefix, countKey, filter, desc, ok := sellerIndexFor(q, sorts)
		if ok && useIndex {
			res, err = s.searchSellerIndex(tx, q, prefix, countKey, filter, desc)
		} else {
			res, err = s.searchScan(tx, caller, q, sorts)
		}
		return err
	})
	return res, wrap(err, "search questions")
}

// sellerIndexFor picks the seller index whose key order is exactly the
// order compare gives for sorts, if there is one. compare breaks ties by date
// and id in the last sort's direction, so every sort must share one
// direction; seller_id sorts are dropped because a seller search holds one
// seller only, and from_id sorts too when from fixes the asker. With from,
// the index is the asker's part of the by-asker index and countKey is nil:
// the total is counted from those keys, one asker's questions. filter is
// the status the index's questions must also have, where the index holds
// every status (by item or by asker).
func sellerIndexFor(q SearchQuery, sorts []Sort) (prefix []byte, countKey *kv.Counter, filter string, desc, ok bool) {
	if q.SellerID == 0 || q.ItemID != "" || q.TotalDivisions != 0 {
		return nil, nil, "", false, false
	}
	dir := sorts[0].Type
	var fields []string
	for _, srt := range sorts {
		if srt.Type != dir {
			return nil, nil, "", false, false
		}
		if srt.Field != SortSellerID && (q.From == 0 || srt.Field != SortFromID) {
			fields = append(fields, srt.Field)
		}
	}
	if len(fields) == 2 && fields[1] == SortDateCreated {
		fields = fields[:1] // by item or asker, then date: the index's own order
	}
	first := SortDateCreated
	if len(fields) == 1 {
		first = fields[0]
	} else if len(fields) > 1 {
		return nil, nil, "", false, false
	}
	if q.From != 0 {
		if first != SortDateCreated {
			return nil, nil, "", false, false
		}
		return keycodec.Key(sellerFromPrefix(q.SellerID)).Int(q.From), nil, q.Status, dir == "DESC", true
	}
	c := sellerCounter(q.SellerID)
	if q.Status != "" {
		c = sellerStatusCounter(q.SellerID, q.Status)
	}
	countKey = &c
	switch {
	case first == SortDateCreated && q.Status == "":
		prefix = sellerDatePrefix(q.SellerID)
	case first == SortDateCreated:
		prefix = sellerStatusPrefix(q.SellerID, q.Status)
	case first == SortItemID:
		prefix, filter = sellerItemPrefix(q.SellerID), q.Status
	default:
		prefix, filter = sellerFromPrefix(q.SellerID), q.Status
	}
	return prefix, countKey, filter, dir == "DESC", true
}

// searchSellerIndex pages one of the seller's indexes. With a counter for
// the total only the keys up to the page's end are read; without one
// (countKey nil) every key of the prefix is counted and the page taken on
// the way. With a filter, only the questions of that status count, and the
// record of each key read tells.
func (s *Service) searchSellerIndex(tx storage.Tx, q SearchQuery, prefix []byte, countKey *kv.Counter, filter string, desc bool) (SearchResult, error) {
	var total int64
	if countKey != nil {
		var err error
		if total, err = countKey.Read(tx); err != nil {
			return SearchResult{}, err
		}
	}
	var page []record
	if countKey == nil || (q.Limit > 0 && int64(q.Offset) < total) {
		var seen int64
		var err error
		if page, seen, err = readIndexPage(tx, prefix, desc, filter, q.Offset, q.Limit, countKey == nil); err != nil {
			return SearchResult{}, err
		}
		if countKey == nil {
			total = seen
		}
	}
	out := SearchResult{Total: int(total), Questions: make([]Question, 0, len(page))}
	for _, r := range page {
		out.Questions = append(out.Questions, s.searchView(tx, r, q.V4))
	}
	return out, nil
}

// readIndexPage reads the records of the index keys under prefix from
// offset on, at most limit, counting only those of status filter (any,
// when empty). It stops at the page's end unless countAll, and returns how
// many it counted.
func readIndexPage(tx storage.Tx, prefix []byte, desc bool, filter string, offset, limit int, countAll bool) ([]record, int64, error) {
	r := storage.Prefix(prefix)
	r.Reverse = desc
	it := tx.Iterate(r)
	defer it.Close()
	page := make([]record, 0, min(limit, 1000))
	var seen int64
	for ; it.Valid(); it.Next() {
		if !countAll && len(page) >= limit {
			break
		}
		inPage := seen >= int64(offset) && len(page) < limit
		if filter == "" && !inPage {
			seen++
			continue
		}
		rec, err := getRecord(tx, readTrailingID(it.Key()))
		if err != nil {
			return nil, 0, err
		}
		if filter != "" && rec.Status != filter {
			continue
		}
		if inPage {
			page = append(page, rec)
		}
		seen++
	}
	return page, seen, nil
}

func (s *Service) searchView(tx storage.Tx, r record, v4 bool) Question {
	v := s.view(tx, r, nil)
	if v4 {
		spam := r.SuspectedSpam
		v.SuspectedSpam = &spam
	}
	return v
}

// searchScan loads every question of the item (or of the seller), filters
// and sorts them: used for item searches, which are small, and for sorts the
// indexes do not hold.
func (s *Service) searchScan(tx storage.Tx, caller int64, q SearchQuery, sorts []Sort) (SearchResult, error) {
	prefix := sellerDatePrefix(q.SellerID)
	if q.ItemID != "" {
		prefix = itemDatePrefix(q.ItemID)
	}
	var ids []int64
	func() {
		it := tx.Iterate(storage.Prefix(prefix))
		defer it.Close()
		for ; it.Valid(); it.Next() {
			ids = append(ids, readTrailingID(it.Key()))
		}
	}()
	var recs []record
	for _, id := range ids {
		r, err := getRecord(tx, id)
		if err != nil {
			return SearchResult{}, err
		}
		switch {
		case q.SellerID != 0 && r.SellerID != q.SellerID,
			q.From != 0 && r.BuyerID != q.From,
			q.Status != "" && r.Status != q.Status,
			q.TotalDivisions > 0 && r.ID%q.TotalDivisions != q.Division,
			!visible(r, caller):
			continue
		}
		recs = append(recs, r)
	}
	slices.SortStableFunc(recs, func(a, b record) int { return compare(a, b, sorts) })
	out := SearchResult{Total: len(recs), Questions: []Question{}}
	for i := q.Offset; i < len(recs) && len(out.Questions) < q.Limit; i++ {
		out.Questions = append(out.Questions, s.searchView(tx, recs[i], q.V4))
	}
	return out, nil
}

// compare orders two questions by sorts, then by date and id in the
// direction of the last sort, so that every order is total and stable.
func compare(a, b record, sorts []Sort) int {
	for _, srt := range sorts {
		c := 0
		switch srt.Field {
		case SortItemID:
			c = strings.Compare(a.ItemID, b.ItemID)
		case SortSellerID:
			c = cmpInt(a.SellerID, b.SellerID)
		case SortFromID:
			c = cmpInt(a.BuyerID, b.BuyerID)
		case SortDateCreated:
			c = a.Created.Compare(b.Created)
		}
		if srt.Type == "DESC" {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	c := a.Created.Compare(b.Created)
	if c == 0 {
		c = cmpInt(a.ID, b.ID)
	}
	if sorts[len(sorts)-1].Type == "DESC" {
		c = -c
	}
	return c
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
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
