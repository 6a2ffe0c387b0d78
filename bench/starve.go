package main

// The pgstarve phase: do reads starve writes? Two servers on one PostgreSQL
// database; a stream of asks (POST /questions, -starve-askers clients,
// each waiting for its answer before it sends the next), first alone, then
// beside -starve-searchers clients that loop on the costliest question
// searches the API offers (deep offsets, divisions past the tallies, mixed
// sort directions) on an item and a seller that hold -starve-questions
// questions, then alone again. It prints the asks' latencies (median, p99)
// in each turn and the ratio of their p99 beside the searches to their p99
// alone (target: at most 3).

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/marketplace/marketplace/questions"
)

// latencies is what one turn of the asks measured.
type latencies struct {
	all    []time.Duration
	failed int64
}

func (l latencies) quantile(q float64) time.Duration {
	if len(l.all) == 0 {
		return 0
	}
	s := slices.Clone(l.all)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

func (l latencies) String() string {
	return fmt.Sprintf("%d asks, %d failed, median %s, p99 %s", len(l.all), l.failed,
		l.quantile(0.5).Round(10*time.Microsecond), l.quantile(0.99).Round(10*time.Microsecond))
}

// askStream runs n closed-loop askers against urls for d and returns every
// ask's latency.
func askStream(urls []string, w askWorld, n int, d time.Duration) latencies {
	hc := newLoadClient(n)
	defer hc.CloseIdleConnections()
	var mu sync.Mutex
	var out latencies
	var failed atomic.Int64
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for c := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for i := 0; time.Now().Before(deadline); i++ {
				start := time.Now()
				// Items of their own, apart from the searched one.
				item := w.Items[1+(c+i)%(len(w.Items)-1)]
				if _, _, err := send(hc, askRequest(urls[(c+i)%len(urls)], w.Tokens[c%len(w.Tokens)], item, i), http.StatusCreated); err != nil {
					failed.Add(1)
					continue
				}
				mine = append(mine, time.Since(start))
			}
			mu.Lock()
			out.all = append(out.all, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	out.failed = failed.Load()
	return out
}

// worstSearches are the costliest searches of the question search, as paths
// with the token they are sent with.
func worstSearches(w askWorld, seller int64) [][2]string {
	item := url.QueryEscape(w.Items[0])
	s := fmt.Sprint(seller)
	return [][2]string{
		{"/questions/search?item=" + item + "&limit=50&offset=950", ""},
		{"/questions/search?item=" + item + "&totalDivisions=1000&division=7&limit=50", ""},
		{"/questions/search?item=" + item + "&sort_fields=from_id,date_created&sort_types=ASC,DESC&limit=50&offset=950", ""},
		{"/questions/search?seller_id=" + s + "&sort_fields=item_id,from_id,date_created&sort_types=DESC,ASC,DESC&limit=50&offset=950", w.seller},
		{"/questions/search?seller_id=" + s + "&totalDivisions=1000&division=999&limit=50", w.seller},
		{"/questions/search?seller_id=" + s + "&status=UNANSWERED&sort_fields=date_created&sort_types=ASC&limit=50&offset=950", w.seller},
	}
}

// searchLoop runs n searchers until stop is closed, and reports how many
// searches were answered 200 and how many otherwise (the first of them).
func searchLoop(urls []string, searches [][2]string, n int, stop <-chan struct{}) (ok, other *atomic.Int64, first *atomic.Value, done func()) {
	ok, other, first = new(atomic.Int64), new(atomic.Int64), new(atomic.Value)
	hc := newLoadClient(n)
	var wg sync.WaitGroup
	for c := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := c; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				s := searches[i%len(searches)]
				req, _ := http.NewRequest("GET", urls[i%len(urls)]+s[0], nil)
				if s[1] != "" {
					req.Header.Set("Authorization", "Bearer "+s[1])
				}
				if _, _, err := send(hc, req, http.StatusOK); err != nil {
					other.Add(1)
					first.CompareAndSwap(nil, err.Error())
					continue
				}
				ok.Add(1)
			}
		}()
	}
	return ok, other, first, func() { wg.Wait(); hc.CloseIdleConnections() }
}

// starvePostgres is the pgstarve phase.
func (b *writeBench) starvePostgres() {
	p := b.postgresTarget()
	t := newPGTrace()
	var engines []*engine
	var urls []string
	for range 2 {
		e := b.startAsServer(b.openPostgres(p, t))
		engines = append(engines, e)
		urls = append(urls, e.srv.URL)
	}
	defer func() {
		for _, e := range engines {
			e.stop()
		}
	}()
	t.waitConnected(2 * int64(b.poolSize(p)))
	ctx := context.Background()
	m := engines[0].m
	w := newAskWorld(ctx, m, max(b.cfg.starveAskers, 2)+1)
	for _, e := range engines {
		askOnce(e, w)
	}
	seller, err := m.Accounts.Authenticate(ctx, w.seller)
	if err != nil {
		fatalf("seller: %v", err)
	}
	// The searched item and seller hold the questions: asked through the
	// engine by every buyer in turn, concurrently.
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for c := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(b.cfg.starveQuestions) {
					return
				}
				k := (c + int(i)) % len(w.buyers)
				if _, err := m.Questions.Ask(ctx, w.buyers[k], questions.AskInput{Text: fmt.Sprintf("Does it come with a case? (%d)", i), ItemID: w.Items[0]}); err != nil {
					fatalf("preload ask: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	fmt.Printf("pgstarve: %d questions on %s (seller %d) in %s; pools of %d connections per server (-pg-conns) for writes and for reads\n",
		b.cfg.starveQuestions, w.Items[0], seller, time.Since(start).Round(time.Millisecond), b.poolSize(p))

	searches := worstSearches(w, seller)
	// Each search once, to check that it is answered.
	for _, s := range searches {
		req, _ := http.NewRequest("GET", urls[0]+s[0], nil)
		if s[1] != "" {
			req.Header.Set("Authorization", "Bearer "+s[1])
		}
		t0 := time.Now()
		if _, _, err := send(http.DefaultClient, req, http.StatusOK); err != nil {
			fatalf("search: %v", err)
		}
		fmt.Printf("pgstarve: search %s: %s alone\n", s[0], time.Since(t0).Round(10*time.Microsecond))
	}

	d := b.cfg.duration
	alone1 := askStream(urls, w, b.cfg.starveAskers, d)
	fmt.Printf("pgstarve: asks alone: %s\n", alone1)
	stop := make(chan struct{})
	ok, other, first, done := searchLoop(urls, searches, b.cfg.starveSearchers, stop)
	beside := askStream(urls, w, b.cfg.starveAskers, d)
	close(stop)
	done()
	fmt.Printf("pgstarve: asks beside %d searchers: %s; searches answered 200: %d (%.0f/s), otherwise: %d\n",
		b.cfg.starveSearchers, beside, ok.Load(), float64(ok.Load())/d.Seconds(), other.Load())
	if f := first.Load(); f != nil {
		fmt.Printf("pgstarve: first search not answered 200: %s\n", f)
	}
	alone2 := askStream(urls, w, b.cfg.starveAskers, d)
	fmt.Printf("pgstarve: asks alone again: %s\n", alone2)
	base := (alone1.quantile(0.99) + alone2.quantile(0.99)) / 2
	ratio := float64(beside.quantile(0.99)) / float64(base)
	verdict := "within"
	if ratio > 3 {
		verdict = "NOT within"
	}
	fmt.Printf("pgstarve: p99 of asks beside the searches / alone (mean of the two turns): %s / %s = %.2f, %s the target of 3\n",
		beside.quantile(0.99).Round(10*time.Microsecond), base.Round(10*time.Microsecond), ratio, verdict)
}
