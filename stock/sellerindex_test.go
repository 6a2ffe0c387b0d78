package stock_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/paging"
	"github.com/marketplace/marketplace/stock"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/schema"
)

var sellerStatuses = []string{"", stock.StatusActive, stock.StatusPaused, stock.StatusClosed}

// bruteSellerItems is the seller search's rule applied to every item: the
// seller's items of status ("" for all), read one by one, in id order,
// paged.
func bruteSellerItems(tb fataler, e *env, ids []string, seller int64, status string, offset, limit int) ([]string, int) {
	tb.Helper()
	var kept []string
	for _, id := range ids {
		it, err := e.svc.Item(ctx, id)
		if err != nil {
			tb.Fatalf("item %s: %v", id, err)
		}
		if it.SellerID == seller && (status == "" || it.Status == status) {
			kept = append(kept, id)
		}
	}
	slices.Sort(kept)
	page := []string{}
	for i := offset; i < len(kept) && len(page) < limit; i++ {
		page = append(page, kept[i])
	}
	return page, len(kept)
}

// TestSellerItems_EqualsAFilterOverTheSellersItemsAfterAnyStatusChanges:
// after any publications, relists, status updates, quantity writes and
// units taken and returned by sales (which pause items as out_of_stock and
// reactivate them), every status and window of the seller search, and the
// operator's list, equal the filter over every item record.
func TestSellerItems_EqualsAFilterOverTheSellersItemsAfterAnyStatusChanges(t *testing.T) {
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
		steps := rapid.IntRange(1, 30).Draw(t, "steps")
		for i := range steps {
			label := fmt.Sprint(i)
			switch rapid.IntRange(0, 5).Draw(t, "op "+label) {
			case 0:
				seller := rapid.SampledFrom(sellers).Draw(t, "seller "+label)
				qty := rapid.Int64Range(0, 2).Draw(t, "qty "+label)
				ids = append(ids, e.mustPublish(seller, plainItem("Mesa "+label, "10", qty)).ID)
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
				p, err := e.svc.Relist(ctx, it.SellerID, it.ID, stock.RelistInput{Quantity: &q})
				if err == nil {
					ids = append(ids, p.ID)
				} else if !errs.Is(err, errs.Invalid) {
					t.Fatalf("relist: %v", err)
				}
			}
		}
		for _, seller := range sellers {
			for _, status := range sellerStatuses {
				offset := rapid.IntRange(0, len(ids)+1).Draw(t, "offset")
				limit := rapid.IntRange(0, len(ids)+1).Draw(t, "limit")
				wantPage, wantTotal := bruteSellerItems(t, e, ids, seller, status, offset, limit)
				got, err := e.svc.SellerItems(ctx, seller, seller, stock.SellerItemsQuery{Status: status, Offset: offset, Limit: limit})
				if err != nil {
					t.Fatalf("search: %v", err)
				}
				if got.Total != wantTotal || !slices.Equal(got.Results, wantPage) {
					t.Fatalf("seller %d status %q window %d+%d: %v of %d; want %v of %d", seller, status, offset, limit,
						got.Results, got.Total, wantPage, wantTotal)
				}
				if status != "" {
					continue
				}
				list, err := e.svc.SellerItemsOf(ctx, seller, paging.Page{Offset: offset, Limit: limit})
				if err != nil {
					t.Fatalf("operator list: %v", err)
				}
				var listed []string
				for _, it := range list.Results {
					listed = append(listed, it.ID)
				}
				if list.Total != wantTotal || !slices.Equal(listed, wantPage) && len(wantPage) > 0 {
					t.Fatalf("operator list of %d window %d+%d: %v of %d; want %v of %d", seller, offset, limit, listed, list.Total, wantPage, wantTotal)
				}
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
// a status, a page reads no item record and steps over the keys of its
// window only, however many items the seller has.
func TestSellerItems_ReadsItsPageAndCountsNotEverySellerItem(t *testing.T) {
	ss := &stepStore{Store: newEnv(t).store, steps: map[string]int{}}
	e := newEnvOn(t, ss)
	seller := e.mustUser("MLA")
	paused, closed := stock.StatusPaused, stock.StatusClosed
	var ids []string
	for i := range 120 {
		p := e.mustPublish(seller, plainItem(fmt.Sprint("Mesa ", i), "10", 1))
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
		ss.steps, ss.itemReads = map[string]int{}, 0
		res, err := e.svc.SellerItems(ctx, seller, seller, stock.SellerItemsQuery{Status: status, Offset: 4, Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Results) != 5 {
			t.Fatalf("status %q: %d results", status, len(res.Results))
		}
		if ss.itemReads != 0 || ss.steps["stk/sst"]+ss.steps["stk/seller"] > 4+5 {
			t.Fatalf("status %q: read %d item records and stepped over %v; want no record and the 9 keys of the window", status, ss.itemReads, ss.steps)
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

// TestSellerIndexMigration_OlderStoreAnswersAsBeforeAndKeepsCounting: a
// store written before the seller's lists by status and counts (no stk/sst
// nor stk/scnt keys) gets them from SellerIndexMigration, run in chunks,
// with the same answers as the store that wrote them as it went; later
// changes count on from there.
func TestSellerIndexMigration_OlderStoreAnswersAsBeforeAndKeepsCounting(t *testing.T) {
	e := newEnv(t)
	seller := e.mustUser("MLA")
	paused, closed := stock.StatusPaused, stock.StatusClosed
	var ids []string
	for i := range 9 {
		p := e.mustPublish(seller, plainItem(fmt.Sprint("Mesa ", i), "10", int64(i%2)))
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
	answers := func() map[string]stock.SellerItems {
		out := map[string]stock.SellerItems{}
		for _, status := range sellerStatuses {
			res, err := e.svc.SellerItems(ctx, seller, seller, stock.SellerItemsQuery{Status: status, Limit: 50})
			if err != nil {
				t.Fatal(err)
			}
			out[status] = res
		}
		return out
	}
	want := answers()
	err := e.store.Update(ctx, func(tx storage.Tx) error {
		for _, ns := range []string{"stk/sst", "stk/scnt"} {
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
	if got := answers(); got[""].Total != 0 {
		t.Fatalf("without its counts the store still answers %+v", got[""])
	}
	if _, err := schema.Migrate(ctx, e.store, []schema.Migration{stock.SellerIndexMigration()}, schema.Options{ChunkSize: 2}); err != nil {
		t.Fatal(err)
	}
	got := answers()
	for _, status := range sellerStatuses {
		if got[status].Total != want[status].Total || !slices.Equal(got[status].Results, want[status].Results) {
			t.Errorf("status %q after the migration: %+v; want %+v", status, got[status], want[status])
		}
	}
	active := stock.StatusActive
	if _, err := e.svc.UpdateItem(ctx, seller, ids[1], stock.ItemUpdate{Status: &active}); err != nil {
		t.Fatal(err)
	}
	after := answers()
	if after[stock.StatusPaused].Total != want[stock.StatusPaused].Total-1 || after[stock.StatusActive].Total+after[stock.StatusPaused].Total != want[stock.StatusActive].Total+want[stock.StatusPaused].Total {
		t.Fatalf("after a change: %+v", after)
	}
}
