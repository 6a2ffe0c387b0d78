package marketplace_test

import (
	"cmp"
	"context"
	"encoding/hex"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/questions"
	"github.com/marketplace/marketplace/sales"
	"github.com/marketplace/marketplace/stock"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/badger"
	"github.com/marketplace/marketplace/storage/memory"
	"github.com/marketplace/marketplace/storage/schema"
)

// The golden stores of testdata/schema were written by older binaries of
// this repository (see the README there); each name says which.
var goldenStores = []string{"48e1fd1", "5e40b6e", "48e1fd1-then-5e40b6e"}

// unicodeGolden is a store of the last binary before Unicode folding. Its
// binary kept id sequences outside the keys, so a dump of keys cannot carry
// them on: it is read for its search index only.
const unicodeGolden = "79e8a45"

// ordersGolden is a store of the last binary that kept orders as JSON, at
// schema version 14, with orders in its state and in a snapshot.
const ordersGolden = "df9028b"

type kv struct{ k, v []byte }

// readGolden reads a golden store: one "key-hex value-hex" a line.
func readGolden(t *testing.T, name string) []kv {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "schema", name+".dump"))
	if err != nil {
		t.Fatal(err)
	}
	var out []kv
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		kh, vh, _ := strings.Cut(line, " ")
		k, err1 := hex.DecodeString(kh)
		v, err2 := hex.DecodeString(vh)
		if err := errors.Join(err1, err2); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, kv{k, v})
	}
	return out
}

// loadGolden writes a golden store's keys into st, as the older binary
// left them.
func loadGolden(t *testing.T, st storage.Store, name string) []kv {
	t.Helper()
	data := readGolden(t, name)
	err := st.Update(context.Background(), func(tx storage.Tx) error {
		for _, e := range data {
			if err := tx.Set(e.k, e.v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// keysUnder returns the first string part of the keys of data in
// namespace ns: the record ids.
func keysUnder(data []kv, ns string) []string {
	var out []string
	p := keycodec.New(ns)
	for _, e := range data {
		if strings.HasPrefix(string(e.k), string(p)) {
			out = append(out, keycodec.Read(e.k[len(p):]).Str())
		}
	}
	return out
}

func intsUnder(data []kv, ns string) []int64 {
	var out []int64
	p := keycodec.New(ns)
	for _, e := range data {
		if strings.HasPrefix(string(e.k), string(p)) {
			out = append(out, keycodec.Read(e.k[len(p):]).Int())
		}
	}
	return out
}

func dumpStore(t *testing.T, st storage.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := st.View(context.Background(), func(tx storage.Tx) error {
		it := tx.Iterate(storage.Range{})
		defer it.Close()
		for ; it.Valid(); it.Next() {
			v, err := it.Value()
			if err != nil {
				return err
			}
			out[string(it.Key())] = string(v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func openGolden(t *testing.T, st storage.Store) *marketplace.Marketplace {
	t.Helper()
	clk := clock.NewManual(time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC))
	m, err := marketplace.New(st, marketplace.Options{Clock: clk})
	if err != nil {
		t.Fatalf("open a golden store: %v", err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

func TestMigrate_GoldenStoresReadBackThroughTheServices(t *testing.T) {
	for _, name := range goldenStores {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			st := memory.New()
			data := loadGolden(t, st, name)
			m := openGolden(t, st)

			if v, ok, err := schema.Version(ctx, st); err != nil || !ok || v != marketplace.SchemaVersion {
				t.Fatalf("version %d (%v, %v); want %d", v, ok, err, marketplace.SchemaVersion)
			}
			checkNoLegacyKeys(t, st)
			checkUsersAndTokens(t, m, data)
			sellers := checkQuestions(t, m, data)
			checkItemsAndSearch(t, m, data)
			checkOutboxDelivers(t, m, data)
			checkIDsContinue(t, m, data, sellers[0])
		})
	}
}

// TestMigrate_SearchFindsTitlesThatNeedUnicodeFolding: the index the store
// was written with kept "Škoda" and split "nin\u0303o"; after the migration
// the folded query words find each item, and only it.
func TestMigrate_SearchFindsTitlesThatNeedUnicodeFolding(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	loadGolden(t, st, unicodeGolden)
	m := openGolden(t, st)
	for q, title := range map[string]string{
		"skoda":    "A Škoda Fabia espejo",
		"ŠKODA":    "A Škoda Fabia espejo",
		"nino":     "A Mochila nin\u0303o escolar",
		"niño":     "A Mochila nin\u0303o escolar",
		"camiseta": "A Ｃａｍｉｓｅｔａ deportiva",
		"strasse":  "A Straße mapa plegado",
		"STRASSE":  "A Straße mapa plegado",
	} {
		res, err := m.Stock.Search(ctx, stock.SearchQuery{SiteID: "MLA", Q: q, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if res.Total != 1 || len(res.Results) != 1 || res.Results[0].Title != title {
			t.Errorf("search %q: total %d, %+v; want only %q", q, res.Total, res.Results, title)
		}
	}
}

// checkOutboxDelivers: the events the golden store left in its outbox are
// fanned out, each into a delivery to its seller's application (every
// golden seller has one, subscribed to questions), none dropped as
// unreadable.
func checkOutboxDelivers(t *testing.T, m *marketplace.Marketplace, data []kv) {
	t.Helper()
	ctx := context.Background()
	events := 0
	for _, e := range data {
		if strings.HasPrefix(string(e.k), string(notify.OutboxPrefix())) {
			events++
		}
	}
	if events == 0 {
		t.Fatal("no outbox event in the golden store")
	}
	before, err := m.Notify.Pending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	moved, err := m.Notify.Dispatch(ctx)
	if err != nil || moved != events {
		t.Fatalf("dispatch moved %d events, %v; want the golden store's %d", moved, err, events)
	}
	after, err := m.Notify.Pending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Fatalf("%d notifications pending after the fan-out, %d before; want each event turned into one delivery", after, before)
	}
}

// checkNoLegacyKeys: every key the migrations replace is gone.
func checkNoLegacyKeys(t *testing.T, st storage.Store) {
	t.Helper()
	for _, ns := range []string{"acc/seq", "stk/seq", "q/seq", "ntf/seq", "ref/import/seq", "q/ix/order", "stk/ordready", "stk/word", "stk/active"} {
		err := st.View(context.Background(), func(tx storage.Tx) error {
			it := tx.Iterate(storage.Prefix(keycodec.New(ns)))
			defer it.Close()
			if it.Valid() {
				t.Errorf("legacy key %q is still there", it.Key())
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func checkUsersAndTokens(t *testing.T, m *marketplace.Marketplace, data []kv) {
	t.Helper()
	ctx := context.Background()
	users := intsUnder(data, "acc/user")
	if len(users) == 0 {
		t.Fatal("no user in the golden store")
	}
	for _, id := range users {
		u, err := m.Accounts.User(ctx, id)
		if err != nil {
			t.Fatalf("user %d: %v", id, err)
		}
		tok := "APP_USR-golden-" + strings.ToLower(u.Nickname) + "-token"
		got, err := m.Accounts.Authenticate(ctx, tok)
		if err != nil || got != id {
			t.Fatalf("token of %s authenticates as %d, %v; want %d", u.Nickname, got, err, id)
		}
		if u.FirstName != "F"+u.Nickname || u.SiteID != "MLA" || len(u.Tags) == 0 {
			t.Fatalf("user %d read back as %+v", id, u)
		}
	}
}

// checkQuestions reads every question by id and searches each seller's
// questions in every order of the seller indexes, each direction, with and
// without a status; it returns the sellers.
func checkQuestions(t *testing.T, m *marketplace.Marketplace, data []kv) []int64 {
	t.Helper()
	ctx := context.Background()
	bySeller := map[int64][]questions.Question{}
	for _, id := range intsUnder(data, "q/q") {
		q, err := m.Questions.Question(ctx, 1, id, false)
		if err != nil {
			t.Fatalf("question %d: %v", id, err)
		}
		if q.Text == "" || q.From.ID == 0 || (q.Status == questions.StatusAnswered) != (q.Answer != nil) {
			t.Fatalf("question %d read back as %+v", id, q)
		}
		bySeller[q.SellerID] = append(bySeller[q.SellerID], q)
	}
	sellers := slices.Sorted(maps.Keys(bySeller))
	if len(sellers) == 0 {
		t.Fatal("no question in the golden store")
	}
	for _, seller := range sellers {
		all := bySeller[seller]
		statuses := []string{""}
		for _, q := range all {
			if !slices.Contains(statuses, q.Status) {
				statuses = append(statuses, q.Status)
			}
		}
		for _, field := range []string{questions.SortDateCreated, questions.SortItemID, questions.SortFromID} {
			for _, dir := range []string{"ASC", "DESC"} {
				for _, status := range statuses {
					var want []int64
					for _, q := range sortQuestions(all, field, dir) {
						if status == "" || q.Status == status {
							want = append(want, q.ID)
						}
					}
					res, err := m.Questions.Search(ctx, seller, questions.SearchQuery{SellerID: seller, Status: status,
						Sorts: []questions.Sort{{Field: field, Type: dir}}, Limit: 50})
					if err != nil {
						t.Fatal(err)
					}
					var got []int64
					for _, q := range res.Questions {
						got = append(got, q.ID)
					}
					if res.Total != len(want) || !slices.Equal(got, want) {
						t.Fatalf("seller %d by %s %s status %q: total %d, ids %v; want %d, %v",
							seller, field, dir, status, res.Total, got, len(want), want)
					}
				}
			}
		}
	}
	return sellers
}

// sortQuestions orders qs as the search does: by field, then date, then id,
// all in dir.
func sortQuestions(qs []questions.Question, field, dir string) []questions.Question {
	out := slices.Clone(qs)
	slices.SortFunc(out, func(a, b questions.Question) int {
		c := 0
		switch field {
		case questions.SortItemID:
			c = cmp.Compare(a.ItemID, b.ItemID)
		case questions.SortFromID:
			c = cmp.Compare(a.From.ID, b.From.ID)
		}
		c = cmp.Or(c, cmp.Compare(a.DateCreated, b.DateCreated), cmp.Compare(a.ID, b.ID))
		if dir == "DESC" {
			return -c
		}
		return c
	})
	return out
}

func checkItemsAndSearch(t *testing.T, m *marketplace.Marketplace, data []kv) {
	t.Helper()
	ctx := context.Background()
	var active []stock.Item
	bySeller := map[int64][]stock.Item{}
	for _, id := range keysUnder(data, "stk/item") {
		it, err := m.Stock.Item(ctx, id)
		if err != nil {
			t.Fatalf("item %s: %v", id, err)
		}
		if it.Title == "" || it.CatalogProductID != nil || it.UserProductID == "" {
			t.Fatalf("item %s read back as %+v", id, it)
		}
		if it.Status == stock.StatusActive {
			active = append(active, it)
		}
		bySeller[it.SellerID] = append(bySeller[it.SellerID], it)
	}
	if len(active) == 0 {
		t.Fatal("no active item in the golden store")
	}
	// Migrations 11 and 12 list each seller's items by status and listing
	// type in every order and count them.
	date := func(s string) time.Time {
		d, err := time.Parse(stock.TimeLayout, s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	orders := map[string]func(a, b stock.Item) int{
		"": func(a, b stock.Item) int { return date(a.DateCreated).Compare(date(b.DateCreated)) },
		stock.SellerSortPriceDesc: func(a, b stock.Item) int {
			return -money.MustParse(string(a.Price)).Cmp(money.MustParse(string(b.Price)))
		},
		stock.SellerSortAvailableQuantityAsc: func(a, b stock.Item) int { return cmp.Compare(a.AvailableQuantity, b.AvailableQuantity) },
		stock.SellerSortLastUpdatedDesc:      func(a, b stock.Item) int { return -date(a.LastUpdated).Compare(date(b.LastUpdated)) },
	}
	for seller, items := range bySeller {
		for _, status := range []string{"", stock.StatusActive, stock.StatusPaused, stock.StatusClosed} {
			for _, listingType := range []string{"", "gold_special", "gold_pro"} {
				for sort, order := range orders {
					var kept []stock.Item
					for _, it := range items {
						if (status == "" || it.Status == status) && (listingType == "" || it.ListingTypeID == listingType) {
							kept = append(kept, it)
						}
					}
					slices.SortFunc(kept, func(a, b stock.Item) int {
						c := cmp.Or(order(a, b), cmp.Compare(len(a.ID), len(b.ID)), strings.Compare(a.ID, b.ID))
						if strings.HasSuffix(sort, "_desc") {
							c = cmp.Or(order(a, b), -cmp.Compare(len(a.ID), len(b.ID)), -strings.Compare(a.ID, b.ID))
						}
						return c
					})
					want := []string{}
					for _, it := range kept {
						want = append(want, it.ID)
					}
					res, err := m.Stock.SellerItems(ctx, seller, seller, stock.SellerItemsQuery{Status: status, ListingTypeID: listingType, Sort: sort, Limit: 100})
					if err != nil {
						t.Fatal(err)
					}
					if res.Total != len(want) || !slices.Equal(res.Results, want) {
						t.Fatalf("items of seller %d in status %q of listing type %q in order %q: %v of %d; want %v", seller, status, listingType, sort, res.Results, res.Total, want)
					}
				}
			}
		}
	}
	cents := func(it stock.Item) int64 {
		p, err := money.Parse(string(it.Price))
		if err != nil {
			t.Fatal(err)
		}
		n, _ := p.MinorUnits(2)
		return n
	}
	for _, q := range []string{"", "bicicleta", "casco"} {
		var want []stock.Item
		for _, it := range active {
			if q == "" || strings.Contains(strings.ToLower(it.Title), q) {
				want = append(want, it)
			}
		}
		for _, sort := range []string{stock.SortRelevance, stock.SortPriceAsc, stock.SortPriceDesc} {
			res, err := m.Stock.Search(ctx, stock.SearchQuery{SiteID: "MLA", Q: q, Sort: sort, Limit: 50})
			if err != nil {
				t.Fatal(err)
			}
			if res.Total != len(want) || len(res.Results) != len(want) {
				t.Fatalf("search %q %s: total %d, %d results; want %d", q, sort, res.Total, len(res.Results), len(want))
			}
			for i := 1; i < len(res.Results); i++ {
				a, b := cents(res.Results[i-1]), cents(res.Results[i])
				if (sort == stock.SortPriceAsc && a > b) || (sort == stock.SortPriceDesc && a < b) {
					t.Fatalf("search %q %s: %v before %v", q, sort, res.Results[i-1].Price, res.Results[i].Price)
				}
			}
		}
	}
}

// checkIDsContinue: users, stores, items, user products and questions
// created after the migration are numbered past the old counters.
func checkIDsContinue(t *testing.T, m *marketplace.Marketplace, data []kv, seller int64) {
	t.Helper()
	ctx := context.Background()
	u, err := m.Accounts.CreateUser(ctx, accounts.NewUser{Nickname: "AFTER", SiteID: "MLA"})
	if err != nil {
		t.Fatal(err)
	}
	if u.ID <= slices.Max(intsUnder(data, "acc/user")) {
		t.Fatalf("new user id %d repeats or precedes an old one", u.ID)
	}
	st, err := m.Accounts.CreateStore(ctx, u.ID, accounts.NewStore{Description: "after"})
	if err != nil {
		t.Fatal(err)
	}
	if old := keysUnder(data, "acc/store"); slices.ContainsFunc(old, func(id string) bool { return len(id) > len(st.ID) || (len(id) == len(st.ID) && id >= st.ID) }) {
		t.Fatalf("new store id %s does not follow the old ones %v", st.ID, old)
	}
	qty := int64(2)
	p, err := m.Stock.Publish(ctx, seller, stock.NewItem{Title: "Bicicleta nueva", CategoryID: "MLA1055", Price: money.FromInt(1000),
		ListingTypeID: "gold_special", CurrencyID: "ARS", AvailableQuantity: &qty})
	if err != nil {
		t.Fatal(err)
	}
	for _, old := range keysUnder(data, "stk/item") {
		if old >= p.ID {
			t.Fatalf("new item id %s does not follow old item %s", p.ID, old)
		}
	}
	for _, old := range keysUnder(data, "stk/up") {
		if old >= p.UserProductID {
			t.Fatalf("new user product id %s does not follow old %s", p.UserProductID, old)
		}
	}
	pending := countKeys(t, m.Store(), notify.OutboxPrefix())
	q, err := m.Questions.Ask(ctx, u.ID, questions.AskInput{ItemID: p.ID, Text: "¿Sigue disponible?"})
	if err != nil {
		t.Fatal(err)
	}
	if got := countKeys(t, m.Store(), notify.OutboxPrefix()); got != pending+1 {
		t.Fatalf("outbox holds %d events after an ask, %d before: the new event took an old one's number", got, pending)
	}
	if q.ID <= slices.Max(intsUnder(data, "q/q")) {
		t.Fatalf("new question id %d repeats or precedes an old one", q.ID)
	}
	res, err := m.Stock.Search(ctx, stock.SearchQuery{SiteID: "MLA", Q: "nueva", Limit: 10})
	if err != nil || res.Total != 1 || res.Results[0].ID != p.ID {
		t.Fatalf("the new item is not found by its title: %+v, %v", res, err)
	}
}

func countKeys(t *testing.T, st storage.Store, prefix []byte) int {
	t.Helper()
	n := 0
	err := st.View(context.Background(), func(tx storage.Tx) error {
		it := tx.Iterate(storage.Prefix(prefix))
		defer it.Close()
		for ; it.Valid(); it.Next() {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// failingStore makes every Update after the first ok ones fail, the way a
// process that stops in the middle of a migration leaves its store.
type failingStore struct {
	storage.Store
	ok atomic.Int32
}

var errStopped = errors.New("stopped in the middle")

func (s *failingStore) Update(ctx context.Context, fn func(storage.Tx) error) error {
	if s.ok.Add(-1) < 0 {
		return errStopped
	}
	return s.Store.Update(ctx, fn)
}

func TestMigrate_StoppedAnywhereAndResumedEqualsAnUninterruptedRun(t *testing.T) {
	ctx := context.Background()
	const name = "48e1fd1-then-5e40b6e"
	whole := memory.New()
	loadGolden(t, whole, name)
	rep, err := marketplace.Migrate(ctx, whole, marketplace.MigrateOptions{ChunkSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	updates := 1 // the version check
	for _, s := range rep.Steps {
		updates += s.Chunks
	}
	want := dumpStore(t, whole)
	for stop := 1; stop < updates; stop += 2 {
		st := memory.New()
		loadGolden(t, st, name)
		fs := &failingStore{Store: st}
		fs.ok.Store(int32(stop))
		if _, err := marketplace.Migrate(ctx, fs, marketplace.MigrateOptions{ChunkSize: 3}); !errors.Is(err, errStopped) {
			t.Fatalf("stopped after %d updates: err = %v", stop, err)
		}
		if _, err := marketplace.Migrate(ctx, st, marketplace.MigrateOptions{ChunkSize: 3}); err != nil {
			t.Fatalf("resume after %d updates: %v", stop, err)
		}
		if got := dumpStore(t, st); !maps.Equal(got, want) {
			t.Fatalf("stopped after %d of %d updates and resumed: the store differs from an uninterrupted run", stop, updates)
		}
	}
}

func TestMigrate_StoreNewerThanBinaryIsRefusedByNewAndOpen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := badger.Open(dir, badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	newer := marketplace.SchemaVersion + 1
	err = st.Update(ctx, func(tx storage.Tx) error {
		return tx.Set(schema.VersionKey(), keycodec.Raw().Uint(uint64(newer)))
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = marketplace.New(st, marketplace.Options{})
	var tooNew *schema.TooNewError
	if !errors.As(err, &tooNew) || tooNew.Store != newer || tooNew.Binary != marketplace.SchemaVersion {
		t.Fatalf("New: err = %v; want a TooNewError", err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = marketplace.Open(context.Background(), badger.Dir(dir), marketplace.Options{})
	if !errors.As(err, &tooNew) {
		t.Fatalf("Open: err = %v; want a TooNewError", err)
	}
	for _, v := range []int{newer, marketplace.SchemaVersion} {
		if !strings.Contains(err.Error(), "version "+strconv.Itoa(v)) {
			t.Fatalf("message %q does not name version %d", err, v)
		}
	}
	// Nothing was written: no reference data was loaded into the store.
	st, err = badger.Open(dir, badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if got := dumpStore(t, st); len(got) != 1 {
		t.Fatalf("a refused store holds %d keys; want the version alone", len(got))
	}
}

func TestMigrate_DryRunChangesNothing(t *testing.T) {
	ctx := context.Background()
	// Each migration must change something in one of the golden stores
	// that need it: the oldest for the first ones, the last binary with
	// JSON orders for the orders' own.
	changed := map[int]bool{}
	for _, g := range []struct {
		name string
		from int
	}{{"48e1fd1-then-5e40b6e", 0}, {ordersGolden, 14}} {
		st := memory.New()
		loadGolden(t, st, g.name)
		before := dumpStore(t, st)
		rep, err := marketplace.PlanMigration(ctx, st, marketplace.MigrateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(dumpStore(t, st), before) {
			t.Fatalf("the dry run changed the store %s", g.name)
		}
		if rep.From != g.from || rep.To != marketplace.SchemaVersion || len(rep.Steps) != marketplace.SchemaVersion-g.from {
			t.Fatalf("plan of %s: %+v", g.name, rep)
		}
		for _, s := range rep.Steps {
			changed[s.Version] = changed[s.Version] || s.Written+s.Deleted > 0
		}
	}
	for v := 1; v <= marketplace.SchemaVersion; v++ {
		if !changed[v] {
			t.Fatalf("migration %d would change nothing in a store that needs it", v)
		}
	}
}

func TestMigrate_NewStoreIsStampedAndRunsNoMigration(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	m, err := marketplace.New(st, marketplace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if v, ok, err := schema.Version(ctx, st); err != nil || !ok || v != marketplace.SchemaVersion {
		t.Fatalf("version %d (%v, %v); want %d", v, ok, err, marketplace.SchemaVersion)
	}
}

// Servers that open an older store at the same moment (several servers on
// one database) each run its migrations' chunks; every chunk reads the
// cursor the last committed chunk left in its own transaction, so the
// result is the one of a single run, whichever server commits each chunk.
func TestMigrate_ServersOpeningAnOlderStoreAtOnceAllSucceed(t *testing.T) {
	for _, backend := range []string{"memory", "badger"} {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			var st storage.Store = memory.New()
			if backend == "badger" {
				b, err := badger.Open(t.TempDir(), badger.Options{})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = b.Close() })
				st = b
			}
			data := loadGolden(t, st, "48e1fd1-then-5e40b6e")
			const servers = 3
			engines := make([]*marketplace.Marketplace, servers)
			errs := make([]error, servers)
			var wg sync.WaitGroup
			for i := range servers {
				wg.Go(func() {
					engines[i], errs[i] = marketplace.New(st, marketplace.Options{Clock: clock.NewManual(time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC))})
				})
			}
			wg.Wait()
			for i := range servers {
				if errs[i] != nil {
					t.Fatalf("server %d: %v", i, errs[i])
				}
				t.Cleanup(func() { _ = engines[i].Close() })
			}
			if v, ok, err := schema.Version(ctx, st); err != nil || !ok || v != marketplace.SchemaVersion {
				t.Fatalf("version %d (%v, %v); want %d", v, ok, err, marketplace.SchemaVersion)
			}
			checkNoLegacyKeys(t, st)
			checkUsersAndTokens(t, engines[servers-1], data)
			checkQuestions(t, engines[0], data)
			checkItemsAndSearch(t, engines[1], data)
		})
	}
}

// cancellingStore ends a context once commits Updates have run, and keeps
// its memory store open through the Close of an Open that failed.
type cancellingStore struct {
	*memory.Store
	commits atomic.Int32
	cancel  context.CancelFunc
}

func (s *cancellingStore) Update(ctx context.Context, fn func(storage.Tx) error) error {
	err := s.Store.Update(ctx, fn)
	if s.commits.Add(-1) == 0 {
		s.cancel()
	}
	return err
}

func (s *cancellingStore) Close() error { return nil }

// Open's ctx reaches every migration and the loading of the reference data:
// cancelled after any storage transaction, Open stops with ctx's error, and
// the next Open finishes the work as if nothing had stopped it.
func TestOpen_CancelledAnywhereInTheOpeningStopsAndTheNextOpenFinishes(t *testing.T) {
	const name = "48e1fd1-then-5e40b6e"
	opts := func() marketplace.Options {
		return marketplace.Options{Clock: clock.NewManual(time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC))}
	}
	open := func(ctx context.Context, st storage.Store) (*marketplace.Marketplace, error) {
		return marketplace.Open(ctx, openerFunc(func(context.Context) (storage.Store, error) { return st, nil }), opts())
	}
	whole := &cancellingStore{Store: memory.New(), cancel: func() {}}
	loadGolden(t, whole, name)
	m, err := open(context.Background(), whole)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	updates := -int(whole.commits.Load()) - 1 // loadGolden's is not the engine's
	// The fee records' revision is a random token each load draws anew
	// (fees/keys.go): of it, only that it is there is checked.
	feesRev := string(keycodec.New("fees/rev"))
	dump := func(st storage.Store) map[string]string {
		d := dumpStore(t, st)
		if _, ok := d[feesRev]; !ok {
			t.Fatal("no revision of the fee records")
		}
		delete(d, feesRev)
		return d
	}
	want := dump(whole)
	if updates < marketplace.SchemaVersion {
		t.Fatalf("the opening ran %d updates; want one per migration at least", updates)
	}
	for stop := 1; stop < updates; stop++ {
		st := &cancellingStore{Store: memory.New()}
		loadGolden(t, st, name)
		ctx, cancel := context.WithCancel(context.Background())
		st.cancel = cancel
		st.commits.Store(int32(stop))
		if _, err := open(ctx, st); !errors.Is(err, context.Canceled) {
			cancel()
			t.Fatalf("cancelled after %d of %d updates: err = %v; want context.Canceled", stop, updates, err)
		}
		cancel()
		m, err := open(context.Background(), st)
		if err != nil {
			t.Fatalf("reopen after a cancel after %d updates: %v", stop, err)
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		if got := dump(st); !maps.Equal(got, want) {
			t.Fatalf("cancelled after %d of %d updates and reopened: the store differs from an uninterrupted opening", stop, updates)
		}
	}
}

func TestNewContext_EndedContextIsReturnedAndTheStoreIsUnchanged(t *testing.T) {
	st := memory.New()
	loadGolden(t, st, "48e1fd1")
	before := dumpStore(t, st)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := marketplace.NewContext(ctx, st, marketplace.Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v; want context.Canceled", err)
	}
	if !maps.Equal(dumpStore(t, st), before) {
		t.Fatal("an opening whose ctx had ended changed the store")
	}
}

// TestMigrate_OrdersStoredAsJSONAreRewrittenAndServedInTheStateAndItsSnapshots:
// the orders of the last binary that kept them as JSON, in the state and
// in a snapshot, read back through the sales service after the migration,
// and again after the snapshot is restored.
func TestMigrate_OrdersStoredAsJSONAreRewrittenAndServedInTheStateAndItsSnapshots(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	data := loadGolden(t, st, ordersGolden)
	jsonOrders := 0
	for _, e := range data {
		if strings.Contains(string(e.k), "sal/order") && len(e.v) > 0 && e.v[0] == '{' {
			jsonOrders++
		}
	}
	if jsonOrders != 7 { // 4 in the state, 3 in the snapshot
		t.Fatalf("the golden store holds %d JSON orders; want 7", jsonOrders)
	}
	m := openGolden(t, st)
	if v, ok, err := schema.Version(ctx, st); err != nil || !ok || v != marketplace.SchemaVersion {
		t.Fatalf("version %d (%v, %v); want %d", v, ok, err, marketplace.SchemaVersion)
	}
	for k, v := range dumpStore(t, st) {
		if strings.Contains(k, "sal/order") && strings.HasPrefix(v, "{") {
			t.Fatalf("%q is still JSON after the migration", k)
		}
	}
	seller, err := m.Accounts.Authenticate(ctx, "APP_USR-golden-aseller-token")
	if err != nil {
		t.Fatal(err)
	}
	statuses := func() []string {
		t.Helper()
		res, err := m.Sales.Search(ctx, seller, sales.SearchQuery{Seller: seller, Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, o := range res.Results {
			got, err := m.Sales.Order(ctx, seller, o.ID)
			if err != nil || got.ID != o.ID || got.Seller.ID != seller || len(got.OrderItems) != 1 {
				t.Fatalf("order %d reads as %+v (%v)", o.ID, got, err)
			}
			out = append(out, o.Status)
		}
		return out
	}
	want := []string{sales.StatusPaid, sales.StatusPaymentRequired, sales.StatusCancelled, sales.StatusPaid}
	if got := statuses(); !slices.Equal(got, want) {
		t.Fatalf("the seller's orders %v; want %v", got, want)
	}
	snaps, err := m.Snapshots(ctx)
	if err != nil || len(snaps) != 1 {
		t.Fatalf("snapshots %+v (%v)", snaps, err)
	}
	if err := m.RestoreSnapshot(ctx, snaps[0].ID); err != nil {
		t.Fatal(err)
	}
	if got := statuses(); !slices.Equal(got, want[:3]) {
		t.Fatalf("the seller's orders after the restore %v; want %v", got, want[:3])
	}
}
