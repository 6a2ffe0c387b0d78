package notify_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/badger"
	"github.com/marketplace/marketplace/storage/memory"
)

const benchEvents = 10000

// pacedWriters is how many writers commit the paced events.
const pacedWriters = 8

// latencyReceiver records when each /questions/<n> arrived.
type latencyReceiver struct {
	*httptest.Server
	mu      sync.Mutex
	arrived []time.Time
	count   int
	done    chan struct{}
}

func newLatencyReceiver(tb testing.TB) *latencyReceiver {
	r := &latencyReceiver{arrived: make([]time.Time, benchEvents+1), done: make(chan struct{})}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		now := time.Now()
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(req.Body)
		body := buf.String()
		i := strings.Index(body, `"/questions/`)
		n, _ := strconv.Atoi(body[i+len(`"/questions/`) : i+len(`"/questions/`)+strings.IndexByte(body[i+len(`"/questions/`):], '"')])
		r.mu.Lock()
		if r.arrived[n].IsZero() {
			r.arrived[n] = now
			r.count++
			if r.count == benchEvents {
				close(r.done)
			}
		}
		r.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	tb.Cleanup(r.Close)
	return r
}

// BenchmarkDelivery measures the delivery of 10,000 question events to a
// local receiver that answers 200, on each backend:
//
//   - burst: the 10,000 events are committed first (64 writers, each event in
//     its own transaction as a question change does), then the delivery loop
//     starts; events/s is 10,000 over the time from the loop's start to the
//     last POST, the rate at which the engine works off a backlog.
//   - paced-2000-per-s: the loop runs while each event is committed in its own
//     transaction at its time, 2,000 per second, by 8 writers (so that a slow
//     commit does not hold the next ones back; when all 8 are busy the next
//     event waits, so the writers never ask more of the store than it can
//     give); p50-ms and p99-ms are the latency from the commit of the change
//     to the arrival of its POST.
func BenchmarkDelivery(b *testing.B) {
	for _, c := range []struct {
		backend string
		rate    int // events appended per second; 0: a backlog
	}{{"memory", 0}, {"memory", 2000}, {"badger", 0}, {"badger", 2000}} {
		name := c.backend + "/burst"
		if c.rate > 0 {
			name = fmt.Sprintf("%s/paced-%d-per-s", c.backend, c.rate)
		}
		b.Run(name, func(b *testing.B) {
			var p50s, p99s, rates []float64
			for i := 0; i < b.N; i++ {
				p50, p99, rate := runDeliveryBench(b, c.backend, c.rate)
				p50s, p99s, rates = append(p50s, p50), append(p99s, p99), append(rates, rate)
			}
			b.ReportMetric(median(rates), "events/s")
			b.ReportMetric(median(p50s), "p50-ms")
			b.ReportMetric(median(p99s), "p99-ms")
		})
	}
}

func runDeliveryBench(b *testing.B, backend string, pace int) (p50, p99, rate float64) {
	b.StopTimer()
	opts := marketplace.Options{Clock: clock.Wall{}, Notifications: notify.Options{AllowPrivateCallbacks: true}}
	var m *marketplace.Marketplace
	var err error
	if backend == "badger" {
		m, err = marketplace.Open(context.Background(), badger.Dir(b.TempDir()), opts)
	} else {
		m, err = marketplace.New(memory.New(), opts)
	}
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	rcv := newLatencyReceiver(b)
	e := &env{t: b, ctx: context.Background(), m: m}
	seller := e.mustUser()
	e.mustApp(seller, rcv.URL)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	committed := make([]time.Time, benchEvents+1)
	appendEvent := func(n int) {
		err := m.Store().Update(ctx, func(tx storage.Tx) error {
			_, err := notify.Append(ctx, m.Store(), tx, notify.Event{Topic: notify.TopicQuestions, UserID: seller,
				Resource: fmt.Sprintf("/questions/%d", n), Action: "created", Received: time.Now()})
			return err
		})
		if err != nil {
			b.Error(err)
		}
		committed[n] = time.Now()
	}
	var begin time.Time
	if pace == 0 {
		next := make(chan int, benchEvents)
		for n := 1; n <= benchEvents; n++ {
			next <- n
		}
		close(next)
		var wg sync.WaitGroup
		for w := 0; w < 64; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := range next {
					appendEvent(n)
				}
			}()
		}
		wg.Wait()
		b.StartTimer()
		begin = time.Now()
		go func() { _ = m.Start(ctx) }()
	} else {
		go func() { _ = m.Start(ctx) }()
		b.StartTimer()
		begin = time.Now()
		next := make(chan int)
		var wg sync.WaitGroup
		for w := 0; w < pacedWriters; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := range next {
					appendEvent(n)
				}
			}()
		}
		for n := 1; n <= benchEvents; n++ {
			time.Sleep(time.Until(begin.Add(time.Duration(n) * time.Second / time.Duration(pace))))
			next <- n
		}
		close(next)
		wg.Wait()
	}
	if b.Failed() {
		b.FailNow()
	}
	select {
	case <-rcv.done:
	case <-time.After(2 * time.Minute):
		b.Fatalf("only %d of %d delivered", rcv.count, benchEvents)
	}
	elapsed := time.Since(begin)
	b.StopTimer()
	lat := make([]float64, 0, benchEvents)
	for n := 1; n <= benchEvents; n++ {
		// A POST may arrive before its writer has noted the commit.
		lat = append(lat, max(0, float64(rcv.arrived[n].Sub(committed[n]).Microseconds())/1000))
	}
	slices.Sort(lat)
	return lat[len(lat)/2], lat[len(lat)*99/100], benchEvents / elapsed.Seconds()
}

// BenchmarkDeliveryBaseline POSTs the same 10,000 bodies straight to the
// same kind of receiver with the same concurrency, without storage: the
// bound a delivery engine can approach on this machine.
func BenchmarkDeliveryBaseline(b *testing.B) {
	var rates []float64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		rcv := newLatencyReceiver(b)
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
		bodies := make(chan int, benchEvents)
		for n := 1; n <= benchEvents; n++ {
			bodies <- n
		}
		close(bodies)
		b.StartTimer()
		begin := time.Now()
		var wg sync.WaitGroup
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := range bodies {
					body := fmt.Sprintf(`{"_id":"x","topic":"questions","resource":"/questions/%d","user_id":1,"application_id":1,"attempts":1,"sent":"2026-03-04T15:00:00.000Z","received":"2026-03-04T15:00:00.000Z"}`, n)
					resp, err := client.Post(rcv.URL, "application/json", strings.NewReader(body))
					if err != nil {
						b.Error(err)
						return
					}
					resp.Body.Close()
				}
			}()
		}
		wg.Wait()
		<-rcv.done
		rates = append(rates, benchEvents/time.Since(begin).Seconds())
		b.StopTimer()
	}
	b.ReportMetric(median(rates), "events/s")
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
