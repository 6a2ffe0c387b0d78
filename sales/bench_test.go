package sales_test

// Benchmarks of sales on the durable backends. They build their stores
// through the services, as a server's sales would: PlaceOrder from many
// goroutines, each on items of its own with stock for all its orders.
//
//	go test -run '^$' -bench 'BenchmarkSearch' -benchtime 200x ./sales
//	MARKETPLACE_BENCH_ORDERS=1000000 go test -run '^$' -bench 'BenchmarkSearch' -benchtime 200x -timeout 4h ./sales
//	MARKETPLACE_BENCH_ORDERS=1000000 MARKETPLACE_BENCH_DIR=~/.cache/marketplace-sales go test -run '^$' -bench 'BenchmarkSearch/badger' -benchtime 200x -timeout 2h ./sales
//	go test -run '^$' -bench 'BenchmarkPlaceOrder' -benchtime 5000x -cpuprofile cpu.out ./sales
//
// BenchmarkSearch measures a seller's first page of orders with 1,000
// orders and, when MARKETPLACE_BENCH_ORDERS names a larger number, with that
// many, on Badger and on PostgreSQL: a page should cost the same at both
// sizes. The environment picks the size so that an ordinary -bench run stays
// small; plain `go test` runs no benchmark. With MARKETPLACE_BENCH_DIR the
// Badger stores are kept there and reused by later runs.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/fees"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/internal/teststore"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/sales"
	"github.com/marketplace/marketplace/stock"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/badger"
)

// benchOrdersVar names the larger number of orders of BenchmarkSearch.
const benchOrdersVar = "MARKETPLACE_BENCH_ORDERS"

// benchSmallOrders is the size every run of BenchmarkSearch measures.
const benchSmallOrders = 1000

// benchDirVar names a folder that keeps BenchmarkSearch's Badger stores
// from one run to the next: each size's store is built there on first use
// and only read afterwards, so that a run at a million orders need not
// place them again. Without it the stores are temporary.
const benchDirVar = "MARKETPLACE_BENCH_DIR"

// benchRoundsVar names how many times BenchmarkSearch measures each size
// (3 by default).
const benchRoundsVar = "MARKETPLACE_BENCH_ROUNDS"

// benchWorkers is how many goroutines place the orders: enough for the
// stores to group their commits, each with items and a buyer of its own so
// that no two race on one user product's stock.
const (
	benchWorkers        = 64
	benchItemsPerWorker = 4
)

func benchSizes(b *testing.B) []int {
	sizes := []int{benchSmallOrders}
	raw := os.Getenv(benchOrdersVar)
	if raw == "" {
		return sizes
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a number of orders", benchOrdersVar, raw)
	}
	if n != benchSmallOrders {
		sizes = append(sizes, n)
	}
	return sizes
}

// benchSales is the sales service with the services below it on one store.
type benchSales struct {
	store storage.Store
	acc   *accounts.Service
	stock *stock.Service
	sales *sales.Service
}

// newBenchSales builds the services on st. Its clock moves one second at
// every reading, so that orders placed one after the other are apart in
// time, as a seller's orders are.
func newBenchSales(b *testing.B, st storage.Store) *benchSales {
	b.Helper()
	start := time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC)
	var ticks atomic.Int64
	clk := clock.Func(func() time.Time { return start.Add(time.Duration(ticks.Add(1)) * time.Second) })
	g := geo.New(st, clk)
	if err := g.LoadBuiltin(context.Background()); err != nil {
		b.Fatalf("load sites: %v", err)
	}
	stk := stock.New(st, clk, g)
	return &benchSales{store: st, acc: accounts.New(st, clk, g), stock: stk, sales: sales.New(st, clk, stk, fees.New(st, clk, g))}
}

// benchSeller is a warehouse_management seller with
// benchWorkers*benchItemsPerWorker items in one store, and a buyer per
// worker.
type benchSeller struct {
	id     int64
	items  []string
	buyers []int64
}

// newBenchSeller creates the seller, its items, each with perItem units,
// and the buyers.
func (s *benchSales) newBenchSeller(b *testing.B, perItem int64) benchSeller {
	b.Helper()
	ctx := context.Background()
	seller, err := s.acc.CreateUser(ctx, accounts.NewUser{Nickname: "BENCH_SELLER", SiteID: "MLA",
		Tags: []string{"normal", "user_product_seller", accounts.TagWarehouseManagement}})
	if err != nil {
		b.Fatal(err)
	}
	store, err := s.acc.CreateStore(ctx, seller.ID, accounts.NewStore{Description: "Bench warehouse", Tags: []string{accounts.TagStockLocation}})
	if err != nil {
		b.Fatal(err)
	}
	w := benchSeller{id: seller.ID, items: make([]string, benchWorkers*benchItemsPerWorker), buyers: make([]int64, benchWorkers)}
	err = benchParallel(len(w.items), func(i int) error {
		p, err := s.stock.PublishMultiOrigin(ctx, seller.ID, stock.NewItem{Title: fmt.Sprintf("Bicicleta rodado 29 %d", i),
			CategoryID: "MLA1055", Price: money.MustParse("1500.50"), ListingTypeID: "gold_special", CurrencyID: "ARS",
			Condition: "new", StockLocations: []stock.StockLocation{{StoreID: store.ID, Quantity: perItem}}})
		w.items[i] = p.ID
		if err == nil && i < len(w.buyers) {
			var u accounts.User
			u, err = s.acc.CreateUser(ctx, accounts.NewUser{Nickname: fmt.Sprintf("BENCH_BUYER_%d", i), SiteID: "MLA"})
			w.buyers[i] = u.ID
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return w
}

// placeOrders places n paid orders of one unit on the seller's items from
// benchWorkers goroutines, each with its own buyer and items, through
// PlaceOrder, and returns how long they took. It prints its progress on
// long runs.
func (s *benchSales) placeOrders(b *testing.B, w benchSeller, n int) time.Duration {
	b.Helper()
	ctx := context.Background()
	start := time.Now()
	var placed atomic.Int64
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(30 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				p := placed.Load()
				fmt.Fprintf(os.Stderr, "%s: %d/%d orders, %.0f/s\n", b.Name(), p, n, float64(p)/time.Since(start).Seconds())
			}
		}
	}()
	// Order i is placed by worker i % benchWorkers, on the worker's items
	// in turn.
	err := benchParallel(n, func(i int) error {
		k := i % benchWorkers
		item := w.items[k+benchWorkers*((i/benchWorkers)%benchItemsPerWorker)]
		_, err := s.sales.PlaceOrder(ctx, sales.NewOrder{BuyerID: w.buyers[k], ItemID: item, Quantity: 1})
		placed.Add(1)
		return err
	})
	close(done)
	if err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// sellerWithOrders returns a seller with n paid orders, and logs the rate
// at which they were placed.
func (s *benchSales) sellerWithOrders(b *testing.B, n int) int64 {
	b.Helper()
	w := s.newBenchSeller(b, int64(n/(benchWorkers*benchItemsPerWorker)+1))
	c0 := s.conflicts()
	took := s.placeOrders(b, w, n)
	b.Logf("%d orders placed in %s: %.0f orders/s from %d goroutines, %d transactions run again after a conflict",
		n, took.Round(time.Millisecond), float64(n)/took.Seconds(), benchWorkers, s.conflicts()-c0)
	return w.id
}

// conflicts returns how many transactions the store has run again after a
// conflict.
func (s *benchSales) conflicts() uint64 {
	if c, ok := s.store.(interface{ Conflicts() uint64 }); ok {
		return c.Conflicts()
	}
	return 0
}

// benchParallel runs fn(0..n-1) on benchWorkers goroutines, goroutine w
// taking w, w+benchWorkers, ..., and returns the first error.
func benchParallel(n int, fn func(i int) error) error {
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	var failed atomic.Bool
	for w := range benchWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n && !failed.Load(); i += benchWorkers {
				if err := fn(i); err != nil {
					once.Do(func() { first = fmt.Errorf("%d: %w", i, err) })
					failed.Store(true)
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

func benchRounds(b *testing.B) int {
	raw := os.Getenv(benchRoundsVar)
	if raw == "" {
		return 3
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a number of rounds", benchRoundsVar, raw)
	}
	return n
}

// searchStore returns the services on a store of backend holding a seller
// with n orders, the seller, and the store's round trips (PostgreSQL's).
func searchStore(b *testing.B, backend string, n int) (*benchSales, int64, *teststore.RoundTrips) {
	b.Helper()
	if dir := os.Getenv(benchDirVar); dir != "" && backend == "badger" {
		s, seller := keptBadger(b, dir, n)
		return s, seller, &teststore.RoundTrips{}
	}
	st, trips := teststore.OpenDurable(b, backend, benchPoolSize)
	s := newBenchSales(b, st)
	return s, s.sellerWithOrders(b, n), trips
}

// benchPoolSize is the pool marketplaced has on a machine of up to 4
// cores: 16 connections place orders no faster here and run 1.1 of them
// again per order after a serialization failure, against 0.15.
const benchPoolSize = 4

// keptBadger is searchStore on a Badger store kept in dir. The seller's
// id is written beside the store once its orders are all placed: a build
// cut short has none, and starts over.
func keptBadger(b *testing.B, dir string, n int) (*benchSales, int64) {
	b.Helper()
	path := filepath.Join(dir, fmt.Sprintf("badger-orders-%d", n))
	marker := path + ".seller"
	raw, err := os.ReadFile(marker)
	if err != nil {
		if err := os.RemoveAll(path); err != nil {
			b.Fatal(err)
		}
	}
	st, err := badger.Open(path, badger.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	s := newBenchSales(b, st)
	if raw != nil {
		seller, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			b.Fatalf("%s: %v", marker, err)
		}
		b.Logf("%d orders kept in %s", n, path)
		return s, seller
	}
	seller := s.sellerWithOrders(b, n)
	if err := os.WriteFile(marker, []byte(strconv.FormatInt(seller, 10)), 0o644); err != nil {
		b.Fatal(err)
	}
	return s, seller
}

// BenchmarkSearch: a seller's first page of 50 orders, oldest first and
// newest first, reads its total from the counts and its page from the
// list, so it costs the same at 1,000 orders as at a million. Every size's
// store is built first, largest first, and the sizes are then measured in
// turns, 3 times or MARKETPLACE_BENCH_ROUNDS (the names of the later
// rounds end in #01, #02, ...), so that the machine's other work and the stores' own (Badger's
// compactions after a large load) fall on every size alike.
func BenchmarkSearch(b *testing.B) {
	for _, backend := range teststore.DurableBackends {
		b.Run(backend, func(b *testing.B) {
			type built struct {
				n      int
				s      *benchSales
				seller int64
				trips  *teststore.RoundTrips
			}
			sizes := benchSizes(b)
			stores := make([]built, len(sizes))
			for i := len(sizes) - 1; i >= 0; i-- {
				s, seller, trips := searchStore(b, backend, sizes[i])
				stores[i] = built{n: sizes[i], s: s, seller: seller, trips: trips}
			}
			for range benchRounds(b) {
				for _, st := range stores {
					for _, sort := range []string{sales.SortDateAsc, sales.SortDateDesc} {
						b.Run(fmt.Sprintf("orders=%d/%s", st.n, sort), func(b *testing.B) {
							q := sales.SearchQuery{Seller: st.seller, Limit: 50, Sort: sort}
							ctx := context.Background()
							n0, ops := st.trips.Load(), 0
							for b.Loop() {
								ops++
								res, err := st.s.sales.Search(ctx, st.seller, q)
								if err != nil {
									b.Fatal(err)
								}
								if res.Paging.Total != st.n || len(res.Results) != 50 {
									b.Fatalf("total %d and %d results, want %d and 50", res.Paging.Total, len(res.Results), st.n)
								}
							}
							st.trips.Report(b, n0, ops)
						})
					}
				}
			}
		})
	}
}

// BenchmarkPlaceOrder: paid orders of one unit placed by benchWorkers
// goroutines, each on its own items and buyer (no two race on a user
// product's stock), which is how BenchmarkSearch builds its stores and
// what a purchase over HTTP costs below its handler. It reports the rate;
// ns/op is the time per order at that concurrency.
func BenchmarkPlaceOrder(b *testing.B) {
	for _, backend := range teststore.DurableBackends {
		b.Run(backend, func(b *testing.B) {
			st, trips := teststore.OpenDurable(b, backend, benchPoolSize)
			s := newBenchSales(b, st)
			w := s.newBenchSeller(b, int64(b.N))
			c0, n0 := s.conflicts(), trips.Load()
			b.ResetTimer()
			took := s.placeOrders(b, w, b.N)
			b.ReportMetric(float64(b.N)/took.Seconds(), "orders/s")
			b.ReportMetric(float64(s.conflicts()-c0)/float64(b.N), "retries/order")
			trips.Report(b, n0, b.N)
		})
	}
}
