package main

// The soak (-soak D): marketplaced, built from ./cmd/marketplaced and run as
// a process of its own on a Badger folder with its defaults (metrics on, the
// request log at level info, written to a file), is driven for D by
// soakAskers clients asking questions (POST /questions) on a few items of one
// seller and soakSearchers clients searching them (the seller's questions as
// the seller, an item's as the seller and anonymously, in turns). Every
// minute it prints the rates, the errors, the server's CPU per request and
// memory (its RSS from /proc, with the part of it not mapped from files,
// and its Go heap in use from /metrics), and the share of the machine's
// CPU its host took (steal, which on a shared virtual machine moves the rates
// without the server); at the end, the last minute's search rate over the
// first's, and how memory went. The questions
// grow by the asks all along: a search that read more than its page, or a
// server that kept what it served, would show here as a falling search rate
// or a rising memory.
//
//	go run ./bench -soak 10m
//
// With -soak-profile DIR the server serves pprof and the soak writes a CPU
// profile of seconds 30 to 50 of every minute into DIR, to set the first
// minute's beside the last's.
//
// Traffic goes only to 127.0.0.1; the run ends by itself after D, and the
// server and its folder are removed.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

const (
	soakAskers    = 4
	soakSearchers = 4
	soakItems     = 4
	soakMax       = 2 * time.Hour
	soakOperator  = "soak-operator-token-0123456789"
)

// soakCall sends a request with a JSON body (nil: none) and decodes the
// answer into out, failing unless its status is want.
func soakCall(hc *http.Client, method, url, token string, body any, want int, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	_, b, err := send(hc, req, want)
	if err != nil {
		return err
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// soakWorld is the seller, its items and the askers' tokens.
type soakWorld struct {
	seller      int64
	sellerToken string
	items       []string
	askers      []string
}

func newSoakWorld(hc *http.Client, base string) soakWorld {
	type user struct {
		ID    int64  `json:"id"`
		Token string `json:"access_token"`
	}
	var w soakWorld
	var seller user
	if err := soakCall(hc, "POST", base+"/operator/users", soakOperator,
		map[string]any{"nickname": "SOAK_SELLER", "site_id": "MLA"}, http.StatusCreated, &seller); err != nil {
		fatalf("seller: %v", err)
	}
	w.seller, w.sellerToken = seller.ID, seller.Token
	for i := range soakItems {
		var item struct {
			ID string `json:"id"`
		}
		if err := soakCall(hc, "POST", base+"/items", w.sellerToken, map[string]any{
			"title": fmt.Sprintf("Bicicleta rodado 29 %d", i), "category_id": "MLA1055", "price": 1500,
			"listing_type_id": "gold_special", "currency_id": "ARS", "condition": "new",
			"channels": []string{"marketplace"}, "available_quantity": 10,
		}, http.StatusCreated, &item); err != nil {
			fatalf("item: %v", err)
		}
		w.items = append(w.items, item.ID)
	}
	for i := range soakAskers {
		var u user
		if err := soakCall(hc, "POST", base+"/operator/users", soakOperator,
			map[string]any{"nickname": fmt.Sprintf("SOAK_ASKER_%d", i), "site_id": "MLA"}, http.StatusCreated, &u); err != nil {
			fatalf("asker: %v", err)
		}
		w.askers = append(w.askers, u.Token)
	}
	return w
}

// soakMinute is what one minute of the soak counted.
type soakMinute struct {
	asks, searches, errors int64
	rss, rssAnon, heap     int64
	cpu                    time.Duration
	steal                  float64
}

// runSoak runs the soak for d; with a profileDir it also writes a CPU
// profile of every minute there.
func runSoak(d time.Duration, profileDir string) {
	defer runCleanups()
	if d > soakMax {
		fatalf("-soak is capped at %s", soakMax)
	}
	s := startSoakServer(profileDir != "")
	hc := &http.Client{Timeout: requestTimeout, Transport: &http.Transport{MaxIdleConnsPerHost: soakAskers + soakSearchers + 1}}
	w := newSoakWorld(hc, s.base)
	fmt.Printf("soak: marketplaced on Badger (%s), %d askers on %d items of seller %d, %d searchers, for %s\n",
		s.dir, soakAskers, soakItems, w.seller, soakSearchers, d)

	var asks, searches, errors atomic.Int64
	var firstErr atomic.Value
	fail := func(err error) {
		errors.Add(1)
		firstErr.CompareAndSwap(nil, err.Error())
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if profileDir != "" {
		fmt.Printf("soak: a CPU profile of every minute into %s; pprof on %s\n", profileDir, s.pprof)
		go s.profileMinutes(ctx, profileDir, time.Now())
	}
	var wg sync.WaitGroup
	for c := range soakAskers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ctx.Err() == nil; n++ {
				item := w.items[(c+n)%len(w.items)]
				if _, _, err := send(hc, askRequest(s.base, w.askers[c], item, n), http.StatusCreated); err != nil {
					if ctx.Err() == nil {
						fail(err)
					}
					continue
				}
				asks.Add(1)
			}
		}()
	}
	// The searches in turns: the seller's questions, an item's as the
	// seller, the same item's anonymously.
	searchesOf := []struct{ path, token string }{
		{fmt.Sprintf("/questions/search?seller_id=%d&limit=50", w.seller), w.sellerToken},
		{"/questions/search?item=" + w.items[0] + "&limit=50", w.sellerToken},
		{"/questions/search?item=" + w.items[0] + "&limit=50", ""},
	}
	for c := range soakSearchers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := c; ctx.Err() == nil; n++ {
				sr := searchesOf[n%len(searchesOf)]
				var page struct {
					Total     int               `json:"total"`
					Questions []json.RawMessage `json:"questions"`
				}
				err := soakCall(hc, "GET", s.base+sr.path, sr.token, nil, http.StatusOK, &page)
				if err == nil && len(page.Questions) != min(50, page.Total) {
					err = fmt.Errorf("GET %s: %d questions of %d", sr.path, len(page.Questions), page.Total)
				}
				if err != nil {
					if ctx.Err() == nil {
						fail(err)
					}
					continue
				}
				searches.Add(1)
			}
		}()
	}

	var minutes []soakMinute
	tick := time.NewTicker(time.Minute)
	var lastAsks, lastSearches, lastErrors int64
	lastCPU, lastAt, lastTicks := s.cpu(), time.Now(), readMachineTicks()
	fmt.Println("minute  searches/s  asks/s  errors  server CPU per request  RSS (anonymous)  Go heap in use  steal")
	for done := false; !done; {
		select {
		case <-tick.C:
		case <-ctx.Done():
			done = true
		}
		a, sr, e := asks.Load(), searches.Load(), errors.Load()
		if done && len(minutes) > 0 && time.Since(lastAt) < 50*time.Second {
			break // a part-minute at the end is not a minute
		}
		lastAt = time.Now()
		cpu, ticks := s.cpu(), readMachineTicks()
		rss, rssAnon := s.rss()
		m := soakMinute{asks: a - lastAsks, searches: sr - lastSearches, errors: e - lastErrors, rss: rss, rssAnon: rssAnon, heap: s.heap(hc),
			cpu: cpu - lastCPU, steal: stealShare(lastTicks, ticks)}
		lastAsks, lastSearches, lastErrors, lastCPU, lastTicks = a, sr, e, cpu, ticks
		minutes = append(minutes, m)
		fmt.Printf("%6d  %10.1f  %6.1f  %6d  %s  %s (%s)  %s  %.0f%%\n", len(minutes), float64(m.searches)/60, float64(m.asks)/60, m.errors,
			(m.cpu / time.Duration(max(m.asks+m.searches, 1))).Round(time.Microsecond), mib(m.rss), mib(m.rssAnon), mib(m.heap), 100*m.steal)
	}
	tick.Stop()
	wg.Wait()
	s.stop()

	first, last := minutes[0], minutes[len(minutes)-1]
	fmt.Printf("asks: %d, searches: %d, errors: %d", asks.Load(), searches.Load(), errors.Load())
	if e, ok := firstErr.Load().(string); ok {
		fmt.Printf(" (first: %s)", e)
	}
	fmt.Println()
	fmt.Printf("last minute's search rate / first's: %.2f (target at least 0.8)\n", float64(last.searches)/float64(max(first.searches, 1)))
	if a, b, ok := quietEnds(minutes); ok && (a > 0 || b < len(minutes)-1) {
		fmt.Printf("the same for the first and last minutes whose steal was under %.0f%% (%d and %d): %.2f\n", 100*quietSteal, a+1, b+1,
			float64(minutes[b].searches)/float64(max(minutes[a].searches, 1)))
	}
	perRequest := func(m soakMinute) float64 { return float64(m.cpu) / float64(max(m.asks+m.searches, 1)) }
	fmt.Printf("server CPU per request, first minute / last: %.2f (the same work: 1)\n", perRequest(first)/perRequest(last))
	rssSlope, heapSlope := slope(minutes, func(m soakMinute) int64 { return m.rss }), slope(minutes, func(m soakMinute) int64 { return m.heap })
	anonSlope := slope(minutes, func(m soakMinute) int64 { return m.rssAnon })
	fmt.Printf("RSS: %s in the first minute, %s in the last, %+.1f MiB a minute (least squares)\n", mib(first.rss), mib(last.rss), rssSlope/(1<<20))
	fmt.Printf("RSS not of files: %s in the first minute, %s in the last, %+.1f MiB a minute (least squares)\n", mib(first.rssAnon), mib(last.rssAnon), anonSlope/(1<<20))
	fmt.Printf("Go heap in use: %s in the first minute, %s in the last, %+.1f MiB a minute (least squares)\n", mib(first.heap), mib(last.heap), heapSlope/(1<<20))
}

// quietSteal is the share of the machine's CPU taken by its host under
// which a minute's rates are the server's and the soak's own.
const quietSteal = 0.05

// quietEnds returns the first and the last of the minutes whose steal was
// under quietSteal; ok is false unless there are two.
func quietEnds(ms []soakMinute) (first, last int, ok bool) {
	first, last = -1, -1
	for i, m := range ms {
		if m.steal < quietSteal {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	return first, last, first >= 0 && last > first
}

// slope is the least-squares slope of v over the minutes, per minute.
func slope(ms []soakMinute, v func(soakMinute) int64) float64 {
	n := float64(len(ms))
	if n < 2 {
		return math.NaN()
	}
	var sx, sy, sxx, sxy float64
	for i, m := range ms {
		x, y := float64(i), float64(v(m))
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	return (n*sxy - sx*sy) / (n*sxx - sx*sx)
}
