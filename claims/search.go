package claims

import (
	"cmp"
	"context"
	"errors"
	"slices"

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
	keys := make([][]byte, len(ids))
	for i, id := range ids {
		keys[i] = claimKey(id)
	}
	if err := storage.Prefetch(tx, keys...); err != nil { // the claims in one round trip
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
