package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/marketplace/marketplace"
)

// clusterClient sends the requests of the cluster tests, which run on
// several goroutines: unlike call it returns transport errors instead of
// failing the test, so that the test goroutine can tell a server that is
// gone from one that answered.
var clusterClient = &http.Client{
	Timeout: 60 * time.Second,
	Transport: &http.Transport{
		MaxIdleConnsPerHost: 32,
		IdleConnTimeout:     30 * time.Second,
	},
}

// reply is an answer of a server.
type reply struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

func (r reply) String() string { return fmt.Sprintf("%d %s", r.status, bytes.TrimSpace(r.raw)) }

// send sends one request with the bearer token and extra headers; err is a
// transport error, or a body that is not JSON.
func send(method, url, token string, header map[string]string, body any) (reply, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return reply{}, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return reply{}, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := clusterClient.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return reply{}, fmt.Errorf("%s %s: read the body: %w", method, url, err)
	}
	out := reply{status: res.StatusCode, header: res.Header, raw: raw}
	if len(bytes.TrimSpace(raw)) > 0 && raw[0] == '{' {
		if err := json.Unmarshal(raw, &out.body); err != nil {
			return out, fmt.Errorf("%s %s: decode %q: %w", method, url, raw, err)
		}
	}
	return out, nil
}

// errorBodyIs reports whether r is exactly the spec's error body
// {message, error, status, cause: []} with these values and no other field.
func errorBodyIs(r reply, status int, code, message string) bool {
	cause, isList := r.body["cause"].([]any)
	return r.status == status && len(r.body) == 4 && r.body["status"] == float64(status) &&
		r.body["error"] == code && r.body["message"] == message && isList && len(cause) == 0
}

// clusterArgs are the flags of every server of a cluster test.
func clusterArgs(url, op string, more ...string) []string {
	return append([]string{"-postgres", url, "-demo", "-operator-token", op, "-allow-private-callbacks"}, more...)
}

// startCluster starts three servers with args at the same moment and waits
// until all of them listen.
func startCluster(t *testing.T, bin string, args []string) []*server {
	t.Helper()
	servers := []*server{launchServer(t, bin, args...), launchServer(t, bin, args...), launchServer(t, bin, args...)}
	for _, s := range servers {
		s.waitListening(t)
	}
	return servers
}

// killServer kills s with SIGKILL, giving it no chance to finish anything,
// and waits until it is gone.
func killServer(t *testing.T, s *server) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = s.cmd.Wait()
}

// stopCleanly stops s with SIGTERM and fails when its logs show an internal
// error (a 500) or background work that stopped before the server did.
func stopCleanly(t *testing.T, s *server, name string) {
	t.Helper()
	stopServer(t, s)
	logs := s.logs.String()
	for _, msg := range []string{`"msg":"internal error"`, `"msg":"background work stopped"`} {
		if strings.Contains(logs, msg) {
			t.Fatalf("%s logged %s:\n%s", name, msg, logs)
		}
	}
}

// demoStock publishes an item of the demo seller with stock in both demo
// stores and returns its user product and the stores.
func demoStock(t *testing.T, s *server) (string, [2]string) {
	t.Helper()
	stores := printedDemo(t, s).stores
	status, item := call(t, "POST", s.base+"/items/multiwarehouse", marketplace.DemoSellerToken, map[string]any{
		"title": "Parlante portátil", "category_id": "MLA1055", "price": 90000, "listing_type_id": "gold_special",
		"currency_id": "ARS", "condition": "new", "channels": []string{"marketplace"},
		"stock_locations": []map[string]any{{"store_id": stores[0], "quantity": 5}, {"store_id": stores[1], "quantity": 3}},
	})
	up, _ := item["user_product_id"].(string)
	if status != http.StatusCreated || up == "" {
		t.Fatalf("publish: %d %v", status, item)
	}
	return up, stores
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

// atOnce runs fn(i) for i in [0, n) on n goroutines released together, and
// returns their results in order.
func atOnce[T any](n int, fn func(i int) T) []T {
	out := make([]T, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			out[i] = fn(i)
		}()
	}
	close(start)
	wg.Wait()
	return out
}

// arrival is one notification POST that a tally received.
type arrival struct {
	id string // the notification's _id
	// held says that the POST arrived while the tally held POSTs: it was
	// never answered.
	held   bool
	header http.Header
	raw    []byte
	body   map[string]any
}

// tally is a notification receiver that counts the POSTs by resource. It
// answers each with a 200, but between hold and release: a POST that arrives
// then gets no answer until release, or until its sender goes away.
type tally struct {
	srv *httptest.Server

	mu       sync.Mutex
	arrivals map[string][]arrival
	holding  bool
	released chan struct{}
	// broken holds the POSTs whose body was not a notification (a sender
	// killed while it wrote one).
	broken [][]byte
}

func newTally(t *testing.T) *tally {
	t.Helper()
	tl := &tally{arrivals: map[string][]arrival{}}
	tl.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, err := io.ReadAll(r.Body)
		var body map[string]any
		if err == nil {
			err = json.Unmarshal(raw, &body)
		}
		resource, _ := body["resource"].(string)
		id, _ := body["_id"].(string)
		tl.mu.Lock()
		held, released := tl.holding, tl.released
		if err != nil || resource == "" {
			tl.broken = append(tl.broken, raw)
		} else {
			tl.arrivals[resource] = append(tl.arrivals[resource], arrival{id: id, held: held, header: r.Header.Clone(), raw: raw, body: body})
		}
		tl.mu.Unlock()
		if held {
			select {
			case <-released:
			case <-r.Context().Done():
				return
			}
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(tl.srv.CloseClientConnections)
	t.Cleanup(tl.srv.Close)
	t.Cleanup(tl.release)
	return tl
}

// hold makes the POSTs that arrive from now on wait for release.
func (tl *tally) hold() {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if !tl.holding {
		tl.holding, tl.released = true, make(chan struct{})
	}
}

// release answers the POSTs held and those to come.
func (tl *tally) release() {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if tl.holding {
		tl.holding = false
		close(tl.released)
	}
}

// heldCount returns how many POSTs arrived while holding.
func (tl *tally) heldCount() int {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	n := 0
	for _, a := range tl.arrivals {
		for _, p := range a {
			if p.held {
				n++
			}
		}
	}
	return n
}

// count returns how many POSTs of resource arrived.
func (tl *tally) count(resource string) int {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return len(tl.arrivals[resource])
}

// snapshot returns a copy of the arrivals by resource.
func (tl *tally) snapshot() map[string][]arrival {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	out := make(map[string][]arrival, len(tl.arrivals))
	for r, a := range tl.arrivals {
		out[r] = append([]arrival(nil), a...)
	}
	return out
}
