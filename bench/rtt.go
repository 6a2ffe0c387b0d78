package main

// The network-distance benchmark (-postgres-rtt): one server on PostgreSQL
// with the counting proxy (internal/pgproxy) between them, which adds a
// round trip's time to every exchange, at each round-trip time of a list.
// For each, the main routes are driven by -concurrency clients for
// -duration each, and the bench prints their p50 and p99 latency, their
// rate and the round trips each request made to PostgreSQL, counted by the
// proxy (under load, with the transactions run again after a conflict);
// before each load, one client alone for a quarter of -duration gives the
// route's p50 without waiting for a pooled connection. The engine's background work is not started, so that the count
// is the requests' own (docs/roundtrips.md measures every route the same
// way, one request at a time).
//
//	go run ./bench -postgres-rtt 0,0.5ms,1ms -duration 2s

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/httpapi"
	"github.com/marketplace/marketplace/internal/pgproxy"
	"github.com/marketplace/marketplace/internal/pgtest/pgserver"
	"github.com/marketplace/marketplace/journal"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/stock"
	"github.com/marketplace/marketplace/storage/postgres"
)

// parseRTTs reads a comma-separated list of round-trip times; a bare 0 is
// no delay.
func parseRTTs(s string) ([]time.Duration, error) {
	var out []time.Duration
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "0" {
			out = append(out, 0)
			continue
		}
		d, err := time.ParseDuration(f)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("-postgres-rtt: %q is not a round-trip time (0, 500us, 0.5ms, 1ms...)", f)
		}
		out = append(out, d)
	}
	return out, nil
}

// rttRoute is one route of the benchmark: do sends client c's next
// request and returns nil for an answer with the expected status.
type rttRoute struct {
	name string
	do   func(c int, hc *http.Client) error
}

// rttResult is what one load of one route measured.
type rttResult struct {
	ok, failed int64
	first      string
	rate       float64
	p50, p99   time.Duration
	roundTrips float64
	// alone is the p50 of client 0 sending on its own, before the load:
	// the route's latency without waiting for a connection.
	alone time.Duration
}

// runRTT is the -postgres-rtt benchmark.
func runRTT(rtts []time.Duration, d time.Duration, clients int, dbURL string) {
	defer runCleanups()
	if dbURL == "" {
		start := time.Now()
		s, err := pgserver.Start()
		if err != nil {
			fatalf("start PostgreSQL: %v", err)
		}
		atCleanup(s.Destroy)
		if dbURL, err = s.CreateDatabase("bench"); err != nil {
			fatalf("%v", err)
		}
		fmt.Printf("PostgreSQL: throwaway server in %s, port %d, started in %s\n", s.Dir(), s.Port(), time.Since(start).Round(time.Millisecond))
	}
	u, err := url.Parse(dbURL)
	if err != nil || u.Host == "" {
		fatalf("-postgres-rtt needs a postgres:// URL with a host: %q", dbURL)
	}
	proxy, err := pgproxy.Start(u.Host)
	if err != nil {
		fatalf("proxy: %v", err)
	}
	atCleanup(func() { _ = proxy.Close() })
	u.Host = proxy.Addr()
	cfg, err := pgxpool.ParseConfig(u.String())
	if err != nil {
		fatalf("%v", err)
	}
	ctx := context.Background()
	st, err := postgres.OpenConfig(ctx, cfg, postgres.Options{})
	if err != nil {
		fatalf("%v", err)
	}
	m, err := marketplace.New(st, marketplace.Options{})
	if err != nil {
		fatalf("start engine: %v", err)
	}
	atCleanup(func() { _ = m.Close(); _ = st.Close() })
	srv := serve(httpapi.New(m, httpapi.Config{OperatorToken: benchOperatorToken, Journal: journal.New(journal.DefaultSize)}))
	atCleanup(srv.Close)
	fmt.Printf("pool: %d connections for transactions, as many for reads (marketplaced's default); %d clients, %s per route and round-trip time\n",
		cfg.MaxConns, clients, d)

	routes := rttWorld(ctx, m, srv.URL, clients)
	probe, err := pgx.Connect(ctx, u.String())
	if err != nil {
		fatalf("%v", err)
	}
	atCleanup(func() { _ = probe.Close(context.Background()) })
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "round trip (measured)\troute\tround trips/request\tp50 alone\tp50 (%d clients)\tp99 (%d clients)\trequests/s\t\n", clients, clients)
	for _, rtt := range rtts {
		proxy.SetRoundTrip(rtt)
		name := fmt.Sprintf("%s (%s)", rtt, latency(measureRoundTrip(ctx, probe)))
		for _, r := range routes {
			res := rttLoad(proxy, r, clients, d)
			if res.failed > res.ok/100 {
				w.Flush()
				fatalf("%s at %s: %d of %d requests failed, first: %s", r.name, rtt, res.failed, res.ok+res.failed, res.first)
			}
			fmt.Fprintf(w, "%s\t%s\t%.1f\t%s\t%s\t%s\t%.0f\t\n", name, r.name, res.roundTrips,
				latency(res.alone), latency(res.p50), latency(res.p99), res.rate)
		}
	}
	w.Flush()
}

// measureRoundTrip returns the mean time of a SELECT 1 through the proxy
// on its own connection: the round trip the proxy really adds, beside the
// one it was set to (its delay is a sleep, which the Go runtime may end
// late by up to a millisecond on an idle machine).
func measureRoundTrip(ctx context.Context, c *pgx.Conn) time.Duration {
	const n = 200
	for range 10 {
		if _, err := c.Exec(ctx, "SELECT 1"); err != nil {
			fatalf("probe: %v", err)
		}
	}
	start := time.Now()
	for range n {
		if _, err := c.Exec(ctx, "SELECT 1"); err != nil {
			fatalf("probe: %v", err)
		}
	}
	return time.Since(start) / n
}

func latency(d time.Duration) string {
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}

// rttLoad drives r from n clients for d, after a few requests from each
// that prepare the statements on the pool's connections.
func rttLoad(p *pgproxy.Proxy, r rttRoute, n int, d time.Duration) rttResult {
	hc := newLoadClient(n)
	defer hc.CloseIdleConnections()
	var wg sync.WaitGroup
	for c := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				_ = r.do(c, hc)
			}
		}()
	}
	wg.Wait()
	var alone []time.Duration
	for end := time.Now().Add(d / 4); time.Now().Before(end); {
		t0 := time.Now()
		if err := r.do(0, hc); err == nil {
			alone = append(alone, time.Since(t0))
		}
	}
	lat := make([][]time.Duration, n)
	var mu sync.Mutex
	var res rttResult
	rt0 := p.RoundTrips()
	start := time.Now()
	deadline := start.Add(d)
	for c := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				t0 := time.Now()
				err := r.do(c, hc)
				if err != nil {
					mu.Lock()
					if res.failed++; res.first == "" {
						res.first = err.Error()
					}
					mu.Unlock()
					continue
				}
				lat[c] = append(lat[c], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	trips := p.RoundTrips() - rt0
	all := slices.Concat(lat...)
	slices.Sort(all)
	res.ok = int64(len(all))
	if res.ok == 0 {
		return res
	}
	res.rate = float64(res.ok) / elapsed.Seconds()
	res.p50 = all[len(all)/2]
	res.p99 = all[len(all)*99/100]
	// The failed requests' round trips are counted too: there are at
	// most 1% of them.
	res.roundTrips = float64(trips) / float64(res.ok+res.failed)
	if len(alone) > 0 {
		slices.Sort(alone)
		res.alone = alone[len(alone)/2]
	}
	return res
}

// rttWorld seeds what the routes read and returns the routes: each
// client reads the same records, and writes records of its own (a buyer
// per client asking, a user product per client for PUT stock, items per
// client to buy), so that no two clients conflict.
func rttWorld(ctx context.Context, m *marketplace.Marketplace, base string, clients int) []rttRoute {
	asks := newAskWorld(ctx, m, clients)
	seller, err := newSeller(ctx, m, "BENCH_RTT_SELLER")
	if err != nil {
		fatalf("seller: %v", err)
	}
	item, err := seller.publish(ctx, m, 0)
	if err != nil {
		fatalf("publish: %v", err)
	}
	hc := &http.Client{Timeout: requestTimeout}
	defer hc.CloseIdleConnections()
	// 20 questions on the item searched, and 60 orders of the seller
	// searched: a page of 50.
	for i := range 20 {
		if _, _, err := send(hc, askRequest(base, asks.Tokens[i%len(asks.Tokens)], item.ID, i), http.StatusCreated); err != nil {
			fatalf("%v", err)
		}
	}
	ordered, err := m.Stock.PublishMultiOrigin(ctx, seller.id, stock.NewItem{
		Title: "Auriculares Sony WH-1000XM5 vendidos", CategoryID: "MLA1055", Price: money.FromInt(350000),
		ListingTypeID: "gold_special", CurrencyID: "ARS", Condition: "new", Channels: []string{"marketplace"},
		StockLocations: []stock.StockLocation{{StoreID: seller.store, Quantity: 100}},
	})
	if err != nil {
		fatalf("publish: %v", err)
	}
	for i := range 60 {
		if _, _, err := send(hc, buyRequest(base, asks.buyers[i%len(asks.buyers)], ordered.ID), http.StatusCreated); err != nil {
			fatalf("%v", err)
		}
	}
	// A user product per client for PUT stock, with its x-version.
	type up struct{ id, version string }
	ups := make([]up, clients)
	for c := range ups {
		p, err := seller.publish(ctx, m, 10+c)
		if err != nil {
			fatalf("publish: %v", err)
		}
		res, _, err := send(hc, authed("GET", base+"/user-products/"+p.UserProductID+"/stock", seller.token, ""), http.StatusOK)
		if err != nil {
			fatalf("%v", err)
		}
		ups[c] = up{id: p.UserProductID, version: res.Header.Get("x-version")}
	}
	buys := newBuyWorld(ctx, m, clients)
	n := make([]int, clients)
	get := func(path, token string) func(int, *http.Client) error {
		return func(_ int, hc *http.Client) error {
			_, _, err := send(hc, authed("GET", base+path, token, ""), http.StatusOK)
			return err
		}
	}
	reader := asks.Tokens[0]
	return []rttRoute{
		{"GET /items/{id}", get("/items/"+item.ID, reader)},
		{"GET /users/{id}", get(fmt.Sprintf("/users/%d", seller.id), reader)},
		{"GET /user-products/{id}/stock", get("/user-products/"+item.UserProductID+"/stock", seller.token)},
		{"GET /questions/search?item=", get("/questions/search?item="+item.ID, reader)},
		{"GET /orders/search?seller=&limit=50", get(fmt.Sprintf("/orders/search?seller=%d&limit=50", seller.id), seller.token)},
		{"POST /questions", func(c int, hc *http.Client) error {
			n[c]++
			_, _, err := send(hc, askRequest(base, asks.Tokens[c], asks.Items[(c+n[c])%len(asks.Items)], n[c]), http.StatusCreated)
			return err
		}},
		{"PUT stock with x-version", func(c int, hc *http.Client) error {
			n[c]++
			u := &ups[c]
			body := fmt.Sprintf(`{"locations":[{"store_id":%q,"quantity":%d}]}`, seller.store, n[c]%100)
			req := authed("PUT", base+"/user-products/"+u.id+"/stock/type/seller_warehouse", seller.token, body)
			req.Header.Set("x-version", u.version)
			res, _, err := send(hc, req, http.StatusOK)
			if err != nil {
				return err
			}
			u.version = res.Header.Get("x-version")
			return nil
		}},
		{"POST /operator/orders (paid)", func(c int, hc *http.Client) error {
			n[c]++
			items := buys.items[c]
			_, _, err := send(hc, buyRequest(base, buys.buyers[c], items[n[c]%len(items)]), http.StatusCreated)
			return err
		}},
	}
}

// authed is a request with the token and, when there is one, a JSON body.
func authed(method, target, token, body string) *http.Request {
	req, _ := http.NewRequest(method, target, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return req
}
