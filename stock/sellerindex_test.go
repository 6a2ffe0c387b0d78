package stock_test

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/paging"
	"github.com/marketplace/marketplace/stock"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/schema"
)

var sellerStatuses = []string{"", stock.StatusActive, stock.StatusPaused, stock.StatusClosed}

// sellerListingTypes are the listing types the seller tests publish with,
// "" standing for no filter.
var sellerListingTypes = []string{"", "gold_special", "gold_pro", "free"}

// sellerSortIDs are every order of the seller search, "" for the default.
func sellerSortIDs() []string {
	out := []string{""}
	for _, o := range stock.SellerSorts {
		out = append(out, o.ID)
	}
	return out
}

// sellerSortKey is what the seller search orders by, written from the
// rules: the dates as times, the price as a number, the quantities.
func sellerSortKey(tb fataler, it stock.Item, sort string) *big.Rat {
	tb.Helper()
	date := func(s string) *big.Rat {
		t, err := time.Parse(stock.TimeLayout, s)
		if err != nil {
			tb.Fatalf("item %s date %q: %v", it.ID, s, err)
		}
		return new(big.Rat).SetInt64(t.UnixNano())
	}
	switch strings.TrimSuffix(strings.TrimSuffix(sort, "_asc"), "_desc") {
	case "", "start_time":
		return date(it.DateCreated)
	case "last_updated":
		return date(it.LastUpdated)
	case "price":
		r, ok := new(big.Rat).SetString(string(it.Price))
		if !ok {
			tb.Fatalf("item %s price %q", it.ID, it.Price)
		}
		return r
	case "available_quantity":
		return new(big.Rat).SetInt64(it.AvailableQuantity)
	case "sold_quantity":
		return new(big.Rat).SetInt64(it.SoldQuantity)
	}
	tb.Fatalf("sort %q", sort)
	return nil
}

// bruteSellerItems is the seller search's rule applied to every item: the
// seller's items of status and listing type ("" for any), read one by
// one, ordered by the sort's value with ties in publication order (id
// length, then id), the whole order reversed for a _desc sort, paged.
func bruteSellerItems(tb fataler, items []stock.Item, seller int64, status, listingType, sort string, offset, limit int) ([]string, int) {
	tb.Helper()
	var kept []stock.Item
	for _, it := range items {
		if it.SellerID == seller && (status == "" || it.Status == status) && (listingType == "" || it.ListingTypeID == listingType) {
			kept = append(kept, it)
		}
	}
	slices.SortFunc(kept, func(a, b stock.Item) int {
		c := cmp.Or(sellerSortKey(tb, a, sort).Cmp(sellerSortKey(tb, b, sort)), cmp.Compare(len(a.ID), len(b.ID)), strings.Compare(a.ID, b.ID))
		if strings.HasSuffix(sort, "_desc") {
			return -c
		}
		return c
	})
	page := []string{}
	for i := offset; i < len(kept) && len(page) < limit; i++ {
		page = append(page, kept[i].ID)
	}
	return page, len(kept)
}

// TestSellerItems_EqualsAFilterAndSortOverTheSellersItemsAfterAnyChanges:
// after any publications (of several listing types and prices, some
// joining another item's user product), relists, status, price, title and
// quantity updates, units taken and returned by sales (which pause items
// as out_of_stock and reactivate them) and moves of the clock, every
// status, listing type, order and window of the seller search, and the
// operator's list, equal the filter and sort over every item record.
func TestSellerItems_EqualsAFilterAndSortOverTheSellersItemsAfterAnyChanges(t *testing.T) {
	owner := t
	rapid.Check(t, func(t *rapid.T) {
		e, done := newPropertyEnv(t, owner)
		defer done()
		sellers := []int64{e.mustUser("MLA"), e.mustUser("MLA")}
		var ids []string
		pickItem := func(label string) (stock.Item, bool) {
			if len(ids) == 0 {
				return stock.Item{}, false
			}
			it, err := e.svc.Item(ctx, rapid.SampledFrom(ids).Draw(t, label))
			if err != nil {
				t.Fatalf("item: %v", err)
			}
			return it, true
		}
		prices := []string{"10", "9.5", "120", "10.01"}
		steps := rapid.IntRange(1, 30).Draw(t, "steps")
		for i := range steps {
			label := fmt.Sprint(i)
			switch rapid.IntRange(0, 9).Draw(t, "op "+label) {
			case 0:
				seller := rapid.SampledFrom(sellers).Draw(t, "seller "+label)
				qty := rapid.Int64Range(0, 2).Draw(t, "qty "+label)
				in := plainItem("Mesa "+label, rapid.SampledFrom(prices).Draw(t, "price "+label), qty)
				in.ListingTypeID = rapid.SampledFrom(sellerListingTypes[1:]).Draw(t, "listing type "+label)
				ids = append(ids, e.mustPublish(seller, in).ID)
			case 1:
				it, ok := pickItem("status item " + label)
				if !ok {
					continue
				}
				status := rapid.SampledFrom(sellerStatuses[1:]).Draw(t, "status "+label)
				if _, err := e.svc.UpdateItem(ctx, it.SellerID, it.ID, stock.ItemUpdate{Status: &status}); err != nil && !errs.Is(err, errs.Invalid) {
					t.Fatalf("update status: %v", err)
				}
			case 2:
				it, ok := pickItem("qty item " + label)
				if !ok {
					continue
				}
				q := rapid.Int64Range(0, 2).Draw(t, "new qty "+label)
				if _, err := e.svc.UpdateItem(ctx, it.SellerID, it.ID, stock.ItemUpdate{AvailableQuantity: &q}); err != nil && !errs.Is(err, errs.Invalid) {
					t.Fatalf("update quantity: %v", err)
				}
			case 3, 4:
				it, ok := pickItem("sold item " + label)
				if !ok {
					continue
				}
				take := rapid.Bool().Draw(t, "take "+label)
				err := e.store.Update(ctx, func(tx storage.Tx) error {
					if take {
						_, err := e.svc.TakeUnits(ctx, tx, it.ID, "", 1, e.clock.Now())
						return err
					}
					return e.svc.ReturnUnits(ctx, tx, it.ID, stock.Source{}, 1, e.clock.Now())
				})
				if err != nil && !errs.Is(err, errs.Invalid) {
					t.Fatalf("units: %v", err)
				}
			case 5:
				it, ok := pickItem("relisted item " + label)
				if !ok {
					continue
				}
				q := int64(1)
				in := stock.RelistInput{Quantity: &q}
				if rapid.Bool().Draw(t, "relist as free "+label) {
					in.ListingTypeID = "free"
				}
				p, err := e.svc.Relist(ctx, it.SellerID, it.ID, in)
				if err == nil {
					ids = append(ids, p.ID)
				} else if !errs.Is(err, errs.Invalid) {
					t.Fatalf("relist: %v", err)
				}
			case 6:
				it, ok := pickItem("priced item " + label)
				if !ok {
					continue
				}
				price := money.MustParse(rapid.SampledFrom(prices).Draw(t, "new price "+label))
				if _, err := e.svc.UpdateItem(ctx, it.SellerID, it.ID, stock.ItemUpdate{Price: &price}); err != nil && !errs.Is(err, errs.Invalid) {
					t.Fatalf("update price: %v", err)
				}
			case 7:
				it, ok := pickItem("titled item " + label)
				if !ok {
					continue
				}
				title := "Silla " + label
				if _, err := e.svc.UpdateItem(ctx, it.SellerID, it.ID, stock.ItemUpdate{Title: &title}); err != nil && !errs.Is(err, errs.Invalid) {
					t.Fatalf("update title: %v", err)
				}
			case 8:
				it, ok := pickItem("joined item " + label)
				if !ok {
					continue
				}
				in := plainItem("Banco "+label, rapid.SampledFrom(prices).Draw(t, "joining price "+label), rapid.Int64Range(0, 2).Draw(t, "joining qty "+label))
				in.UserProductID = it.UserProductID
				p, err := e.svc.Publish(ctx, it.SellerID, in)
				if err == nil {
					ids = append(ids, p.ID)
				} else if !errs.Is(err, errs.Invalid) {
					t.Fatalf("join: %v", err)
				}
			case 9:
				d := time.Duration(rapid.IntRange(1, 3000).Draw(t, "clock ms "+label)) * time.Millisecond
				if err := e.clock.Advance(d); err != nil {
					t.Fatal(err)
				}
			}
		}
		var items []stock.Item
		for _, id := range ids {
			it, err := e.svc.Item(ctx, id)
			if err != nil {
				t.Fatalf("item %s: %v", id, err)
			}
			items = append(items, it)
		}
		for _, seller := range sellers {
			for _, status := range sellerStatuses {
				for _, listingType := range sellerListingTypes {
					for _, sort := range sellerSortIDs() {
						offset := rapid.IntRange(0, len(ids)+1).Draw(t, "offset")
						limit := rapid.IntRange(0, min(len(ids)+1, stock.MaxSellerItemsLimit)).Draw(t, "limit")
						wantPage, wantTotal := bruteSellerItems(t, items, seller, status, listingType, sort, offset, limit)
						got, err := e.svc.SellerItems(ctx, seller, seller, stock.SellerItemsQuery{Status: status, ListingTypeID: listingType,
							Sort: sort, Offset: offset, Limit: limit})
						if err != nil {
							t.Fatalf("search: %v", err)
						}
						if got.Total != wantTotal || !slices.Equal(got.Results, wantPage) {
							t.Fatalf("seller %d status %q listing type %q orders %q window %d+%d: %v of %d; want %v of %d", seller, status,
								listingType, sort, offset, limit, got.Results, got.Total, wantPage, wantTotal)
						}
					}
				}
			}
			offset := rapid.IntRange(0, len(ids)+1).Draw(t, "operator offset")
			limit := rapid.IntRange(0, len(ids)+1).Draw(t, "operator limit")
			var mine []string
			for _, it := range items {
				if it.SellerID == seller {
					mine = append(mine, it.ID)
				}
			}
			slices.Sort(mine)
			wantPage := []string{}
			for i := offset; i < len(mine) && len(wantPage) < limit; i++ {
				wantPage = append(wantPage, mine[i])
			}
			list, err := e.svc.SellerItemsOf(ctx, seller, paging.Page{Offset: offset, Limit: limit})
			if err != nil {
				t.Fatalf("operator list: %v", err)
			}
			listed := []string{}
			for _, it := range list.Results {
				listed = append(listed, it.ID)
			}
			if list.Total != len(mine) || !slices.Equal(listed, wantPage) {
				t.Fatalf("operator list of %d window %d+%d: %v of %d; want %v of %d", seller, offset, limit, listed, list.Total, wantPage, len(mine))
			}
		}
	})
}

// stepStore counts the keys its readers step over, by namespace, and the
// item records they read.
type stepStore struct {
	storage.Store
	steps     map[string]int
	itemReads int
}

type stepTx struct {
	storage.Tx
	s *stepStore
}

type stepIter struct {
	storage.Iterator
	s *stepStore
}

func (s *stepStore) View(ctx context.Context, fn func(storage.Tx) error) error {
	return s.Store.View(ctx, func(tx storage.Tx) error { return fn(stepTx{tx, s}) })
}

func (t stepTx) Get(k []byte) ([]byte, error) {
	if bytes.HasPrefix(k, keycodec.New("stk/item")) {
		t.s.itemReads++
	}
	return t.Tx.Get(k)
}

func (t stepTx) Iterate(r storage.Range) storage.Iterator {
	return stepIter{t.Tx.Iterate(r), t.s}
}

func (i stepIter) Valid() bool {
	if !i.Iterator.Valid() {
		return false
	}
	ns := keycodec.Read(i.Key()).Str()
	i.s.steps[ns]++
	return true
}

// TestSellerItems_ReadsItsPageAndCountsNotEverySellerItem: with or without
// a status and a listing type, in every order, a page reads no item record
// and steps over the keys of its window only, however many items the
// seller has.
func TestSellerItems_ReadsItsPageAndCountsNotEverySellerItem(t *testing.T) {
	ss := &stepStore{Store: newEnv(t).store, steps: map[string]int{}}
	e := newEnvOn(t, ss)
	seller := e.mustUser("MLA")
	paused, closed := stock.StatusPaused, stock.StatusClosed
	var ids []string
	for i := range 120 {
		in := plainItem(fmt.Sprint("Mesa ", i), fmt.Sprint(10+i%7), 1)
		if i%2 == 1 {
			in.ListingTypeID = "gold_pro"
		}
		p := e.mustPublish(seller, in)
		ids = append(ids, p.ID)
		switch i % 3 {
		case 1:
			if _, err := e.svc.UpdateItem(ctx, seller, p.ID, stock.ItemUpdate{Status: &paused}); err != nil {
				t.Fatal(err)
			}
		case 2:
			if _, err := e.svc.UpdateItem(ctx, seller, p.ID, stock.ItemUpdate{Status: &closed}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, status := range sellerStatuses {
		for _, listingType := range []string{"", "gold_pro"} {
			for _, sort := range sellerSortIDs() {
				ss.steps, ss.itemReads = map[string]int{}, 0
				res, err := e.svc.SellerItems(ctx, seller, seller, stock.SellerItemsQuery{Status: status, ListingTypeID: listingType, Sort: sort, Offset: 4, Limit: 5})
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Results) != 5 {
					t.Fatalf("status %q listing type %q orders %q: %d results", status, listingType, sort, len(res.Results))
				}
				if ss.itemReads != 0 || len(ss.steps) != 1 || ss.steps["stk/sso"] > 4+5 {
					t.Fatalf("status %q listing type %q orders %q: read %d item records and stepped over %v; want no record and the 9 keys of the window",
						status, listingType, sort, ss.itemReads, ss.steps)
				}
			}
		}
	}
	ss.steps, ss.itemReads = map[string]int{}, 0
	list, err := e.svc.SellerItemsOf(ctx, seller, paging.Page{Offset: 100, Limit: 3})
	if err != nil || list.Total != 120 || len(list.Results) != 3 || list.Results[0].ID != ids[100] {
		t.Fatalf("operator list: %d results of %d (%v)", len(list.Results), list.Total, err)
	}
	if ss.itemReads != 3 || ss.steps["stk/seller"] > 103 {
		t.Fatalf("operator list read %d item records and stepped over %v; want the 3 of the page", ss.itemReads, ss.steps)
	}
}

// TestSellerIndexMigrations_OlderStoreAnswersAsBeforeAndKeepsCounting: a
// store written before the seller's sorted lists and counts (no stk/sso,
// stk/slcnt nor stk/scnt keys, as before migration 11) gets them from
// SellerIndexMigration and SellerSortMigration, run in chunks, with the
// same answers in every filter and order as the store that wrote them as
// it went (sales, a joined user product and stock per store included);
// the id-ordered lists by status that migration 11 writes are gone, and
// later changes count on from there.
func TestSellerIndexMigrations_OlderStoreAnswersAsBeforeAndKeepsCounting(t *testing.T) {
	e := newEnv(t)
	seller := e.mustUser("MLA")
	multi, stores := e.mustSeller(2)
	paused, closed := stock.StatusPaused, stock.StatusClosed
	var ids []string
	for i := range 9 {
		in := plainItem(fmt.Sprint("Mesa ", i), fmt.Sprint(10+i%4, ".5"), int64(i%2+i%3))
		if i%2 == 0 {
			in.ListingTypeID = "gold_pro"
		}
		if i == 8 {
			in.UserProductID = e.mustItem(ids[3]).UserProductID
		}
		p := e.mustPublish(seller, in)
		ids = append(ids, p.ID)
		if err := e.clock.Advance(time.Duration(9-i) * time.Second); err != nil {
			t.Fatal(err)
		}
		switch i % 3 {
		case 1:
			if _, err := e.svc.UpdateItem(ctx, seller, p.ID, stock.ItemUpdate{Status: &paused}); err != nil {
				t.Fatal(err)
			}
		case 2:
			if _, err := e.svc.UpdateItem(ctx, seller, p.ID, stock.ItemUpdate{Status: &closed}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, id := range []string{ids[3], ids[4], ids[3]} {
		err := e.store.Update(ctx, func(tx storage.Tx) error {
			_, err := e.svc.TakeUnits(ctx, tx, id, "", 1, e.clock.Now())
			return err
		})
		if err != nil && !errs.Is(err, errs.Invalid) {
			t.Fatal(err)
		}
	}
	e.mustPublishMulti(multi, multiItem("Silla", "7", loc(stores[0], 3), loc(stores[1], 2)))
	e.mustPublishMulti(multi, multiItem("Banco", "8", loc(stores[0], 1)))
	answers := func() map[string]stock.SellerItems {
		out := map[string]stock.SellerItems{}
		for _, who := range []int64{seller, multi} {
			for _, status := range sellerStatuses {
				for _, listingType := range sellerListingTypes {
					for _, sort := range sellerSortIDs() {
						res, err := e.svc.SellerItems(ctx, who, who, stock.SellerItemsQuery{Status: status, ListingTypeID: listingType, Sort: sort, Limit: 50})
						if err != nil {
							t.Fatal(err)
						}
						out[fmt.Sprint(who, status, "/", listingType, "/", sort)] = res
					}
				}
			}
		}
		return out
	}
	want := answers()
	keysOf := func(ns string) int {
		n := 0
		err := e.store.View(ctx, func(tx storage.Tx) error {
			it := tx.Iterate(storage.Prefix(keycodec.New(ns)))
			defer it.Close()
			for ; it.Valid(); it.Next() {
				n++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	err := e.store.Update(ctx, func(tx storage.Tx) error {
		for _, ns := range []string{"stk/sso", "stk/slcnt", "stk/scnt"} {
			it := tx.Iterate(storage.Prefix(keycodec.New(ns)))
			var keys [][]byte
			for ; it.Valid(); it.Next() {
				keys = append(keys, bytes.Clone(it.Key()))
			}
			it.Close()
			for _, k := range keys {
				if err := tx.Delete(k); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := answers(); got[fmt.Sprint(seller, "//")].Total != 0 {
		t.Fatalf("without its counts the store still answers %+v", got[fmt.Sprint(seller, "//")])
	}
	migrations := []schema.Migration{stock.SellerIndexMigration(), stock.SellerSortMigration()}
	if _, err := schema.Migrate(ctx, e.store, migrations, schema.Options{ChunkSize: 2}); err != nil {
		t.Fatal(err)
	}
	got := answers()
	for k, w := range want {
		if got[k].Total != w.Total || !slices.Equal(got[k].Results, w.Results) {
			t.Errorf("%s after the migrations: %+v; want %+v", k, got[k], w)
		}
	}
	if n := keysOf("stk/sst"); n != 0 {
		t.Errorf("%d keys of stk/sst left", n)
	}
	active := stock.StatusActive
	if _, err := e.svc.UpdateItem(ctx, seller, ids[1], stock.ItemUpdate{Status: &active}); err != nil {
		t.Fatal(err)
	}
	after := answers()
	pausedKey, activeKey := fmt.Sprint(seller, paused, "//"), fmt.Sprint(seller, active, "//")
	if after[pausedKey].Total != want[pausedKey].Total-1 || after[activeKey].Total+after[pausedKey].Total != want[activeKey].Total+want[pausedKey].Total {
		t.Fatalf("after a change: %+v", after)
	}
}
