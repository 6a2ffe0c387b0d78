package roundtrips

import (
	"flag"
	"fmt"
	"math"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/marketplace/marketplace/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var write = flag.Bool("roundtrips.write", false, "write the measured table into docs/roundtrips.md instead of checking the bounds")

// requestsPerRoute is how many requests of each case are counted; their
// mean is the route's figure. One more goes first, uncounted: a route's
// first request prepares its statements on a connection (pgx caches them
// per connection), which a server pays once.
const requestsPerRoute = 10

// The targets: a read asks PostgreSQL at most twice, a write at most four
// times (docs/roundtrips.md).
const (
	readTarget  = 2
	writeTarget = 4
)

// bounds are the most round trips each case may make per request, set a
// little above what was measured: lower one when a change lowers its
// route's count, so that the gain is kept. A route with no bound fails.
var bounds = map[string]float64{
	"GET /health":                               0.5,
	"HEAD /health":                              0.5,
	"GET /ready":                                1.5,
	"HEAD /ready":                               1.5,
	"GET /version":                              0.5,
	"HEAD /version":                             0.5,
	"GET /openapi.json":                         0.5,
	"GET /metrics":                              5.5,
	"GET /users/:user_id":                       1.5,
	"GET /users/me":                             1.5,
	"GET /users/:user_id/stores/search":         2.5,
	"POST /operator/users":                      3.5,
	"GET /operator/users/:user_id":              1.5,
	"POST /operator/users/:user_id/tokens":      3.5,
	"DELETE /operator/users/:user_id/tokens":    4.5,
	"POST /operator/tokens/revoke":              2.5,
	"PUT /operator/users/:user_id/tags":         2.5,
	"POST /operator/users/:user_id/stores":      4.5,
	"PUT /operator/reference":                   1.5,
	"POST /items":                               4.5,
	"POST /items/multiwarehouse":                4.5,
	"GET /items/:item_id":                       2.5,
	"PUT /items/:item_id":                       3.5,
	"POST /items/:item_id/relist":               7.5,
	"GET /user-products/:user_product_id/stock": 1.5,
	"PUT /user-products/:user_product_id/stock/type/seller_warehouse": 3.5,
	"GET /sites/:site_id/search":                                      3.5,
	"POST /operator/orders":                                           4.5,
	"GET /orders/:order_id":                                           1.5,
	"GET /orders/search":                                              2.5,
	"GET /packs/:pack_id":                                             2.5,
	"GET /shipments/:shipment_id":                                     1.5,
	"GET /shipments/:shipment_id/history":                             1.5,
	"GET /shipment_statuses":                                          0.5,
	"GET /operator/orders":                                            2.5,
	"GET /operator/orders/:order_id":                                  1.5,
	"POST /operator/orders/:order_id/payments":                        4.5,
	"POST /operator/orders/:order_id/cancel":                          4.5,
	"PUT /operator/shipments/:shipment_id/status":                     4.5,
	"GET /questions/:question_id":                                     2.5,
	"GET /questions/search":                                           3.5,
	"POST /questions":                                                 3.5,
	"DELETE /questions/:question_id":                                  4.5,
	"POST /answers":                                                   4.5,
	"POST /my/questions/hidden":                                       4.5,
	"PUT /operator/questions/:question_id":                            4.5,
	"POST /users/:user_id/questions_blacklist":                        4.5,
	"GET /users/:user_id/questions_blacklist":                         2.5,
	"DELETE /users/:user_id/questions_blacklist/:blocked_id":          3.5,
	"GET /users/:user_id/questions/response_time":                     1.5,
	"GET /sites/:site_id/listing_prices":                              1.5,
	"GET /sites/:site_id/listing_prices/:listing_type_id":             1.5,
	"GET /classified_locations/countries":                             1.5,
	"GET /classified_locations/countries/:country_id":                 1.5,
	"GET /classified_locations/states/:state_id":                      2.5,
	"GET /classified_locations/cities/:city_id":                       3.5,
	"GET /currencies":                                                 1.5,
	"GET /currencies/:currency_id":                                    1.5,
	"GET /currency_conversions/search":                                3.5,
	"GET /countries/:country_id/zip_codes/:zip_code":                  2.5,
	"GET /country/:country_id/zip_codes/search_between":               2.5,
	"GET /sites":                                    1.5,
	"GET /sites/:site_id":                           3.5,
	"GET /sites/:site_id/categories":                2.5,
	"GET /categories/:category_id":                  3.5,
	"GET /sites/:site_id/domains":                   1.5,
	"GET /catalog_domains/:domain_id/products":      2.5,
	"GET /products/:product_id":                     2.5,
	"GET /items":                                    3.5,
	"GET /users":                                    2.5,
	"GET /users/:user_id/items/search":              2.5,
	"POST /operator/applications":                   3.5,
	"GET /operator/applications/:app_id":            1.5,
	"PUT /operator/applications/:app_id":            2.5,
	"GET /operator/applications/:app_id/deliveries": 2.5,
	"GET /missed_feeds":                             2.5,
	"POST /operator/applications/:app_id/deliveries/:delivery_id/redeliver": 3.5,
	"GET /authorization":                            3.5,
	"POST /authorization":                           5.5,
	"POST /operator/authorizations":                 3.5,
	"POST /oauth/token":                             4.5,
	"POST /operator/applications/:app_id/secret":    2.5,
	"POST /users/test_user":                         4.5,
	"GET /operator/users":                           2.5,
	"GET /operator/users/:user_id/stores":           2.5,
	"GET /operator/items":                           3.5,
	"GET /operator/applications":                    2.5,
	"GET /operator/requests":                        0.5,
	"POST /operator/requests/count":                 0.5,
	"POST /operator/requests/find":                  0.5,
	"DELETE /operator/requests":                     0.5,
	"POST /operator/faults":                         2.5,
	"GET /operator/faults":                          1.5,
	"GET /operator/faults/:fault_id":                1.5,
	"DELETE /operator/faults/:fault_id":             3.5,
	"DELETE /operator/faults":                       2.5,
	"POST /operator/stubs":                          4.5,
	"GET /operator/stubs":                           0.5,
	"GET /operator/stubs/:stub_id":                  0.5,
	"DELETE /operator/stubs/:stub_id":               4.5,
	"DELETE /operator/stubs":                        5.5,
	"POST /operator/recordings/start":               0.5,
	"GET /operator/recordings/status":               0.5,
	"POST /operator/recordings/stop":                0.5,
	"POST /operator/recordings/snapshot":            0.5,
	"GET /operator/clock":                           0.5,
	"PUT /operator/clock":                           0.5,
	"PUT /operator/fixtures":                        122.5,
	"POST /operator/snapshots":                      75.5,
	"GET /operator/snapshots":                       1.5,
	"DELETE /operator/snapshots/:snapshot_id":       43.5,
	"POST /operator/snapshots/:snapshot_id/restore": 100.5,
	"POST /operator/reset":                          29.5,
}

// measured is one case's figure.
type measured struct {
	c    routeCase
	mean float64
}

func TestRoundTrips_EveryRouteStaysWithinItsBound(t *testing.T) {
	w := newWorld(t)
	checkEveryRouteHasACase(t, w)
	if t.Failed() {
		return
	}
	idle := w.idle()
	var results []measured
	for _, c := range cases {
		var total uint64
		for i := 0; i <= requestsPerRoute; i++ {
			r := c.req(w, i)
			before := w.proxy.RoundTrips()
			res := w.serve(r)
			n := w.proxy.RoundTrips() - before
			if ok := res.status == c.status || (c.status == 0 && res.status >= 200 && res.status < 300); !ok {
				t.Fatalf("%s: %s %s answered %d: %s", c.key(), r.method, r.target, res.status, res.raw)
			}
			if i > 0 {
				total += n
			}
		}
		results = append(results, measured{c: c, mean: float64(total) / requestsPerRoute})
	}
	// Background work would have counted in the requests' figures.
	if after := w.idle(); idle+after > 0 {
		t.Fatalf("the server made %d round trips while no request ran: the figures include background work "+
			"(a poll, or a subscription to changes, started without Start: a LISTEN connection pings once a second)", idle+after)
	}
	for _, r := range results {
		if target := r.target(); r.mean > target {
			t.Logf("%s: %.1f round trips per request, above the target of %g for a %s", r.c.key(), r.mean, target, r.kind())
		}
	}
	if *write {
		writeTable(t, results)
		return
	}
	for _, r := range results {
		bound, ok := bounds[r.c.key()]
		switch {
		case !ok:
			t.Errorf("%s: no bound; %.1f round trips per request measured: add %q: %g to bounds", r.c.key(), r.mean, r.c.key(), suggestedBound(r.mean))
		case r.mean > bound:
			t.Errorf("%s: %.1f round trips per request, more than its bound %g", r.c.key(), r.mean, bound)
		}
	}
}

// checkEveryRouteHasACase fails for a route of the table that no case
// calls, and for a case whose route is not in the table.
func checkEveryRouteHasACase(t *testing.T, w *world) {
	t.Helper()
	routes := map[string]bool{}
	for _, r := range w.server.Routes() {
		routes[r.Method+" "+r.Path] = true
	}
	called := map[string]bool{}
	for _, c := range cases {
		route := c.method + " " + c.path
		if !routes[route] {
			t.Errorf("case %s: %s is not a route of the table", c.key(), route)
		}
		called[route] = true
	}
	for r := range routes {
		if !called[r] {
			t.Errorf("%s has no case: add one to cases (cases_test.go)", r)
		}
	}
}

// idle returns the round trips the server makes over a moment with no
// requests.
func (w *world) idle() uint64 {
	before := w.proxy.RoundTrips()
	time.Sleep(300 * time.Millisecond)
	return w.proxy.RoundTrips() - before
}

func (r measured) target() float64 {
	if r.c.isWrite() {
		return writeTarget
	}
	return readTarget
}

func (r measured) kind() string {
	if r.c.isWrite() {
		return "write"
	}
	return "read"
}

// suggestedBound is a little above a measured mean: the next half above
// it plus a fifth.
func suggestedBound(mean float64) float64 {
	return math.Ceil((mean+0.2)*2) / 2
}

const (
	docPath    = "../../docs/roundtrips.md"
	beginTable = "<!-- roundtrips table: generated by go test ./internal/roundtrips/ -roundtrips.write -->"
	endTable   = "<!-- end of the roundtrips table -->"
)

var routeParam = regexp.MustCompile(`:([a-z_]+)`)

// writeTable replaces the generated section of docs/roundtrips.md, and
// logs the bounds the figures suggest.
func writeTable(t *testing.T, results []measured) {
	t.Helper()
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok1 := strings.Cut(string(doc), beginTable)
	_, after, ok2 := strings.Cut(rest, endTable)
	if !ok1 || !ok2 {
		t.Fatalf("%s has no generated section between %q and %q", docPath, beginTable, endTable)
	}
	var b strings.Builder
	b.WriteString(beginTable + "\n\n")
	b.WriteString("| Route | Kind | Round trips per request | Target |\n|---|---|--:|--:|\n")
	var sugg strings.Builder
	for _, r := range results {
		method, path, _ := strings.Cut(r.c.key(), " ")
		over := ""
		if r.mean > r.target() {
			over = " (above)"
		}
		fmt.Fprintf(&b, "| `%s %s` | %s | %.1f | %g%s |\n", method, routeParam.ReplaceAllString(path, "{$1}"), r.kind(), r.mean, r.target(), over)
		fmt.Fprintf(&sugg, "\t%q: %g,\n", r.c.key(), suggestedBound(r.mean))
	}
	b.WriteString("\n" + endTable)
	if err := os.WriteFile(docPath, []byte(before+b.String()+after), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s; bounds from these figures:\n%s", docPath, sugg.String())
}
