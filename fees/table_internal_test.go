package fees

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/internal/teststore"
	"github.com/marketplace/marketplace/storage"
)

// priceMachine imports random reference records, undoes imports as an
// interrupted batched import is undone (by writing the old values back),
// moves the clock, and after every lookup compares the service's answer,
// structured and encoded, with the frozen first implementation reading the
// same store (oracle_internal_test.go).
type priceMachine struct {
	ctx  context.Context
	st   storage.Store
	geo  *geo.Service
	fees *Service
	now  time.Time
	// currencies are the currency ids known to exist.
	currencies []string
}

var (
	machineSites      = []string{"MLA", "MLU", "MLC", "MLB"}
	machineCategories = map[string][]string{"MLA": {"MLA1051", "MLA1648", "MLA7"}, "MLU": {"MLU1234"}, "MLC": {"MLC9"}, "MLB": {"MLB1055"}}
)

func newPriceMachine(t *rapid.T, st storage.Store) *priceMachine {
	loc, err := time.LoadLocation("America/New_York") // a zone with daylight saving time
	if err != nil {
		loc = time.FixedZone("UTC-5", -5*3600)
	}
	m := &priceMachine{ctx: context.Background(), st: st,
		now: time.Date(2026, 3, 4, 15, 0, 0, 123_456_789, loc)}
	clk := clock.Func(func() time.Time { return m.now })
	m.geo = geo.New(m.st, clk)
	m.fees = New(m.st, clk, m.geo)
	if err := m.geo.LoadBuiltin(m.ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.fees.LoadBuiltin(m.ctx); err != nil {
		t.Fatal(err)
	}
	m.currencies = []string{"ARS", "BRL", "CLP", "UYU", "USD"}
	return m
}

func (m *priceMachine) upsert(kind string, data any) error {
	raw, err := json.Marshal(data)
	if err != nil {
		return err
	}
	return m.st.Update(m.ctx, func(tx storage.Tx) error {
		if ok, err := m.geo.UpsertRecord(tx, kind, raw); ok || err != nil {
			return err
		}
		_, err := m.fees.UpsertRecord(tx, kind, raw)
		return err
	})
}

func drawDecimal(t *rapid.T, label string, maxInt int64) string {
	n := rapid.Int64Range(0, maxInt).Draw(t, label+"_int")
	places := rapid.IntRange(0, 4).Draw(t, label+"_places")
	if places == 0 {
		return fmt.Sprint(n)
	}
	frac := rapid.IntRange(0, 9999).Draw(t, label+"_frac")
	return fmt.Sprintf("%d.%0*d", n, places, frac%pow10(places))
}

func pow10(n int) int {
	p := 1
	for ; n > 0; n-- {
		p *= 10
	}
	return p
}

func (m *priceMachine) ImportCurrency(t *rapid.T) {
	id := rapid.SampledFrom([]string{"ARS", "UYU", "USD", "XTS", "XTT"}).Draw(t, "currency")
	err := m.upsert(geo.KindCurrency, map[string]any{"id": id, "description": "Coin " + id, "symbol": "$",
		"decimal_places": rapid.IntRange(0, 4).Draw(t, "decimal_places")})
	if err != nil {
		t.Fatalf("import currency %s: %v", id, err)
	}
	if !strings.Contains(strings.Join(m.currencies, ","), id) {
		m.currencies = append(m.currencies, id)
	}
}

func (m *priceMachine) ImportConversion(t *rapid.T) {
	// Mostly from the currency of MLA's rules, which every MLA lookup in
	// another currency converts from.
	from := rapid.SampledFrom(append([]string{"ARS", "ARS", "ARS"}, m.currencies...)).Draw(t, "from")
	to := rapid.SampledFrom(m.currencies).Draw(t, "to")
	if from == to {
		t.Skip("same currency")
	}
	rate := drawDecimal(t, "rate", 2000)
	if rate == "0" || strings.Trim(rate, "0.") == "" {
		rate = "0.5"
	}
	if err := m.upsert(geo.KindConversion, map[string]any{"from": from, "to": to, "rate": json.Number(rate),
		"creation_date": "2026-01-02T03:04:05Z"}); err != nil {
		t.Fatalf("import conversion %s %s %s: %v", from, to, rate, err)
	}
}

func (m *priceMachine) ImportSite(t *rapid.T) {
	// MLU's default currency changes: the default asked currency and the
	// currency of rule-less types follow it.
	cur := rapid.SampledFrom(m.currencies).Draw(t, "default_currency")
	if err := m.upsert(geo.KindSite, map[string]any{"id": "MLU", "name": "Uruguay", "country_id": "UY",
		"default_currency_id": cur, "time_zone": "America/Montevideo"}); err != nil {
		t.Fatalf("import site: %v", err)
	}
}

func (m *priceMachine) drawListingType(t *rapid.T) map[string]any {
	return map[string]any{
		"site_id": rapid.SampledFrom(machineSites).Draw(t, "lt_site"),
		"id":      rapid.SampledFrom(ListingTypeIDs).Draw(t, "lt_id"),
		"name": rapid.SampledFrom([]string{"Oro", "Clásica", `Q"uoted\`, "<b>&amp;</b>", "line\u2028sep", "tab\tctl\x01"}).
			Draw(t, "lt_name"),
		"exposure":         rapid.SampledFrom(Exposures).Draw(t, "lt_exposure"),
		"requires_picture": rapid.Bool().Draw(t, "lt_picture"),
		"free_relist":      rapid.Bool().Draw(t, "lt_relist"),
		"duration_days":    rapid.SampledFrom([]int{1, 30, 60, 7300, 36500}).Draw(t, "lt_days"),
	}
}

func (m *priceMachine) drawRule(t *rapid.T) map[string]any {
	site := rapid.SampledFrom(machineSites).Draw(t, "rule_site")
	r := map[string]any{"site_id": site, "listing_type_id": rapid.SampledFrom(ListingTypeIDs).Draw(t, "rule_type")}
	if rapid.Bool().Draw(t, "rule_has_category") {
		r["category_id"] = rapid.SampledFrom(machineCategories[site]).Draw(t, "rule_category")
	}
	if rapid.Bool().Draw(t, "rule_has_currency") {
		r["currency_id"] = rapid.SampledFrom(m.currencies).Draw(t, "rule_currency")
	}
	r["meli_percentage_fee"] = json.Number(drawDecimal(t, "meli", 60))
	r["financing_add_on_fee"] = json.Number(drawDecimal(t, "financing", 39))
	for _, f := range []string{"fixed_fee", "fixed_fee_below", "listing_fee"} {
		if rapid.Bool().Draw(t, "has_"+f) {
			r[f] = json.Number(drawDecimal(t, f, 20000))
		}
	}
	return r
}

func (m *priceMachine) ImportListingType(t *rapid.T) {
	if err := m.upsert(KindListingType, m.drawListingType(t)); err != nil && !errs.Is(err, errs.Invalid) {
		t.Fatal(err)
	}
}

func (m *priceMachine) ImportRule(t *rapid.T) {
	// A rule for a type the site does not offer is refused: that is fine.
	if err := m.upsert(KindRule, m.drawRule(t)); err != nil && !errs.Is(err, errs.Invalid) {
		t.Fatal(err)
	}
}

// ImportThenUndo imports fee records, looks prices up (so that the new data
// is in the price table), then writes every fees key back as it was, as the
// undo of an interrupted batched import does.
func (m *priceMachine) ImportThenUndo(t *rapid.T) {
	saved := map[string][]byte{}
	prefix := []byte("fees/")
	err := m.st.View(m.ctx, func(tx storage.Tx) error {
		it := tx.Iterate(storage.Prefix(prefix))
		defer it.Close()
		for ; it.Valid(); it.Next() {
			v, err := it.Value()
			if err != nil {
				return err
			}
			saved[string(it.Key())] = v
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, n := 0, rapid.IntRange(1, 3).Draw(t, "undone_records"); i < n; i++ {
		var err error
		if rapid.Bool().Draw(t, "undone_is_rule") {
			err = m.upsert(KindRule, m.drawRule(t))
		} else {
			err = m.upsert(KindListingType, m.drawListingType(t))
		}
		if err != nil && !errs.Is(err, errs.Invalid) {
			t.Fatal(err)
		}
	}
	m.Lookup(t)
	err = m.st.Update(m.ctx, func(tx storage.Tx) error {
		var keys [][]byte
		it := tx.Iterate(storage.Prefix(prefix))
		for ; it.Valid(); it.Next() {
			keys = append(keys, bytes.Clone(it.Key()))
		}
		it.Close()
		for _, k := range keys {
			if _, ok := saved[string(k)]; !ok {
				if err := tx.Delete(k); err != nil {
					return err
				}
			}
		}
		for k, v := range saved {
			if err := tx.Set([]byte(k), v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (m *priceMachine) MoveClock(t *rapid.T) {
	m.now = m.now.Add(time.Duration(rapid.Int64Range(1, 400*24*3600*1000).Draw(t, "advance_ms")) * time.Millisecond)
}

// oneIn draws from valid, or one time in n from invalid.
func oneIn(t *rapid.T, label string, n int, valid, invalid []string) string {
	if rapid.IntRange(1, n).Draw(t, label+"_invalid") == 1 {
		return rapid.SampledFrom(invalid).Draw(t, label)
	}
	return rapid.SampledFrom(valid).Draw(t, label)
}

// drawQuery draws a lookup for site: mostly one the site accepts, so that
// the prices are compared, and now and then one it refuses.
func drawQuery(t *rapid.T, site string) Query {
	price := oneIn(t, "price", 10, []string{"", "0", "10630", "9999.99", "10000", "1e3", "2.5E1", "0.005", "00012.3400", "-0", "+7", ".5", "5."},
		[]string{"-1", "abc", "1,5", "1e31", "12345678901234567890123456789012345678901"})
	if rapid.Bool().Draw(t, "random_price") {
		price = drawDecimal(t, "price", rapid.SampledFrom([]int64{20, 20_000, 50_000_000}).Draw(t, "price_max"))
	}
	categories := append([]string{"", "", ""}, machineCategories[site]...)
	return Query{
		Price:         price,
		Quantity:      oneIn(t, "quantity", 10, []string{"", "1", "3", "1000000000"}, []string{"0", "-2", "two", "1000000001"}),
		ListingTypeID: oneIn(t, "listing_type_id", 10, append([]string{"", "", "", ""}, ListingTypeIDs...), []string{"platinum"}),
		CategoryID:    oneIn(t, "category_id", 10, categories, []string{"MLB1055", "MLC9", "general", "MLA"}),
		CurrencyID:    oneIn(t, "currency_id", 10, []string{"", "", "", "ARS", "USD", "UYU", "CLP", "BRL", "XTS", "XTT"}, []string{"XYZ"}),
	}
}

// sameError reports whether two lookup errors are the same answer.
func sameError(a, b error) bool {
	if (a == nil) != (b == nil) {
		return false
	}
	if a == nil {
		return true
	}
	da, db := errs.As(a), errs.As(b)
	if da == nil || db == nil {
		return a.Error() == b.Error()
	}
	return da.Kind == db.Kind && da.Message == db.Message
}

func encodeLikeTheServer(t *rapid.T, v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// Lookup asks both routes' questions and compares every answer with the
// first implementation's.
func (m *priceMachine) Lookup(t *rapid.T) {
	site := rapid.SampledFrom([]string{"MLA", "MLU", "MLU", "MLC", "MLB", "XXX"}).Draw(t, "site")
	q := drawQuery(t, site)

	want, wantErr := oracleListingPrices(m.ctx, m.st, m.now, site, q)
	got, err := m.fees.ListingPrices(m.ctx, site, q)
	if !sameError(err, wantErr) {
		t.Fatalf("ListingPrices(%s, %+v): err %v, want %v", site, q, err, wantErr)
	}
	raw, jerr := m.fees.AppendListingPricesJSON(m.ctx, []byte("prefix"), site, q)
	if !sameError(jerr, wantErr) {
		t.Fatalf("AppendListingPricesJSON(%s, %+v): err %v, want %v", site, q, jerr, wantErr)
	}
	if wantErr == nil {
		var wantJSON []byte
		if q.ListingTypeID != "" {
			wantJSON = encodeLikeTheServer(t, want[0])
		} else {
			wantJSON = encodeLikeTheServer(t, want)
		}
		if g := encodeLikeTheServer(t, got); !bytes.Equal(g, encodeLikeTheServer(t, want)) {
			t.Fatalf("ListingPrices(%s, %+v):\n got %s\nwant %s", site, q, g, encodeLikeTheServer(t, want))
		}
		if !bytes.Equal(raw, append([]byte("prefix"), wantJSON...)) {
			t.Fatalf("AppendListingPricesJSON(%s, %+v):\n got %s\nwant prefix%s", site, q, raw, wantJSON)
		}
	} else if string(raw) != "prefix" {
		t.Fatalf("AppendListingPricesJSON(%s, %+v) failed and appended %q", site, q, raw)
	}

	lt := rapid.SampledFrom(append([]string{"platinum"}, ListingTypeIDs...)).Draw(t, "path_listing_type_id")
	q.ListingTypeID = ""
	wantOne, wantErr := oracleListingPrice(m.ctx, m.st, m.now, site, lt, q)
	gotOne, err := m.fees.ListingPrice(m.ctx, site, lt, q)
	if !sameError(err, wantErr) {
		t.Fatalf("ListingPrice(%s, %s, %+v): err %v, want %v", site, lt, q, err, wantErr)
	}
	raw, jerr = m.fees.AppendListingPriceJSON(m.ctx, nil, site, lt, q)
	if !sameError(jerr, wantErr) {
		t.Fatalf("AppendListingPriceJSON(%s, %s, %+v): err %v, want %v", site, lt, q, jerr, wantErr)
	}
	if wantErr == nil {
		w := encodeLikeTheServer(t, wantOne)
		if g := encodeLikeTheServer(t, gotOne); !bytes.Equal(g, w) {
			t.Fatalf("ListingPrice(%s, %s, %+v):\n got %s\nwant %s", site, lt, q, g, w)
		}
		if !bytes.Equal(raw, w) {
			t.Fatalf("AppendListingPriceJSON(%s, %s, %+v):\n got %s\nwant %s", site, lt, q, raw, w)
		}
	}
}

func (m *priceMachine) Check(*rapid.T) {}

// TestListingPrices_AnswerAsTheFirstImplementationOverImportsAndUndos runs
// the machine: whatever was imported or undone last, every answer is the one
// computed from storage on the spot.
func TestListingPrices_AnswerAsTheFirstImplementationOverImportsAndUndos(t *testing.T) {
	owner := t
	rapid.Check(t, func(t *rapid.T) {
		st, done := teststore.Open(t, owner)
		defer done()
		m := newPriceMachine(t, st)
		actions := rapid.StateMachineActions(m)
		// Lookups are most of the steps, so that a change is usually
		// followed by lookups that a stale table would answer wrongly.
		for i := range 3 {
			actions[fmt.Sprint("Lookup", i)] = m.Lookup
		}
		t.Repeat(actions)
	})
}

// A newer embedded dataset, loaded when the engine opens the store, is
// answered at once by a service that had already priced the old one.
func TestListingPrice_NewerEmbeddedDatasetIsAnsweredAtOnce(t *testing.T) {
	ctx := context.Background()
	st := teststore.New(t)
	now := time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC)
	clk := clock.NewManual(now)
	g := geo.New(st, clk)
	f := New(st, clk, g)
	if err := g.LoadBuiltin(ctx); err != nil {
		t.Fatal(err)
	}
	if err := f.LoadBuiltin(ctx); err != nil {
		t.Fatal(err)
	}
	// fee is the served sale fee, and want the one of the rule the store
	// holds, priced by the frozen oracle.
	fee := func() (got, want string) {
		t.Helper()
		q := Query{Price: "10630"}
		lp, err := f.ListingPrice(ctx, "MLA", "gold_special", q)
		if err != nil {
			t.Fatal(err)
		}
		o, err := oracleListingPrice(ctx, st, now, "MLA", "gold_special", q)
		if err != nil {
			t.Fatal(err)
		}
		return lp.SaleFeeAmount.String(), o.SaleFeeAmount.String()
	}
	before, want := fee()
	if before != want {
		t.Fatalf("shipped dataset: %s, want %s", before, want)
	}

	shipped, err := embedded()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { embeddedSet = shipped })
	newer := shipped
	newer.Version++
	newer.Records = slices.Clone(shipped.Records)
	for i, r := range newer.Records {
		var rule Rule
		if r.Kind != KindRule || json.Unmarshal(r.Data, &rule) != nil {
			continue
		}
		if rule.SiteID == "MLA" && rule.ListingTypeID == "gold_special" && rule.CategoryID == GeneralCategory {
			newer.Records[i].Data = json.RawMessage(`{"site_id":"MLA","listing_type_id":"gold_special","category_id":"general","meli_percentage_fee":20}`)
		}
	}
	embeddedSet = newer
	if err := f.LoadBuiltin(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := fee(); got != want || got == before {
		t.Fatalf("newer dataset: %s, want %s (the newer rule's), not %s", got, want, before)
	}
}
