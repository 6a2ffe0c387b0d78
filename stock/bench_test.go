package stock_test

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/marketplace/marketplace/stock"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/badger"
	"github.com/marketplace/marketplace/storage/memory"
)

// benchItemsVar raises the larger size of BenchmarkSellerItems (unset:
// 1,000 items only, so that an ordinary -bench run stays small).
const (
	benchItemsVar   = "MARKETPLACE_BENCH_ITEMS"
	benchSmallItems = 1000
	// benchPausedEvery: one item in so many is paused, so that the paused
	// list is a tenth of the seller's items and the active one the rest.
	benchPausedEvery = 10
	// benchProEvery: one item in so many is gold_pro, the rest
	// gold_special.
	benchProEvery = 5
)

func benchItemSizes(b *testing.B) []int {
	sizes := []int{benchSmallItems}
	raw := os.Getenv(benchItemsVar)
	if raw == "" {
		return sizes
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a number of items", benchItemsVar, raw)
	}
	if n != benchSmallItems {
		sizes = append(sizes, n)
	}
	return sizes
}

// benchSeller publishes n items of one seller through Publish, from 16
// goroutines (Badger syncs a group of commits at once), one in
// benchProEvery gold_pro, at prices 10 to 1,009, and pauses one in
// benchPausedEvery of them through UpdateItem.
func benchSeller(b *testing.B, e *env, n int) int64 {
	b.Helper()
	seller := e.mustUser("MLA")
	paused := stock.StatusPaused
	const workers = 16
	var wg sync.WaitGroup
	errc := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				in := plainItem(fmt.Sprint("Mesa de roble ", i), fmt.Sprint(10+(i*7919)%1000), 1)
				if i%benchProEvery == 0 {
					in.ListingTypeID = "gold_pro"
				}
				p, err := e.svc.Publish(ctx, seller, in)
				if err == nil && i%benchPausedEvery == 0 {
					_, err = e.svc.UpdateItem(ctx, seller, p.ID, stock.ItemUpdate{Status: &paused})
				}
				if err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		b.Fatal(err)
	}
	return seller
}

// BenchmarkSellerItems: a page of 50 of GET /users/{id}/items/search
// (SellerItems) with status=active (nine in ten items), status=paused (one
// in ten), no status, status=active sorted price_desc, and
// listing_type_id=gold_pro (one in five) sorted last_updated_desc, for one
// seller with 1,000 items and with MARKETPLACE_BENCH_ITEMS items, on
// memory and on Badger (a folder on disk). The stores are built first, the
// sizes then measured side by side. Each search checks its total and its
// page.
func BenchmarkSellerItems(b *testing.B) {
	backends := []struct {
		name string
		open func(b *testing.B) storage.Store
	}{
		{"memory", func(*testing.B) storage.Store { return memory.New() }},
		{"badger", func(b *testing.B) storage.Store {
			st, err := badger.Open(b.TempDir(), badger.Options{})
			if err != nil {
				b.Fatal(err)
			}
			return st
		}},
	}
	cases := []struct {
		name string
		q    stock.SellerItemsQuery
		want func(n int) int
	}{
		{"active", stock.SellerItemsQuery{Status: stock.StatusActive}, func(n int) int { return n - (n+benchPausedEvery-1)/benchPausedEvery }},
		{"paused", stock.SellerItemsQuery{Status: stock.StatusPaused}, func(n int) int { return (n + benchPausedEvery - 1) / benchPausedEvery }},
		{"all", stock.SellerItemsQuery{}, func(n int) int { return n }},
		{"active_price_desc", stock.SellerItemsQuery{Status: stock.StatusActive, Sort: stock.SellerSortPriceDesc},
			func(n int) int { return n - (n+benchPausedEvery-1)/benchPausedEvery }},
		{"gold_pro_last_updated_desc", stock.SellerItemsQuery{ListingTypeID: "gold_pro", Sort: stock.SellerSortLastUpdatedDesc},
			func(n int) int { return (n + benchProEvery - 1) / benchProEvery }},
	}
	for _, backend := range backends {
		b.Run(backend.name, func(b *testing.B) {
			type built struct {
				n      int
				e      *env
				seller int64
			}
			var stores []built
			for _, n := range benchItemSizes(b) {
				st := backend.open(b)
				b.Cleanup(func() { _ = st.Close() })
				e := newEnvOn(b, st)
				stores = append(stores, built{n: n, e: e, seller: benchSeller(b, e, n)})
			}
			for _, st := range stores {
				for _, c := range cases {
					want := c.want(st.n)
					b.Run(fmt.Sprintf("items=%d/%s", st.n, c.name), func(b *testing.B) {
						q := c.q
						q.Limit = 50
						for b.Loop() {
							res, err := st.e.svc.SellerItems(ctx, st.seller, st.seller, q)
							if err != nil {
								b.Fatal(err)
							}
							if res.Total != want || len(res.Results) != 50 {
								b.Fatalf("total %d and %d results, want %d and 50", res.Total, len(res.Results), want)
							}
						}
					})
				}
			}
		})
	}
}
