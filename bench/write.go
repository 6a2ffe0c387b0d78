package main

// The write benchmark (-write): acknowledged durable writes over loopback
// HTTP, each beside a baseline measured in the same run.
//
//   - ask on Badger: 64 clients POST /questions against a server on a Badger
//     folder, beside 64 goroutines committing synced single-key Badger
//     transactions in a folder on the same disk (the engine's limit);
//   - PUT stock on Badger: the same, each client on its own user products;
//   - ask on memory: beside a bare httprouter handler that decodes the same
//     body and writes a fixed answer;
//   - buy: purchases (POST /operator/orders) on Badger, in turns with asks
//     on the same server (sales.go);
//   - ask on a preloaded store (1,000,000 questions, 100,000 items) beside
//     the ask on an empty one, and likewise publish, PUT stock and answer,
//     each on an empty store and on a fresh copy of the preloaded one;
//   - grow: consecutive ask runs on one server, to see the rate as data grows;
//   - pg and pgread: the ask on PostgreSQL, on one server and on two, beside
//     pgbench, and a read on PostgreSQL beside the memory backend
//     (postgres.go).
//
// Every phase is bounded in time, traffic stays on 127.0.0.1, and the
// temporary folders are removed at the end (the preloaded store is cached in
// -preload-dir on purpose).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	badgerdb "github.com/dgraph-io/badger/v4"
	"github.com/julienschmidt/httprouter"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/httpapi"
	"github.com/marketplace/marketplace/internal/logbuf"
	"github.com/marketplace/marketplace/internal/reqlog"
	"github.com/marketplace/marketplace/journal"
	"github.com/marketplace/marketplace/metrics"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/stock"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/badger"
	"github.com/marketplace/marketplace/storage/memory"
)

// writeConfig holds the flags of the write benchmark.
type writeConfig struct {
	duration         time.Duration
	clients          int
	dir              string
	phases           string
	preloadDir       string
	preloadQuestions int
	preloadItems     int
	growRuns         int
	background       bool
	stats            bool
	cpuProfile       string
	blockProfile     string
	postgres         string
	pgConns          int
	readClients      int // the read benchmark's -concurrency, for pgread
	buyLoads         string
	buyOwnItems      bool
	starveAskers     int
	starveSearchers  int
	starveQuestions  int
	searchSlots      int
}

func (c *writeConfig) flags() {
	flag.IntVar(&c.clients, "clients", 64, "-write: concurrent HTTP clients, and goroutines of the Badger baseline")
	flag.StringVar(&c.dir, "dir", "", "-write: where the temporary Badger folders go (default: the system's temporary folder); the baseline's and the server's share this disk")
	flag.StringVar(&c.phases, "phases", "ask,ask1,stock,buy,memory,preload,grow", "-write: the phases to run, comma-separated; msg (post-sale messages against asks), pg, pgread and pgstarve (PostgreSQL, see -postgres) are not in the default")
	flag.StringVar(&c.preloadDir, "preload-dir", "", "-write: folder that caches the preloaded store of the preload phase, built on first use (without it the phase is skipped)")
	flag.IntVar(&c.preloadQuestions, "preload-questions", 1_000_000, "-write: questions in the preloaded store")
	flag.IntVar(&c.preloadItems, "preload-items", 100_000, "-write: items in the preloaded store")
	flag.IntVar(&c.growRuns, "grow-runs", 3, "-write: consecutive ask runs on one server in the grow phase")
	flag.BoolVar(&c.background, "background", true, "-write: run the engine's background work (notification delivery, response-time refresh) beside the requests, as the server does")
	flag.BoolVar(&c.stats, "stats", false, "-write: print Badger's levels and sizes after each Badger phase")
	flag.StringVar(&c.cpuProfile, "cpuprofile", "", "-write: write a CPU profile of the whole run to this file")
	flag.StringVar(&c.blockProfile, "blockprofile", "", "-write: write a blocking profile of the whole run to this file")
	flag.StringVar(&c.postgres, "postgres", "", "-write: URL of the PostgreSQL database of the pg and pgread phases, which they fill (the backend's tables; pgbench -i drops and creates pgbench's); default: a throwaway server in a temporary folder")
	flag.StringVar(&c.buyLoads, "buy-loads", "buy,ask", "-write: the loads of the buy phase, in turns; buy or ask alone gives a -cpuprofile of that load only")
	flag.BoolVar(&c.buyOwnItems, "buy-own-items", false, "-write: in the buy phase, each client buys 4 items of its own (8 sellers) instead of the asks' 8 items, so that no two purchases race on one item's stock")
	flag.IntVar(&c.starveAskers, "starve-askers", 4, "-write: ask clients of the pgstarve phase")
	flag.IntVar(&c.starveSearchers, "starve-searchers", 6, "-write: search clients of the pgstarve phase")
	flag.IntVar(&c.starveQuestions, "starve-questions", 20_000, "-write: questions on the searched item of the pgstarve phase")
	flag.IntVar(&c.searchSlots, "concurrent-searches", 0, "-write: the servers' -concurrent-searches (0: the server's default)")
	flag.IntVar(&c.pgConns, "pg-conns", 4, "-write: connections in the pool of each server on PostgreSQL (0: pool_max_conns of the URL, else pgx's default)")
}

// row is one line of the table.
type row struct {
	name      string
	full      float64
	base      float64
	target    float64
	conflicts string
	note      string
}

// cleanups run on return and on a fatal error or an interrupt, so that no
// temporary folder is left behind.
var (
	cleanupMu sync.Mutex
	cleanups  []func()
)

func atCleanup(f func()) {
	cleanupMu.Lock()
	defer cleanupMu.Unlock()
	cleanups = append(cleanups, f)
}

func runCleanups() {
	cleanupMu.Lock()
	defer cleanupMu.Unlock()
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
	cleanups = nil
}

func fatalf(format string, args ...any) {
	runCleanups()
	log.Fatalf(format, args...)
}

func runWrite(c writeConfig) {
	if c.clients < 1 {
		log.Fatal("-clients must be at least 1")
	}
	tmp, err := os.MkdirTemp(c.dir, "marketplace-bench-")
	if err != nil {
		log.Fatal(err)
	}
	atCleanup(func() { _ = os.RemoveAll(tmp) })
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		runCleanups()
		os.Exit(1)
	}()
	defer runCleanups()

	if c.cpuProfile != "" {
		f, err := os.Create(c.cpuProfile)
		if err != nil {
			fatalf("%v", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fatalf("%v", err)
		}
		atCleanup(func() { pprof.StopCPUProfile(); _ = f.Close() })
	}
	if c.blockProfile != "" {
		// One sample per 10µs spent blocked: enough to see where writers
		// wait without slowing them much.
		runtime.SetBlockProfileRate(10_000)
		atCleanup(func() {
			f, err := os.Create(c.blockProfile)
			if err == nil {
				_ = pprof.Lookup("block").WriteTo(f, 0)
				_ = f.Close()
			}
		})
	}

	phases := map[string]bool{}
	for _, p := range strings.Split(c.phases, ",") {
		switch p = strings.TrimSpace(p); p {
		case "ask", "ask1", "stock", "memory", "buy", "msg", "preload", "grow", "pg", "pgread", "pgstarve":
			phases[p] = true
		case "":
		default:
			fatalf("unknown phase %q", p)
		}
	}
	b := &writeBench{cfg: c, tmp: tmp}
	fmt.Printf("write benchmark: %d clients, %s per phase, folders in %s, %d cores\n",
		c.clients, c.duration, tmp, runtime.NumCPU())

	var rows []row
	if phases["ask"] || phases["ask1"] || phases["stock"] || phases["buy"] {
		// The engine's limit, measured before and after the marketplace's
		// Badger phases: synced commits vary with the disk's load, so
		// every phase is compared with the mean.
		before := b.baseline("before")
		var badgerRows []row
		var many, one row
		if phases["ask"] {
			many = b.askBadger(askMany)
			badgerRows = append(badgerRows, many)
		}
		if phases["ask1"] {
			one = b.askBadger(askOne)
			badgerRows = append(badgerRows, one)
		}
		if phases["stock"] {
			badgerRows = append(badgerRows, b.stockBadger())
		}
		var buyRow row
		if phases["buy"] {
			buyRow = b.buyBadger()
			if buyRow.name != "" {
				badgerRows = append(badgerRows, row{name: "POST /operator/orders, paid (Badger)", full: buyRow.full,
					conflicts: buyRow.conflicts, note: buyRow.note})
			}
		}
		after := b.baseline("after")
		base := (before + after) / 2
		fmt.Printf("baseline: %.0f and %.0f synced single-key commits/s by %d goroutines (before, after); mean %.0f\n",
			before, after, b.cfg.clients, base)
		for _, r := range badgerRows {
			r.base = base
			rows = append(rows, r)
		}
		if many.name != "" && one.name != "" {
			rows = append(rows, row{name: "POST /questions, " + askOne.label(b.cfg.clients) + " / " + askMany.label(b.cfg.clients),
				full: one.full, base: many.full, target: 0.80, conflicts: "-"})
		}
		if buyRow.name != "" {
			buyRow.conflicts, buyRow.note = "-", ""
			rows = append(rows, buyRow)
		}
	}
	if phases["msg"] {
		rows = append(rows, b.msgBadger())
	}
	if phases["memory"] {
		rows = append(rows, b.askMemory())
	}
	if phases["pg"] {
		rows = append(rows, b.askPostgres()...)
	}
	if phases["pgread"] {
		rows = append(rows, b.readPostgres())
	}
	if phases["pgstarve"] {
		b.starvePostgres()
	}
	if phases["preload"] {
		if c.preloadDir == "" {
			fmt.Println("preload: skipped (pass -preload-dir DIR; the preloaded store is built there once and reused)")
		} else {
			// The preloaded store's world: a buyer per client, each
			// on an item of its own.
			emptyAsk := b.askBadger(askShape{name: "buyers over as many items", items: b.cfg.clients}).full
			rows = append(rows, b.askPreloaded(emptyAsk))
			p := b.ensurePreloaded()
			for _, l := range b.preloadLoads() {
				rows = append(rows, b.comparePreloaded(p, l))
			}
		}
	}
	if len(rows) > 0 {
		w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(w, "phase\tfull/s\tbaseline/s\tratio\ttarget\tconflicts\t")
		for _, r := range rows {
			target := "-"
			if r.target > 0 {
				target = fmt.Sprintf(">= %.2f", r.target)
			}
			fmt.Fprintf(w, "%s\t%.0f\t%.0f\t%.2f\t%s\t%s\t\n", r.name, r.full, r.base, r.full/r.base, target, r.conflicts)
		}
		w.Flush()
		for _, r := range rows {
			if r.note != "" {
				fmt.Printf("%s: %s\n", r.name, r.note)
			}
		}
	}
	if phases["grow"] {
		b.grow()
	}
}

type writeBench struct {
	cfg writeConfig
	tmp string
	n   atomic.Int64 // numbers the temporary folders
	pg  *pgTarget    // the database of the PostgreSQL phases, once set up
}

// folder returns a new folder under the run's temporary folder.
func (b *writeBench) folder(name string) string {
	dir := filepath.Join(b.tmp, fmt.Sprintf("%02d-%s", b.n.Add(1), name))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fatalf("%v", err)
	}
	return dir
}

// baselineOptions are the options storage/badger opens its folders with
// (badger.go, Open); keep the two in step.
func baselineOptions(dir string) badgerdb.Options {
	return badgerdb.DefaultOptions(dir).
		WithSyncWrites(true).
		WithLogger(nil).
		WithMemTableSize(64 << 20).
		WithNumMemtables(2).
		WithBlockCacheSize(64 << 20).
		WithIndexCacheSize(0).
		WithValueLogFileSize(64 << 20).
		WithNumCompactors(2)
}

// baseline returns the rate of synced single-key Badger transactions
// committed by b.cfg.clients goroutines, each on keys of its own.
func (b *writeBench) baseline(when string) float64 {
	dir := b.folder("baseline-" + when)
	db, err := badgerdb.Open(baselineOptions(dir))
	if err != nil {
		fatalf("open baseline: %v", err)
	}
	value := bytes.Repeat([]byte{'v'}, 100)
	var done atomic.Int64
	var failed atomic.Value
	start := time.Now()
	deadline := start.Add(b.cfg.duration)
	var wg sync.WaitGroup
	for g := range b.cfg.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				key := fmt.Appendf(nil, "bench/%04d/%012d", g, i)
				err := db.Update(func(txn *badgerdb.Txn) error { return txn.Set(key, value) })
				if err != nil {
					failed.Store(err)
					return
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err, ok := failed.Load().(error); ok {
		fatalf("baseline commit: %v", err)
	}
	if err := db.Close(); err != nil {
		fatalf("close baseline: %v", err)
	}
	_ = os.RemoveAll(dir)
	return float64(done.Load()) / elapsed.Seconds()
}

// engine is a marketplace served over loopback, with its background work
// running as in the server.
type engine struct {
	m      *marketplace.Marketplace
	store  storage.Store
	badger *badger.Store // nil on memory
	srv    *server
	stop   func()
}

func (b *writeBench) start(st storage.Store) *engine {
	return b.startWith(st, marketplace.Options{}, func(*marketplace.Marketplace) httpapi.Config { return httpapi.Config{} })
}

// startWith starts the engine on st with opts, served by httpapi with the
// configuration that config returns.
func (b *writeBench) startWith(st storage.Store, opts marketplace.Options, config func(*marketplace.Marketplace) httpapi.Config) *engine {
	m, err := marketplace.New(st, opts)
	if err != nil {
		fatalf("start engine: %v", err)
	}
	e := &engine{m: m, store: st}
	e.badger, _ = st.(*badger.Store)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	if b.cfg.background {
		go func() {
			defer close(done)
			_ = m.Start(ctx)
		}()
	} else {
		close(done)
	}
	e.srv = serve(httpapi.New(m, config(m)))
	e.stop = func() {
		e.srv.Close()
		cancel()
		select {
		case <-done:
		case <-time.After(stopTimeout):
			// A deadlocked engine never stops: show where it waits.
			_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
			fatalf("the engine's background work did not stop within %s (a deadlock? goroutines above)", stopTimeout)
		}
		if err := m.Close(); err != nil {
			fatalf("close engine: %v", err)
		}
		if err := st.Close(); err != nil {
			fatalf("close store: %v", err)
		}
	}
	return e
}

// startAsServer starts the engine on st as `marketplaced -memory` runs it
// with its defaults (cmd/marketplaced, run): the Prometheus metrics on (the
// requests by route, the storage observer, the delivery attempts and the
// engine's gauges), the request journal of journal.DefaultSize, one JSON log
// line per request at level info (written to a file in the run's folder, as
// the server's stderr would be). Keep the two in step.
func (b *writeBench) startAsServer(st storage.Store) *engine {
	logFile, err := os.Create(filepath.Join(b.folder("server-log"), "stderr.log"))
	if err != nil {
		fatalf("%v", err)
	}
	logOut := logbuf.New(logFile)
	logger := slog.New(reqlog.New(logOut, &slog.HandlerOptions{Level: slog.LevelInfo}))
	met := metrics.New()
	stopObserving := met.ObserveStorage()
	opts := marketplace.Options{Logger: logger, Notifications: notify.Options{OnAttempt: met.NotificationAttempt}}
	e := b.startWith(st, opts, func(m *marketplace.Marketplace) httpapi.Config {
		met.Engine(m)
		return httpapi.Config{Logger: logger, Journal: journal.New(journal.DefaultSize), Metrics: met,
			ConcurrentSearches: b.cfg.searchSlots}
	})
	stop := e.stop
	e.stop = func() {
		stop()
		stopObserving()
		_ = logOut.Close()
		_ = logFile.Close()
	}
	return e
}

// stopTimeout bounds the stop of an engine, and requestTimeout a request.
const (
	stopTimeout    = 15 * time.Second
	requestTimeout = 10 * time.Second
)

func (b *writeBench) startBadger(name string) *engine {
	st, err := badger.Open(b.folder(name), badger.Options{})
	if err != nil {
		fatalf("%v", err)
	}
	return b.start(st)
}

// conflicts returns how many transactions the store has run again after a
// conflict (Badger, PostgreSQL); 0 on memory.
func (e *engine) conflicts() uint64 {
	if c, ok := e.store.(interface{ Conflicts() uint64 }); ok {
		return c.Conflicts()
	}
	return 0
}

// askWorld is what the ask clients need: a seller's active items and one
// buyer token per client, so that no rule refuses an ask.
type askWorld struct {
	Items  []string `json:"items"`
	Tokens []string `json:"tokens"`
	// Kept by newAskWorld only, for the answer load.
	seller string  // the seller's token
	buyers []int64 // the buyer of each token
}

// sellerWorld is a seller with warehouse_management and a stock-location
// store.
type sellerWorld struct {
	id    int64
	token string
	store string
}

func newSeller(ctx context.Context, m *marketplace.Marketplace, name string) (sellerWorld, error) {
	u, tok, err := m.CreateUser(ctx, accounts.NewUser{Nickname: name, SiteID: "MLA", FirstName: "Bench", LastName: "Seller",
		Tags: []string{"normal", "user_product_seller", accounts.TagWarehouseManagement}})
	if err != nil {
		return sellerWorld{}, err
	}
	st, err := m.Accounts.CreateStore(ctx, u.ID, accounts.NewStore{
		Description: "Bench warehouse",
		Location: accounts.Location{AddressID: 1, AddressLine: "Avenida Corrientes 1234", StreetName: "Avenida Corrientes",
			StreetNumber: 1234, Latitude: -34.6037, Longitude: -58.3816, City: "Buenos Aires", State: "Capital Federal",
			Country: "Argentina", ZipCode: "1043"},
		Tags: []string{accounts.TagStockLocation},
	})
	if err != nil {
		return sellerWorld{}, err
	}
	return sellerWorld{id: u.ID, token: tok, store: st.ID}, nil
}

func (s sellerWorld) publish(ctx context.Context, m *marketplace.Marketplace, n int) (stock.Published, error) {
	return m.Stock.PublishMultiOrigin(ctx, s.id, stock.NewItem{
		Title: fmt.Sprintf("Auriculares Sony WH-1000XM5 %d", n), CategoryID: "MLA1055", Price: money.FromInt(350000),
		ListingTypeID: "gold_special", CurrencyID: "ARS", Condition: "new", Channels: []string{"marketplace"},
		StockLocations: []stock.StockLocation{{StoreID: s.store, Quantity: 5}},
	})
}

func newBuyer(ctx context.Context, m *marketplace.Marketplace, name string) (int64, string, error) {
	u, tok, err := m.CreateUser(ctx, accounts.NewUser{Nickname: name, SiteID: "MLA", FirstName: "Bench", LastName: "Buyer"})
	return u.ID, tok, err
}

// newAskWorld creates a seller with as many active items as clients, and a
// buyer per client.
func newAskWorld(ctx context.Context, m *marketplace.Marketplace, clients int) askWorld {
	return newAskWorldOf(ctx, m, clients, clients, 5)
}

// newAskWorldOf creates a seller with items active items of units units
// each, and buyers buyers.
func newAskWorldOf(ctx context.Context, m *marketplace.Marketplace, buyers, items int, units int64) askWorld {
	s, err := newSeller(ctx, m, "BENCH_SELLER")
	if err != nil {
		fatalf("seller: %v", err)
	}
	w := askWorld{seller: s.token}
	for i := range items {
		p, err := m.Stock.PublishMultiOrigin(ctx, s.id, stock.NewItem{
			Title: fmt.Sprintf("Auriculares Sony WH-1000XM5 %d", i), CategoryID: "MLA1055", Price: money.FromInt(350000),
			ListingTypeID: "gold_special", CurrencyID: "ARS", Condition: "new", Channels: []string{"marketplace"},
			StockLocations: []stock.StockLocation{{StoreID: s.store, Quantity: units}},
		})
		if err != nil {
			fatalf("publish: %v", err)
		}
		w.Items = append(w.Items, p.ID)
	}
	for i := range buyers {
		id, tok, err := newBuyer(ctx, m, fmt.Sprintf("BENCH_BUYER_%d", i))
		if err != nil {
			fatalf("buyer: %v", err)
		}
		w.Tokens = append(w.Tokens, tok)
		w.buyers = append(w.buyers, id)
	}
	return w
}

// askShape is how the ask clients share buyers and items: askMany, the
// clients' own buyers over a few items of one seller (concurrent asks on
// one item), and askOne, every client asking as one buyer about one item
// (concurrent asks by one asker on one item, which must not wait for one
// another on a key of theirs).
type askShape struct {
	name          string
	buyers, items int // 0 buyers: one per client
}

// askItems is how many items the askMany clients ask about.
const askItems = 8

var (
	askMany = askShape{name: "buyers over 8 items", items: askItems}
	askOne  = askShape{name: "1 buyer on 1 item", buyers: 1, items: 1}
)

// label names the shape with its number of clients.
func (s askShape) label(clients int) string {
	if s.buyers == 0 {
		return fmt.Sprintf("%d %s", clients, s.name)
	}
	return s.name
}

// world creates the shape's world on m, each item with units units.
func (s askShape) world(ctx context.Context, m *marketplace.Marketplace, clients int, units int64) askWorld {
	buyers := s.buyers
	if buyers == 0 {
		buyers = clients
	}
	return newAskWorldOf(ctx, m, buyers, s.items, units)
}

// result is what a load measured.
type result struct {
	rate    float64
	ok      int64
	failed  int64
	first   string        // the first failure
	cpu     time.Duration // CPU time of the process (clients, server, engine) per success
	elapsed time.Duration
}

func (r result) String() string {
	s := fmt.Sprintf("%.0f/s (%d in total), %s of CPU each", r.rate, r.ok, r.cpu.Round(time.Microsecond))
	if r.failed > 0 {
		s += fmt.Sprintf(", %d failed, first: %s", r.failed, r.first)
	}
	return s
}

// plus adds the requests of o, a load of the same kind measured at another
// time, to r: its rate is then over both loads' time.
func (r result) plus(o result) result {
	sum := result{ok: r.ok + o.ok, failed: r.failed + o.failed, first: r.first, elapsed: r.elapsed + o.elapsed}
	if sum.first == "" {
		sum.first = o.first
	}
	if sum.elapsed > 0 {
		sum.rate = float64(sum.ok) / sum.elapsed.Seconds()
	}
	if sum.ok > 0 {
		sum.cpu = (r.cpu*time.Duration(r.ok) + o.cpu*time.Duration(o.ok)) / time.Duration(sum.ok)
	}
	return sum
}

// load runs n clients for d; each calls do in a loop with its own number.
// do returns nil for an answer with the expected status.
func load(n int, d time.Duration, do func(c int, hc *http.Client) error) result {
	hc := newLoadClient(n)
	defer hc.CloseIdleConnections()
	return loadWith(hc, n, d, do)
}

// newLoadClient returns an HTTP client that keeps n connections open.
func newLoadClient(n int) *http.Client {
	return &http.Client{Timeout: requestTimeout, Transport: &http.Transport{MaxIdleConnsPerHost: n}}
}

// loadWith is load through hc, whose connections loads that take turns
// keep from one turn to the next.
func loadWith(hc *http.Client, n int, d time.Duration, do func(c int, hc *http.Client) error) result {
	var ok, failed atomic.Int64
	var first sync.Once
	var firstErr string
	cpu0 := cpuTime()
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for c := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				if err := do(c, hc); err != nil {
					failed.Add(1)
					first.Do(func() { firstErr = err.Error() })
					continue
				}
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	r := result{rate: float64(ok.Load()) / elapsed.Seconds(), ok: ok.Load(), failed: failed.Load(), first: firstErr, elapsed: elapsed}
	if r.ok > 0 {
		r.cpu = (cpuTime() - cpu0) / time.Duration(r.ok)
	}
	return r
}

// cpuTime returns the CPU time the process has used, in user and system
// mode. On a machine shared with other work it varies less than a rate.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// send sends one request and reads the whole answer; an answer with another
// status than want is an error.
func send(hc *http.Client, req *http.Request, want int) (*http.Response, []byte, error) {
	res, err := hc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, nil, err
	}
	if res.StatusCode != want {
		return nil, nil, fmt.Errorf("%s %s: %d %s", req.Method, req.URL.Path, res.StatusCode, body)
	}
	return res, body, nil
}

func askRequest(url, token, item string, n int) *http.Request {
	body := fmt.Sprintf(`{"text":"Does it come with a case? (%d)","item_id":%q}`, n, item)
	req, _ := http.NewRequest("POST", url+"/questions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	return req
}

// askLoad drives POST /questions from one client per token, each asking on
// the items in turn.
func (b *writeBench) askLoad(url string, w askWorld, d time.Duration) result {
	return b.askLoadOn([]string{url}, w, d)
}

// askLoadOn is askLoad on several servers sharing a store: client c asks
// through urls[c % len(urls)].
func (b *writeBench) askLoadOn(urls []string, w askWorld, d time.Duration) result {
	n := make([]int, b.cfg.clients)
	return load(b.cfg.clients, d, func(c int, hc *http.Client) error {
		n[c]++
		item := w.Items[(c+n[c])%len(w.Items)]
		_, _, err := send(hc, askRequest(urls[c%len(urls)], w.Tokens[c%len(w.Tokens)], item, n[c]), http.StatusCreated)
		return err
	})
}

func checked(name string, r result) result {
	fmt.Printf("%s: %s\n", name, r)
	if r.failed > r.ok/100 {
		if strings.Contains(r.first, "Timeout") {
			// A server that stopped answering: show where it waits.
			_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
		}
		fatalf("%s: more than 1%% of the requests failed", name)
	}
	return r
}

// askBadger is the ask phase in shape s: the row's rate is set beside the
// engine's limit by the caller.
func (b *writeBench) askBadger(s askShape) row {
	ctx := context.Background()
	e := b.startBadger("ask")
	defer e.stop()
	w := s.world(ctx, e.m, b.cfg.clients, 5)
	c0 := e.conflicts()
	name := "ask, Badger, " + s.label(b.cfg.clients)
	r := checked(name, b.askLoad(e.srv.URL, w, b.cfg.duration))
	b.printStats(name, e)
	return row{name: "POST /questions, " + s.label(b.cfg.clients) + " (Badger)", full: r.rate, target: 1.0,
		conflicts: perRequest(e.conflicts()-c0, r.ok), note: fmt.Sprintf("CPU per ask %s", r.cpu.Round(time.Microsecond))}
}

// perRequest is n transactions run again after a conflict, and per request
// of ok.
func perRequest(n uint64, ok int64) string {
	if ok == 0 {
		return strconv.FormatUint(n, 10)
	}
	return fmt.Sprintf("%d (%.3f per request)", n, float64(n)/float64(ok))
}

// upsPerClient is how many user products each PUT stock client writes in
// turn: its own, so that no two clients race on a version.
const upsPerClient = 4

func (b *writeBench) stockBadger() row {
	e := b.startBadger("stock")
	defer e.stop()
	run := b.stockSetup(context.Background(), e)
	c0 := e.conflicts()
	r := checked("PUT stock, Badger", run(b.cfg.duration))
	b.printStats("PUT stock, Badger", e)
	return row{name: "PUT /user-products/{id}/stock (Badger)", full: r.rate, target: 0.60,
		conflicts: perRequest(e.conflicts()-c0, r.ok), note: fmt.Sprintf("CPU per PUT %s", r.cpu.Round(time.Microsecond))}
}

// stockSetup creates a seller with upsPerClient user products per client on
// e, and returns the PUT stock load on them: each client writes its own
// user products in turn, sending the x-version of its previous answer.
func (b *writeBench) stockSetup(ctx context.Context, e *engine) func(d time.Duration) result {
	s, err := newSeller(ctx, e.m, "BENCH_STOCK_SELLER")
	if err != nil {
		fatalf("seller: %v", err)
	}
	type up struct {
		id      string
		version string
	}
	ups := make([][]up, b.cfg.clients)
	hc := &http.Client{Timeout: requestTimeout}
	for c := range ups {
		for i := range upsPerClient {
			p, err := s.publish(ctx, e.m, c*upsPerClient+i)
			if err != nil {
				fatalf("publish: %v", err)
			}
			req, _ := http.NewRequest("GET", e.srv.URL+"/user-products/"+p.UserProductID+"/stock", nil)
			req.Header.Set("Authorization", "Bearer "+s.token)
			res, _, err := send(hc, req, http.StatusOK)
			if err != nil {
				fatalf("%v", err)
			}
			ups[c] = append(ups[c], up{id: p.UserProductID, version: res.Header.Get("x-version")})
		}
	}
	hc.CloseIdleConnections()
	n := make([]int, b.cfg.clients)
	return func(d time.Duration) result {
		return load(b.cfg.clients, d, func(c int, hc *http.Client) error {
			n[c]++
			u := &ups[c][n[c]%upsPerClient]
			body := fmt.Sprintf(`{"locations":[{"store_id":%q,"quantity":%d}]}`, s.store, n[c]%100)
			req, _ := http.NewRequest("PUT", e.srv.URL+"/user-products/"+u.id+"/stock/type/seller_warehouse", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+s.token)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("x-version", u.version)
			res, _, err := send(hc, req, http.StatusOK)
			if err != nil {
				return err
			}
			u.version = res.Header.Get("x-version")
			return nil
		})
	}
}

func (b *writeBench) askMemory() row {
	ctx := context.Background()
	e := b.startAsServer(memory.New())
	defer e.stop()
	w := newAskWorld(ctx, e.m, b.cfg.clients)
	// The bare handler answers with the bytes and headers of a real ask.
	hc := &http.Client{Timeout: requestTimeout}
	res, answer, err := send(hc, askRequest(e.srv.URL, w.Tokens[0], w.Items[0], 0), http.StatusCreated)
	if err != nil {
		fatalf("%v", err)
	}
	bare := serve(bareAsk(answer, res.Header))
	defer bare.Close()
	full := checked("ask, memory", b.askLoad(e.srv.URL, w, b.cfg.duration))
	base := checked("ask, bare httprouter", b.askLoad(bare.URL, w, b.cfg.duration))
	return row{name: "POST /questions (memory)", full: full.rate, base: base.rate, target: 0.50, conflicts: "-"}
}

// bareAsk decodes the body of an ask as the API reads it and answers 201
// with answer and the API's headers, nothing else.
func bareAsk(answer []byte, header http.Header) http.Handler {
	r := httprouter.New()
	r.POST("/questions", func(w http.ResponseWriter, req *http.Request, _ httprouter.Params) {
		var in struct {
			Text   string `json:"text"`
			ItemID string `json:"item_id"`
		}
		if err := json.NewDecoder(req.Body).Decode(&in); err != nil || in.Text == "" || in.ItemID == "" {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		for k, v := range header {
			if k != "Date" && k != "Content-Length" {
				w.Header()[k] = v
			}
		}
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(answer)
	})
	return r
}

// grow asks on one server in consecutive runs: on a store that keeps its
// cost as data grows, every run has the first one's rate.
func (b *writeBench) grow() {
	ctx := context.Background()
	e := b.startBadger("grow")
	defer e.stop()
	w := newAskWorld(ctx, e.m, b.cfg.clients)
	fmt.Printf("grow: %d consecutive ask runs of %s on one Badger server\n", b.cfg.growRuns, b.cfg.duration)
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\tasks/s\tof run 1\tCPU per ask\tquestions\tconflicts\t")
	var first float64
	var total int64
	for run := 1; run <= b.cfg.growRuns; run++ {
		c0 := e.conflicts()
		r := checked(fmt.Sprintf("grow, run %d", run), b.askLoad(e.srv.URL, w, b.cfg.duration))
		if run == 1 {
			first = r.rate
		}
		total += r.ok
		fmt.Fprintf(tw, "%d\t%.0f\t%.2f\t%s\t%d\t%d\t\n", run, r.rate, r.rate/first, r.cpu.Round(time.Microsecond), total, e.conflicts()-c0)
		b.printStats(fmt.Sprintf("grow, after run %d", run), e)
	}
	tw.Flush()
}

// printStats prints, with -stats, Badger's levels and sizes.
func (b *writeBench) printStats(phase string, e *engine) {
	if !b.cfg.stats || e.badger == nil {
		return
	}
	fmt.Print(badgerStats(phase, e.badger.DB()))
}

func badgerStats(phase string, db *badgerdb.DB) string {
	var sb strings.Builder
	lsm, vlog := db.Size()
	fmt.Fprintf(&sb, "  %s: LSM %s, value log %s\n", phase, mib(lsm), mib(vlog))
	for _, l := range db.Levels() {
		if l.NumTables == 0 && l.Level > 0 {
			continue
		}
		fmt.Fprintf(&sb, "    L%d: %d tables, %s (target %s), score %.2f\n", l.Level, l.NumTables, mib(l.Size), mib(l.TargetSize), l.Score)
	}
	if m := db.BlockCacheMetrics(); m != nil {
		fmt.Fprintf(&sb, "    block cache hit ratio %.2f\n", m.Ratio())
	}
	return sb.String()
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// copyDir copies the files of src into dst and syncs them, so that the copy
// does not leave dirty pages for the kernel to write during a measurement.
func copyDir(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, en := range entries {
		if !en.Type().IsRegular() {
			continue
		}
		if err := copyFile(filepath.Join(src, en.Name()), filepath.Join(dst, en.Name())); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		return errors.Join(err, out.Close())
	}
	return errors.Join(out.Sync(), out.Close())
}
