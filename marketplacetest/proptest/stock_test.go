package proptest_test

import (
	"context"
	"testing"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/marketplacetest"
	"github.com/marketplace/marketplace/marketplacetest/proptest"
	"github.com/marketplace/marketplace/stock"
)

// TestStock_StaleVersionIsRefusedWith409AndChangesNothing drives the
// engine in Go: one server for the whole property, ResetClock before each
// case, a generated shop, then generated stock writes with fresh and
// stale versions, each compared with the model and followed by a read.
func TestStock_StaleVersionIsRefusedWith409AndChangesNothing(t *testing.T) {
	ctx := context.Background()
	srv := marketplacetest.NewServer(t)
	rapid.Check(t, func(t *rapid.T) {
		if err := srv.ResetClock(); err != nil {
			t.Fatal(err)
		}
		shop := proptest.Shops(3, 2).Draw(t, "shop")
		res, err := srv.Marketplace.LoadFixtures(ctx, shop.Doc)
		if err != nil {
			t.Fatal(err)
		}
		ids, err := shop.IDs(res)
		if err != nil {
			t.Fatal(err)
		}
		model := proptest.NewStockModel()
		ups := make([]string, len(shop.Items))
		for i, it := range shop.Items {
			item, err := srv.Marketplace.Stock.Item(ctx, ids.Items[i])
			if err != nil {
				t.Fatal(err)
			}
			ups[i] = item.UserProductID
			model.Publish(ups[i], ids.StoreIDs(it.StoreIndex), it.Quantity)
		}
		for i, w := range proptest.StockWrites(shop, 8).Draw(t, "writes") {
			up := ups[w.Item]
			read, err := srv.Marketplace.Stock.Stock(ctx, ids.Seller, up)
			if err != nil {
				t.Fatal(err)
			}
			stores := ids.StoreIDs(w.StoreIndex)
			want := model.Put(up, read.Version+w.VersionOffset, stores, w.Quantity)
			locs := make([]stock.StockLocation, len(stores))
			for j, s := range stores {
				locs[j] = stock.StockLocation{StoreID: s, Quantity: w.Quantity[j]}
			}
			out, err := srv.Marketplace.Stock.PutStock(ctx, ids.Seller, up, read.Version+w.VersionOffset, locs)
			switch {
			case want.Status == 409:
				if !errs.Is(err, errs.Conflict) || errs.As(err).Message != want.Message {
					t.Fatalf("write %d (version %+d): err = %v, want Conflict %q", i, w.VersionOffset, err, want.Message)
				}
			case err != nil:
				t.Fatalf("write %d with the fresh version: %v", i, err)
			case out.Version != want.Version:
				t.Fatalf("write %d: version = %d, want %d", i, out.Version, want.Version)
			}
			after, err := srv.Marketplace.Stock.Stock(ctx, ids.Seller, up)
			if err != nil {
				t.Fatal(err)
			}
			quantities := map[string]int64{}
			for _, l := range after.Locations {
				quantities[l.StoreID] = l.Quantity
			}
			if err := model.Check(up, after.Version, quantities); err != nil {
				t.Fatalf("after write %d: %v", i, err)
			}
		}
	})
}
