package sales

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/paging"
	"github.com/marketplace/marketplace/storage"
)

// Sorts of the order search.
const (
	SortDateAsc  = "date_asc"
	SortDateDesc = "date_desc"
)

var sortNames = map[string]string{SortDateAsc: "Date ascending", SortDateDesc: "Date descending"}

// SearchQuery is an order search: the orders of Seller or of Buyer (the
// caller), filtered and paged.
type SearchQuery struct {
	Seller, Buyer int64
	Status        string
	Item          string
	Q             string
	Tags, TagsNot []string
	// MediationStatus finds the orders with a claim that stands there
	// (one of MediationStatuses).
	MediationStatus string
	// Created, Closed and Updated bound date_created, date_closed and
	// last_updated; a nil end is open.
	CreatedFrom, CreatedTo *time.Time
	ClosedFrom, ClosedTo   *time.Time
	UpdatedFrom, UpdatedTo *time.Time
	Sort                   string
	Offset, Limit          int
}

// SearchResult is the order search's envelope.
type SearchResult struct {
	Query            string    `json:"query"`
	Display          string    `json:"display"`
	Paging           Paging    `json:"paging"`
	Results          []Order   `json:"results"`
	Sort             SortRef   `json:"sort"`
	AvailableSorts   []SortRef `json:"available_sorts"`
	Filters          []Filter  `json:"filters"`
	AvailableFilters []Filter  `json:"available_filters"`
}

// Paging is the search's window and total.
type Paging struct {
	Total  int `json:"total"`
	Offset int `json:"offset"`
	Limit  int `json:"limit"`
}

// SortRef names a sort.
type SortRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Filter is an applied or an available filter.
type Filter struct {
	ID     string        `json:"id"`
	Name   string        `json:"name"`
	Type   string        `json:"type"`
	Values []FilterValue `json:"values"`
}

// FilterValue is one value of a filter; Results counts the orders an
// available value would find.
type FilterValue struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Results *int   `json:"results,omitempty"`
}

// Search finds the orders of q.Seller or q.Buyer, who must be the caller,
// in date_created order (date_asc unless q.Sort says date_desc), filtered
// and paged, with the count of each order.status value among them.
//
// Its cost: the orders of a party are listed by date in the store, all of
// them and by status, with their counts kept beside the lists. A search by
// party, optionally by order.status, reads its total from a count and its
// page from the list: the same cost at a thousand orders as at a million.
// A date_created range walks the list's keys within the range, reading no
// order. The other filters (item, q, tags, tags.not, the date_closed and
// last_updated ranges, both seller and buyer) read the party's orders one
// by one, within the date_created range when there is one: only the party
// itself can make that search, and it examines at most MaxExaminedOrders
// orders; one that would examine more is refused, before reading any
// order when the party's count already says so.
// Errors: Invalid (neither seller nor buyer, a sort, a status or a
// window outside the paging rule; a search by the records that would
// examine more than MaxExaminedOrders orders), Forbidden (a party that is
// not the caller).
func (s *Service) Search(ctx context.Context, caller int64, q SearchQuery) (SearchResult, error) {
	if err := paging.Check(q.Offset, q.Limit); err != nil {
		return SearchResult{}, err
	}
	role, party := roleSeller, q.Seller
	switch {
	case q.Seller == 0 && q.Buyer == 0:
		return SearchResult{}, errs.Invalidf("Missing parameter: seller or buyer. Send the caller's user id as one of them")
	case q.Seller == 0:
		role, party = roleBuyer, q.Buyer
	}
	if caller != Operator && party != caller {
		return SearchResult{}, errs.Forbiddenf("The caller %d cannot search the orders of user %d", caller, party)
	}
	if q.Sort == "" {
		q.Sort = SortDateAsc
	}
	if _, ok := sortNames[q.Sort]; !ok {
		return SearchResult{}, errs.Invalidf("Invalid sort: %s. Valid values are: [date_asc, date_desc]", q.Sort)
	}
	if q.Status != "" && !slices.ContainsFunc(OrderStatuses, func(v struct{ ID, Name string }) bool { return v.ID == q.Status }) {
		return SearchResult{}, errs.Invalidf("Invalid order.status: %s. Valid values are: [paid, confirmed, payment_in_process, payment_required, cancelled, invalid]", q.Status)
	}
	if q.MediationStatus != "" && !slices.Contains(MediationStatuses, q.MediationStatus) {
		return SearchResult{}, errs.Invalidf("Invalid mediations.status: %s. Valid values are: [%s]", q.MediationStatus, strings.Join(MediationStatuses, ", "))
	}
	res := SearchResult{Query: q.Q, Display: "complete", Paging: Paging{Offset: q.Offset, Limit: q.Limit},
		Results: []Order{}, Sort: SortRef{ID: q.Sort, Name: sortNames[q.Sort]}, Filters: []Filter{}, AvailableFilters: []Filter{}}
	for _, id := range []string{SortDateAsc, SortDateDesc} {
		if id != q.Sort {
			res.AvailableSorts = append(res.AvailableSorts, SortRef{ID: id, Name: sortNames[id]})
		}
	}
	err := s.store.View(ctx, func(tx storage.Tx) error {
		counts, err := s.searchIn(tx, role, party, q, &res)
		if err != nil {
			return err
		}
		statusFilter(q, counts, &res)
		if q.MediationStatus != "" {
			res.Filters = append(res.Filters, Filter{ID: "mediations.status", Name: "Mediation status", Type: "text",
				Values: []FilterValue{{ID: q.MediationStatus, Name: mediationName(q.MediationStatus)}}})
		}
		return nil
	})
	if err != nil {
		return SearchResult{}, err
	}
	return res, nil
}

// MaxExaminedOrders bounds the orders one search reads to apply the filters
// that only the orders' records answer (see Search): the cost of a search
// is then at most this many order reads, whatever the party's history.
const MaxExaminedOrders = 10000

// maxExamined is MaxExaminedOrders, lowered by the package's tests.
var maxExamined = MaxExaminedOrders

// errTooManyExamined is the answer to a search by the records whose
// date_created range holds more than maxExamined of the party's orders.
func errTooManyExamined(party int64) error {
	return errs.Invalidf("The search would examine more than %d orders of user %d: narrow it with order.date_created.from and order.date_created.to", maxExamined, party)
}

// byRecord reports whether the search filters on what only the orders'
// records say.
func (q SearchQuery) byRecord() bool {
	return q.Item != "" || q.Q != "" || len(q.Tags) > 0 || len(q.TagsNot) > 0 || q.MediationStatus != "" ||
		q.ClosedFrom != nil || q.ClosedTo != nil || q.UpdatedFrom != nil || q.UpdatedTo != nil ||
		(q.Seller != 0 && q.Buyer != 0)
}

// createdRange is the part of list prefix within the date_created bounds.
func createdRange(prefix []byte, q SearchQuery, reverse bool) storage.Range {
	r := storage.Prefix(prefix)
	if q.CreatedFrom != nil {
		r.Start = keycodec.Key(slices.Clone(prefix)).Int(q.CreatedFrom.UnixMilli())
	}
	if q.CreatedTo != nil {
		r.End = keycodec.Key(slices.Clone(prefix)).Int(q.CreatedTo.UnixMilli() + 1)
	}
	r.Reverse = reverse
	return r
}

// searchIn fills res's page and total and returns the count of each
// order status among the orders the filters other than order.status find.
func (s *Service) searchIn(tx storage.Tx, role string, party int64, q SearchQuery, res *SearchResult) (map[string]int, error) {
	prefix := listPrefix(role, party, q.Status)
	ranged := q.CreatedFrom != nil || q.CreatedTo != nil
	counts := map[string]int{}
	var page []int64
	if !q.byRecord() {
		total := -1
		if !ranged {
			// The total and the counts by status are read together.
			wanted := []kv.Counter{listCounter(role, party, q.Status)}
			if q.Status == "" {
				for _, st := range OrderStatuses {
					wanted = append(wanted, listCounter(role, party, st.ID))
				}
			}
			if err := kv.PrefetchCounters(tx, wanted...); err != nil {
				return nil, err
			}
		}
		r := createdRange(prefix, q, q.Sort == SortDateDesc)
		if !ranged {
			// The walk steps onto the key after the page before it
			// stops.
			r.Expect = q.Offset + q.Limit + 1
		}
		// Opened before the counts are read: the page's keys come with
		// them (one round trip on a backend at network distance).
		it := tx.Iterate(r)
		defer it.Close()
		if !ranged {
			n, err := listCounter(role, party, q.Status).Read(tx)
			if err != nil {
				return nil, err
			}
			total = int(n)
		}
		seen := 0
		for ; it.Valid(); it.Next() {
			if total >= 0 && len(page) == q.Limit {
				break
			}
			if seen >= q.Offset && len(page) < q.Limit {
				id, err := orderIDOf(it.Key(), len(prefix))
				if err != nil {
					return nil, err
				}
				page = append(page, id)
			}
			seen++
		}
		if total < 0 {
			total = seen
		}
		res.Paging.Total = total
		if q.Status == "" {
			for _, st := range OrderStatuses {
				n, err := s.countStatus(tx, role, party, st.ID, q, ranged)
				if err != nil {
					return nil, err
				}
				counts[st.ID] = n
			}
		}
		return counts, s.readPage(tx, page, res)
	}
	// Filters on the records: walk the party's orders of every status and
	// test each, up to the bound.
	if !ranged {
		n, err := listCounter(role, party, "").Read(tx)
		if err != nil {
			return nil, err
		}
		if n > int64(maxExamined) {
			return nil, errTooManyExamined(party)
		}
	}
	all := listPrefix(role, party, "")
	it := tx.Iterate(createdRange(all, q, q.Sort == SortDateDesc))
	defer it.Close()
	matched := 0
	test := func(ids []int64) error {
		if err := prefetchOrders(tx, ids); err != nil {
			return err
		}
		for _, id := range ids {
			r, err := getOrder(tx, id)
			if err != nil {
				return errs.Internalf(err, "the order list names order %d", id)
			}
			if !matches(r, q) {
				continue
			}
			counts[r.Order.Status]++
			if q.Status != "" && r.Order.Status != q.Status {
				continue
			}
			if matched >= q.Offset && len(res.Results) < q.Limit {
				res.Results = append(res.Results, r.Order)
			}
			matched++
		}
		return nil
	}
	// The orders are read a batch at a time: one round trip per batch on
	// a backend at network distance.
	batch := make([]int64, 0, examineBatch)
	for examined := 0; it.Valid(); it.Next() {
		if examined++; examined > maxExamined {
			return nil, errTooManyExamined(party)
		}
		id, err := orderIDOf(it.Key(), len(all))
		if err != nil {
			return nil, err
		}
		if batch = append(batch, id); len(batch) == examineBatch {
			if err := test(batch); err != nil {
				return nil, err
			}
			batch = batch[:0]
		}
	}
	if err := test(batch); err != nil {
		return nil, err
	}
	res.Paging.Total = matched
	return counts, nil
}

// examineBatch is how many orders a search by the records reads at once.
const examineBatch = 200

// countStatus is the number of the party's orders of status within the
// search's date_created range: the list's count, or its keys in the range.
func (s *Service) countStatus(tx storage.Tx, role string, party int64, status string, q SearchQuery, ranged bool) (int, error) {
	if !ranged {
		n, err := listCounter(role, party, status).Read(tx)
		return int(n), err
	}
	it := tx.Iterate(createdRange(listPrefix(role, party, status), q, false))
	defer it.Close()
	n := 0
	for ; it.Valid(); it.Next() {
		n++
	}
	return n, nil
}

func orderIDOf(key []byte, from int) (int64, error) {
	r := keycodec.Read(key[from:])
	r.Int()
	id := r.Int()
	if err := r.Err(); err != nil {
		return 0, errs.Internalf(err, "order list key %q", key)
	}
	return id, nil
}

func (s *Service) readPage(tx storage.Tx, ids []int64, res *SearchResult) error {
	if err := prefetchOrders(tx, ids); err != nil {
		return err
	}
	for _, id := range ids {
		r, err := getOrder(tx, id)
		if err != nil {
			return errs.Internalf(err, "the order list names order %d", id)
		}
		res.Results = append(res.Results, r.Order)
	}
	return nil
}

// matches applies the filters that only the record answers.
func matches(r orderRecord, q SearchQuery) bool {
	o := r.Order
	line := o.OrderItems[0]
	if q.Seller != 0 && q.Buyer != 0 && (o.Seller.ID != q.Seller || o.Buyer.ID != q.Buyer) {
		return false
	}
	if q.Item != "" && line.Item.ID != q.Item {
		return false
	}
	if q.Q != "" && !matchesText(o, q) {
		return false
	}
	for _, t := range q.Tags {
		if !slices.Contains(o.Tags, t) {
			return false
		}
	}
	for _, t := range q.TagsNot {
		if slices.Contains(o.Tags, t) {
			return false
		}
	}
	if q.MediationStatus != "" && !hasMediation(r, q.MediationStatus) {
		return false
	}
	if !within(r.ClosedMs, r.ClosedMs != 0, q.ClosedFrom, q.ClosedTo) {
		return false
	}
	return within(r.UpdatedMs, true, q.UpdatedFrom, q.UpdatedTo)
}

// matchesText is the q filter: the order id, the item's id, a word of its
// title, or the nickname of the other party, ignoring case.
func matchesText(o Order, q SearchQuery) bool {
	text := strings.ToLower(q.Q)
	line := o.OrderItems[0]
	other := o.Buyer.Nickname
	if q.Seller == 0 {
		other = o.Seller.Nickname
	}
	return text == strconv.FormatInt(o.ID, 10) || text == strings.ToLower(line.Item.ID) ||
		strings.Contains(strings.ToLower(line.Item.Title), text) || strings.Contains(strings.ToLower(other), text)
}

// mediationName is a mediations.status value as a filter names it:
// "Seller dispute opened" for seller_dispute_opened.
func mediationName(status string) string {
	words := strings.ReplaceAll(status, "_", " ")
	return strings.ToUpper(words[:1]) + words[1:]
}

// hasMediation reports whether a claim of the order stands at status.
func hasMediation(r orderRecord, status string) bool {
	for _, st := range r.MediationStatuses {
		if st == status {
			return true
		}
	}
	return false
}

func within(ms int64, has bool, from, to *time.Time) bool {
	if from == nil && to == nil {
		return true
	}
	if !has {
		return false
	}
	return (from == nil || ms >= from.UnixMilli()) && (to == nil || ms <= to.UnixMilli())
}

// statusFilter writes the order.status filter: applied (filters) when the
// search names a status, available with the count of each status found
// otherwise.
func statusFilter(q SearchQuery, counts map[string]int, res *SearchResult) {
	f := Filter{ID: "order.status", Name: "Order Status", Type: "text", Values: []FilterValue{}}
	for _, st := range OrderStatuses {
		if q.Status != "" {
			if st.ID == q.Status {
				f.Values = append(f.Values, FilterValue{ID: st.ID, Name: st.Name})
			}
			continue
		}
		if n := counts[st.ID]; n > 0 {
			f.Values = append(f.Values, FilterValue{ID: st.ID, Name: st.Name, Results: &n})
		}
	}
	if q.Status != "" {
		res.Filters = append(res.Filters, f)
		return
	}
	res.AvailableFilters = append(res.AvailableFilters, f)
}

// prefetchOrders tells tx that the orders are about to be read, so that a
// backend at network distance reads them in one round trip.
func prefetchOrders(tx storage.Tx, ids []int64) error {
	if _, ok := tx.(storage.Prefetcher); !ok || len(ids) == 0 {
		return nil
	}
	keys := make([][]byte, len(ids))
	for i, id := range ids {
		keys[i] = orderKey(id)
	}
	return storage.Prefetch(tx, keys...)
}
