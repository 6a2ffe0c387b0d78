package httpapi_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/marketplace/marketplace/httpapi"
	"github.com/marketplace/marketplace/journal"
)

// benchItem is an answer of the size of a public item read.
const benchItem = `{"id":"MLA1","site_id":"MLA","title":"Real item","seller_id":1234567,"category_id":"MLA1055","price":1500.5,"currency_id":"ARS","available_quantity":10,"sold_quantity":3,"buying_mode":"buy_it_now","listing_type_id":"gold_special","condition":"new","permalink":"https://articulo.mercadolibre.com.ar/MLA-1","status":"active","tags":["good_quality_picture"]}`

// BenchmarkForward measures what forwarding adds to a request: one local
// upstream asked directly and through the server (a route the engine
// does not emulate, no stub, the journal on, as a server runs), in the
// same run. "sequential" alternates one request of each and reports the
// p50 of both and their difference, the overhead per request, and the rate
// through the server as a part of the direct rate; "parallel" sends as many
// at once from 8 clients, directly then through the server. "bodies" keeps
// the journal's bodies, and so captures every exchange for a snapshot;
// "upstream-1ms" has the upstream take a millisecond, still far quicker
// than the real API.
//
//	go test -run '^$' -bench BenchmarkForward -benchtime 2000x ./httpapi/
func BenchmarkForward(b *testing.B) {
	for _, c := range []struct {
		name   string
		delay  time.Duration
		bodies bool
	}{{"", 0, false}, {"bodies/", 0, true}, {"upstream-1ms/", time.Millisecond, false}} {
		b.Run(c.name+"sequential", func(b *testing.B) {
			direct, forwarded, get := forwardBench(b, c.delay, c.bodies)
			ds := make([]time.Duration, 0, b.N)
			fs := make([]time.Duration, 0, b.N)
			for b.Loop() {
				ds = append(ds, get(direct))
				fs = append(fs, get(forwarded))
			}
			d, f := p50(ds), p50(fs)
			b.ReportMetric(float64(d.Microseconds()), "direct-p50-µs")
			b.ReportMetric(float64(f.Microseconds()), "forwarded-p50-µs")
			b.ReportMetric(float64((f - d).Microseconds()), "overhead-p50-µs")
			b.ReportMetric(float64(sum(ds))/float64(sum(fs)), "rate-ratio")
		})
		b.Run(c.name+"parallel", func(b *testing.B) {
			direct, forwarded, get := forwardBench(b, c.delay, c.bodies)
			const clients = 8
			run := func(base string, n int) time.Duration {
				start := time.Now()
				var wg sync.WaitGroup
				for i := range clients {
					wg.Go(func() {
						for j := i; j < n; j += clients {
							get(base)
						}
					})
				}
				wg.Wait()
				return time.Since(start)
			}
			var d, f time.Duration
			for b.Loop() {
				d += run(direct, 64)
				f += run(forwarded, 64)
			}
			b.ReportMetric(float64(d)/float64(f), "rate-ratio")
		})
	}
}

// forwardBench starts a local upstream that answers benchItem after delay
// and a server that forwards to it, opens their connections, and returns
// their URLs and a request to either.
func forwardBench(b *testing.B, delay time.Duration, bodies bool) (direct, forwarded string, get func(string) time.Duration) {
	b.Helper()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if delay > 0 {
			time.Sleep(delay)
		}
		w.Header().Set("Content-Type", "application/json;charset=UTF-8")
		w.Header().Set("X-Request-Id", "f3a9c2d1-0b7e-4c55-9d1e-2f8a6b4c3e21")
		_, _ = io.WriteString(w, benchItem)
	}))
	b.Cleanup(api.Close)
	cfg := httpapi.Config{Upstream: mustURL(b, api.URL)}
	if bodies {
		cfg.Journal = journal.NewWithBodies(journal.DefaultSize, journal.Bodies{})
	}
	ps := newProxyServer(b, cfg)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.Cleanup(client.CloseIdleConnections)
	const target = "/claims/search?status=opened&offset=0&limit=30"
	get = func(base string) time.Duration {
		start := time.Now()
		req, _ := http.NewRequest("GET", base+target, nil)
		req.Header.Set("Authorization", "Bearer "+realUserToken)
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || n != int64(len(benchItem)) {
			b.Fatalf("%s: %d, %d bytes", base, res.StatusCode, n)
		}
		return time.Since(start)
	}
	for range 200 { // connections open, code paths warm
		get(api.URL)
		get(ps.url)
	}
	return api.URL, ps.url, get
}

func p50(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func sum(ds []time.Duration) time.Duration {
	var t time.Duration
	for _, d := range ds {
		t += d
	}
	return t
}
