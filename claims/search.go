package claims

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/storage"
)

// The search's window: limit 30 by default, at most 100 (a larger one is
// taken as 100), and an offset of at most 9999.
const (
	DefaultLimit = 30
	MaxLimit     = 100
	MaxOffset    = 9999
)

// MaxExamined bounds the claims one search reads to apply the filters that
// only the claims' records answer (see Search).
const MaxExamined = 10000

// maxExamined is MaxExamined, lowered by the package's tests.
var maxExamined = MaxExamined

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

// errDue stops a search's View that found timed changes not written yet.
var errDue = errors.New("claims due")

// Search finds the claims of which caller is a player, filtered, sorted
// (date_created descending by default) and paged.
//
// Its cost: a player's claims are listed by date_created in the store,
// all of them, by status, by the player's role and by both, with their
// counts kept beside the lists. A search by players.role and
// players.user_id (the caller's), optionally by status, reads its total
// from a count and its page from the list: the same cost at a thousand
// claims as at a million. A search by id, order_id, pack_id, payment_id or
// resource reads the claims of that order. A date_created range walks the
// list's keys within the range. The other filters (stage, reason_id,
// site_id, another player, last_updated, the last_updated sort) read the
// caller's claims of the list one by one, at most MaxExamined of them; one
// that would read more is refused, before reading any claim when the
// list's count already says so. A search first writes the timed changes
// due (Expire) when there are any, so that the lists by status are those
// of the claims as they stand.
// Errors: Invalid (a search by the records that would examine more than
// MaxExamined claims).
func (s *Service) Search(ctx context.Context, caller int64, q SearchQuery) (SearchResult, error) {
	res := SearchResult{Paging: Paging{Offset: q.Offset, Limit: q.Limit}, Data: []Claim{}}
	if q.Type != "" && q.Type != TypeMediations || q.ParentID != 0 ||
		q.Resource != "" && q.Resource != "order" && q.Resource != "payment" {
		// The engine's claims are mediations on orders, with no parent.
		return res, nil
	}
	for attempt := 0; ; attempt++ {
		now := s.clock.Now()
		err := s.store.View(ctx, func(tx storage.Tx) error {
			if attempt == 0 && anyDue(tx, now.UnixMilli()) {
				return errDue
			}
			res.Data, res.Paging.Total = []Claim{}, 0
			return s.searchIn(tx, caller, q, now.UnixMilli(), &res)
		})
		if !errors.Is(err, errDue) {
			return res, err
		}
		if _, err := s.Expire(ctx); err != nil {
			return SearchResult{}, err
		}
	}
}

func (s *Service) searchIn(tx storage.Tx, caller int64, q SearchQuery, nowMs int64, res *SearchResult) error {
	var ids []int64
	var err error
	switch {
	case q.ID != 0:
		ids = []int64{q.ID}
	case q.OrderID != 0 || q.PackID != 0 || q.PaymentID != 0 || q.Resource != "":
		ids, err = s.orderClaims(tx, q)
	default:
		return s.searchList(tx, caller, q, nowMs, res)
	}
	if err != nil {
		return err
	}
	var found []*record
	for _, id := range ids {
		r, err := getRecord(tx, id)
		if errs.Is(err, errs.NotFound) {
			continue
		}
		if err != nil {
			return err
		}
		var o outcome
		r.settle(nowMs, &o)
		if q.matches(&r, caller) {
			found = append(found, &r)
		}
	}
	s.page(tx, q, found, res)
	return nil
}

// orderClaims lists the claims of the order a search names: by order_id,
// pack_id (its order), payment_id, or resource and resource_id.
func (s *Service) orderClaims(tx storage.Tx, q SearchQuery) ([]int64, error) {
	prefix := orderPrefix(q.OrderID)
	switch {
	case q.PackID != 0:
		orderID, err := s.sales.PackOrder(tx, q.PackID)
		if errs.Is(err, errs.NotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		prefix = orderPrefix(orderID)
	case q.PaymentID != 0:
		prefix = paymentPrefix(q.PaymentID)
	case q.Resource == "order" && q.OrderID == 0:
		prefix = orderPrefix(q.ResourceID)
	case q.Resource == "payment":
		prefix = paymentPrefix(q.ResourceID)
	}
	var ids []int64
	it := tx.Iterate(storage.Prefix(prefix))
	defer it.Close()
	for ; it.Valid(); it.Next() {
		id, err := lastInt(it.Key())
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	// A payment's or a resource's claims must also be the order's, when
	// the search names both.
	if q.OrderID != 0 && (q.PaymentID != 0 || q.Resource != "") {
		mine, err := s.orderClaims(tx, SearchQuery{OrderID: q.OrderID})
		if err != nil {
			return nil, err
		}
		ids = slices.DeleteFunc(ids, func(id int64) bool { return !slices.Contains(mine, id) })
	}
	return ids, nil
}

// page sorts the claims found and fills res with the total and the page.
func (s *Service) page(tx storage.Tx, q SearchQuery, found []*record, res *SearchResult) {
	slices.SortFunc(found, func(a, b *record) int {
		ka, kb := a.CreatedMs, b.CreatedMs
		if q.SortByLastUpdated {
			ka, kb = a.UpdatedMs, b.UpdatedMs
		}
		c := cmp.Or(cmp.Compare(ka, kb), cmp.Compare(a.ID, b.ID))
		if !q.SortAscending {
			c = -c
		}
		return c
	})
	res.Paging.Total = len(found)
	for i := q.Offset; i < len(found) && i < q.Offset+q.Limit; i++ {
		res.Data = append(res.Data, s.view(tx, found[i]))
	}
}

// searchList searches the caller's lists.
func (s *Service) searchList(tx storage.Tx, caller int64, q SearchQuery, nowMs int64, res *SearchResult) error {
	role := ""
	if q.PlayerUserID == caller {
		role = q.PlayerRole
	}
	prefix := listPrefix(caller, role, q.Status)
	ranged := q.CreatedFrom != nil || q.CreatedTo != nil
	rng := storage.Prefix(prefix)
	if q.CreatedFrom != nil {
		rng.Start = keycodec.Key(slices.Clone(prefix)).Int(q.CreatedFrom.UnixMilli())
	}
	if q.CreatedTo != nil {
		rng.End = keycodec.Key(slices.Clone(prefix)).Int(q.CreatedTo.UnixMilli() + 1)
	}
	rng.Reverse = !q.SortAscending
	if !q.byRecord(caller) {
		total := -1
		if !ranged {
			n, err := listCounter(caller, role, q.Status).Read(tx)
			if err != nil {
				return err
			}
			total = int(n)
		}
		var page []int64
		seen := 0
		it := tx.Iterate(rng)
		defer it.Close()
		for ; it.Valid(); it.Next() {
			if total >= 0 && len(page) == q.Limit {
				break
			}
			if seen >= q.Offset && len(page) < q.Limit {
				id, err := lastInt(it.Key())
				if err != nil {
					return err
				}
				page = append(page, id)
			}
			seen++
		}
		if total < 0 {
			total = seen
		}
		res.Paging.Total = total
		return s.readPage(tx, page, nowMs, res)
	}
	// Filters on the records: read the list's claims one by one, up to the
	// bound.
	if !ranged {
		n, err := listCounter(caller, role, q.Status).Read(tx)
		if err != nil {
			return err
		}
		if n > int64(maxExamined) {
			return errTooManyExamined(caller)
		}
	}
	var found []*record
	var batch []int64
	test := func() error {
		if err := prefetchClaims(tx, batch); err != nil {
			return err
		}
		for _, id := range batch {
			r, err := getRecord(tx, id)
			if err != nil {
				return errs.Internalf(err, "the claim list names claim %d", id)
			}
			var o outcome
			r.settle(nowMs, &o)
			if q.matches(&r, caller) {
				found = append(found, &r)
			}
		}
		batch = batch[:0]
		return nil
	}
	it := tx.Iterate(rng)
	defer it.Close()
	for examined := 0; it.Valid(); it.Next() {
		if examined++; examined > maxExamined {
			return errTooManyExamined(caller)
		}
		id, err := lastInt(it.Key())
		if err != nil {
			return err
		}
		if batch = append(batch, id); len(batch) == examineBatch {
			if err := test(); err != nil {
				return err
			}
		}
	}
	if err := test(); err != nil {
		return err
	}
	s.page(tx, q, found, res)
	return nil
}

// examineBatch is how many claims a search by the records reads at once.
const examineBatch = 200

func errTooManyExamined(caller int64) error {
	return errs.Invalidf("The search would examine more than %d claims of user %d: narrow it with range=date_created:after:DATE,before:DATE", maxExamined, caller)
}

func (s *Service) readPage(tx storage.Tx, ids []int64, nowMs int64, res *SearchResult) error {
	if err := prefetchClaims(tx, ids); err != nil {
		return err
	}
	for _, id := range ids {
		r, err := getRecord(tx, id)
		if err != nil {
			return errs.Internalf(err, "the claim list names claim %d", id)
		}
		var o outcome
		r.settle(nowMs, &o)
		res.Data = append(res.Data, s.view(tx, &r))
	}
	return nil
}

// prefetchClaims tells tx that the claims are about to be read, so that a
// backend at network distance reads them in one round trip.
func prefetchClaims(tx storage.Tx, ids []int64) error {
	if _, ok := tx.(storage.Prefetcher); !ok || len(ids) == 0 {
		return nil
	}
	keys := make([][]byte, len(ids))
	for i, id := range ids {
		keys[i] = claimKey(id)
	}
	return storage.Prefetch(tx, keys...)
}
