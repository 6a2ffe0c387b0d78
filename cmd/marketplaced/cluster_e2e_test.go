package main

import (
	"fmt"
	"maps"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/internal/pgtest"
)

// The tests of this file run three servers on one PostgreSQL database, as
// docs/scale-out.md describes, and drive them over HTTP.

const clusterOp = "cluster-operator-token-0123456789"

// unavailableMessage is the message of the 503 that a server answers while
// the database cannot be reached (docs/scale-out.md).
const unavailableMessage = "The service is temporarily unavailable, try again later"

// raced is the answer to one of several racing requests; want is what the
// request would leave behind if it won.
type raced struct {
	reply
	err  error
	want map[string]float64
}

func TestEndToEnd_ThreeServersOnOneDatabaseKeepEachRuleWhenRequestsRace(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the server")
	}
	url := pgtest.NewDatabase(t)
	bin := buildServer(t)
	servers := startCluster(t, bin, clusterArgs(url, clusterOp))
	seller := marketplace.DemoSellerToken

	t.Run("StockPutsWithOneVersionHaveOneWinner", func(t *testing.T) {
		up, stores := demoStock(t, servers[0])
		path := "/user-products/" + up + "/stock"
		for round := range 5 {
			read, err := send("GET", servers[round%3].base+path, seller, nil, nil)
			version := read.header.Get("x-version")
			if err != nil || read.status != http.StatusOK || version == "" {
				t.Fatalf("round %d: read the stock: %v %v", round, read, err)
			}
			// The three PUTs carry the version just read and quantities of
			// their own, so that the stock shows which one won.
			results := atOnce(3, func(i int) raced {
				want := map[string]float64{stores[0]: float64(10*round + i + 1), stores[1]: float64(i + 1)}
				body := map[string]any{"locations": []map[string]any{
					{"store_id": stores[0], "quantity": want[stores[0]]},
					{"store_id": stores[1], "quantity": want[stores[1]]},
				}}
				r, err := send("PUT", servers[i].base+path+"/type/seller_warehouse", seller, map[string]string{"x-version": version}, body)
				return raced{r, err, want}
			})
			winner := -1
			for i, res := range results {
				switch {
				case res.err != nil:
					t.Fatalf("round %d: PUT through server %d: %v", round, i, res.err)
				case res.status == http.StatusOK:
					if winner >= 0 {
						t.Fatalf("round %d: servers %d and %d both accepted version %s", round, winner, i, version)
					}
					winner = i
				case !errorBodyIs(res.reply, http.StatusConflict, "conflict", "Version mismatch"):
					t.Fatalf("round %d: PUT through server %d: %v; want 200, or 409 Version mismatch", round, i, res.reply)
				}
			}
			if winner < 0 {
				t.Fatalf("round %d: no PUT won: %v", round, results)
			}
			won := results[winner]
			next := won.header.Get("x-version")
			if next == "" || next == version || !maps.Equal(quantities(won.body), won.want) {
				t.Fatalf("round %d: the winner's answer: x-version %q (read %s), %v; want %v", round, next, version, won.reply, won.want)
			}
			for i, s := range servers {
				r, err := send("GET", s.base+path, seller, nil, nil)
				if err != nil || r.status != http.StatusOK || r.header.Get("x-version") != next || !maps.Equal(quantities(r.body), won.want) {
					t.Fatalf("round %d: the stock through server %d: %v %v, x-version %q; want the winner's %v, x-version %s",
						round, i, r, err, r.header.Get("x-version"), won.want, next)
				}
			}
		}
	})

	t.Run("AnswersToOneQuestionHaveOneWinner", func(t *testing.T) {
		item := demoItem(t, servers[1])
		for round := range 5 {
			id := e2eAsk(t, servers[round%3], marketplace.DemoBuyerToken, item)
			texts := make([]string, 3)
			results := atOnce(3, func(i int) raced {
				texts[i] = fmt.Sprintf("Sí, respuesta %d por el servidor %d.", round, i)
				r, err := send("POST", servers[i].base+"/answers", seller, nil, map[string]any{"question_id": id, "text": texts[i]})
				return raced{reply: r, err: err}
			})
			winner := -1
			for i, res := range results {
				switch {
				case res.err != nil:
					t.Fatalf("round %d: answer through server %d: %v", round, i, res.err)
				case res.status == http.StatusOK:
					if winner >= 0 {
						t.Fatalf("round %d: servers %d and %d both answered question %d", round, winner, i, id)
					}
					winner = i
				case !errorBodyIs(res.reply, http.StatusBadRequest, "bad_request", fmt.Sprintf("Question %d is already answered", id)):
					t.Fatalf("round %d: answer through server %d: %v; want 200, or 400 already answered", round, i, res.reply)
				}
			}
			if winner < 0 {
				t.Fatalf("round %d: no answer won: %v", round, results)
			}
			for i, s := range servers {
				r, err := send("GET", fmt.Sprintf("%s/questions/%d?api_version=4", s.base, id), seller, nil, nil)
				answer, _ := r.body["answer"].(map[string]any)
				if err != nil || r.status != http.StatusOK || r.body["status"] != "ANSWERED" || answer == nil || answer["text"] != texts[winner] {
					t.Fatalf("round %d: question %d through server %d: %v %v; want the answer %q", round, id, i, r, err, texts[winner])
				}
			}
		}
	})

	t.Run("BlacklistThroughOneServerStopsAsksThroughEveryServer", func(t *testing.T) {
		item := demoItem(t, servers[2])
		demo := printedDemo(t, servers[0])
		list := fmt.Sprintf("/users/%d/questions_blacklist", demo.seller)
		if r, err := send("POST", servers[0].base+list, seller, nil, map[string]any{"user_id": demo.buyer}); err != nil ||
			(r.status != http.StatusOK && r.status != http.StatusCreated) {
			t.Fatalf("blacklist through server 0: %v %v", r, err)
		}
		want := fmt.Sprintf("User %d is blocked from asking questions to seller %d", demo.buyer, demo.seller)
		for i, s := range servers {
			r, err := send("POST", s.base+"/questions", marketplace.DemoBuyerToken, nil, map[string]any{"text": "And in white?", "item_id": item})
			if err != nil || !errorBodyIs(r, http.StatusForbidden, "forbidden", want) {
				t.Fatalf("ask through server %d after the blacklist through server 0: %v %v; want 403 %q", i, r, err, want)
			}
		}
		// Removed through another server, the entry stops nothing any more.
		if r, err := send("DELETE", fmt.Sprintf("%s%s/%d", servers[2].base, list, demo.buyer), seller, nil, nil); err != nil || r.status != http.StatusOK {
			t.Fatalf("remove from the blacklist through server 2: %v %v", r, err)
		}
		e2eAsk(t, servers[1], marketplace.DemoBuyerToken, item)
	})
	for i, s := range servers {
		stopCleanly(t, s, fmt.Sprintf("server %d", i))
	}
}

// ackedWrite is a question whose POST was answered with a 201.
type ackedWrite struct {
	id   int64
	text string
	via  int
}

// readBack checks that every write is readable through s, with its text.
// A read that meets a pooled connection which died with the database is
// not run again (a View never is): the server answers the 503 and drops
// the connection. So right after an outage a read may get the 503 once per
// such connection; it is asked again for a while, and anything but the
// 503 or the write's text fails at once.
func readBack(t *testing.T, s *server, name string, writes []ackedWrite) {
	t.Helper()
	for _, w := range writes {
		var r reply
		var err error
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			r, err = send("GET", fmt.Sprintf("%s/questions/%d?api_version=4", s.base, w.id), marketplace.DemoBuyerToken, nil, nil)
			if err != nil || !errorBodyIs(r, http.StatusServiceUnavailable, "service_unavailable", unavailableMessage) || time.Now().After(deadline) {
				break
			}
		}
		if err != nil || r.status != http.StatusOK || r.body["text"] != w.text {
			t.Fatalf("question %d, acknowledged by server %d, read through %s: %v %v; want the text %q", w.id, w.via, name, r, err, w.text)
		}
	}
}

// uniqueIDs fails when two acknowledged writes have one id.
func uniqueIDs(t *testing.T, writes []ackedWrite) {
	t.Helper()
	seen := map[int64]bool{}
	for _, w := range writes {
		if seen[w.id] {
			t.Fatalf("two acknowledged questions have the id %d", w.id)
		}
		seen[w.id] = true
	}
}

func TestEndToEnd_ThreeServersLoseNoAcknowledgedWriteWhenOneIsKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the server")
	}
	url := pgtest.NewDatabase(t)
	bin := buildServer(t)
	servers := startCluster(t, bin, clusterArgs(url, clusterOp))
	item := demoItem(t, servers[0])
	const victim = 2
	// Six clients write round-robin to the three servers; the victim is
	// killed once 30 writes are acknowledged, 5 of them by the victim.
	const clients, writesPerClient = 6, 24
	var (
		mu       sync.Mutex
		acked    []ackedWrite
		problems []string
		byVictim int
		killing  atomic.Bool
	)
	kill := make(chan struct{})
	var closeKill sync.Once
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range writesPerClient {
				via := (c + k) % 3
				text := fmt.Sprintf("Client %d, write %d: does it come with a case?", c, k)
				r, err := send("POST", servers[via].base+"/questions", marketplace.DemoBuyerToken, nil, map[string]any{"text": text, "item_id": item})
				mu.Lock()
				switch {
				case err != nil && via == victim && killing.Load():
					// The killed server: not acknowledged, not counted.
				case err != nil:
					problems = append(problems, fmt.Sprintf("server %d: %v", via, err))
				case r.status != http.StatusCreated:
					problems = append(problems, fmt.Sprintf("server %d: %v", via, r))
				default:
					id, _ := r.body["id"].(float64)
					acked = append(acked, ackedWrite{id: int64(id), text: text, via: via})
					if via == victim {
						byVictim++
					}
					if len(acked) >= 30 && byVictim >= 5 {
						closeKill.Do(func() { close(kill) })
					}
				}
				mu.Unlock()
			}
		}()
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-kill:
	case <-done:
		t.Fatalf("the writes ended before the kill: %d acknowledged, %d by the victim; problems: %q", len(acked), byVictim, problems)
	}
	// Set before the signal: every transport error of the victim from
	// here on may be the kill's.
	killing.Store(true)
	killServer(t, servers[victim])
	<-done

	if len(problems) > 0 {
		t.Fatalf("%d writes to servers that answered failed: %q", len(problems), problems)
	}
	uniqueIDs(t, acked)
	t.Logf("%d writes acknowledged, %d of them by the killed server", len(acked), byVictim)
	for i, s := range servers {
		if i != victim {
			readBack(t, s, fmt.Sprintf("server %d", i), acked)
			stopCleanly(t, s, fmt.Sprintf("server %d", i))
		}
	}
}

func TestEndToEnd_ThreeServersAnswer503WhileTheDatabaseRestartsAndResumeByThemselves(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the server")
	}
	// A PostgreSQL server of this test's own, which it stops and starts.
	pg := pgtest.Start(t)
	url := pg.NewDatabase(t)
	bin := buildServer(t)
	servers := startCluster(t, bin, clusterArgs(url, clusterOp))
	item := demoItem(t, servers[0])
	ask := func(s *server, text string) (reply, error) {
		return send("POST", s.base+"/questions", marketplace.DemoBuyerToken, nil, map[string]any{"text": text, "item_id": item})
	}

	// Clients write round-robin to the three servers until stop: a 201 is
	// acknowledged, a 503 of the exact shape is expected while the
	// database is down, anything else (a transport error, a 500) is a
	// problem.
	var (
		mu          sync.Mutex
		acked       []ackedWrite
		problems    []string
		unavailable int
	)
	ackedCount := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for c := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; ; k++ {
				select {
				case <-stop:
					return
				default:
				}
				via := (c + k) % 3
				text := fmt.Sprintf("Client %d, write %d: is it waterproof?", c, k)
				r, err := ask(servers[via], text)
				mu.Lock()
				switch {
				case err != nil:
					problems = append(problems, fmt.Sprintf("server %d: %v", via, err))
				case r.status == http.StatusCreated:
					id, _ := r.body["id"].(float64)
					acked = append(acked, ackedWrite{id: int64(id), text: text, via: via})
				case errorBodyIs(r, http.StatusServiceUnavailable, "service_unavailable", unavailableMessage):
					unavailable++
				default:
					problems = append(problems, fmt.Sprintf("server %d: %v", via, r))
				}
				mu.Unlock()
				if err != nil || r.status != http.StatusCreated {
					time.Sleep(10 * time.Millisecond)
				}
			}
		}()
	}
	stopWriters := sync.OnceFunc(func() {
		close(stop)
		wg.Wait()
	})
	t.Cleanup(stopWriters)
	waitAcked := func(n int, what string) {
		t.Helper()
		for deadline := time.Now().Add(60 * time.Second); ackedCount() < n; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				stopWriters()
				t.Fatalf("%s: %d writes acknowledged, want %d; problems: %q", what, ackedCount(), n, problems)
			}
		}
	}
	waitAcked(20, "before the restart")

	if err := pg.Stop(); err != nil {
		t.Fatal(err)
	}
	// While the database is down, every server answers a write and a read
	// with the 503, and nothing else.
	for i, s := range servers {
		if r, err := ask(s, "Is anyone there?"); err != nil || !errorBodyIs(r, http.StatusServiceUnavailable, "service_unavailable", unavailableMessage) {
			t.Fatalf("ask through server %d while the database is down: %v %v; want exactly the 503 body", i, r, err)
		}
		// A read may be served from memory some day, but never fails
		// otherwise.
		r, err := send("GET", s.base+"/items/"+item, marketplace.DemoBuyerToken, nil, nil)
		if err != nil || (r.status != http.StatusOK && !errorBodyIs(r, http.StatusServiceUnavailable, "service_unavailable", unavailableMessage)) {
			t.Fatalf("read through server %d while the database is down: %v %v; want 200 or exactly the 503 body", i, r, err)
		}
	}
	if err := pg.Start(); err != nil {
		t.Fatal(err)
	}

	// Each server acknowledges writes again by itself; until it does, it
	// answers only the 503.
	for i, s := range servers {
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			text := fmt.Sprintf("Server %d, are you back?", i)
			r, err := ask(s, text)
			if err == nil && r.status == http.StatusCreated {
				id, _ := r.body["id"].(float64)
				mu.Lock()
				acked = append(acked, ackedWrite{id: int64(id), text: text, via: i})
				mu.Unlock()
				break
			}
			if err != nil || !errorBodyIs(r, http.StatusServiceUnavailable, "service_unavailable", unavailableMessage) || time.Now().After(deadline) {
				t.Fatalf("ask through server %d after the database came back: %v %v", i, r, err)
			}
		}
	}
	waitAcked(ackedCount()+30, "after the restart")
	stopWriters()

	if len(problems) > 0 {
		t.Fatalf("%d writes got neither a 201 nor the 503: %q", len(problems), problems)
	}
	uniqueIDs(t, acked)
	t.Logf("%d writes acknowledged; %d answered 503 during the outage", len(acked), unavailable)
	for i, s := range servers {
		readBack(t, s, fmt.Sprintf("server %d", i), acked)
	}
	// The background work (notification delivery, the response time
	// refresh) outlived the outage.
	for i, s := range servers {
		stopCleanly(t, s, fmt.Sprintf("server %d", i))
	}
}

func TestEndToEnd_ThreeServersNotifyEveryEventWhenTheDeliveringOneIsKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the server")
	}
	url := pgtest.NewDatabase(t)
	bin := buildServer(t)
	// A POST timeout far above what a loaded machine needs: a timed-out
	// POST is retried 15 s later, and that second POST would be a
	// duplicate that this test does not mean to allow.
	args := clusterArgs(url, clusterOp, "-notification-timeout", "10s")
	tl := newTally(t)

	// The first server starts alone, so it takes the delivery lease (10 s,
	// renewed every ~3 s, in wall-clock time); a notification that arrives
	// shows it delivering. The other two then start and stand by.
	a := startServer(t, bin, args...)
	seller, sellerToken := e2eUser(t, a, clusterOp, "CLUSTER_SELLER")
	_, buyerToken := e2eUser(t, a, clusterOp, "CLUSTER_BUYER")
	app := e2eApp(t, a, clusterOp, seller, tl.srv.URL+"/notifications")
	item := e2eItem(t, a, sellerToken)
	resource := func(id int64) string { return fmt.Sprintf("/questions/%d", id) }
	before := []int64{e2eAsk(t, a, buyerToken, item)}
	for deadline := time.Now().Add(30 * time.Second); tl.count(resource(before[0])) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first server delivered no notification")
		}
	}
	b, c := launchServer(t, bin, args...), launchServer(t, bin, args...)
	b.waitListening(t)
	c.waitListening(t)
	servers := []*server{a, b, c}

	// Events through all three, while the receiver leaves every POST
	// unanswered; once the first server has one in flight, it is killed,
	// and more events are made through the other two.
	tl.hold()
	for i := range 12 {
		before = append(before, e2eAsk(t, servers[i%3], buyerToken, item))
	}
	for deadline := time.Now().Add(30 * time.Second); tl.heldCount() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first server POSTed none of the new notifications")
		}
	}
	killServer(t, a)
	tl.release()
	var after []int64
	for i := range 12 {
		after = append(after, e2eAsk(t, servers[1+i%2], buyerToken, item))
	}

	// Another server takes the lease over once it expires, and delivers
	// what is left.
	all := append(append([]int64(nil), before...), after...)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		missing := 0
		for _, id := range all {
			if tl.count(resource(id)) == 0 {
				missing++
			}
		}
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d notifications never arrived: %v", missing, len(all), tl.snapshot())
		}
	}
	// The delivery log settles at one acknowledged attempt per event: the
	// POSTs cut short by the kill are not in it, and the new holder
	// acknowledged each notification once. Waiting for it also gives a
	// stray second POST time to show.
	var attempts []any
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		r, err := send("GET", fmt.Sprintf("%s/operator/applications/%.0f/deliveries?limit=100", b.base, app["id"]), clusterOp, nil, nil)
		if err != nil || r.status != http.StatusOK {
			t.Fatalf("deliveries: %v %v", r, err)
		}
		attempts, _ = r.body["results"].([]any)
		if len(attempts) >= len(all) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries: %d recorded attempts, want %d: %v", len(attempts), len(all), r)
		}
	}
	logged := map[string]int{}
	for _, at := range attempts {
		at, _ := at.(map[string]any)
		if at["outcome"] != "acknowledged" {
			t.Fatalf("an attempt that was not acknowledged: %v", at)
		}
		r, _ := at["resource"].(string)
		logged[r]++
	}
	for _, id := range all {
		if logged[resource(id)] != 1 {
			t.Fatalf("%s has %d acknowledged attempts in the log, want 1: %v", resource(id), logged[resource(id)], attempts)
		}
	}

	// What arrived. At least once: every event, and nothing else.
	got := tl.snapshot()
	wanted := map[string]bool{}
	for _, id := range all {
		wanted[resource(id)] = true
	}
	for r := range got {
		if !wanted[r] {
			t.Fatalf("a notification of %s, which no event of this test made: %s", r, got[r][0].raw)
		}
	}
	// The duplicates that at-least-once delivery allows. A POST that the
	// killed server had sent but whose outcome it had not recorded is sent
	// again by the new holder, with the same _id: each POST held at the
	// kill (answered to nobody) arrives exactly twice, the second time
	// answered. The same may happen, without the hold, to a POST the
	// killed server had sent before (its 200 read but not yet recorded),
	// so any event made before the kill may arrive twice, never more: one
	// process POSTs a delivery once at a time, and the new holder, which
	// lives on, records its 200. An event made after the kill is
	// delivered by the new holder alone: exactly once.
	var resent []int64
	for _, id := range before {
		copies := got[resource(id)]
		switch {
		case len(copies) > 2:
			t.Fatalf("%s, made before the kill, arrived %d times", resource(id), len(copies))
		case len(copies) == 2 && copies[0].id != copies[1].id:
			t.Fatalf("%s arrived twice with two _ids, %q and %q: two notifications of one event", resource(id), copies[0].id, copies[1].id)
		case copies[0].held && (len(copies) != 2 || copies[1].held):
			t.Fatalf("%s was in flight at the kill but was not sent again once: %d copies", resource(id), len(copies))
		case len(copies) == 2:
			resent = append(resent, id)
		}
	}
	for _, id := range after {
		if copies := got[resource(id)]; len(copies) != 1 {
			t.Fatalf("%s, made after the kill, arrived %d times, want once", resource(id), len(copies))
		}
	}
	// The new holder's notifications are whole and signed, those it sends
	// again included; the POST cut short is not an attempt.
	for _, id := range []int64{resent[0], after[len(after)-1]} {
		p := got[resource(id)]
		last := p[len(p)-1]
		wantNotification(t, received{header: last.header, raw: last.raw, body: last.body}, app, seller, id)
	}
	tl.mu.Lock()
	broken := len(tl.broken)
	tl.mu.Unlock()
	t.Logf("%d events; %d POSTs held at the kill; sent again: %v; broken POSTs: %d", len(all), tl.heldCount(), resent, broken)
	stopCleanly(t, b, "the second server")
	stopCleanly(t, c, "the third server")
}
