package sales_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/sales"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/schema"
)

// TestRecordsMigration_AnOrderStoredAsJSONIsRewrittenThenServedAndChangedUnchanged
// writes an order back in the JSON form records had before the binary
// one, in the state and in a snapshot's data, migrates the store, then
// reads, searches and cancels it.
func TestRecordsMigration_AnOrderStoredAsJSONIsRewrittenThenServedAndChangedUnchanged(t *testing.T) {
	e := newEnv(t)
	seller, item := e.mustPlainItem(5)
	buyer := e.mustUser("BUYER")
	o := e.mustOrder(sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: 2, Status: sales.StatusPaid})
	want, err := e.sales.Order(ctx, sales.Operator, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	snapshotKey := append(keycodec.New("snap/data").Int(7), sales.OrderKey(o.ID)...)
	err = e.store.Update(ctx, func(tx storage.Tx) error {
		old, err := sales.OrderRecordJSON(tx, o.ID)
		if err != nil {
			return err
		}
		if err := tx.Set(sales.OrderKey(o.ID), old); err != nil {
			return err
		}
		return tx.Set(snapshotKey, old)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.sales.Order(ctx, sales.Operator, o.ID); !errs.Is(err, errs.Internal) {
		t.Fatalf("a JSON record read without its migration: %v", err)
	}
	if _, err := schema.Migrate(ctx, e.store, []schema.Migration{sales.RecordsMigration()}, schema.Options{ChunkSize: 1}); err != nil {
		t.Fatal(err)
	}
	got, err := e.sales.Order(ctx, sales.Operator, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the migrated order reads as %+v, want %+v", got, want)
	}
	var state, kept []byte
	err = e.store.View(ctx, func(tx storage.Tx) error {
		if state, err = tx.Get(sales.OrderKey(o.ID)); err != nil {
			return err
		}
		kept, err = tx.Get(snapshotKey)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if json.Valid(state) || string(kept) != string(state) {
		t.Fatalf("the state's record %q and the snapshot's %q; want both the binary form", state, kept)
	}
	res, err := e.sales.Search(ctx, seller, sales.SearchQuery{Seller: seller, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if res.Paging.Total != 1 || len(res.Results) != 1 || !reflect.DeepEqual(res.Results[0], want) {
		t.Fatalf("the search over the migrated order: %+v", res)
	}
	cancelled, err := e.sales.Cancel(ctx, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	if cancelled.Status != sales.StatusCancelled || cancelled.TotalAmount != want.TotalAmount || cancelled.Buyer != want.Buyer {
		t.Fatalf("the migrated order cancelled: %+v", cancelled)
	}
	if _, err := schema.Migrate(ctx, e.store, []schema.Migration{sales.RecordsMigration()}, schema.Options{}); err != nil {
		t.Fatal(err)
	}
	again, err := e.sales.Order(ctx, sales.Operator, o.ID)
	if err != nil || !reflect.DeepEqual(again, cancelled) {
		t.Fatalf("a binary record run through the migration again reads as %+v (%v), want %+v", again, err, cancelled)
	}
}
