package sales_test

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/sales"
	"github.com/marketplace/marketplace/stock"
)

// searchedOrder is an order as the brute-force filter sees it.
type searchedOrder struct {
	o                          sales.Order
	created, closed, updated   int64 // Unix ms; closed 0 when not closed
	sellerNick, buyerNick, ttl string
}

func millis(tb fataler, s string) int64 {
	tb.Helper()
	t, err := time.Parse(sales.TimeLayout, s)
	if err != nil {
		tb.Fatalf("date %q: %v", s, err)
	}
	return t.UnixMilli()
}

// statusNames are the order.status values in the order the filter lists
// them.
var statusNames = []struct{ id, name string }{
	{"paid", "Order Paid"}, {"confirmed", "Order Confirmed"}, {"payment_in_process", "Payment In Process"},
	{"payment_required", "Payment Required"}, {"cancelled", "Order Cancelled"}, {"invalid", "Order Invalid"},
}

func inRange(ms int64, has bool, from, to *time.Time) bool {
	if from == nil && to == nil {
		return true
	}
	return has && (from == nil || ms >= from.UnixMilli()) && (to == nil || ms <= to.UnixMilli())
}

// bruteSearch is the search's rule applied to every order: the party's
// orders, filtered, in date_created order (then id), paged; the count of
// each status among those the filters other than order.status keep.
func bruteSearch(all []searchedOrder, q sales.SearchQuery) (total int, page []int64, counts map[string]int) {
	counts = map[string]int{}
	var kept []searchedOrder
	for _, s := range all {
		o := s.o
		if q.Seller != 0 && o.Seller.ID != q.Seller || q.Buyer != 0 && o.Buyer.ID != q.Buyer {
			continue
		}
		if q.Item != "" && o.OrderItems[0].Item.ID != q.Item {
			continue
		}
		if q.Q != "" {
			text := strings.ToLower(q.Q)
			other := s.buyerNick
			if q.Seller == 0 {
				other = s.sellerNick
			}
			if text != strconv.FormatInt(o.ID, 10) && text != strings.ToLower(o.OrderItems[0].Item.ID) &&
				!strings.Contains(strings.ToLower(s.ttl), text) && !strings.Contains(strings.ToLower(other), text) {
				continue
			}
		}
		if slices.ContainsFunc(q.Tags, func(t string) bool { return !slices.Contains(o.Tags, t) }) ||
			slices.ContainsFunc(q.TagsNot, func(t string) bool { return slices.Contains(o.Tags, t) }) {
			continue
		}
		if !inRange(s.created, true, q.CreatedFrom, q.CreatedTo) || !inRange(s.closed, s.closed != 0, q.ClosedFrom, q.ClosedTo) ||
			!inRange(s.updated, true, q.UpdatedFrom, q.UpdatedTo) {
			continue
		}
		counts[o.Status]++
		if q.Status == "" || o.Status == q.Status {
			kept = append(kept, s)
		}
	}
	slices.SortFunc(kept, func(a, b searchedOrder) int {
		if a.created != b.created {
			return int(a.created - b.created)
		}
		return int(a.o.ID - b.o.ID)
	})
	if q.Sort == sales.SortDateDesc {
		slices.Reverse(kept)
	}
	for i, s := range kept {
		if i >= q.Offset && len(page) < q.Limit {
			page = append(page, s.o.ID)
		}
	}
	return len(kept), page, counts
}

// searchWorld is a store of random orders between two sellers and three
// buyers.
type searchWorld struct {
	sellers, buyers []int64
	items           []string
	titles          map[string]string
	nicks           map[int64]string
	all             []searchedOrder
}

func newSearchWorld(t *rapid.T, e *env) *searchWorld {
	w := &searchWorld{titles: map[string]string{}, nicks: map[int64]string{}}
	for _, nick := range []string{"TIENDA_NORTE", "TIENDA_SUR"} {
		seller := e.mustUser(nick)
		w.sellers = append(w.sellers, seller)
		w.nicks[seller] = nick
		for _, title := range []string{"Mesa de roble", "Silla plegable"} {
			q := int64(1000)
			p, err := e.stock.Publish(ctx, seller, stock.NewItem{Title: title + " " + nick, CategoryID: "MLA1055",
				Price: money.MustParse("10"), ListingTypeID: "gold_special", CurrencyID: "ARS", AvailableQuantity: &q})
			if err != nil {
				t.Fatalf("publish: %v", err)
			}
			w.items = append(w.items, p.ID)
			w.titles[p.ID] = p.Title
		}
	}
	for _, nick := range []string{"ANA_COMPRAS", "BRUNO", "CARLA_NORTE"} {
		buyer := e.mustUser(nick)
		w.buyers = append(w.buyers, buyer)
		w.nicks[buyer] = nick
	}
	var ids []int64
	n := rapid.IntRange(2, 12).Draw(t, "orders")
	for i := range n {
		e.clock.Advance(time.Duration(rapid.IntRange(0, 3).Draw(t, fmt.Sprintf("gap %d", i))) * time.Millisecond)
		status := rapid.SampledFrom([]string{sales.StatusPaid, sales.StatusPaymentRequired}).Draw(t, fmt.Sprintf("status %d", i))
		o, err := e.sales.PlaceOrder(ctx, sales.NewOrder{BuyerID: rapid.SampledFrom(w.buyers).Draw(t, fmt.Sprintf("buyer %d", i)),
			ItemID: rapid.SampledFrom(w.items).Draw(t, fmt.Sprintf("item %d", i)), Quantity: 1, Status: status})
		if err != nil {
			t.Fatalf("order: %v", err)
		}
		ids = append(ids, o.ID)
	}
	// Later changes move last_updated, date_closed and the tags.
	for i := range rapid.IntRange(0, len(ids)).Draw(t, "changes") {
		if len(ids) == 0 {
			break
		}
		id := rapid.SampledFrom(ids).Draw(t, fmt.Sprintf("changed %d", i))
		e.clock.Advance(time.Duration(rapid.IntRange(1, 3).Draw(t, fmt.Sprintf("wait %d", i))) * time.Millisecond)
		var err error
		switch rapid.IntRange(0, 3).Draw(t, fmt.Sprintf("change %d", i)) {
		case 0:
			_, err = e.sales.Cancel(ctx, id)
		case 1:
			_, err = e.sales.Pay(ctx, id, sales.PaymentInput{Status: "approved"})
		default:
			ship := *e.mustReadOrder(id).Shipping.ID
			if _, err = e.sales.MoveShipment(ctx, ship, sales.ShipmentMove{Status: sales.ShipmentShipped}); err == nil {
				to := rapid.SampledFrom([]string{sales.ShipmentDelivered, sales.ShipmentNotDelivered}).Draw(t, fmt.Sprintf("to %d", i))
				_, err = e.sales.MoveShipment(ctx, ship, sales.ShipmentMove{Status: to})
			}
		}
		if err != nil && !errs.Is(err, errs.Invalid) {
			t.Fatalf("change %d: %v", id, err)
		}
	}
	for _, id := range ids {
		o := e.mustReadOrder(id)
		s := searchedOrder{o: o, created: millis(t, o.DateCreated), updated: millis(t, o.LastUpdated),
			sellerNick: w.nicks[o.Seller.ID], buyerNick: w.nicks[o.Buyer.ID], ttl: w.titles[o.OrderItems[0].Item.ID]}
		if o.DateClosed != nil {
			s.closed = millis(t, *o.DateClosed)
		}
		w.all = append(w.all, s)
	}
	return w
}

// drawDate draws a bound near the dates of the orders.
func (w *searchWorld) drawDate(t *rapid.T, label string, pick func(searchedOrder) int64) *time.Time {
	if len(w.all) == 0 || !rapid.Bool().Draw(t, label) {
		return nil
	}
	ms := pick(rapid.SampledFrom(w.all).Draw(t, label+" order")) + int64(rapid.IntRange(-1, 1).Draw(t, label+" shift"))
	d := time.UnixMilli(ms)
	return &d
}

func (w *searchWorld) drawQuery(t *rapid.T) sales.SearchQuery {
	var q sales.SearchQuery
	if rapid.Bool().Draw(t, "as seller") {
		q.Seller = rapid.SampledFrom(append(slices.Clone(w.sellers), w.buyers[0])).Draw(t, "seller")
	} else {
		q.Buyer = rapid.SampledFrom(append(slices.Clone(w.buyers), w.sellers[0])).Draw(t, "buyer")
	}
	if rapid.Bool().Draw(t, "by status") {
		q.Status = rapid.SampledFrom(statusNames).Draw(t, "status").id
	}
	q.CreatedFrom = w.drawDate(t, "created from", func(s searchedOrder) int64 { return s.created })
	q.CreatedTo = w.drawDate(t, "created to", func(s searchedOrder) int64 { return s.created })
	// Half the queries read the lists by party only, the other half
	// filter on the orders' records too, each filter now and then (so
	// that several orders are often left to page through).
	if rapid.Bool().Draw(t, "by record") {
		sometimes := func(label string) bool { return rapid.IntRange(0, 3).Draw(t, label) == 0 }
		if sometimes("both parties") {
			if q.Seller == 0 {
				q.Seller = rapid.SampledFrom(w.sellers).Draw(t, "and seller")
			} else {
				q.Buyer = rapid.SampledFrom(w.buyers).Draw(t, "and buyer")
			}
		}
		if sometimes("by item") {
			q.Item = rapid.SampledFrom(append(slices.Clone(w.items), "MLA1")).Draw(t, "item")
		}
		if sometimes("by text") {
			q.Q = w.drawText(t)
		}
		tags := []string{sales.TagPaid, sales.TagDelivered, sales.TagNotDelivered}
		if sometimes("by tags") {
			q.Tags = rapid.SliceOfNDistinct(rapid.SampledFrom(tags), 1, 2, rapid.ID[string]).Draw(t, "tags")
		}
		if sometimes("by tags.not") {
			q.TagsNot = rapid.SliceOfNDistinct(rapid.SampledFrom(tags), 1, 2, rapid.ID[string]).Draw(t, "tags.not")
		}
		if sometimes("by dates") {
			q.ClosedFrom = w.drawDate(t, "closed from", func(s searchedOrder) int64 { return max(s.closed, s.created) })
			q.ClosedTo = w.drawDate(t, "closed to", func(s searchedOrder) int64 { return max(s.closed, s.created) })
			q.UpdatedFrom = w.drawDate(t, "updated from", func(s searchedOrder) int64 { return s.updated })
			q.UpdatedTo = w.drawDate(t, "updated to", func(s searchedOrder) int64 { return s.updated })
		}
	}
	q.Sort = rapid.SampledFrom([]string{"", sales.SortDateAsc, sales.SortDateDesc}).Draw(t, "sort")
	q.Offset = rapid.IntRange(0, len(w.all)+1).Draw(t, "offset")
	if rapid.Bool().Draw(t, "first page") {
		q.Offset = 0
	}
	q.Limit = rapid.IntRange(0, len(w.all)+1).Draw(t, "limit")
	return q
}

func (w *searchWorld) drawText(t *rapid.T) string {
	switch rapid.IntRange(0, 4).Draw(t, "text kind") {
	case 0:
		if len(w.all) > 0 {
			return strconv.FormatInt(rapid.SampledFrom(w.all).Draw(t, "text order").o.ID, 10)
		}
	case 1:
		return strings.ToLower(rapid.SampledFrom(w.items).Draw(t, "text item"))
	case 2:
		return rapid.SampledFrom([]string{"mesa", "SILLA", "roble", "sur"}).Draw(t, "text title")
	case 3:
		return rapid.SampledFrom([]string{"ana", "Bruno", "norte", "tienda"}).Draw(t, "text nickname")
	}
	return "zzz"
}

func TestSearch_FindsWhatABruteForceFilterOverEveryOrderFinds(t *testing.T) {
	owner := t
	rapid.Check(t, func(t *rapid.T) {
		e, done := newPropertyEnv(t, owner)
		defer done()
		w := newSearchWorld(t, e)
		for i := range 10 {
			q := w.drawQuery(t)
			party := q.Seller
			if party == 0 {
				party = q.Buyer
			}
			caller := rapid.SampledFrom([]int64{party, sales.Operator}).Draw(t, fmt.Sprintf("caller %d", i))
			res, err := e.sales.Search(ctx, caller, q)
			if err != nil {
				t.Fatalf("search %+v: %v", q, err)
			}
			total, page, counts := bruteSearch(w.all, q)
			var got []int64
			for _, o := range res.Results {
				got = append(got, o.ID)
			}
			if res.Paging.Total != total || !slices.Equal(got, page) {
				t.Fatalf("search %+v: total %d page %v; every order filtered: total %d page %v", q, res.Paging.Total, got, total, page)
			}
			wantSort := q.Sort
			if wantSort == "" {
				wantSort = sales.SortDateAsc
			}
			if res.Sort.ID != wantSort || res.Paging.Offset != q.Offset || res.Paging.Limit != q.Limit {
				t.Fatalf("sort %+v paging %+v", res.Sort, res.Paging)
			}
			checkStatusFilter(t, q, res, counts)
		}
	})
}

// checkStatusFilter: a search by status shows it applied (filters);
// otherwise the available values count the orders of each status found.
func checkStatusFilter(t fataler, q sales.SearchQuery, res sales.SearchResult, counts map[string]int) {
	t.Helper()
	var want []string
	for _, st := range statusNames {
		switch {
		case q.Status != "" && st.id == q.Status:
			want = append(want, st.id+" "+st.name)
		case q.Status == "" && counts[st.id] > 0:
			want = append(want, fmt.Sprintf("%s %s %d", st.id, st.name, counts[st.id]))
		}
	}
	applied, available := res.Filters, res.AvailableFilters
	if q.Status == "" {
		applied, available = available, applied
	}
	if len(available) != 0 || len(applied) != 1 || applied[0].ID != "order.status" || applied[0].Name != "Order Status" {
		t.Fatalf("filters %+v available %+v", res.Filters, res.AvailableFilters)
	}
	var got []string
	for _, v := range applied[0].Values {
		s := v.ID + " " + v.Name
		if v.Results != nil {
			s += fmt.Sprintf(" %d", *v.Results)
		}
		got = append(got, s)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("order.status values %v, want %v", got, want)
	}
}

func TestSearch_AvailableFiltersCountTheOrdersOfEachStatus(t *testing.T) {
	e := newEnv(t)
	seller, item := e.mustPlainItem(10)
	buyer := e.mustUser("BUYER")
	var ids []int64
	for _, status := range []string{sales.StatusPaid, sales.StatusPaid, sales.StatusPaid, sales.StatusPaymentRequired, sales.StatusPaymentRequired} {
		e.clock.Advance(time.Second)
		ids = append(ids, e.mustOrder(sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: 1, Status: status}).ID)
	}
	if _, err := e.sales.Cancel(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	res, err := e.sales.Search(ctx, seller, sales.SearchQuery{Seller: seller, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	checkStatusFilter(t, sales.SearchQuery{}, res, map[string]int{"paid": 2, "payment_required": 2, "cancelled": 1})
	if res.Paging.Total != 5 || len(res.AvailableSorts) != 1 || res.AvailableSorts[0].ID != sales.SortDateDesc {
		t.Fatalf("paging %+v sorts %+v", res.Paging, res.AvailableSorts)
	}
	// The buyer's counts are the same orders seen from the other side.
	res, err = e.sales.Search(ctx, buyer, sales.SearchQuery{Buyer: buyer, Status: sales.StatusPaymentRequired, Sort: sales.SortDateDesc, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if res.Paging.Total != 2 || res.Results[0].ID != ids[4] || res.Results[1].ID != ids[3] {
		t.Fatalf("buyer's unpaid orders %+v", res.Paging)
	}
	checkStatusFilter(t, sales.SearchQuery{Status: sales.StatusPaymentRequired}, res, nil)
	// A payment moves an order from one count to the other.
	if _, err := e.sales.Pay(ctx, ids[3], sales.PaymentInput{Status: "approved"}); err != nil {
		t.Fatal(err)
	}
	res, _ = e.sales.Search(ctx, seller, sales.SearchQuery{Seller: seller, Limit: 0})
	checkStatusFilter(t, sales.SearchQuery{}, res, map[string]int{"paid": 3, "payment_required": 1, "cancelled": 1})
	if res.Paging.Total != 5 || len(res.Results) != 0 {
		t.Fatalf("limit 0: %+v %d results", res.Paging, len(res.Results))
	}
}

func TestSearch_TheCallerSearchesTheirOwnOrders(t *testing.T) {
	e := newEnv(t)
	seller, item := e.mustPlainItem(10)
	buyer := e.mustUser("BUYER")
	e.mustOrder(sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: 1})
	for _, c := range []struct {
		caller int64
		q      sales.SearchQuery
		kind   errs.Kind
		msg    string
	}{
		{seller, sales.SearchQuery{Limit: 50}, errs.Invalid, "Missing parameter: seller or buyer. Send the caller's user id as one of them"},
		{buyer, sales.SearchQuery{Seller: seller, Limit: 50}, errs.Forbidden, fmt.Sprintf("The caller %d cannot search the orders of user %d", buyer, seller)},
		{seller, sales.SearchQuery{Buyer: buyer, Limit: 50}, errs.Forbidden, fmt.Sprintf("The caller %d cannot search the orders of user %d", seller, buyer)},
		{seller, sales.SearchQuery{Seller: seller, Sort: "price_asc", Limit: 50}, errs.Invalid, "Invalid sort: price_asc. Valid values are: [date_asc, date_desc]"},
		{seller, sales.SearchQuery{Seller: seller, Status: "shipped", Limit: 50}, errs.Invalid, "Invalid order.status: shipped. Valid values are: [paid, confirmed, payment_in_process, payment_required, cancelled, invalid]"},
		{seller, sales.SearchQuery{Seller: seller, Limit: 1001}, errs.Invalid, "Invalid limit: 1001. The maximum is 1000"},
		{seller, sales.SearchQuery{Seller: seller, Offset: -1, Limit: 5}, errs.Invalid, "Invalid offset: -1. It must be a non-negative integer"},
	} {
		_, err := e.sales.Search(ctx, c.caller, c.q)
		wantErr(t, err, c.kind, c.msg)
	}
}

func TestParseSearch_ReadsThePublicParametersAndRefusesWhatDoesNotParse(t *testing.T) {
	v := url.Values{"seller": {"123"}, "order.status": {"paid"}, "item": {"MLA1"}, "q": {" mesa "}, "tags": {"paid, delivered"},
		"tags.not": {"not_delivered"}, "order.date_created.from": {"2015-07-01T00:00:00.000-00:00"},
		"order.date_closed.to": {"2015-07-01T00:00:00.000-03:00"}, "sort": {"date_desc"}}
	q, err := sales.ParseSearch(v, 5, 10)
	if err != nil {
		t.Fatal(err)
	}
	if q.Seller != 123 || q.Status != "paid" || q.Item != "MLA1" || q.Q != "mesa" || !slices.Equal(q.Tags, []string{"paid", "delivered"}) ||
		!slices.Equal(q.TagsNot, []string{"not_delivered"}) || q.Sort != "date_desc" || q.Offset != 5 || q.Limit != 10 ||
		q.CreatedFrom == nil || !q.CreatedFrom.Equal(time.Date(2015, 7, 1, 0, 0, 0, 0, time.UTC)) ||
		q.ClosedTo == nil || !q.ClosedTo.Equal(time.Date(2015, 7, 1, 3, 0, 0, 0, time.UTC)) {
		t.Fatalf("query %+v", q)
	}
	for _, c := range []struct{ name, raw, msg string }{
		{"seller", "abc", "Invalid seller: abc. It must be a user id"},
		{"buyer", "-4", "Invalid buyer: -4. It must be a user id"},
		{"order.date_created.from", "yesterday", "Invalid order.date_created.from: yesterday. Dates are written as 2015-07-01T00:00:00.000-00:00"},
		{"order.date_last_updated.to", "2015-07-01", "Invalid order.date_last_updated.to: 2015-07-01. Dates are written as 2015-07-01T00:00:00.000-00:00"},
	} {
		_, err := sales.ParseSearch(url.Values{c.name: {c.raw}}, 0, 50)
		wantErr(t, err, errs.Invalid, c.msg)
	}
}

func TestSearch_AFilteredSearchReturnsAPageOfAtMostLimitOrders(t *testing.T) {
	e := newEnv(t)
	seller, item := e.mustPlainItem(10)
	buyer := e.mustUser("BUYER")
	var ids []int64
	for range 4 {
		e.clock.Advance(time.Second)
		ids = append(ids, e.mustOrder(sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: 1}).ID)
	}
	for _, q := range []sales.SearchQuery{
		{Seller: seller, Limit: 2, Offset: 1},                                // by party: the lists
		{Seller: seller, Item: item.ID, Limit: 2, Offset: 1},                 // by item: the records
		{Seller: seller, Tags: []string{sales.TagPaid}, Limit: 2, Offset: 1}, // by tag: the records
	} {
		res, err := e.sales.Search(ctx, seller, q)
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, o := range res.Results {
			got = append(got, o.ID)
		}
		if res.Paging.Total != 4 || !slices.Equal(got, ids[1:3]) {
			t.Fatalf("search %+v: total %d page %v, want 4 and %v", q, res.Paging.Total, got, ids[1:3])
		}
	}
}

// TestSearch_AFilterOnTheRecordsExaminesAtMostTheBoundOfOrders: a search
// that only the orders' records answer reads at most the bound of the
// party's orders: beyond it, with or without a date_created range, it is
// refused with a 400 that says how to narrow it; within a range that holds
// no more, it is answered; a search the lists answer is not bounded.
func TestSearch_AFilterOnTheRecordsExaminesAtMostTheBoundOfOrders(t *testing.T) {
	defer sales.SetMaxExamined(3)()
	e := newEnv(t)
	seller, item := e.mustPlainItem(10)
	buyer := e.mustUser("BUYER")
	var created []time.Time
	for range 5 {
		e.clock.Advance(time.Second)
		created = append(created, e.clock.Now())
		e.mustOrder(sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: 1})
	}
	msg := fmt.Sprintf("The search would examine more than 3 orders of user %d: narrow it with order.date_created.from and order.date_created.to", seller)
	for _, q := range []sales.SearchQuery{
		{Seller: seller, Item: item.ID, Limit: 2},
		{Seller: seller, Q: "mesa", Limit: 2},
		{Seller: seller, Item: item.ID, CreatedFrom: &created[0], CreatedTo: &created[3], Limit: 2},
	} {
		_, err := e.sales.Search(ctx, seller, q)
		if !errs.Is(err, errs.Invalid) || errs.As(err).Message != msg {
			t.Fatalf("search %+v: %v; want Invalid %q", q, err, msg)
		}
	}
	res, err := e.sales.Search(ctx, seller, sales.SearchQuery{Seller: seller, Item: item.ID, CreatedFrom: &created[1], CreatedTo: &created[3], Limit: 2})
	if err != nil || res.Paging.Total != 3 || len(res.Results) != 2 {
		t.Fatalf("within the bound: %+v, %v; want 3 orders", res.Paging, err)
	}
	res, err = e.sales.Search(ctx, seller, sales.SearchQuery{Seller: seller, Status: sales.StatusPaid, Limit: 2})
	if err != nil || res.Paging.Total != 5 {
		t.Fatalf("by the lists: %+v, %v; want 5 orders", res.Paging, err)
	}
}
