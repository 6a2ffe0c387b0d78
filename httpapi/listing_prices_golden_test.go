package httpapi_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
)

var updateListingPricesGolden = flag.Bool("update-listing-prices", false,
	"write testdata/listing_prices.golden from the answers of this build (only ever from the build whose answers are the reference)")

// listingPricesGoldenImport adds reference data that makes lookups convert:
// a currency with one decimal, ratios to it, and category rules with fixed
// fees in another currency than the site's.
var listingPricesGoldenImport = map[string]any{"records": []any{
	map[string]any{"kind": "currency", "data": map[string]any{"id": "XTS", "description": "Test coin", "symbol": "T$", "decimal_places": 1}},
	map[string]any{"kind": "currency_conversion", "data": map[string]any{"from": "ARS", "to": "XTS", "rate": "0.37", "creation_date": "2026-01-02T03:04:05Z"}},
	map[string]any{"kind": "currency_conversion", "data": map[string]any{"from": "XTS", "to": "UYU", "rate": "1.7", "creation_date": "2026-01-02T03:04:05Z"}},
	map[string]any{"kind": "fee_rule", "data": map[string]any{"site_id": "MLU", "listing_type_id": "gold_special", "category_id": "MLU1055", "currency_id": "XTS",
		"meli_percentage_fee": 8.25, "fixed_fee": 10, "fixed_fee_below": 500, "listing_fee": 3.3}},
	map[string]any{"kind": "fee_rule", "data": map[string]any{"site_id": "MLA", "listing_type_id": "gold", "category_id": "MLA1055", "currency_id": "USD",
		"meli_percentage_fee": 11, "financing_add_on_fee": 2.5, "fixed_fee": 0.35, "listing_fee": 1.25}},
}}

// listingPricesGoldenPaths are the lookups compared with the golden answers:
// every site and listing type, both routes, and the query parameters in
// combinations, accepted and refused.
func listingPricesGoldenPaths() []string {
	sites := []string{"MLA", "MLB", "MLM", "MLC", "MCO", "MLU", "MPE", "MEC", "MLV", "XXX"}
	types := []string{"gold_pro", "gold_premium", "gold_special", "gold", "silver", "bronze", "free", "platinum"}
	prices := []string{"", "0", "10630", "9999.995", "125.5", "1e3", "0.01", "-3", "1,5"}
	quantities := []string{"", "3", "", "1", "0"}
	currencies := []string{"", "ARS", "USD", "XTS", "UYU", "CLP", "XYZ"}
	var paths []string
	n := 0
	for _, site := range sites {
		categories := []string{"", site + "1051", "", site + "1055", site + "1648", "MLB1055"}
		for _, price := range prices {
			for _, cur := range currencies {
				// A deterministic spread of the other parameters.
				n++
				q := url.Values{}
				if price != "" {
					q.Set("price", price)
				}
				if cur != "" {
					q.Set("currency_id", cur)
				}
				if c := categories[n%len(categories)]; c != "" {
					q.Set("category_id", c)
				}
				if qu := quantities[n%len(quantities)]; qu != "" {
					q.Set("quantity", qu)
				}
				base := "/sites/" + site + "/listing_prices"
				paths = append(paths, base+"?"+q.Encode())
				lt := types[n%len(types)]
				paths = append(paths, base+"/"+lt+"?"+q.Encode())
				q.Set("listing_type_id", types[(n+3)%len(types)])
				paths = append(paths, base+"?"+q.Encode())
			}
		}
	}
	return paths
}

func bodyHash(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:12])
}

// TestListingPrices_AnswersAreTheGoldenBytes compares the status and the
// exact body of every lookup of listingPricesGoldenPaths with the answers
// recorded from the first implementation (testdata/listing_prices.golden).
func TestListingPrices_AnswersAreTheGoldenBytes(t *testing.T) {
	ts := newTestServer(t)
	u := ts.mustUser("MLA")
	if res := ts.do(http.MethodPut, "/operator/reference", testOperatorToken, listingPricesGoldenImport); res.Status != http.StatusOK {
		t.Fatalf("import: %d %s", res.Status, res.Raw)
	}
	const file = "testdata/listing_prices.golden"
	var lines []string
	for _, p := range listingPricesGoldenPaths() {
		res := ts.get(p, u.Token)
		lines = append(lines, fmt.Sprintf("%d %s %s", res.Status, bodyHash(res.Raw), p))
	}
	if *updateListingPricesGolden {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	i := 0
	for ; sc.Scan(); i++ {
		if i >= len(lines) {
			t.Fatalf("golden has more lookups than the test")
		}
		if sc.Text() != lines[i] {
			p := lines[i][strings.LastIndexByte(lines[i], ' ')+1:]
			t.Errorf("answer changed:\n got  %s\nwant %s\nbody %s", lines[i], sc.Text(), ts.get(p, u.Token).Raw)
		}
	}
	if i != len(lines) {
		t.Fatalf("golden has %d lookups, the test %d", i, len(lines))
	}
}
