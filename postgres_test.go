package marketplace_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/pgtest"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/questions"
	"github.com/marketplace/marketplace/stock"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/postgres"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func mustOpenPostgres(tb testing.TB, url string) *marketplace.Marketplace {
	tb.Helper()
	m, err := marketplace.Open(context.Background(), postgres.URL(url), marketplace.Options{})
	if err != nil {
		tb.Fatalf("Open on PostgreSQL: %v", err)
	}
	tb.Cleanup(func() { _ = m.Close() })
	return m
}

func TestOpenOnPostgres_EnginesOnOneDatabaseSeeEachOthersWritesAndCloseClosesTheStore(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := context.Background()
	a := mustOpenPostgres(t, url)
	b := mustOpenPostgres(t, url)

	u, token, err := a.CreateUser(ctx, accounts.NewUser{Nickname: "SHARED", SiteID: "MLA"})
	if err != nil {
		t.Fatal(err)
	}
	id, err := b.Accounts.Authenticate(ctx, token)
	if err != nil || id != u.ID {
		t.Fatalf("the other engine: token of user %d: %d %v", u.ID, id, err)
	}
	if got, err := b.Accounts.User(ctx, u.ID); err != nil || !reflect.DeepEqual(got, u) {
		t.Fatalf("the other engine: user %+v %v; want %+v", got, err, u)
	}
	if _, err := b.Geo.Site(ctx, "MLA"); err != nil {
		t.Fatalf("built-in reference data: %v", err)
	}

	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	err = a.Store().View(ctx, func(storage.Tx) error { return nil })
	if !errors.Is(err, storage.ErrClosed) {
		t.Fatalf("store after Close: %v; want storage.ErrClosed", err)
	}
	if _, err := b.Accounts.User(ctx, u.ID); err != nil {
		t.Fatalf("closing one engine affected the other: %v", err)
	}
	// The data outlives the engines.
	c := mustOpenPostgres(t, url)
	if got, err := c.Accounts.User(ctx, u.ID); err != nil || !reflect.DeepEqual(got, u) {
		t.Fatalf("after reopening: %+v %v", got, err)
	}
}

func TestOpenOnPostgres_EnginesStartingTogetherSetUpTheDatabaseAndTheDemoOnce(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := context.Background()
	const n = 4
	engines := make([]*marketplace.Marketplace, n)
	demos := make([]marketplace.Demo, n)
	errc := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := marketplace.Open(ctx, postgres.URL(url), marketplace.Options{})
			if err != nil {
				errc <- fmt.Errorf("engine %d: open: %w", i, err)
				return
			}
			engines[i] = m
			if demos[i], err = m.EnsureDemo(ctx); err != nil {
				errc <- fmt.Errorf("engine %d: demo: %w", i, err)
			}
		}()
	}
	wg.Wait()
	close(errc)
	for _, m := range engines {
		if m != nil {
			t.Cleanup(func() { _ = m.Close() })
		}
	}
	for err := range errc {
		t.Fatal(err)
	}
	for i, d := range demos {
		if d.Seller.ID != demos[0].Seller.ID || d.Buyer.ID != demos[0].Buyer.ID || len(d.Stores) != 2 ||
			d.Stores[0].ID != demos[0].Stores[0].ID || d.Stores[1].ID != demos[0].Stores[1].ID {
			t.Fatalf("engine %d has other demo accounts: %+v; engine 0: %+v", i, d, demos[0])
		}
	}
	// Ids may have gaps (an attempt that lost drew one), so look at every
	// user up to the highest id handed out.
	m := engines[0]
	probe, _, err := m.CreateUser(ctx, accounts.NewUser{Nickname: "PROBE", SiteID: "MLA"})
	if err != nil {
		t.Fatal(err)
	}
	demoUsers := 0
	for id := probe.ID - 1; id >= 100000001; id-- {
		u, err := m.Accounts.User(ctx, id)
		if errs.Is(err, errs.NotFound) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(u.Nickname, "DEMO_") {
			demoUsers++
		}
	}
	if demoUsers != 2 {
		t.Fatalf("%d demo users; want the seller and the buyer once", demoUsers)
	}
}

func TestOpenOnPostgres_UnreachableServerIsAnErrorThatNamesIt(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	_, err = marketplace.Open(context.Background(), postgres.URL("postgres://app:secret@"+addr+"/market?sslmode=disable"), marketplace.Options{})
	if !errors.Is(err, storage.ErrUnavailable) || !strings.Contains(err.Error(), addr) {
		t.Fatalf("err = %v; want storage.ErrUnavailable naming %s", err, addr)
	}
	if strings.Contains(err.Error(), "secret") {
		t.Fatalf("the error shows the password: %v", err)
	}
}

// A pool of one connection: a transaction that opens another while it holds
// the connection waits for itself forever. Every request's work must read
// through the transaction it runs in.
func TestOpenOnPostgres_RequestsWorkOnAPoolOfOneConnection(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m, err := marketplace.Open(ctx, postgres.URL(url+"&pool_max_conns=1"), marketplace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	go func() { _ = m.Start(ctx) }()

	done := make(chan error, 1)
	go func() {
		done <- func() error {
			seller, _, err := m.CreateUser(ctx, accounts.NewUser{Nickname: "SELLER", SiteID: "MLA"})
			if err != nil {
				return fmt.Errorf("seller: %w", err)
			}
			buyer, _, err := m.CreateUser(ctx, accounts.NewUser{Nickname: "BUYER", SiteID: "MLA"})
			if err != nil {
				return fmt.Errorf("buyer: %w", err)
			}
			qty := int64(3)
			item, err := m.Stock.Publish(ctx, seller.ID, stock.NewItem{
				Title: "Auriculares", CategoryID: "MLA1055", Price: money.FromInt(1500), ListingTypeID: "gold_special",
				CurrencyID: "ARS", Condition: "new", Channels: []string{"marketplace"}, AvailableQuantity: &qty,
			})
			if err != nil {
				return fmt.Errorf("publish: %w", err)
			}
			q, err := m.Questions.Ask(ctx, buyer.ID, questions.AskInput{Text: "Does it come with a case?", ItemID: item.ID})
			if err != nil {
				return fmt.Errorf("ask: %w", err)
			}
			if _, err := m.Questions.Answer(ctx, seller.ID, questions.AnswerInput{QuestionID: q.ID, Text: "Yes."}); err != nil {
				return fmt.Errorf("answer: %w", err)
			}
			return nil
		}()
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("requests on a pool of one connection did not finish: a transaction waits for a second connection")
	}
}
