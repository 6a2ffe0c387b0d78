package questions_test

// BenchmarkSearchAtSize measures the question search on stores of 1,000
// questions and, when MARKETPLACE_BENCH_QUESTIONS names more, of 10,000,
// 100,000 and so on up to that number, on Badger and on PostgreSQL: every
// search should cost about the same at every size. Plain `go test` runs no
// benchmark; an ordinary -bench run measures 1,000 questions only.
//
//	go test -run '^$' -bench 'BenchmarkSearchAtSize' -benchtime 30x ./questions
//	MARKETPLACE_BENCH_QUESTIONS=1000000 MARKETPLACE_BENCH_DIR=~/.cache/marketplace-questions \
//	  go test -run '^$' -bench 'BenchmarkSearchAtSize/badger' -benchtime 30x -timeout 3h ./questions

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/internal/pgtest"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/questions"
	"github.com/marketplace/marketplace/stock"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/badger"
	"github.com/marketplace/marketplace/storage/postgres"
)

// Environment of BenchmarkSearchAtSize: the largest size (the sizes are
// 1,000 and every tenfold up to it), a folder that keeps the Badger stores
// from one run to the next (each size's is built there on first use and
// only read afterwards), and how many times each size is measured (3).
const (
	benchQuestionsVar = "MARKETPLACE_BENCH_QUESTIONS"
	benchDirVar       = "MARKETPLACE_BENCH_DIR"
	benchRoundsVar    = "MARKETPLACE_BENCH_ROUNDS"
)

// The shape of a benchmark store of n questions: n on one item of one
// seller (from benchAskers askers), and n more for another seller, on
// benchItems items. Every tenth question of either is by one asker, the
// frequent one, so that a search with `from` has a full page at every
// size; the others are spread over the askers. Every fifth is answered,
// every fiftieth (from the seventh) deleted.
const (
	benchItems     = 100
	benchAskers    = 1000
	benchBatch     = 2000
	benchPart      = 100000
	firstBenchUser = 900000001
)

func benchSizes(b *testing.B) []int {
	sizes := []int{1000}
	raw := os.Getenv(benchQuestionsVar)
	if raw == "" {
		return sizes
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1000 {
		b.Fatalf("%s=%q: want a number of questions of at least 1000", benchQuestionsVar, raw)
	}
	for s := 10000; s <= n; s *= 10 {
		sizes = append(sizes, s)
	}
	if sizes[len(sizes)-1] != n {
		sizes = append(sizes, n)
	}
	return sizes
}

func benchRounds(b *testing.B) int {
	raw := os.Getenv(benchRoundsVar)
	if raw == "" {
		return 3
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a number of rounds", benchRoundsVar, raw)
	}
	return n
}

// benchShape is who and what a benchmark store's questions are of, and
// the totals its searches must find.
type benchShape struct {
	N          int      `json:"n"`
	ItemSeller int64    `json:"item_seller"`
	Item       string   `json:"item"`
	Seller     int64    `json:"seller"`
	Items      []string `json:"items"`
	Frequent   int64    `json:"frequent"`
	// Totals by search name (benchSearch.name), without the page.
	Totals map[string]int `json:"totals"`
}

// asker is the asker of the i-th question of a partition: the frequent
// one for every tenth, else one of the others, spread by a multiplicative
// hash so that neither the item nor the date follows the asker.
func asker(i int) int64 {
	if i%10 == 0 {
		return firstBenchUser
	}
	return firstBenchUser + 1 + int64((uint64(i)*2654435761)%(benchAskers-1))
}

// plan is what WriteAsked writes for a partition of n questions, the i-th
// asked at start plus 3i seconds, answered or deleted a second or two
// later (before the next is asked, so that the calls it stands for can be
// made in its order on one clock), on the item pick gives, of seller.
func plan(n int, seller int64, pick func(i int) string, start time.Time) []questions.Asked {
	out := make([]questions.Asked, n)
	for i := range out {
		at := start.Add(time.Duration(3*i) * time.Second)
		a := questions.Asked{Seller: seller, Site: "MLA", Item: pick(i), Buyer: asker(i), Text: "Is it still available in red?", At: at}
		switch {
		case i%5 == 0:
			a.Answer, a.Answered = "Yes, it is.", at.Add(time.Second)
		case i%50 == 7:
			a.Deleted = at.Add(2 * time.Second)
		}
		out[i] = a
	}
	return out
}

// benchEnv is the services on a benchmark store.
type benchEnv struct {
	store storage.Store
	acc   *accounts.Service
	stock *stock.Service
	q     *questions.Service
}

func newBenchEnv(b *testing.B, st storage.Store) *benchEnv {
	b.Helper()
	clk := clock.NewManual(start)
	g := geo.New(st, clk)
	if err := g.LoadBuiltin(context.Background()); err != nil {
		b.Fatalf("load sites: %v", err)
	}
	acc := accounts.New(st, clk, g)
	sk := stock.New(st, clk, g)
	return &benchEnv{store: st, acc: acc, stock: sk, q: questions.New(st, clk, acc, sk)}
}

func (e *benchEnv) seller(b *testing.B, items int) (int64, []string) {
	b.Helper()
	ctx := context.Background()
	u, err := e.acc.CreateUser(ctx, accounts.NewUser{Nickname: "BENCH_SELLER", SiteID: "MLA"})
	if err != nil {
		b.Fatal(err)
	}
	qty := int64(10)
	ids := make([]string, items)
	for i := range ids {
		p, err := e.stock.Publish(ctx, u.ID, stock.NewItem{Title: fmt.Sprintf("Bicicleta rodado 29 %d", i), CategoryID: "MLA1055",
			Price: money.FromInt(1500), ListingTypeID: "gold_special", CurrencyID: "ARS", Condition: "new",
			Channels: []string{"marketplace"}, AvailableQuantity: &qty})
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = p.ID
	}
	return u.ID, ids
}

// fill writes the store's 2n questions and returns its shape, the totals
// of its searches counted from what was written.
func (e *benchEnv) fill(b *testing.B, n int) benchShape {
	b.Helper()
	ctx := context.Background()
	sh := benchShape{N: n, Frequent: firstBenchUser}
	var items []string
	sh.ItemSeller, items = e.seller(b, 1)
	sh.Item = items[0]
	sh.Seller, sh.Items = e.seller(b, benchItems)
	t0 := time.Now()
	write := func(asked []questions.Asked, done int) []int64 {
		// In parts, to tell the progress of a long load.
		var ids []int64
		for at := 0; at < len(asked); at += benchPart {
			part, err := e.q.WriteAsked(ctx, asked[at:min(at+benchPart, len(asked))], benchBatch)
			if err != nil {
				b.Fatal(err)
			}
			ids = append(ids, part...)
			if n > benchPart {
				w := done + at + len(part)
				fmt.Fprintf(os.Stderr, "%s: %d/%d questions written, %.0f/s\n", b.Name(), w, 2*n, float64(w)/time.Since(t0).Seconds())
			}
		}
		return ids
	}
	one := plan(n, sh.ItemSeller, func(int) string { return sh.Item }, start)
	oneIDs := write(one, 0)
	many := plan(n, sh.Seller, func(i int) string { return sh.Items[(i*7+i/benchItems)%benchItems] }, start.Add(time.Duration(3*n)*time.Second))
	manyIDs := write(many, n)
	took := time.Since(t0)
	b.Logf("%d questions written in %s: %.0f/s", 2*n, took.Round(time.Millisecond), float64(2*n)/took.Seconds())
	sh.Totals = map[string]int{}
	for _, s := range benchSearches(sh) {
		asked, ids := one, oneIDs
		if s.q.ItemID == "" {
			asked, ids = many, manyIDs
		}
		for i, a := range asked {
			if s.counts(a, ids[i]) {
				sh.Totals[s.name]++
			}
		}
	}
	return sh
}

// benchSearch is one search of the benchmark: its query, its caller, and
// which of the written questions it finds.
type benchSearch struct {
	name   string
	group  string // "item", "seller" or "multi"
	caller int64
	q      questions.SearchQuery
	counts func(a questions.Asked, id int64) bool
}

func sorts(spec string) []questions.Sort {
	if spec == "" {
		return nil
	}
	var out []questions.Sort
	for _, f := range strings.Split(spec, ",") {
		field, typ, _ := strings.Cut(f, ":")
		out = append(out, questions.Sort{Field: field, Type: typ})
	}
	return out
}

// benchSearches are the searches measured: the item's in every order, as
// the seller and anonymous, with its filters; the seller's in each order
// of one field, in either direction, and with each filter; and orders of
// two to four fields, with mixed directions.
func benchSearches(sh benchShape) []benchSearch {
	public := func(a questions.Asked, _ int64) bool { return a.Deleted.IsZero() }
	every := func(questions.Asked, int64) bool { return true }
	var out []benchSearch
	single := []string{"", "date_created:DESC", "date_created:ASC", "from_id:ASC", "from_id:DESC",
		"item_id:ASC", "item_id:DESC", "seller_id:ASC", "seller_id:DESC"}
	multi := []string{"from_id:ASC,date_created:DESC", "item_id:ASC,from_id:DESC",
		"from_id:DESC,item_id:ASC", "item_id:DESC,date_created:ASC",
		"from_id:ASC,item_id:DESC,date_created:DESC", "seller_id:DESC,item_id:ASC,from_id:ASC,date_created:DESC"}
	name := func(spec string) string {
		if spec == "" {
			return "default"
		}
		return strings.ReplaceAll(spec, ":", "-")
	}
	for _, who := range []struct {
		name   string
		caller int64
		counts func(questions.Asked, int64) bool
	}{{"anonymous", 0, public}, {"seller", sh.ItemSeller, every}} {
		for _, spec := range single {
			out = append(out, benchSearch{name: "item/" + who.name + "/" + name(spec), group: "item", caller: who.caller,
				q: questions.SearchQuery{ItemID: sh.Item, Sorts: sorts(spec)}, counts: who.counts})
		}
		for _, spec := range multi {
			out = append(out, benchSearch{name: "item/" + who.name + "/" + name(spec), group: "multi", caller: who.caller,
				q: questions.SearchQuery{ItemID: sh.Item, Sorts: sorts(spec)}, counts: who.counts})
		}
	}
	for _, spec := range single {
		out = append(out, benchSearch{name: "seller/" + name(spec), group: "seller", caller: sh.Seller,
			q: questions.SearchQuery{SellerID: sh.Seller, Sorts: sorts(spec)}, counts: every})
	}
	for _, spec := range multi {
		out = append(out, benchSearch{name: "seller/" + name(spec), group: "multi", caller: sh.Seller,
			q: questions.SearchQuery{SellerID: sh.Seller, Sorts: sorts(spec)}, counts: every})
	}
	answered := func(a questions.Asked, _ int64) bool { return !a.Answered.IsZero() }
	frequent := func(a questions.Asked, _ int64) bool { return a.Buyer == sh.Frequent }
	division := func(a questions.Asked, id int64) bool { return id%4 == 1 }
	for _, f := range []struct {
		name   string
		q      questions.SearchQuery
		counts func(questions.Asked, int64) bool
	}{
		{"status=ANSWERED", questions.SearchQuery{Status: questions.StatusAnswered}, answered},
		{"from", questions.SearchQuery{From: sh.Frequent}, frequent},
		{"from/item_id-ASC", questions.SearchQuery{From: sh.Frequent, Sorts: sorts("item_id:ASC")}, frequent},
		{"totalDivisions=4,division=1", questions.SearchQuery{TotalDivisions: 4, Division: 1}, division},
	} {
		q := f.q
		q.SellerID = sh.Seller
		out = append(out, benchSearch{name: "seller/" + f.name, group: "seller", caller: sh.Seller, q: q, counts: f.counts})
		if f.name == "from/item_id-ASC" {
			continue
		}
		q = f.q
		q.ItemID = sh.Item
		counts := f.counts
		out = append(out, benchSearch{name: "item/anonymous/" + f.name, group: "item", q: q,
			counts: func(a questions.Asked, id int64) bool { return public(a, id) && counts(a, id) }})
	}
	return out
}

// benchBackends open an empty store of each durable backend, and return
// what brings it, once loaded, to the state of a store that has been
// running: on PostgreSQL a VACUUM ANALYZE, the work autovacuum does by
// itself soon after a load of this size, which otherwise runs while the
// first cells are measured (they took twice as long as the same cells a
// round later). On PostgreSQL the load's commits do not wait for the
// disk: what they write is the same, and a search only reads.
var benchBackends = []struct {
	name string
	open func(b *testing.B) (st storage.Store, settle func(*testing.B))
}{
	{"badger", func(b *testing.B) (storage.Store, func(*testing.B)) {
		st, err := badger.Open(b.TempDir(), badger.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = st.Close() })
		return st, func(*testing.B) {}
	}},
	{"postgres", func(b *testing.B) (storage.Store, func(*testing.B)) {
		dsn := pgtest.NewDatabase(b)
		cfg, err := pgxpool.ParseConfig(dsn + "&synchronous_commit=off")
		if err != nil {
			b.Fatal(err)
		}
		st, err := postgres.OpenConfig(context.Background(), cfg, postgres.Options{MaxConns: 4})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = st.Close() })
		return st, func(b *testing.B) {
			conn, err := pgx.Connect(context.Background(), dsn)
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close(context.Background())
			t0 := time.Now()
			if _, err := conn.Exec(context.Background(), "VACUUM ANALYZE"); err != nil {
				b.Fatal(err)
			}
			b.Logf("VACUUM ANALYZE in %s", time.Since(t0).Round(time.Millisecond))
		}
	}},
}

// benchStore returns the services on a store of n questions and its shape.
func benchStore(b *testing.B, backend string, open func(*testing.B) (storage.Store, func(*testing.B)), n int) (*benchEnv, benchShape) {
	b.Helper()
	dir := os.Getenv(benchDirVar)
	if dir == "" || backend != "badger" {
		st, settle := open(b)
		e := newBenchEnv(b, st)
		sh := e.fill(b, n)
		settle(b)
		return e, sh
	}
	// The shape is written beside the store once it is full: a build cut
	// short has none, and starts over.
	path := filepath.Join(dir, fmt.Sprintf("badger-questions-%d", n))
	marker := path + ".json"
	raw, err := os.ReadFile(marker)
	if err != nil {
		if err := os.RemoveAll(path); err != nil {
			b.Fatal(err)
		}
	}
	st, err := badger.Open(path, badger.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	e := newBenchEnv(b, st)
	var sh benchShape
	if raw != nil {
		if err := json.Unmarshal(raw, &sh); err != nil {
			b.Fatalf("%s: %v", marker, err)
		}
		b.Logf("%d questions kept in %s", 2*n, path)
		return e, sh
	}
	sh = e.fill(b, n)
	raw, err = json.Marshal(sh)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(marker, raw, 0o644); err != nil {
		b.Fatal(err)
	}
	return e, sh
}

// BenchmarkSearchAtSize: every search reads its page from an index and its
// total from tallies, so it costs about the same at 1,000 questions as at
// a million. Every size's store is built first, largest first, and the
// sizes are then measured in turns, MARKETPLACE_BENCH_ROUNDS times (the
// later rounds' names end in #01, #02, ...), so that the machine's other
// work and the stores' own (Badger's compactions after a load) fall on
// every size alike. Each search checks its total and its page's length.
func BenchmarkSearchAtSize(b *testing.B) {
	for _, backend := range benchBackends {
		b.Run(backend.name, func(b *testing.B) {
			type built struct {
				e  *benchEnv
				sh benchShape
			}
			sizes := benchSizes(b)
			stores := make([]built, len(sizes))
			for i := len(sizes) - 1; i >= 0; i-- {
				e, sh := benchStore(b, backend.name, backend.open, sizes[i])
				stores[i] = built{e: e, sh: sh}
			}
			for range benchRounds(b) {
				for _, st := range stores {
					for _, s := range benchSearches(st.sh) {
						want, ok := st.sh.Totals[s.name]
						if !ok {
							b.Fatalf("%s: no total kept for it; remove the kept store to build it again", s.name)
						}
						for _, limit := range []int{1, 50} {
							b.Run(fmt.Sprintf("q=%d/%s/limit=%d", st.sh.N, s.name, limit), func(b *testing.B) {
								ctx := context.Background()
								q := s.q
								q.Limit = limit
								for b.Loop() {
									res, err := st.e.q.Search(ctx, s.caller, q)
									if err != nil {
										b.Fatal(err)
									}
									if res.Total != want || len(res.Questions) != min(limit, want) {
										b.Fatalf("total %d and %d questions, want %d and %d", res.Total, len(res.Questions), want, min(limit, want))
									}
								}
							})
						}
					}
				}
			}
		})
	}
}

// TestWriteAsked_WritesWhatAskAnswerAndDeleteWrite: the benchmark's stores
// are filled by WriteAsked, many questions to a transaction; key by key,
// what it writes is what Ask, Answer and Delete write one after the other
// for the same questions at the same instants, events included (but for
// their random ids).
func TestWriteAsked_WritesWhatAskAnswerAndDeleteWrite(t *testing.T) {
	byAsk, written := newEnv(t), newEnv(t)
	seller := byAsk.mustUser(t)
	items := []string{byAsk.mustItem(t, seller), byAsk.mustItem(t, seller), byAsk.mustItem(t, seller)}
	if written.mustUser(t) != seller {
		t.Fatal("the two stores drew different user ids")
	}
	for _, id := range items {
		if written.mustItem(t, seller) != id {
			t.Fatal("the two stores drew different item ids")
		}
	}
	// The setup's keys differ where stock spreads its counts at random:
	// what is compared is what the questions changed.
	byAsk0, written0 := dump(t, byAsk.store), dump(t, written.store)
	at := byAsk.clock.Now().Add(time.Hour)
	asked := plan(120, seller, func(i int) string { return items[i%len(items)] }, at)
	for _, a := range asked {
		if err := byAsk.clock.Set(a.At); err != nil {
			t.Fatal(err)
		}
		q := byAsk.mustAsk(t, a.Buyer, a.Item, a.Text)
		if !a.Answered.IsZero() {
			if err := byAsk.clock.Set(a.Answered); err != nil {
				t.Fatal(err)
			}
			byAsk.mustAnswer(t, seller, q.ID, a.Answer)
		}
		if !a.Deleted.IsZero() {
			if err := byAsk.clock.Set(a.Deleted); err != nil {
				t.Fatal(err)
			}
			if err := byAsk.q.Delete(byAsk.ctx, seller, q.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := written.q.WriteAsked(written.ctx, asked, 7); err != nil {
		t.Fatal(err)
	}
	want, got := changes(byAsk0, dump(t, byAsk.store)), changes(written0, dump(t, written.store))
	if len(want) == 0 {
		t.Fatal("Ask wrote nothing")
	}
	if len(got) != len(want) {
		t.Errorf("%d keys written, want %d", len(got), len(want))
	}
	for k, v := range want {
		w, ok := got[k]
		switch {
		case !ok:
			t.Errorf("key %q missing", k)
		case !bytes.Equal(w, v):
			t.Errorf("key %q: %x, want %x", k, w, v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("key %q written, not by Ask", k)
		}
	}
}

// changes are the keys of after that before lacks or holds another
// value at, and those it holds that after lacks (at nil).
func changes(before, after map[string][]byte) map[string][]byte {
	out := map[string][]byte{}
	for k, v := range after {
		if w, ok := before[k]; !ok || !bytes.Equal(v, w) {
			out[k] = v
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			out[k] = nil
		}
	}
	return out
}

// dump reads every key of st, the events with their random ids left out.
func dump(t *testing.T, st storage.Store) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	outbox := notify.OutboxPrefix()
	err := st.View(context.Background(), func(tx storage.Tx) error {
		it := tx.Iterate(storage.Range{})
		defer it.Close()
		for ; it.Valid(); it.Next() {
			v, err := it.Value()
			if err != nil {
				return err
			}
			if bytes.HasPrefix(it.Key(), outbox) {
				ev, err := notify.DecodeEvent(v)
				if err != nil {
					return err
				}
				ev.ID = ""
				v = []byte(fmt.Sprintf("%+v", ev))
			}
			out[string(it.Key())] = v
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
