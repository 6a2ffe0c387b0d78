package marketplace_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/questions"
	"github.com/marketplace/marketplace/stock"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/memory"
)

// stateQuestions is how many questions each of the two states holds on the
// watched item.
const stateQuestions = 20

// TestServices_CalledDuringRestoresAndResetsSeeTheOldStateOrTheNewNeverAMix
// calls the services directly, as an embedder does (no Enter), from
// several goroutines while another restores two snapshots and resets the
// state in turns. The two snapshots hold the same question ids on the same
// item with different texts ("A 1".."A 20" against "B 1".."B 20"), and a
// reset leaves no question: a read that saw part of one state and part of
// another (texts of both, fewer questions than a state holds, none while
// no reset was in force: read between a restore's deletion and its copy)
// is caught.
// Writers block and unblock a user, and ask questions on another item,
// meanwhile; no call may fail with anything but the refusals the states
// explain.
func TestServices_CalledDuringRestoresAndResetsSeeTheOldStateOrTheNewNeverAMix(t *testing.T) {
	ctx := context.Background()
	m, err := marketplace.New(memory.New(), marketplace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	bg, stopBG := context.WithCancel(ctx)
	defer stopBG()
	go func() { _ = m.Start(bg) }()

	d, err := m.EnsureDemo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	publish := func() stock.Item {
		t.Helper()
		it, err := m.Stock.PublishMultiOrigin(ctx, d.Seller.ID, stock.NewItem{
			Title: "Auriculares Sony WH-1000XM5", CategoryID: "MLA1055", Price: money.FromInt(350000), ListingTypeID: "gold_special",
			CurrencyID: "ARS", Condition: "new", Channels: []string{"marketplace"},
			StockLocations: []stock.StockLocation{{StoreID: d.Stores[0].ID, Quantity: 5}},
		})
		if err != nil {
			t.Fatal(err)
		}
		return it.Item
	}
	watched, written := publish(), publish()
	blocked, _ := mustCreateUser(t, m, "BLOCKED")
	base, err := m.CreateSnapshot(ctx, "base")
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]int64{}
	for _, letter := range []string{"A", "B"} {
		if err := m.RestoreSnapshot(ctx, base.ID); err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= stateQuestions; i++ {
			if _, err := m.Questions.Ask(ctx, d.Buyer.ID, questions.AskInput{Text: fmt.Sprintf("%s %d", letter, i), ItemID: watched.ID}); err != nil {
				t.Fatal(err)
			}
		}
		snap, err := m.CreateSnapshot(ctx, letter)
		if err != nil {
			t.Fatal(err)
		}
		states[letter] = snap.ID
	}

	// The state in force, numbered: a hook runs inside the gate once each
	// replacement is done, before any call sees it.
	var kindMu sync.Mutex
	var pending string
	kinds := []string{"B"}
	m.OnStateReplaced(func(context.Context) {
		kindMu.Lock()
		defer kindMu.Unlock()
		kinds = append(kinds, pending)
	})
	inForce := func() int {
		kindMu.Lock()
		defer kindMu.Unlock()
		return len(kinds) - 1
	}

	// check reads the watched item's questions in one call and says which
	// state it saw: "A", "B", "reset" (none), or what was wrong.
	check := func() (string, error) {
		from := inForce()
		res, err := m.Questions.Search(ctx, d.Seller.ID, questions.SearchQuery{ItemID: watched.ID, Limit: 50})
		to := inForce()
		if err != nil && !errs.Is(err, errs.NotFound) {
			return "", fmt.Errorf("search: %w", err)
		}
		kindMu.Lock()
		possible := strings.Join(kinds[from:to+1], " ")
		kindMu.Unlock()
		saw := "reset"
		if err == nil && (res.Total != 0 || len(res.Questions) != 0) {
			if res.Total != stateQuestions || len(res.Questions) != stateQuestions {
				return "", fmt.Errorf("a state has %d questions; this read saw %d of a total of %d", stateQuestions, len(res.Questions), res.Total)
			}
			saw, _, _ = strings.Cut(res.Questions[0].Text, " ")
			for _, q := range res.Questions {
				if l, _, _ := strings.Cut(q.Text, " "); l != saw {
					return "", fmt.Errorf("questions of two states in one read: %q and %q", res.Questions[0].Text, q.Text)
				}
			}
		}
		if !strings.Contains(possible, saw) {
			return "", fmt.Errorf("a read made while the states in force were %q saw %q", possible, saw)
		}
		return saw, nil
	}

	duration := 2 * time.Second
	if testing.Short() {
		duration = 500 * time.Millisecond
	}
	deadline := time.Now().Add(duration)
	var wg sync.WaitGroup
	var failed atomic.Bool
	fail := func(format string, args ...any) {
		failed.Store(true)
		t.Errorf(format, args...)
	}
	seen := map[string]*atomic.Int64{"A": {}, "B": {}, "reset": {}}
	var replacements, asks atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 0; time.Now().Before(deadline) && !failed.Load(); n++ {
			var err error
			kindMu.Lock()
			pending = [...]string{"A", "B", "reset"}[n%3]
			kindMu.Unlock()
			switch pending {
			case "reset":
				err = m.Reset(ctx, marketplace.ResetOptions{})
			default:
				err = m.RestoreSnapshot(ctx, states[pending])
			}
			if err != nil {
				fail("replacement %d: %v", n, err)
				return
			}
			replacements.Add(1)
		}
	}()
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) && !failed.Load() {
				state, err := check()
				if err != nil {
					fail("%v", err)
					return
				}
				seen[state].Add(1)
			}
		}()
	}
	// A write of one transaction, made directly.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; time.Now().Before(deadline) && !failed.Load(); i++ {
			var err error
			if i%2 == 0 {
				_, err = m.Questions.Block(ctx, d.Seller.ID, d.Seller.ID, blocked.ID)
			} else {
				err = m.Questions.Unblock(ctx, d.Seller.ID, d.Seller.ID, blocked.ID)
			}
			// After a reset the users are gone; an unblock may find the
			// user not blocked in the state restored.
			if err != nil && !errs.Is(err, errs.NotFound) {
				fail("block or unblock: %v", err)
				return
			}
		}
	}()
	// An ask draws its question's id, then writes: its transactions are
	// held together with Enter, or a replacement falling between them
	// would let it write, in the new state, an id drawn in the old.
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline) && !failed.Load(); i++ {
				leave := m.Enter()
				_, err := m.Questions.Ask(ctx, d.Buyer.ID, questions.AskInput{Text: fmt.Sprintf("writer %d, question %d", w, i), ItemID: written.ID})
				leave()
				// After a reset the item is gone.
				if err != nil && !errs.Is(err, errs.NotFound) {
					fail("ask: %v", err)
					return
				}
				if err == nil {
					asks.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%d replacements; reads saw A %d times, B %d, the reset state %d; %d asks", replacements.Load(),
		seen["A"].Load(), seen["B"].Load(), seen["reset"].Load(), asks.Load())
	if replacements.Load() < 3 || seen["A"].Load()+seen["B"].Load() == 0 {
		t.Fatalf("the load did not run into replacements")
	}
}

// viewCountingStore counts the read transactions made on it.
type viewCountingStore struct {
	storage.Store
	views atomic.Int64
}

func (s *viewCountingStore) View(ctx context.Context, fn func(storage.Tx) error) error {
	s.views.Add(1)
	return s.Store.View(ctx, fn)
}

func TestSyncClock_OnAStoreOfOneProcessReadsTheStoreOnlyAfterAMove(t *testing.T) {
	ctx := context.Background()
	st := &viewCountingStore{Store: memory.New()}
	start := time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC)
	clockA, clockB := clock.NewManual(start), clock.NewManual(start)
	a, err := marketplace.New(st, marketplace.Options{Clock: clockA})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := marketplace.New(st, marketplace.Options{Clock: clockB})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	before := st.views.Load()
	for range 100 {
		if err := b.SyncClock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := st.views.Load() - before; n != 0 {
		t.Fatalf("100 syncs with no move made %d reads; want 0", n)
	}
	to := start.Add(time.Hour)
	if err := clockA.Set(to); err != nil {
		t.Fatal(err)
	}
	if err := b.SyncClock(ctx); err != nil {
		t.Fatal(err)
	}
	if !clockB.Now().Equal(to) {
		t.Fatalf("b's clock after a's move and a sync: %s; want %s", clockB.Now(), to)
	}
}
