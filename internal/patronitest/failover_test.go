package patronitest

import (
	"bufio"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/marketplace/marketplace"
)

// loadFor is how long the writes run; the primary is killed at killAt and
// switched over at switchAt, or once the cluster is healthy again.
const (
	loadFor  = 60 * time.Second
	killAt   = 12 * time.Second
	switchAt = 35 * time.Second
)

// The purchases take units of purchaseItems items of purchaseUnits units
// each (10 in one store, the rest in the other), one item after another,
// so that the last units of each are raced for.
const (
	purchaseItems = 60
	purchaseUnits = 16
)

func TestFailover_ThreeServersOnAPatroniClusterLoseNoAcknowledgedWriteWhenThePrimaryIsKilledOrSwitchedOver(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a three-node Patroni cluster and writes through three servers for a minute")
	}
	tools(t)
	setup := time.Now()
	type build struct {
		bin string
		err error
	}
	built := make(chan build, 1)
	go func() {
		// The build overlaps the cluster's bootstrap.
		bin, err := buildServer(t.TempDir())
		built <- build{bin, err}
	}()
	c := startCluster(t)
	b := <-built
	if b.err != nil {
		t.Fatal(b.err)
	}
	bin := b.bin
	t.Logf("the cluster is healthy and the server built after %.1fs", time.Since(setup).Seconds())
	servers := startServers(t, bin, c.URL(), 3)
	w := newWorld(t, servers)
	t.Logf("the servers and their items are ready after %.1fs", time.Since(setup).Seconds())

	l := newLoad(t, w)
	l.start()
	begin := time.Now()
	sleepUntil(begin.Add(killAt))
	killed := c.killPrimary()
	killTime := time.Now()
	t.Logf("+%.1fs: kill -9 of the postmaster of %s, the leader", killTime.Sub(begin).Seconds(), killed.name)
	// master_start_timeout: 0 makes Patroni fail over to the
	// synchronous standby rather than restart the killed PostgreSQL.
	after := c.waitHealthy(60*time.Second, killed)
	t.Logf("+%.1fs: healthy again, %s leads", time.Since(begin).Seconds(), after.name)
	sleepUntil(begin.Add(switchAt))
	switchTime := time.Now()
	t.Logf("+%.1fs: patronictl switchover", switchTime.Sub(begin).Seconds())
	c.switchover()
	switched := c.waitHealthy(60*time.Second, after)
	t.Logf("+%.1fs: healthy again, %s leads", time.Since(begin).Seconds(), switched.name)
	// Writes go on for a while on the whole cluster again, also on a
	// machine so slow that it took the minute.
	sleepUntil(later(begin.Add(loadFor), time.Now().Add(5*time.Second)))
	l.stop()
	end := time.Now()
	c.waitHealthy(60*time.Second, nil)

	l.report(begin)
	for _, ev := range []struct {
		name      string
		at, until time.Time
	}{{"kill -9 of the primary's postmaster", killTime, switchTime}, {"switchover", switchTime, end}} {
		t.Run("AnOutageOf_"+strings.Fields(ev.name)[0], func(t *testing.T) {
			l.checkOutage(t, ev.name, ev.at, ev.until)
		})
	}
	t.Run("EveryAcknowledgedQuestionIsReadThroughEveryServer", func(t *testing.T) { w.checkQuestions(t, l.questions) })
	t.Run("EveryAcknowledgedOrderIsReadThroughEveryServer", func(t *testing.T) { w.checkOrders(t, l.orders) })
	t.Run("NoUnitIsSoldTwice", func(t *testing.T) { w.checkUnits(t, l.orders) })
	t.Run("StockVersionsOnlyGrowAndTheLastPutIsKept", func(t *testing.T) { w.checkStock(t, l.stock) })
	t.Run("AChangeThroughOneServerReachesTheOthersByTheNewPrimarysWord", func(t *testing.T) { w.checkChanges(t) })
	t.Run("MetricsCountTheFailoversAndTheTimeWithoutAPrimary", func(t *testing.T) { w.checkMetrics(t) })
	for _, s := range servers {
		if r, err := read(s.base+"/ready", ""); err != nil || r.status != http.StatusOK {
			t.Errorf("%s: GET /ready after the load: %v %v; want 200", s.name, r, err)
		}
		s.stop(t)
	}
}

func sleepUntil(at time.Time) { time.Sleep(time.Until(at)) }

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// world is what the load writes to: the servers, the demo accounts and the
// items.
type world struct {
	servers []*server
	demo    demo
	askItem string
	// buy are the items the purchases take units of, with their user
	// products; stock are the user products whose stock the PUTs set.
	buy   []listed
	stock []string
}

// listed is a published item.
type listed struct {
	item, userProduct string
}

func newWorld(t *testing.T, servers []*server) *world {
	t.Helper()
	w := &world{servers: servers, demo: printedDemo(t, servers[0])}
	w.askItem = w.publish(t, 5, 3).item
	for range purchaseItems {
		w.buy = append(w.buy, w.publish(t, 10, purchaseUnits-10))
	}
	for range 2 {
		w.stock = append(w.stock, w.publish(t, 1, 1).userProduct)
	}
	return w
}

// publish lists an item of the demo seller with units in its two stores.
func (w *world) publish(t *testing.T, first, second int) listed {
	t.Helper()
	r := must(t, http.StatusCreated, "POST", w.servers[0].base+"/items/multiwarehouse", marketplace.DemoSellerToken, map[string]any{
		"title": "Parlante portátil", "category_id": "MLA1055", "price": 90000, "listing_type_id": "gold_special",
		"currency_id": "ARS", "condition": "new", "channels": []string{"marketplace"},
		"stock_locations": []map[string]any{{"store_id": w.demo.stores[0], "quantity": first}, {"store_id": w.demo.stores[1], "quantity": second}},
	})
	item, _ := r.body["id"].(string)
	up, _ := r.body["user_product_id"].(string)
	if item == "" || up == "" {
		t.Fatalf("publish: %v", r)
	}
	return listed{item, up}
}

// answer is one request's result, kept to measure the outages.
type answer struct {
	at     time.Time // when the answer came
	took   time.Duration
	server int
	kind   string // ask, buy, put, read, ready
	status int
}

// ackedQuestion is a question whose POST was answered 201.
type ackedQuestion struct {
	id   int64
	text string
	via  int
}

// ackedOrder is an order whose POST was answered 201.
type ackedOrder struct {
	id   int64
	item string
	via  int
}

// stockHistory is what one writer of a user product's stock saw, in order.
type stockHistory struct {
	userProduct string
	// acked are the versions of the PUTs answered 200, with the
	// quantities they set.
	acked []ackedStock
}

type ackedStock struct {
	version    int64
	quantities map[string]float64
}

// load writes through the three servers in turn until stopped, and keeps
// what was acknowledged.
type load struct {
	t    *testing.T
	w    *world
	done chan struct{}
	wg   sync.WaitGroup

	mu        sync.Mutex
	answers   []answer
	questions []ackedQuestion
	orders    []ackedOrder
	stock     []*stockHistory
	// wrong are the answers that break a promise: a 500, an error
	// outside the error shape, a transport error.
	wrong []string
	// soldOut counts the items of w.buy sold out: the buyers buy the
	// next one.
	soldOut atomic.Int64
}

func newLoad(t *testing.T, w *world) *load {
	return &load{t: t, w: w, done: make(chan struct{})}
}

func (l *load) stopped() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

// pause keeps the load to what a 2-core machine serves beside the cluster.
const pause = 10 * time.Millisecond

func (l *load) start() {
	for i := range 2 {
		l.run(func() { l.ask(i) })
		l.run(func() { l.buy(i) })
	}
	for _, up := range l.w.stock {
		h := &stockHistory{userProduct: up}
		l.stock = append(l.stock, h)
		l.run(func() { l.put(h) })
	}
	for i := range l.w.servers {
		l.run(func() { l.ready(i) })
	}
}

func (l *load) run(f func()) {
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		f()
	}()
}

func (l *load) stop() {
	close(l.done)
	l.wg.Wait()
}

// record keeps the answer r to a request sent at sent and reports whether
// it is an acceptable one: one of ok, or the 503 of an outage.
func (l *load) record(sent time.Time, server int, kind, what string, r reply, err error, ok ...int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.answers = append(l.answers, answer{at: time.Now(), took: time.Since(sent), server: server, kind: kind, status: r.status})
	switch {
	case err != nil:
		l.wrong = append(l.wrong, fmt.Sprintf("%s through server %d: %v", what, server, err))
	case slices.Contains(ok, r.status):
		return true
	case unavailable(r):
		return true
	default:
		l.wrong = append(l.wrong, fmt.Sprintf("%s through server %d: %v", what, server, r))
	}
	return false
}

func (l *load) ask(worker int) {
	for n := 0; !l.stopped(); n++ {
		i := (worker + n) % len(l.w.servers)
		text := fmt.Sprintf("¿Tiene garantía? Pregunta %d de %d.", n, worker)
		sent := time.Now()
		r, err := send("POST", l.w.servers[i].base+"/questions", marketplace.DemoBuyerToken, nil, map[string]any{"text": text, "item_id": l.w.askItem})
		if l.record(sent, i, "ask", "POST /questions", r, err, http.StatusCreated) && r.status == http.StatusCreated {
			id, _ := r.body["id"].(float64)
			l.mu.Lock()
			l.questions = append(l.questions, ackedQuestion{id: int64(id), text: text, via: i})
			l.mu.Unlock()
		}
		time.Sleep(pause)
	}
}

// buy buys one unit at a time of the first item not sold out; a refusal
// (400: the item sold out and paused) moves every buyer to the next.
func (l *load) buy(worker int) {
	for n := 0; !l.stopped(); n++ {
		k := int(l.soldOut.Load())
		if k >= len(l.w.buy) {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		it := l.w.buy[k]
		i := (worker + n) % len(l.w.servers)
		sent := time.Now()
		r, err := send("POST", l.w.servers[i].base+"/operator/orders", operatorToken, nil,
			map[string]any{"buyer_id": l.w.demo.buyer, "item_id": it.item, "quantity": 1})
		if !l.record(sent, i, "buy", "POST /operator/orders", r, err, http.StatusCreated, http.StatusBadRequest) {
			time.Sleep(pause)
			continue
		}
		switch r.status {
		case http.StatusCreated:
			id, _ := r.body["id"].(float64)
			l.mu.Lock()
			l.orders = append(l.orders, ackedOrder{id: int64(id), item: it.item, via: i})
			l.mu.Unlock()
		case http.StatusBadRequest:
			want := fmt.Sprintf("Item %s is not active: its status is paused", it.item)
			if !errorShape(r) || r.body["message"] != want {
				l.mu.Lock()
				l.wrong = append(l.wrong, fmt.Sprintf("POST /operator/orders of %s through server %d: %v; want 201, or 400 %q once sold out", it.item, i, r, want))
				l.mu.Unlock()
			}
			l.soldOut.CompareAndSwap(int64(k), int64(k)+1)
		}
		// Slower than the other writes, so that units are left to race
		// for until the end.
		time.Sleep(4 * pause)
	}
}

// put sets the stock of h's user product again and again with the version
// last read or acknowledged; after a 503 it reads the stock again, since
// the PUT may have committed.
func (l *load) put(h *stockHistory) {
	path := "/user-products/" + h.userProduct + "/stock"
	version := int64(-1)
	unknown := false // the last PUT's outcome is unknown (a 503)
	for n := 0; !l.stopped(); n++ {
		i := n % len(l.w.servers)
		base := l.w.servers[i].base
		sent := time.Now()
		if version < 0 {
			r, err := send("GET", base+path, marketplace.DemoSellerToken, nil, nil)
			if l.record(sent, i, "read", "GET "+path, r, err, http.StatusOK) && r.status == http.StatusOK {
				v, err := strconv.ParseInt(r.header.Get("x-version"), 10, 64)
				last := l.lastAcked(h)
				switch {
				case err != nil:
					l.wrongf("GET %s through server %d: x-version %q", path, i, r.header.Get("x-version"))
				case v < last:
					l.wrongf("GET %s through server %d: version %d, older than the acknowledged %d", path, i, v, last)
				default:
					version, unknown = v, false
				}
			}
			time.Sleep(pause)
			continue
		}
		want := map[string]float64{l.w.demo.stores[0]: float64(n%50 + 1), l.w.demo.stores[1]: float64(n % 7)}
		body := map[string]any{"locations": []map[string]any{
			{"store_id": l.w.demo.stores[0], "quantity": want[l.w.demo.stores[0]]},
			{"store_id": l.w.demo.stores[1], "quantity": want[l.w.demo.stores[1]]},
		}}
		r, err := send("PUT", base+path+"/type/seller_warehouse", marketplace.DemoSellerToken, map[string]string{"x-version": strconv.FormatInt(version, 10)}, body)
		switch {
		case !l.record(sent, i, "put", "PUT "+path, r, err, http.StatusOK, http.StatusConflict):
			version = -1
		case r.status == http.StatusOK:
			v, err := strconv.ParseInt(r.header.Get("x-version"), 10, 64)
			if err != nil || v <= version {
				l.wrongf("PUT %s with version %d through server %d: x-version %q; want a greater version", path, version, i, r.header.Get("x-version"))
			}
			l.mu.Lock()
			h.acked = append(h.acked, ackedStock{version: v, quantities: want})
			l.mu.Unlock()
			version = v
		case r.status == http.StatusConflict:
			// Only a PUT that may have committed unseen makes the next
			// one stale: no one else writes this stock.
			if !unknown || !errorShape(r) || r.body["message"] != "Version mismatch" {
				l.wrongf("PUT %s with version %d through server %d: %v, after a PUT that was acknowledged", path, version, i, r)
			}
			version = -1
		default:
			unknown, version = true, -1
		}
		time.Sleep(pause)
	}
}

func (l *load) wrongf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.wrong = append(l.wrong, fmt.Sprintf(format, args...))
}

func (l *load) lastAcked(h *stockHistory) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(h.acked) == 0 {
		return 0
	}
	return h.acked[len(h.acked)-1].version
}

// ready asks server i whether it is ready, every 100 ms.
func (l *load) ready(i int) {
	for !l.stopped() {
		sent := time.Now()
		r, err := send("GET", l.w.servers[i].base+"/ready", "", nil, nil)
		l.record(sent, i, "ready", "GET /ready", r, err, http.StatusOK)
		time.Sleep(100 * time.Millisecond)
	}
}

// report logs what the load did and fails the test for each wrong answer.
func (l *load) report(begin time.Time) {
	t := l.t
	by := map[string]map[int]int{}
	for _, a := range l.answers {
		if by[a.kind] == nil {
			by[a.kind] = map[int]int{}
		}
		by[a.kind][a.status]++
	}
	for _, kind := range slices.Sorted(maps.Keys(by)) {
		t.Logf("%s: %v", kind, by[kind])
	}
	t.Logf("acknowledged: %d questions, %d orders, %d and %d stock PUTs", len(l.questions), len(l.orders), len(l.stock[0].acked), len(l.stock[1].acked))
	var lastOrder time.Time
	for _, a := range l.answers {
		if a.kind == "buy" && a.status == http.StatusCreated {
			lastOrder = a.at
		}
	}
	t.Logf("the last order was acknowledged at +%.1fs", lastOrder.Sub(begin).Seconds())
	for i, msg := range l.wrong {
		if i == 20 {
			t.Errorf("... and %d more wrong answers", len(l.wrong)-20)
			break
		}
		t.Errorf("wrong answer: %s", msg)
	}
}

// checkOutage measures the outage that began at at, server by server:
// from at to the first write acknowledged after the server's last 503
// before until (the next event). It fails unless each server answered
// some write 503 in the meantime, and some readiness check too.
func (l *load) checkOutage(t *testing.T, what string, at, until time.Time) {
	l.logSlowest(t, what, at)
	n := len(l.w.servers)
	last503 := make([]time.Time, n)
	back := make([]time.Time, n)
	ready503 := 0
	for _, a := range l.answers {
		if a.at.Before(at) || a.at.After(until) || a.kind == "read" {
			continue
		}
		switch {
		case a.kind == "ready":
			if a.status == http.StatusServiceUnavailable {
				ready503++
			}
		case a.status == http.StatusServiceUnavailable:
			last503[a.server], back[a.server] = a.at, time.Time{}
		case a.status < 300 && !last503[a.server].IsZero() && back[a.server].IsZero():
			back[a.server] = a.at
		}
	}
	var each []string
	for i := range n {
		if last503[i].IsZero() || back[i].IsZero() {
			t.Fatalf("%s: server %d answered no write 503 after it, or acknowledged none after its last 503", what, i)
		}
		each = append(each, fmt.Sprintf("server %d %.1fs", i, back[i].Sub(at).Seconds()))
	}
	t.Logf("%s: a write acknowledged again after the last 503 after %s; /ready answered 503 %d times meanwhile",
		what, strings.Join(each, ", "), ready503)
	if ready503 == 0 {
		t.Errorf("%s: GET /ready never answered 503 during the outage", what)
	}
}

// logSlowest logs the slowest writes answered within 15 s of at.
func (l *load) logSlowest(t *testing.T, what string, at time.Time) {
	var near []answer
	for _, a := range l.answers {
		if a.kind != "ready" && a.at.After(at) && a.at.Before(at.Add(15*time.Second)) {
			near = append(near, a)
		}
	}
	slices.SortFunc(near, func(a, b answer) int { return int(b.took - a.took) })
	var lines []string
	for _, a := range near[:min(8, len(near))] {
		lines = append(lines, fmt.Sprintf("%s via %d sent +%.2fs took %.2fs: %d", a.kind, a.server, a.at.Add(-a.took).Sub(at).Seconds(), a.took.Seconds(), a.status))
	}
	t.Logf("%s: the slowest writes answered in the next 15 s:\n%s", what, strings.Join(lines, "\n"))
}

// read GETs url, again after a 503: a read after the load may still meet
// a connection that the outage broke, which a 503 answers (a View is never
// run twice); what is checked is whether the record is there.
func read(url, token string) (reply, error) {
	for range 20 {
		r, err := send("GET", url, token, nil, nil)
		if err != nil || !unavailable(r) {
			return r, err
		}
		time.Sleep(250 * time.Millisecond)
	}
	return send("GET", url, token, nil, nil)
}

// mustRead reads url, which must answer 200.
func mustRead(t *testing.T, url, token string) reply {
	t.Helper()
	r, err := read(url, token)
	if err != nil || r.status != http.StatusOK {
		t.Fatalf("GET %s: %v %v; want 200", url, r, err)
	}
	return r
}

// forEach runs f on 8 goroutines over n indexes.
func forEach(n int, f func(k int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := int(next.Add(1) - 1); k < n; k = int(next.Add(1) - 1) {
				f(k)
			}
		}()
	}
	wg.Wait()
}

func (w *world) checkQuestions(t *testing.T, qs []ackedQuestion) {
	seen := map[int64]bool{}
	for _, q := range qs {
		if seen[q.id] {
			t.Fatalf("two acknowledged questions have the id %d", q.id)
		}
		seen[q.id] = true
	}
	var failures atomic.Int64
	for i, s := range w.servers {
		forEach(len(qs), func(k int) {
			q := qs[k]
			r, err := read(fmt.Sprintf("%s/questions/%d?api_version=4", s.base, q.id), marketplace.DemoBuyerToken)
			if err != nil || r.status != http.StatusOK || r.body["text"] != q.text {
				if failures.Add(1) <= 10 {
					t.Errorf("question %d, acknowledged by server %d, read through server %d: %v %v; want the text %q", q.id, q.via, i, r, err, q.text)
				}
			}
		})
	}
	if len(qs) == 0 {
		t.Error("no question was acknowledged")
	}
}

func (w *world) checkOrders(t *testing.T, os []ackedOrder) {
	seen := map[int64]bool{}
	for _, o := range os {
		if seen[o.id] {
			t.Fatalf("two acknowledged orders have the id %d", o.id)
		}
		seen[o.id] = true
	}
	var failures atomic.Int64
	for i, s := range w.servers {
		forEach(len(os), func(k int) {
			o := os[k]
			r, err := read(fmt.Sprintf("%s/operator/orders/%d", s.base, o.id), operatorToken)
			items, _ := r.body["order_items"].([]any)
			var item string
			if len(items) == 1 {
				first, _ := items[0].(map[string]any)
				it, _ := first["item"].(map[string]any)
				item, _ = it["id"].(string)
			}
			if err != nil || r.status != http.StatusOK || r.body["status"] != "paid" || item != o.item {
				if failures.Add(1) <= 10 {
					t.Errorf("order %d of %s, acknowledged by server %d, read through server %d: %v %v; want it paid", o.id, o.item, o.via, i, r, err)
				}
			}
		})
	}
	if len(os) == 0 {
		t.Error("no order was acknowledged")
	}
}

// checkUnits checks each purchased item on every server: its units sold
// and left add up to those it was listed with, its orders are as many as
// its units sold and include every acknowledged one, and its stock holds
// the units left.
func (w *world) checkUnits(t *testing.T, orders []ackedOrder) {
	acked := map[string]int{}
	for _, o := range orders {
		acked[o.item]++
	}
	for _, b := range w.buy {
		for i, s := range w.servers {
			it := mustRead(t, s.base+"/items/"+b.item, marketplace.DemoSellerToken)
			available, _ := it.body["available_quantity"].(float64)
			sold, _ := it.body["sold_quantity"].(float64)
			if available+sold != purchaseUnits || available < 0 || int(sold) < acked[b.item] {
				t.Errorf("item %s through server %d: %v available and %v sold of %d, %d purchases acknowledged", b.item, i, available, sold, purchaseUnits, acked[b.item])
			}
			found := mustRead(t, fmt.Sprintf("%s/operator/orders?seller=%d&item=%s", s.base, w.demo.seller, b.item), operatorToken)
			paging, _ := found.body["paging"].(map[string]any)
			if total, _ := paging["total"].(float64); total != sold {
				t.Errorf("item %s through server %d: %v orders found, %v units sold", b.item, i, total, sold)
			}
			st := mustRead(t, s.base+"/user-products/"+b.userProduct+"/stock", marketplace.DemoSellerToken)
			left := 0.0
			for _, q := range quantities(st.body) {
				left += q
			}
			if left != available {
				t.Errorf("user product %s through server %d: %v units in its stores, %v available on its item", b.userProduct, i, left, available)
			}
		}
	}
}

// quantities reads the quantity of each store from a stock body.
func quantities(body map[string]any) map[string]float64 {
	out := map[string]float64{}
	locations, _ := body["locations"].([]any)
	for _, l := range locations {
		if l, ok := l.(map[string]any); ok {
			store, _ := l["store_id"].(string)
			q, _ := l["quantity"].(float64)
			out[store] = q
		}
	}
	return out
}

// checkStock checks that each writer's acknowledged versions grew, and that
// every server shows the last acknowledged PUT, or a later one whose answer
// was lost.
func (w *world) checkStock(t *testing.T, hs []*stockHistory) {
	for _, h := range hs {
		if len(h.acked) == 0 {
			t.Errorf("no PUT of %s was acknowledged", h.userProduct)
			continue
		}
		for k := 1; k < len(h.acked); k++ {
			if h.acked[k].version <= h.acked[k-1].version {
				t.Errorf("%s: version %d acknowledged after %d", h.userProduct, h.acked[k].version, h.acked[k-1].version)
			}
		}
		last := h.acked[len(h.acked)-1]
		var versions []string
		for i, s := range w.servers {
			r := mustRead(t, s.base+"/user-products/"+h.userProduct+"/stock", marketplace.DemoSellerToken)
			v, _ := strconv.ParseInt(r.header.Get("x-version"), 10, 64)
			versions = append(versions, r.header.Get("x-version"))
			switch {
			case v < last.version:
				t.Errorf("%s through server %d: version %d, older than the last acknowledged %d", h.userProduct, i, v, last.version)
			case v == last.version && !maps.Equal(quantities(r.body), last.quantities):
				t.Errorf("%s through server %d: %v at version %d; the PUT acknowledged with it set %v", h.userProduct, i, quantities(r.body), v, last.quantities)
			}
		}
		if len(slices.Compact(slices.Clone(versions))) != 1 {
			t.Errorf("%s: the servers show the versions %v", h.userProduct, versions)
		}
	}
}

// checkChanges adds a fault rule through each server and waits for each
// other server to apply it. On PostgreSQL the servers keep the rules in
// memory and poll for none: a rule reaches another server by the
// notification of the primary it listens to, here the primary after the
// switchover. How long each took is logged; the deadline only catches a
// rule that never arrives.
func (w *world) checkChanges(t *testing.T) {
	var took []time.Duration
	probe := 0
	for i, from := range w.servers {
		for j, to := range w.servers {
			if i == j {
				continue
			}
			probe++
			query := strconv.Itoa(probe)
			start := time.Now()
			rule := must(t, http.StatusCreated, "POST", from.base+"/operator/faults", operatorToken, map[string]any{
				"method": "GET", "route": "/items/{item_id}", "query": map[string]string{"probe": query}, "status": 418,
			})
			url := fmt.Sprintf("%s/items/%s?probe=%s", to.base, w.askItem, query)
			for {
				r, err := send("GET", url, "", nil, nil)
				if err == nil && r.status == http.StatusTeapot {
					break
				}
				if time.Since(start) > 10*time.Second {
					t.Fatalf("a fault rule added through server %d was not applied by server %d within 10s: %v %v", i, j, r, err)
				}
				time.Sleep(time.Millisecond)
			}
			took = append(took, time.Since(start))
			id, _ := rule.body["id"].(string)
			if id == "" {
				if n, ok := rule.body["id"].(float64); ok {
					id = strconv.FormatInt(int64(n), 10)
				}
			}
			must(t, http.StatusOK, "DELETE", from.base+"/operator/faults/"+id, operatorToken, nil)
		}
	}
	slices.Sort(took)
	t.Logf("a fault rule added through one server was applied by another after %v (sorted; from the POST's start)", took)
}

// checkMetrics reads each server's metrics: the failovers its connections
// saw (the kill and the switchover each moved the primary to another
// node) and the time it found no primary.
func (w *world) checkMetrics(t *testing.T) {
	for i, s := range w.servers {
		r, err := client.Get(s.base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		values := map[string]float64{}
		sc := bufio.NewScanner(r.Body)
		for sc.Scan() {
			name, value, ok := strings.Cut(sc.Text(), " ")
			if ok && strings.HasPrefix(name, "marketplace_postgres_") {
				values[name], _ = strconv.ParseFloat(value, 64)
			}
		}
		r.Body.Close()
		failovers, without := values["marketplace_postgres_failovers_total"], values["marketplace_postgres_seconds_without_primary_total"]
		t.Logf("server %d: marketplace_postgres_failovers_total %v, marketplace_postgres_seconds_without_primary_total %.2f", i, failovers, without)
		if failovers < 2 {
			t.Errorf("server %d counted %v failovers; want at least 2 (the kill and the switchover)", i, failovers)
		}
		if without <= 0 {
			t.Errorf("server %d counted %v seconds without a primary; want more than 0", i, without)
		}
	}
}
