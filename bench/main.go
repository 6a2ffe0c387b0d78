// Command bench measures the server over real loopback HTTP: for each route it
// drives the full marketplace stack and a bare httprouter server answering
// the same bytes, in the same run, and prints requests per second and the
// ratio. Traffic goes only to 127.0.0.1; every phase is bounded in time.
//
//	go run ./bench -duration 3s -concurrency 16
//
// The full server runs as marketplaced does by default: the request log at
// level info, the request journal and the Prometheus metrics. With -metrics
// it also drives the same engine behind a server without the metrics, in
// turns of 100 ms with the full one, and prints the full rate over the other:
//
//	go run ./bench -duration 3s -metrics
//
// With -soak D it runs the soak instead (soak.go): marketplaced on Badger,
// asked and searched for D, its rates and memory minute by minute:
//
//	go run ./bench -soak 10m
//
// and with -soak-profile DIR a CPU profile of every minute of the server.
//
// With -write it measures durable writes instead (see write.go and
// docs/benchmarks.md), with -phases buy purchases against asks (sales.go),
// and with -phases pg,pgread the PostgreSQL backend (postgres.go):
//
//	go run ./bench -write -duration 5s -preload-dir ~/.cache/marketplace-bench
//	go run ./bench -write -duration 5s -phases buy
//	go run ./bench -write -duration 5s -phases pg,pgread
//
// With -postgres-rtt it measures the main routes of one server whose
// PostgreSQL is at each of these round-trip times (rtt.go):
//
//	go run ./bench -postgres-rtt 0,0.5ms,1ms -duration 2s
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/httpapi"
	"github.com/marketplace/marketplace/internal/logbuf"
	"github.com/marketplace/marketplace/internal/reqlog"
	"github.com/marketplace/marketplace/journal"
	"github.com/marketplace/marketplace/metrics"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/questions"
	"github.com/marketplace/marketplace/stock"
	"github.com/marketplace/marketplace/storage/memory"
)

func main() {
	duration := flag.Duration("duration", 3*time.Second, "how long each route is driven, per server")
	concurrency := flag.Int("concurrency", 16, "concurrent clients")
	write := flag.Bool("write", false, "measure the write routes instead of the read routes")
	soak := flag.Duration("soak", 0, "run the soak for this long instead (marketplaced on Badger, askers and searchers; see soak.go)")
	soakProfile := flag.String("soak-profile", "", "with -soak, write a CPU profile of the server's every minute into this folder")
	postgresRTT := flag.String("postgres-rtt", "", "run the network-distance benchmark instead (rtt.go): one server on PostgreSQL behind a proxy that adds each of these round-trip times, comma-separated (0,0.5ms,1ms); with -postgres, on that database")
	withMetrics := flag.Bool("metrics", false, "also drive the same server without Prometheus metrics and print the full rate over its rate")
	wrk := flag.String("wrk", "", "drive the read routes with this wrk binary (2 threads, -wrk-connections connections) instead of the Go clients, the two servers in turns of -wrk-turn")
	wrkConns := flag.Int("wrk-connections", 64, "with -wrk, wrk's connections")
	wrkTurn := flag.Duration("wrk-turn", time.Second, "with -wrk, how long each wrk run lasts before the other server's turn (whole seconds)")
	readProfile := flag.String("read-cpuprofile", "", "write a CPU profile of the read routes' runs (both servers and the clients) to this file")
	var wc writeConfig
	wc.flags()
	flag.Parse()
	if *soak > 0 {
		runSoak(*soak, *soakProfile)
		return
	}
	if *duration > time.Minute {
		log.Fatal("-duration is capped at 1m")
	}
	if *postgresRTT != "" {
		rtts, err := parseRTTs(*postgresRTT)
		if err != nil {
			log.Fatal(err)
		}
		runRTT(rtts, *duration, *concurrency, wc.postgres)
		return
	}
	if *write {
		wc.duration = *duration
		wc.readClients = *concurrency
		runWrite(wc)
		return
	}
	ctx := context.Background()
	// The engine and server run as `marketplaced -memory` runs them by
	// default: the request log at level info (to a file, as the server's
	// redirected stderr, through internal/logbuf), the journal of
	// journal.DefaultSize and the Prometheus metrics with the storage
	// observer. Keep in step with cmd/marketplaced.
	logDir, err := os.MkdirTemp("", "marketplace-bench-read-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(logDir)
	logFile, err := os.Create(filepath.Join(logDir, "stderr.log"))
	if err != nil {
		log.Fatal(err)
	}
	defer logFile.Close()
	logOut := logbuf.New(logFile)
	defer logOut.Close()
	logger := slog.New(reqlog.New(logOut, &slog.HandlerOptions{Level: slog.LevelInfo}))
	met := metrics.New()
	m, err := marketplace.New(memory.New(), marketplace.Options{Logger: logger,
		Notifications: notify.Options{OnAttempt: met.NotificationAttempt}})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	met.Engine(m)
	d, err := m.EnsureDemo(ctx)
	if err != nil {
		log.Fatal(err)
	}
	item, err := m.Stock.PublishMultiOrigin(ctx, d.Seller.ID, stock.NewItem{
		Title: "Auriculares Sony WH-1000XM5", CategoryID: "MLA1055", Price: money.FromInt(350000), ListingTypeID: "gold_special",
		CurrencyID: "ARS", Condition: "new", Channels: []string{"marketplace"},
		StockLocations: []stock.StockLocation{{StoreID: d.Stores[0].ID, Quantity: 5}},
	})
	if err != nil {
		log.Fatal(err)
	}
	q, err := m.Questions.Ask(ctx, d.Buyer.ID, questions.AskInput{Text: "Does it come with a case?", ItemID: item.ID})
	if err != nil {
		log.Fatal(err)
	}
	stopObserving := met.ObserveStorage()
	defer func() { stopObserving() }()
	full := serve(httpapi.New(m, httpapi.Config{Logger: logger, Journal: journal.New(journal.DefaultSize), Metrics: met}))
	defer full.Close()
	// With -metrics, the same server without the metrics, for their cost.
	unmetered := serve(httpapi.New(m, httpapi.Config{Logger: logger, Journal: journal.New(journal.DefaultSize)}))
	defer unmetered.Close()

	routes := []struct{ name, pattern, path string }{
		{"GET /users/{id}", "/users/:user_id", fmt.Sprintf("/users/%d", d.Seller.ID)},
		{"GET /user-products/{id}/stock", "/user-products/:id/stock", "/user-products/" + item.UserProductID + "/stock"},
		{"GET /items/{id}", "/items/:id", "/items/" + item.ID},
		{"GET /questions/{id}", "/questions/:question_id", fmt.Sprintf("/questions/%d", q.ID)},
		{"GET /sites/MLA/listing_prices", "/sites/:site_id/listing_prices", "/sites/MLA/listing_prices?price=10630"},
		{"GET /currencies/ARS", "/currencies/:id", "/currencies/ARS"},
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	if *withMetrics {
		fmt.Fprintln(w, "route\tfull req/s\tbare req/s\tratio\twithout metrics req/s\tfull/without\t")
	} else {
		fmt.Fprintln(w, "route\tfull req/s\tbare req/s\tratio\t")
	}
	if *readProfile != "" {
		f, err := os.Create(*readProfile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer func() { pprof.StopCPUProfile(); _ = f.Close() }()
	}
	for _, r := range routes {
		body, header := fetch(full.URL+r.path, d.SellerToken)
		bare := serve(bareServer(r.pattern, body, header))
		var fullRate, bareRate float64
		if *wrk != "" {
			fullRate, bareRate = wrkTurns(*wrk, full.URL+r.path, bare.URL+r.path, d.SellerToken, *duration, *wrkTurn, *wrkConns)
		} else {
			// In turns of turnSlice, so that what else the machine does
			// (its cores are shared) falls on both alike.
			fullRate, bareRate = driveTurns(full.URL+r.path, bare.URL+r.path, d.SellerToken, *duration, *concurrency, func(bool) {})
		}
		bare.Close()
		if !*withMetrics {
			fmt.Fprintf(w, "%s\t%.0f\t%.0f\t%.2f\t\n", r.name, fullRate, bareRate, fullRate/bareRate)
			continue
		}
		// The two servers take turns in short slices, so that whatever else
		// the machine does falls on both alike; the storage observer is the
		// process's, on only during the metered server's slices.
		meteredRate, unmeteredRate := driveTurns(full.URL+r.path, unmetered.URL+r.path, d.SellerToken, *duration, *concurrency,
			func(isUnmetered bool) {
				stopObserving()
				stopObserving = func() {}
				if !isUnmetered {
					stopObserving = met.ObserveStorage()
				}
			})
		stopObserving()
		stopObserving = met.ObserveStorage()
		fmt.Fprintf(w, "%s\t%.0f\t%.0f\t%.2f\t%.0f\t%.3f\t\n", r.name, fullRate, bareRate, fullRate/bareRate, unmeteredRate, meteredRate/unmeteredRate)
	}
	w.Flush()
}

type server struct {
	URL string
	srv *http.Server
}

func (s *server) Close() { _ = s.srv.Close() }

func serve(h http.Handler) *server {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return &server{URL: "http://" + ln.Addr().String(), srv: srv}
}

func fetch(url, token string) ([]byte, http.Header) {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || !json.Valid(b) {
		log.Fatalf("GET %s: %d %s", url, res.StatusCode, b)
	}
	return b, res.Header
}

// bareServer answers pattern with body and the same headers, nothing else.
func bareServer(pattern string, body []byte, header http.Header) http.Handler {
	r := httprouter.New()
	r.GET(pattern, func(w http.ResponseWriter, _ *http.Request, _ httprouter.Params) {
		for k, v := range header {
			if k != "Date" && k != "Content-Length" {
				w.Header()[k] = v
			}
		}
		_, _ = w.Write(body)
	})
	return r
}

// turnSlice is how long one server is driven before the other's turn.
const turnSlice = 100 * time.Millisecond

// driveTurns drives a and b in turns of turnSlice for d each, with n clients
// kept connected to each, and returns both rates; turn is called before each
// turn with whether it is b's.
func driveTurns(a, b, token string, d time.Duration, n int, turn func(isB bool)) (rateA, rateB float64) {
	clients := [2]*http.Client{
		{Transport: &http.Transport{MaxIdleConnsPerHost: n}},
		{Transport: &http.Transport{MaxIdleConnsPerHost: n}},
	}
	urls := [2]string{a, b}
	var counts [2]int64
	for spent := time.Duration(0); spent < d; spent += turnSlice {
		for i := range 2 {
			turn(i == 1)
			var ok atomic.Int64
			deadline := time.Now().Add(turnSlice)
			var wg sync.WaitGroup
			for range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for time.Now().Before(deadline) {
						req, _ := http.NewRequest("GET", urls[i], nil)
						req.Header.Set("Authorization", "Bearer "+token)
						res, err := clients[i].Do(req)
						if err != nil {
							continue
						}
						_, _ = io.Copy(io.Discard, res.Body)
						res.Body.Close()
						if res.StatusCode == http.StatusOK {
							ok.Add(1)
						}
					}
				}()
			}
			wg.Wait()
			counts[i] += ok.Load()
		}
	}
	for _, c := range clients {
		c.CloseIdleConnections()
	}
	return float64(counts[0]) / d.Seconds(), float64(counts[1]) / d.Seconds()
}

// wrkTurns drives a and b with wrk (2 threads, conns connections, the
// token in the Authorization header) in turns of turn until each has run
// for d, and returns both rates: the requests wrk counted over the time
// of its runs.
func wrkTurns(wrk, a, b, token string, d, turn time.Duration, conns int) (rateA, rateB float64) {
	var reqs [2]float64
	var spent [2]time.Duration
	for done := time.Duration(0); done < d; done += turn {
		for i, u := range []string{a, b} {
			// wrk takes whole seconds.
			t := max(time.Second, min(turn, d-done).Round(time.Second))
			out, err := exec.Command(wrk, "-t2", fmt.Sprintf("-c%d", conns), fmt.Sprintf("-d%ds", int(t.Seconds())),
				"-H", "Authorization: Bearer "+token, u).CombinedOutput()
			if err != nil {
				log.Fatalf("wrk: %v\n%s", err, out)
			}
			n, ok := wrkRequests(string(out))
			if !ok {
				log.Fatalf("wrk: no request count in\n%s", out)
			}
			if strings.Contains(string(out), "Non-2xx") {
				log.Fatalf("wrk: answers other than 2xx from %s\n%s", u, out)
			}
			reqs[i] += n
			spent[i] += t
		}
	}
	return reqs[0] / spent[0].Seconds(), reqs[1] / spent[1].Seconds()
}

// wrkRequests reads the count of "N requests in Ts" from wrk's output.
func wrkRequests(out string) (float64, bool) {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[1] == "requests" {
			n, err := strconv.ParseFloat(f[0], 64)
			return n, err == nil
		}
	}
	return 0, false
}
