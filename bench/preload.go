package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/questions"
	"github.com/marketplace/marketplace/storage/badger"
)

// preloaded describes the store cached in -preload-dir.
type preloaded struct {
	Questions int      `json:"questions"`
	Items     int      `json:"items"`
	Sellers   int      `json:"sellers"`
	Buyers    int      `json:"buyers"`
	Took      string   `json:"took"`
	World     askWorld `json:"world"`
}

// itemsPerSeller is how many of the preloaded items each seller publishes.
const itemsPerSeller = 1000

// preloadWorkers is how many goroutines load the store: enough for Badger to
// batch their synced commits.
const preloadWorkers = 128

// askPreloaded measures the ask on a copy of the preloaded store, against
// the rate on an empty store measured in the same run.
func (b *writeBench) askPreloaded(empty float64) row {
	p := b.ensurePreloaded()
	fmt.Printf("preloaded store: %d questions, %d items, %d sellers, %d buyers (built in %s)\n",
		p.Questions, p.Items, p.Sellers, p.Buyers, p.Took)
	e := b.startPreloaded("ask")
	defer e.stop()
	c0 := e.conflicts()
	r := checked("ask, Badger, preloaded", b.askLoad(e.srv.URL, p.World, b.cfg.duration))
	b.printStats("ask, Badger, preloaded", e)
	return row{name: fmt.Sprintf("POST /questions, %d questions / empty", p.Questions), full: r.rate, base: empty,
		target: 0.80, conflicts: strconv.FormatUint(e.conflicts()-c0, 10)}
}

// startPreloaded serves a fresh copy of the preloaded store; the copy is
// removed when the engine stops.
func (b *writeBench) startPreloaded(name string) *engine {
	start := time.Now()
	dir := b.folder("preloaded-" + name)
	if err := copyDir(filepath.Join(b.cfg.preloadDir, "db"), dir); err != nil {
		fatalf("copy the preloaded store: %v", err)
	}
	st, err := badger.Open(dir, badger.Options{})
	if err != nil {
		fatalf("%v", err)
	}
	lsm, vlog := st.DB().Size()
	fmt.Printf("%s: preloaded store copied and opened in %s, LSM %s, value log %s\n",
		name, time.Since(start).Round(time.Millisecond), mib(lsm), mib(vlog))
	e := b.start(st)
	stop := e.stop
	e.stop = func() {
		stop()
		_ = os.RemoveAll(dir)
	}
	return e
}

// preloadLoad is a write load that the preload phase runs on an empty store
// and on a copy of the preloaded one. setup builds on the engine what the
// load needs and returns the load.
type preloadLoad struct {
	name  string // in the progress lines
	route string // in the table
	setup func(ctx context.Context, e *engine) func(d time.Duration) result
}

func (b *writeBench) preloadLoads() []preloadLoad {
	return []preloadLoad{
		{"publish", "POST /items/multiwarehouse", b.publishSetup},
		{"PUT stock", "PUT /user-products/{id}/stock", b.stockSetup},
		{"answer", "POST /answers", b.answerSetup},
	}
}

// comparePreloaded runs l on an empty Badger store, then on a fresh copy of
// the preloaded store, and compares the rates and the CPU per request.
func (b *writeBench) comparePreloaded(p preloaded, l preloadLoad) row {
	ctx := context.Background()
	measure := func(e *engine, store string) (result, uint64) {
		defer e.stop()
		run := l.setup(ctx, e)
		c0 := e.conflicts()
		name := fmt.Sprintf("%s, Badger, %s", l.name, store)
		r := checked(name, run(b.cfg.duration))
		b.printStats(name, e)
		return r, e.conflicts() - c0
	}
	empty, _ := measure(b.startBadger(l.name+"-empty"), "empty")
	full, conflicts := measure(b.startPreloaded(l.name), "preloaded")
	return row{name: fmt.Sprintf("%s, %d questions / empty", l.route, p.Questions), full: full.rate, base: empty.rate,
		target: 0.80, conflicts: strconv.FormatUint(conflicts, 10),
		note: fmt.Sprintf("CPU per request %s on the empty store, %s on the preloaded one (%.2fx)",
			empty.cpu.Round(time.Microsecond), full.cpu.Round(time.Microsecond), float64(full.cpu)/float64(empty.cpu))}
}

// publishSetup creates a seller on e and returns the publish load: every
// client publishes items with one stock location in the seller's store.
func (b *writeBench) publishSetup(ctx context.Context, e *engine) func(d time.Duration) result {
	s, err := newSeller(ctx, e.m, "BENCH_PUBLISH_SELLER")
	if err != nil {
		fatalf("seller: %v", err)
	}
	n := make([]int, b.cfg.clients)
	return func(d time.Duration) result {
		return load(b.cfg.clients, d, func(c int, hc *http.Client) error {
			n[c]++
			body := fmt.Sprintf(`{"title":"Auriculares Sony WH-1000XM5 %d-%d","category_id":"MLA1055","price":350000,`+
				`"listing_type_id":"gold_special","currency_id":"ARS","condition":"new","channels":["marketplace"],`+
				`"stock_locations":[{"store_id":%q,"quantity":5}]}`, c, n[c], s.store)
			req, _ := http.NewRequest("POST", e.srv.URL+"/items/multiwarehouse", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+s.token)
			req.Header.Set("Content-Type", "application/json")
			_, _, err := send(hc, req, http.StatusCreated)
			return err
		})
	}
}

// answersPerSecond is how many answers per second each answer client may
// send before it runs out of questions (a client that runs out fails the
// phase); at least 400 questions per client are asked beforehand.
const answersPerSecond = 160

// answerSetup creates an ask world on e, asks enough questions through the
// service for the load's duration, and returns the answer load: the seller
// answers them, each client its own questions.
func (b *writeBench) answerSetup(ctx context.Context, e *engine) func(d time.Duration) result {
	w := newAskWorld(ctx, e.m, b.cfg.clients)
	clients := b.cfg.clients
	perClient := max(400, int(answersPerSecond*b.cfg.duration.Seconds()))
	ids := make([][]int64, clients)
	for c := range ids {
		ids[c] = make([]int64, perClient)
	}
	// Question i belongs to client i % clients, asked by that client's
	// buyer on its item.
	err := parallel("questions to answer", clients*perClient, func(i int) error {
		c := i % clients
		q, err := e.m.Questions.Ask(ctx, w.buyers[c], questions.AskInput{
			Text: fmt.Sprintf("Does it come with a case? (%d)", i), ItemID: w.Items[c]})
		ids[c][i/clients] = q.ID
		return err
	})
	if err != nil {
		fatalf("answer: %v", err)
	}
	n := make([]int, clients)
	return func(d time.Duration) result {
		return load(clients, d, func(c int, hc *http.Client) error {
			if n[c] == perClient {
				return fmt.Errorf("client %d answered its %d questions", c, perClient)
			}
			id := ids[c][n[c]]
			n[c]++
			body := fmt.Sprintf(`{"question_id":%d,"text":"Yes, it comes with a hard case. (%d)"}`, id, n[c])
			req, _ := http.NewRequest("POST", e.srv.URL+"/answers", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+w.seller)
			req.Header.Set("Content-Type", "application/json")
			_, _, err := send(hc, req, http.StatusOK)
			return err
		})
	}
}

// ensurePreloaded returns the preloaded store's description, building the
// store first when -preload-dir holds none of the requested size.
func (b *writeBench) ensurePreloaded() preloaded {
	c := b.cfg
	worldFile := filepath.Join(c.preloadDir, "world.json")
	if data, err := os.ReadFile(worldFile); err == nil {
		var p preloaded
		if err := json.Unmarshal(data, &p); err != nil {
			fatalf("read %s: %v", worldFile, err)
		}
		if p.Questions == c.preloadQuestions && p.Items == c.preloadItems && len(p.World.Tokens) >= c.clients {
			return p
		}
		fmt.Printf("preload: %s holds %d questions and %d items; building %d and %d\n",
			c.preloadDir, p.Questions, p.Items, c.preloadQuestions, c.preloadItems)
	}
	// A build cut short leaves no world.json: start it over.
	if err := os.Remove(worldFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		fatalf("%v", err)
	}
	dbDir := filepath.Join(c.preloadDir, "db")
	if err := os.RemoveAll(dbDir); err != nil {
		fatalf("%v", err)
	}
	p, err := b.buildPreloaded(dbDir)
	if err != nil {
		fatalf("preload: %v", err)
	}
	data, _ := json.MarshalIndent(p, "", "  ")
	if err := os.WriteFile(worldFile, data, 0o644); err != nil {
		fatalf("%v", err)
	}
	return p
}

// buildPreloaded loads the store through the engine's services: sellers
// with a stock-location store, items published by them, buyers, and
// questions asked by the buyers on the items, from many goroutines.
func (b *writeBench) buildPreloaded(dir string) (preloaded, error) {
	c := b.cfg
	ctx := context.Background()
	start := time.Now()
	st, err := badger.Open(dir, badger.Options{})
	if err != nil {
		return preloaded{}, err
	}
	ds := st
	m, err := marketplace.New(ds, marketplace.Options{})
	if err != nil {
		return preloaded{}, errors.Join(err, ds.Close())
	}
	// The background work runs as on a server that took these writes: the
	// outbox is dispatched as it fills.
	bg, stopBg := context.WithCancel(ctx)
	bgDone := make(chan struct{})
	go func() {
		defer close(bgDone)
		_ = m.Start(bg)
	}()
	p := preloaded{Questions: c.preloadQuestions, Items: max(c.preloadItems, c.clients)}
	p.Sellers = (p.Items + itemsPerSeller - 1) / itemsPerSeller
	p.Buyers = max(1000, c.clients)
	fmt.Printf("preload: building %d questions, %d items, %d sellers, %d buyers in %s\n", p.Questions, p.Items, p.Sellers, p.Buyers, dir)

	sellers := make([]sellerWorld, p.Sellers)
	buyers := make([]int64, p.Buyers)
	err = parallel("sellers", p.Sellers, func(i int) error {
		var err error
		sellers[i], err = newSeller(ctx, m, fmt.Sprintf("BENCH_SELLER_%d", i))
		return err
	})
	if err == nil {
		p.World.Tokens = make([]string, p.Buyers)
		err = parallel("buyers", p.Buyers, func(i int) error {
			var err error
			buyers[i], p.World.Tokens[i], err = newBuyer(ctx, m, fmt.Sprintf("BENCH_BUYER_%d", i))
			return err
		})
	}
	items := make([]string, p.Items)
	if err == nil {
		// Item i belongs to seller i % sellers, so seller 0 holds items
		// 0, sellers, 2*sellers, ...
		err = parallel("items", p.Items, func(i int) error {
			pub, err := sellers[i%p.Sellers].publish(ctx, m, i)
			items[i] = pub.ID
			return err
		})
	}
	if err == nil {
		for i := 0; i < p.Items && len(p.World.Items) < c.clients; i += p.Sellers {
			p.World.Items = append(p.World.Items, items[i])
		}
		err = parallel("questions", p.Questions, func(i int) error {
			// Spread over every item and buyer, in no particular order.
			item := items[(i*7919)%len(items)]
			buyer := buyers[(i*104729)%p.Buyers]
			_, err := m.Questions.Ask(ctx, buyer, questions.AskInput{Text: fmt.Sprintf("Does it come with a case? (%d)", i), ItemID: item})
			return err
		})
	}
	stopBg()
	<-bgDone
	if err == nil {
		t := time.Now()
		_, err = m.Notify.Process(ctx)
		fmt.Printf("preload: outbox drained in %s\n", time.Since(t).Round(time.Millisecond))
	}
	if err == nil {
		// The server refreshes the response times at once when no refresh
		// is stored; do it now, as a day-old server would have.
		t := time.Now()
		err = m.ResponseTimes.Refresh(ctx)
		fmt.Printf("preload: response times refreshed in %s\n", time.Since(t).Round(time.Millisecond))
	}
	err = errors.Join(err, m.Close(), ds.Close())
	p.World.Tokens = p.World.Tokens[:c.clients]
	p.Took = time.Since(start).Round(time.Second).String()
	fmt.Printf("preload: built in %s\n", p.Took)
	return p, err
}

// parallel runs fn(0..n-1) on preloadWorkers goroutines, printing progress
// every 10 seconds, and returns the first error.
func parallel(what string, n int, fn func(i int) error) error {
	var next, done atomic.Int64
	var failed atomic.Value
	start := time.Now()
	stop := make(chan struct{})
	go func() {
		t := time.NewTicker(10 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				d := done.Load()
				fmt.Printf("preload: %s %d/%d, %.0f/s\n", what, d, n, float64(d)/time.Since(start).Seconds())
			}
		}
	}()
	var wg sync.WaitGroup
	for range preloadWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for failed.Load() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					failed.Store(fmt.Errorf("%s %d: %w", what, i, err))
					return
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	close(stop)
	if err, ok := failed.Load().(error); ok {
		return err
	}
	fmt.Printf("preload: %d %s in %s (%.0f/s)\n", n, what, time.Since(start).Round(time.Millisecond), float64(n)/time.Since(start).Seconds())
	return nil
}
