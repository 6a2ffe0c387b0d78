package stock_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"
	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/teststore"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/stock"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/schema"
)

func searchIDs(t testing.TB, e *env, q stock.SearchQuery) []string {
	t.Helper()
	if q.Limit == 0 {
		q.Limit = 1000
	}
	res, err := e.svc.Search(ctx, q)
	if err != nil {
		t.Fatalf("search %+v: %v", q, err)
	}
	ids := []string{}
	for _, it := range res.Results {
		ids = append(ids, it.ID)
	}
	return ids
}

func TestSearch_MatchesEveryWordIgnoringCaseAndAccents(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	seller := e.mustUser("MLA")
	a := e.mustPublish(seller, plainItem("Zapatillas Niño Running", "100", 1)).ID
	b := e.mustPublish(seller, plainItem("Campera niño invierno", "200", 1)).ID
	c := e.mustPublish(seller, plainItem("Zapatillas de Fútbol", "300", 1)).ID
	cases := []struct {
		q    string
		want []string
	}{
		{"NINO", []string{a, b}},
		{"niño", []string{a, b}},
		{"zapatillas running", []string{a}},
		{"  ZAPATILLAS,  futbol! ", []string{c}},
		{"futbol running", []string{}},
		{"zapatilla", []string{}}, // whole words only
		{"", []string{a, b, c}},
	}
	for _, cs := range cases {
		got := searchIDs(t, e, stock.SearchQuery{SiteID: "MLA", Q: cs.q})
		slices.Sort(got)
		want := slices.Clone(cs.want)
		slices.Sort(want)
		is.Equal(got, want) // query words
	}
}

// TestSearch_TitlesAndQueriesAreFoldedTheSameUnicodeWay: composed or
// decomposed marks, carons, stroked letters, full-width forms and ß fold to
// the plain word on both sides, and a mark never splits a word.
func TestSearch_TitlesAndQueriesAreFoldedTheSameUnicodeWay(t *testing.T) {
	e := newEnv(t)
	seller := e.mustUser("MLA")
	skoda := e.mustPublish(seller, plainItem("Škoda Fabia espejo", "100", 1)).ID
	nino := e.mustPublish(seller, plainItem("Mochila nin\u0303o", "100", 1)).ID
	wide := e.mustPublish(seller, plainItem("Ｃａｍｉｓｅｔａ azul", "100", 1)).ID
	street := e.mustPublish(seller, plainItem("Mapa Straße", "100", 1)).ID
	oslo := e.mustPublish(seller, plainItem("Guía Øslo", "100", 1)).ID
	for q, want := range map[string]string{
		"skoda": skoda, "ŠKODA": skoda, "S\u030ckoda": skoda,
		"nino": nino, "niño": nino, "NIÑO": nino, "nin\u0303o": nino,
		"camiseta": wide, "ＣＡＭＩＳＥＴＡ": wide,
		"strasse": street, "STRASSE": street, "straße": street,
		"oslo": oslo, "guia": oslo,
	} {
		got := searchIDs(t, e, stock.SearchQuery{SiteID: "MLA", Q: q})
		if !slices.Equal(got, []string{want}) {
			t.Errorf("search %q found %v, want only %s", q, got, want)
		}
	}
	// "nin" is not a word of "nin\u0303o": the mark does not split it.
	if got := searchIDs(t, e, stock.SearchQuery{SiteID: "MLA", Q: "nin"}); len(got) != 0 {
		t.Errorf("search %q found %v, want nothing", "nin", got)
	}
}

func TestSearch_OnlyActiveItemsOfTheSiteAreFound(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	seller := e.mustUser("MLA")
	br := e.mustUser("MLB")
	it := e.mustPublish(seller, plainItem("Bicicleta rodado 29", "100", 1)).ID
	e.mustPublish(br, stock.NewItem{Title: "Bicicleta aro 29", CategoryID: "MLB1055", Price: money.FromInt(100), ListingTypeID: "gold_special", AvailableQuantity: new(int64)})
	is.Equal(searchIDs(t, e, stock.SearchQuery{SiteID: "MLA", Q: "bicicleta"}), []string{it})

	paused, closed := stock.StatusPaused, stock.StatusClosed
	active := stock.StatusActive
	_, err := e.svc.UpdateItem(ctx, seller, it, stock.ItemUpdate{Status: &paused})
	is.NoErr(err)
	is.Equal(searchIDs(t, e, stock.SearchQuery{SiteID: "MLA", Q: "bicicleta"}), []string{}) // paused: gone
	is.Equal(searchIDs(t, e, stock.SearchQuery{SiteID: "MLA"}), []string{})
	_, err = e.svc.UpdateItem(ctx, seller, it, stock.ItemUpdate{Status: &active})
	is.NoErr(err)
	is.Equal(searchIDs(t, e, stock.SearchQuery{SiteID: "MLA", Q: "bicicleta"}), []string{it}) // active again
	_, err = e.svc.UpdateItem(ctx, seller, it, stock.ItemUpdate{Status: &closed})
	is.NoErr(err)
	is.Equal(searchIDs(t, e, stock.SearchQuery{SiteID: "MLA", Q: "bicicleta"}), []string{}) // closed: gone
}

func TestSearch_IndexFollowsTitleAndPriceChanges(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	seller := e.mustUser("MLA")
	a := e.mustPublish(seller, plainItem("Lámpara de pie", "500", 1)).ID
	b := e.mustPublish(seller, plainItem("Lámpara de mesa", "300", 1)).ID
	is.Equal(searchIDs(t, e, stock.SearchQuery{SiteID: "MLA", Q: "lampara", Sort: stock.SortPriceAsc}), []string{b, a})
	price := money.MustParse("100.5")
	_, err := e.svc.UpdateItem(ctx, seller, a, stock.ItemUpdate{Price: &price})
	is.NoErr(err)
	is.Equal(searchIDs(t, e, stock.SearchQuery{SiteID: "MLA", Q: "lampara", Sort: stock.SortPriceAsc}), []string{a, b})
	title := "Velador de noche"
	_, err = e.svc.UpdateItem(ctx, seller, a, stock.ItemUpdate{Title: &title})
	is.NoErr(err)
	is.Equal(searchIDs(t, e, stock.SearchQuery{SiteID: "MLA", Q: "lampara"}), []string{b})
	is.Equal(searchIDs(t, e, stock.SearchQuery{SiteID: "MLA", Q: "velador"}), []string{a})
}

func TestSearch_Sorts(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	seller := e.mustUser("MLA")
	long := e.mustPublish(seller, plainItem("Mate de calabaza con bombilla", "900", 1)).ID
	short := e.mustPublish(seller, plainItem("Mate", "1500", 1)).ID
	mid := e.mustPublish(seller, plainItem("Mate imperial", "900", 1)).ID
	is.Equal(searchIDs(t, e, stock.SearchQuery{SiteID: "MLA", Q: "mate"}), []string{short, mid, long})                            // fewest other words first
	is.Equal(searchIDs(t, e, stock.SearchQuery{SiteID: "MLA", Q: "mate", Sort: stock.SortPriceAsc}), []string{long, mid, short})  // ties by publication
	is.Equal(searchIDs(t, e, stock.SearchQuery{SiteID: "MLA", Q: "mate", Sort: stock.SortPriceDesc}), []string{short, long, mid}) // ties by publication
}

func TestSearch_Errors(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		name string
		q    stock.SearchQuery
		kind errs.Kind
		msg  string
	}{
		{"UnknownSite", stock.SearchQuery{SiteID: "XXX", Limit: 5}, errs.NotFound, "Site not found: XXX"},
		{"UnknownSort", stock.SearchQuery{SiteID: "MLA", Sort: "cheapest", Limit: 5}, errs.Invalid, "Invalid sort: cheapest. Valid values are: [relevance, price_asc, price_desc]"},
		{"NegativeOffset", stock.SearchQuery{SiteID: "MLA", Offset: -1, Limit: 5}, errs.Invalid, "Invalid offset: -1. It must be a non-negative integer"},
		{"NegativeLimit", stock.SearchQuery{SiteID: "MLA", Offset: 2, Limit: -5}, errs.Invalid, "Invalid limit: -5. It must be a non-negative integer"},
		{"TooManyWords", stock.SearchQuery{SiteID: "MLA", Q: manyWords(21), Limit: 5}, errs.Invalid, "Invalid q: at most 20 words are allowed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := e.svc.Search(ctx, c.q)
			de := errs.As(err)
			if de == nil || de.Kind != c.kind || de.Message != c.msg {
				t.Fatalf("err = %v, want %v %q", err, c.kind, c.msg)
			}
		})
	}
}

func manyWords(n int) string {
	var w []string
	for i := 0; i < n; i++ {
		w = append(w, fmt.Sprintf("w%d", i))
	}
	return strings.Join(w, " ")
}

// countingStore counts the item records read, to show that a search reads
// posting lists and only the items of the page.
type countingStore struct {
	storage.Store
	itemReads int
	itemKeys  int
}

var itemPrefix = keycodec.New("stk/item")

type countingTx struct {
	storage.Tx
	s *countingStore
}

func (c *countingStore) View(ctx context.Context, fn func(storage.Tx) error) error {
	return c.Store.View(ctx, func(tx storage.Tx) error { return fn(countingTx{tx, c}) })
}

func (t countingTx) Get(k []byte) ([]byte, error) {
	if bytes.HasPrefix(k, itemPrefix) {
		t.s.itemReads++
	}
	return t.Tx.Get(k)
}

func (t countingTx) Iterate(r storage.Range) storage.Iterator {
	if bytes.HasPrefix(r.Start, itemPrefix) {
		t.s.itemKeys++
	}
	return t.Tx.Iterate(r)
}

func TestSearch_ReadsPostingListsNotEveryItem(t *testing.T) {
	cs := &countingStore{Store: teststore.New(t)}
	e := newEnvOn(t, cs)
	seller := e.mustUser("MLA")
	for i := 0; i < 200; i++ {
		title := fmt.Sprintf("Remera algodón talle %d", i)
		if i%50 == 0 {
			title += " estampada"
		}
		e.mustPublish(seller, plainItem(title, fmt.Sprint(100+i), 1))
	}
	cs.itemReads, cs.itemKeys = 0, 0
	res, err := e.svc.Search(ctx, stock.SearchQuery{SiteID: "MLA", Q: "remera estampada", Limit: 3})
	if err != nil || res.Total != 4 || len(res.Results) != 3 {
		t.Fatalf("search = %d results of %d (%v), want 3 of 4", len(res.Results), res.Total, err)
	}
	if cs.itemReads != 3 || cs.itemKeys != 0 {
		t.Fatalf("search read %d item records and scanned items %d times; want only the 3 of the page", cs.itemReads, cs.itemKeys)
	}
}

// TestSearch_PagingWalksEveryResultOnceInOrder: for any data, query, sort
// and limit, walking the pages from offset 0 gives the full result exactly
// once, in order, and any offset gives the matching slice of it.
func TestSearch_PagingWalksEveryResultOnceInOrder(t *testing.T) {
	vocab := []string{"mesa", "Mesá", "silla", "roble", "PINO", "niño", "luz"}
	owner := t
	rapid.Check(t, func(t *rapid.T) {
		e, done := newPropertyEnv(t, owner)
		defer done()
		seller := e.mustUser("MLA")
		type modelItem struct {
			id    string
			words []string
			cents int64
		}
		var model []modelItem
		n := rapid.IntRange(0, 25).Draw(t, "items")
		for i := 0; i < n; i++ {
			ws := rapid.SliceOfN(rapid.SampledFrom(vocab), 1, 4).Draw(t, fmt.Sprintf("title%d", i))
			cents := rapid.Int64Range(1, 5000).Draw(t, fmt.Sprintf("cents%d", i))
			price := money.FromInt(cents).Quo(money.FromInt(100), 2)
			p := e.mustPublish(seller, plainItem(strings.Join(ws, " "), price.String(), 1))
			folded := []string{}
			for _, w := range ws {
				folded = append(folded, strings.NewReplacer("á", "a", "ñ", "n").Replace(strings.ToLower(w)))
			}
			model = append(model, modelItem{id: p.ID, words: folded, cents: cents})
		}
		q := rapid.SliceOfN(rapid.SampledFrom(vocab), 0, 2).Draw(t, "query")
		sort := rapid.SampledFrom([]string{"", stock.SortRelevance, stock.SortPriceAsc, stock.SortPriceDesc}).Draw(t, "sort")
		query := stock.SearchQuery{SiteID: "MLA", Q: strings.Join(q, " "), Sort: sort, Limit: 1000}
		full, err := e.svc.Search(ctx, query)
		if err != nil {
			t.Fatalf("search: %v", err)
		}
		// The matches are exactly the model's items holding every query word.
		var want []string
		var matched []modelItem
		for _, m := range model {
			ok := true
			for _, w := range q {
				w = strings.NewReplacer("á", "a", "ñ", "n").Replace(strings.ToLower(w))
				ok = ok && slices.Contains(m.words, w)
			}
			if ok {
				want = append(want, m.id)
				matched = append(matched, m)
			}
		}
		// The model's order: the sort key, then publication (model order).
		distinct := func(ws []string) int { c := slices.Clone(ws); slices.Sort(c); return len(slices.Compact(c)) }
		slices.SortStableFunc(matched, func(a, b modelItem) int {
			switch sort {
			case stock.SortPriceAsc:
				return int(a.cents - b.cents)
			case stock.SortPriceDesc:
				return int(b.cents - a.cents)
			}
			return distinct(a.words) - distinct(b.words)
		})
		var fullIDs []string
		for _, it := range full.Results {
			fullIDs = append(fullIDs, it.ID)
		}
		if full.Total != len(want) || !sameSet(fullIDs, want) {
			t.Fatalf("matches %v (total %d), model %v", fullIDs, full.Total, want)
		}
		for i, m := range matched {
			if fullIDs[i] != m.id {
				t.Fatalf("order %v, model %v", fullIDs, matched)
			}
		}
		limit := rapid.IntRange(1, 7).Draw(t, "limit")
		var walked []string
		for off := 0; off < full.Total+limit; off += limit {
			pg, err := e.svc.Search(ctx, stock.SearchQuery{SiteID: "MLA", Q: query.Q, Sort: sort, Offset: off, Limit: limit})
			if err != nil {
				t.Fatalf("page %d: %v", off, err)
			}
			if pg.Total != full.Total || len(pg.Results) > limit {
				t.Fatalf("page at %d: %d results of total %d, limit %d", off, len(pg.Results), pg.Total, limit)
			}
			for _, it := range pg.Results {
				walked = append(walked, it.ID)
			}
		}
		if !slices.Equal(walked, fullIDs) {
			t.Fatalf("pages walked %v, full result %v", walked, fullIDs)
		}
		off := rapid.IntRange(0, full.Total+3).Draw(t, "offset")
		pg, err := e.svc.Search(ctx, stock.SearchQuery{SiteID: "MLA", Q: query.Q, Sort: sort, Offset: off, Limit: limit})
		if err != nil {
			t.Fatalf("page: %v", err)
		}
		var got []string
		for _, it := range pg.Results {
			got = append(got, it.ID)
		}
		wantPage := fullIDs[min(off, len(fullIDs)):min(off+limit, len(fullIDs))]
		if !slices.Equal(got, wantPage) {
			t.Fatalf("offset %d limit %d = %v, want %v", off, limit, got, wantPage)
		}
	})
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// refItem is what the plain search reference knows of an item.
type refItem struct {
	id, site, status string
	words            []string // folded title words, with repeats
	cents            int64
	seq              int // publication order
}

var refFold = strings.NewReplacer("á", "a", "ñ", "n", "Ñ", "n", "é", "e")

func refWords(title string) []string {
	var out []string
	for _, w := range strings.Fields(title) {
		out = append(out, refFold.Replace(strings.ToLower(w)))
	}
	return out
}

// refSearch is the plain reference of a site search: every item read, the
// matches filtered and sorted in full.
func refSearch(items []refItem, site, q, sort string) []string {
	qw := refWords(q)
	var m []refItem
	for _, it := range items {
		if it.site != site || it.status != stock.StatusActive {
			continue
		}
		ok := true
		for _, w := range qw {
			ok = ok && slices.Contains(it.words, w)
		}
		if ok {
			m = append(m, it)
		}
	}
	distinct := func(ws []string) int { c := slices.Clone(ws); slices.Sort(c); return len(slices.Compact(c)) }
	slices.SortFunc(m, func(a, b refItem) int {
		var d int64
		switch sort {
		case stock.SortPriceAsc:
			d = a.cents - b.cents
		case stock.SortPriceDesc:
			d = b.cents - a.cents
		default:
			d = int64(distinct(a.words) - distinct(b.words))
		}
		if d != 0 {
			return int(d)
		}
		return a.seq - b.seq
	})
	ids := []string{}
	for _, it := range m {
		ids = append(ids, it.id)
	}
	return ids
}

// checkAgainstReference draws queries and compares each page and total of
// the search with the reference.
func checkAgainstReference(t *rapid.T, e *env, items []refItem, vocab []string, label string) {
	for i := 0; i < 6; i++ {
		site := rapid.SampledFrom([]string{"MLA", "MLB"}).Draw(t, fmt.Sprintf("%s_site%d", label, i))
		q := strings.Join(rapid.SliceOfN(rapid.SampledFrom(vocab), 0, 3).Draw(t, fmt.Sprintf("%s_query%d", label, i)), " ")
		sort := rapid.SampledFrom([]string{"", stock.SortRelevance, stock.SortPriceAsc, stock.SortPriceDesc}).Draw(t, fmt.Sprintf("%s_sort%d", label, i))
		off := rapid.IntRange(0, 12).Draw(t, fmt.Sprintf("%s_offset%d", label, i))
		limit := rapid.IntRange(0, 8).Draw(t, fmt.Sprintf("%s_limit%d", label, i))
		want := refSearch(items, site, q, sort)
		res, err := e.svc.Search(ctx, stock.SearchQuery{SiteID: site, Q: q, Sort: sort, Offset: off, Limit: limit})
		if err != nil {
			t.Fatalf("search: %v", err)
		}
		got := []string{}
		for _, it := range res.Results {
			got = append(got, it.ID)
		}
		wantPage := want[min(off, len(want)):min(off+limit, len(want))]
		if res.Total != len(want) || !slices.Equal(got, wantPage) {
			t.Fatalf("%s q=%q sort=%q offset %d limit %d: %v of %d, reference %v of %d (all %v)",
				site, q, sort, off, limit, got, res.Total, wantPage, len(want), want)
		}
	}
}

// applyRandomChanges publishes items in two sites and changes their titles,
// prices and statuses, keeping the reference in step with what the service
// answers.
func applyRandomChanges(t *rapid.T, e *env, items []refItem, vocab []string, sellers map[string]int64, label string) []refItem {
	title := func(l string) string {
		return strings.Join(rapid.SliceOfN(rapid.SampledFrom(vocab), 1, 4).Draw(t, l), " ")
	}
	price := func(l string) (string, int64) {
		c := rapid.Int64Range(1, 8).Draw(t, l) * 50 // few prices: many ties
		return fmt.Sprintf("%d.%02d", c/100, c%100), c
	}
	steps := rapid.IntRange(0, 30).Draw(t, label+"_steps")
	for s := 0; s < steps; s++ {
		l := fmt.Sprintf("%s_%d", label, s)
		if len(items) == 0 || rapid.IntRange(0, 2).Draw(t, l+"_publish") == 0 {
			site := rapid.SampledFrom([]string{"MLA", "MLB"}).Draw(t, l+"_site")
			tt := title(l + "_title")
			p, c := price(l + "_price")
			in := plainItem(tt, p, 1)
			if site == "MLB" {
				in.CategoryID, in.CurrencyID = "MLB1055", "BRL"
			}
			pub := e.mustPublish(sellers[site], in)
			items = append(items, refItem{id: pub.ID, site: site, status: stock.StatusActive, words: refWords(tt), cents: c, seq: len(items)})
			continue
		}
		i := rapid.IntRange(0, len(items)-1).Draw(t, l+"_item")
		var up stock.ItemUpdate
		switch rapid.IntRange(0, 2).Draw(t, l+"_change") {
		case 0:
			tt := title(l + "_title")
			up.Title = &tt
		case 1:
			p, _ := price(l + "_price")
			n := money.MustParse(p)
			up.Price = &n
		default:
			st := rapid.SampledFrom([]string{stock.StatusActive, stock.StatusPaused, stock.StatusClosed}).Draw(t, l+"_status")
			up.Status = &st
		}
		it, err := e.svc.UpdateItem(ctx, sellers[items[i].site], items[i].id, up)
		if err != nil {
			continue // refused (a closed item stays closed): nothing changed
		}
		p, err := money.Parse(string(it.Price))
		if err != nil {
			t.Fatalf("price %q: %v", it.Price, err)
		}
		cents, _ := p.MinorUnits(2)
		items[i].status, items[i].words, items[i].cents = it.Status, refWords(it.Title), cents
	}
	return items
}

// TestSearch_AgreesWithPlainReferenceOverRandomChanges: after any
// publications and title, price and status changes in two sites, every
// query's total and page are those of a plain reference that reads every
// item.
func TestSearch_AgreesWithPlainReferenceOverRandomChanges(t *testing.T) {
	vocab := []string{"mesa", "Mesá", "silla", "roble", "PINO", "niño", "luz", "Ñandú"}
	owner := t
	rapid.Check(t, func(t *rapid.T) {
		e, done := newPropertyEnv(t, owner)
		defer done()
		sellers := map[string]int64{"MLA": e.mustUser("MLA"), "MLB": e.mustUser("MLB")}
		items := applyRandomChanges(t, e, nil, vocab, sellers, "a")
		checkAgainstReference(t, e, items, vocab, "a")
		items = applyRandomChanges(t, e, items, vocab, sellers, "b")
		checkAgainstReference(t, e, items, vocab, "b")
	})
}

// makeLegacy turns a store into one written before the ordered index and
// the list counts existed: those are dropped, and the items of ids get the
// id-ordered lists of that time (keys.go), built here from the items.
func makeLegacy(t fataler, e *env, ids []string) {
	var items []stock.Item
	for _, id := range ids {
		it, err := e.svc.Item(ctx, id)
		if err != nil {
			t.Fatalf("item %s: %v", id, err)
		}
		items = append(items, it)
	}
	err := e.store.Update(ctx, func(tx storage.Tx) error {
		var keys [][]byte
		for _, ns := range []string{"stk/ord", "stk/cnt", "stk/ordready"} {
			it := tx.Iterate(storage.Prefix(keycodec.New(ns)))
			for ; it.Valid(); it.Next() {
				keys = append(keys, slices.Clone(it.Key()))
			}
			it.Close()
		}
		for _, k := range keys {
			if err := tx.Delete(k); err != nil {
				return err
			}
		}
		for _, it := range items {
			if it.Status != stock.StatusActive {
				continue
			}
			ws := refWords(it.Title)
			slices.Sort(ws)
			ws = slices.Compact(ws)
			p, err := money.Parse(string(it.Price))
			if err != nil {
				return err
			}
			cents, _ := p.MinorUnits(2)
			sfx := keycodec.Raw().Str(it.ID).Int(cents).Int(int64(len(ws)))
			if err := tx.Set(append(keycodec.New("stk/active").Str(it.SiteID), sfx...), nil); err != nil {
				return err
			}
			for _, w := range ws {
				if err := tx.Set(append(keycodec.New("stk/word").Str(it.SiteID).Str(w), sfx...), nil); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("make legacy store: %v", err)
	}
}

// TestSearch_StoreWrittenBeforeTheOrderedIndexAnswersTheSameAfterItsMigration:
// a store whose items were indexed before the ordered index existed gets it
// from its migration, in small chunks, and then answers every query as the
// reference does, before and after further changes.
func TestSearch_StoreWrittenBeforeTheOrderedIndexAnswersTheSameAfterItsMigration(t *testing.T) {
	vocab := []string{"mesa", "silla", "roble", "pino", "luz"}
	owner := t
	rapid.Check(t, func(t *rapid.T) {
		e, done := newPropertyEnv(t, owner)
		defer done()
		sellers := map[string]int64{"MLA": e.mustUser("MLA"), "MLB": e.mustUser("MLB")}
		items := applyRandomChanges(t, e, nil, vocab, sellers, "a")
		var ids []string
		for _, it := range items {
			ids = append(ids, it.id)
		}
		makeLegacy(t, e, ids)
		_, err := schema.Migrate(ctx, e.store, []schema.Migration{stock.SearchIndexMigration()}, schema.Options{ChunkSize: 3})
		if err != nil {
			t.Fatal(err)
		}
		for _, ns := range []string{"stk/word", "stk/active", "stk/ordready"} {
			err := e.store.View(ctx, func(tx storage.Tx) error {
				it := tx.Iterate(storage.Prefix(keycodec.New(ns)))
				defer it.Close()
				if it.Valid() {
					t.Fatalf("legacy key %q left by the migration", it.Key())
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		checkAgainstReference(t, e, items, vocab, "a")
		items = applyRandomChanges(t, e, items, vocab, sellers, "b")
		checkAgainstReference(t, e, items, vocab, "b")
	})
}

// TestSearch_ListCountsStayExactUnderConcurrentPublications: publications
// running at once all move the same counts (the site's, a shared word's);
// the store's conflict handling must leave them exact.
func TestSearch_ListCountsStayExactUnderConcurrentPublications(t *testing.T) {
	for name, e := range map[string]*env{"Memory": newEnv(t), "Badger": newBadgerEnv(t)} {
		t.Run(name, func(t *testing.T) {
			seller := e.mustUser("MLA")
			var wg sync.WaitGroup
			errc := make(chan error, 40)
			for g := 0; g < 4; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < 10; i++ {
						_, err := e.svc.Publish(ctx, seller, plainItem(fmt.Sprintf("Taza cerámica %d", g), "100", 1))
						errc <- err
					}
				}()
			}
			wg.Wait()
			close(errc)
			for err := range errc {
				if err != nil {
					t.Fatalf("publish: %v", err)
				}
			}
			for _, c := range []struct {
				q    string
				want int
			}{{"", 40}, {"taza", 40}, {"ceramica 2", 10}} {
				res, err := e.svc.Search(ctx, stock.SearchQuery{SiteID: "MLA", Q: c.q, Limit: 0})
				if err != nil || res.Total != c.want {
					t.Fatalf("q=%q total %d (%v), want %d", c.q, res.Total, err, c.want)
				}
			}
		})
	}
}
