package marketplace_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/fixtures"
	"github.com/marketplace/marketplace/internal/pgtest"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/badger"
	"github.com/marketplace/marketplace/storage/memory"
	"github.com/marketplace/marketplace/storage/postgres"
)

// forEachBackend runs test on an engine over each storage backend.
func forEachBackend(t *testing.T, test func(t *testing.T, m *marketplace.Marketplace)) {
	backends := []struct {
		name string
		open func(t *testing.T) storage.Store
	}{
		{"memory", func(t *testing.T) storage.Store { return memory.New() }},
		{"badger", func(t *testing.T) storage.Store {
			st, err := badger.Open(t.TempDir(), badger.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return st
		}},
		{"postgres", func(t *testing.T) storage.Store {
			st, err := postgres.Open(context.Background(), pgtest.NewDatabase(t), postgres.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return st
		}},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			st := b.open(t)
			clk := clock.NewManual(time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC))
			m, err := marketplace.New(st, marketplace.Options{Clock: clk})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_ = m.Close()
				_ = st.Close()
			})
			test(t, m)
		})
	}
}

func mustCreateUser(t *testing.T, m *marketplace.Marketplace, nick string) (accounts.User, string) {
	t.Helper()
	u, tok, err := m.CreateUser(context.Background(), accounts.NewUser{Nickname: nick, SiteID: "MLA"})
	if err != nil {
		t.Fatalf("CreateUser %s: %v", nick, err)
	}
	return u, tok
}

func TestReset_RemovesStateKeepsReferenceDataAndIdsStartAgain(t *testing.T) {
	forEachBackend(t, func(t *testing.T, m *marketplace.Marketplace) {
		ctx := context.Background()
		first, tok := mustCreateUser(t, m, "FIRST")
		if _, err := m.Accounts.CreateStore(ctx, first.ID, accounts.NewStore{Description: "W"}); err != nil {
			t.Fatal(err)
		}
		mustCreateUser(t, m, "SECOND")
		if err := m.Reset(ctx, marketplace.ResetOptions{}); err != nil {
			t.Fatalf("Reset: %v", err)
		}
		if _, err := m.Accounts.Authenticate(ctx, tok); !errs.Is(err, errs.Unauthorized) {
			t.Errorf("token after reset: %v; want Unauthorized", err)
		}
		if _, err := m.Accounts.User(ctx, first.ID); !errs.Is(err, errs.NotFound) {
			t.Errorf("user after reset: %v; want NotFound", err)
		}
		if _, err := m.Geo.Site(ctx, "MLA"); err != nil {
			t.Errorf("reference data after reset: %v", err)
		}
		again, _ := mustCreateUser(t, m, "AGAIN")
		if again.ID != first.ID {
			t.Errorf("first user id after reset = %d; want %d again", again.ID, first.ID)
		}
		st, err := m.Accounts.CreateStore(ctx, again.ID, accounts.NewStore{Description: "W"})
		if err != nil {
			t.Fatal(err)
		}
		stores, _, err := m.Accounts.SearchStores(ctx, again.ID, again.ID, accounts.StoreQuery{Limit: 50})
		if err != nil || len(stores) != 1 || stores[0].ID != st.ID {
			t.Errorf("stores after reset = %v, %v; want only %s", stores, err, st.ID)
		}
	})
}

func TestReset_WithDemoRecreatesTheDemoAccounts(t *testing.T) {
	forEachBackend(t, func(t *testing.T, m *marketplace.Marketplace) {
		ctx := context.Background()
		before, err := m.EnsureDemo(ctx)
		if err != nil {
			t.Fatal(err)
		}
		mustCreateUser(t, m, "EXTRA")
		if err := m.Reset(ctx, marketplace.ResetOptions{Demo: true}); err != nil {
			t.Fatalf("Reset: %v", err)
		}
		id, err := m.Accounts.Authenticate(ctx, marketplace.DemoSellerToken)
		if err != nil || id != before.Seller.ID {
			t.Fatalf("demo seller after reset: %d %v; want %d", id, err, before.Seller.ID)
		}
		after, err := m.EnsureDemo(ctx)
		if err != nil || !reflect.DeepEqual(after, before) {
			t.Errorf("demo after reset = %+v %v; want %+v", after, err, before)
		}
	})
}

func TestSnapshot_RestoreBringsBackTheExactStateAndTheSequences(t *testing.T) {
	forEachBackend(t, func(t *testing.T, m *marketplace.Marketplace) {
		ctx := context.Background()
		seller, tok := mustCreateUser(t, m, "SELLER")
		snap, err := m.CreateSnapshot(ctx, "base")
		if err != nil {
			t.Fatalf("CreateSnapshot: %v", err)
		}
		if snap.ID != 1 || snap.Name != "base" || !snap.Created.Equal(m.Clock.Now()) {
			t.Errorf("snapshot = %+v", snap)
		}
		later, _ := mustCreateUser(t, m, "LATER")
		if _, err := m.Accounts.SetTags(ctx, seller.ID, []string{"normal", accounts.TagWarehouseManagement}); err != nil {
			t.Fatal(err)
		}
		if err := m.Accounts.RevokeAllTokens(ctx, seller.ID); err != nil {
			t.Fatal(err)
		}

		if err := m.RestoreSnapshot(ctx, snap.ID); err != nil {
			t.Fatalf("RestoreSnapshot: %v", err)
		}
		got, err := m.Accounts.User(ctx, seller.ID)
		if err != nil || !reflect.DeepEqual(got, seller) {
			t.Errorf("seller after restore = %+v %v; want %+v", got, err, seller)
		}
		if id, err := m.Accounts.Authenticate(ctx, tok); err != nil || id != seller.ID {
			t.Errorf("revoked token after restore: %d %v; want it valid again", id, err)
		}
		if _, err := m.Accounts.User(ctx, later.ID); !errs.Is(err, errs.NotFound) {
			t.Errorf("user created after the snapshot: %v; want NotFound", err)
		}
		next, _ := mustCreateUser(t, m, "NEXT")
		if next.ID != later.ID {
			t.Errorf("next user id after restore = %d; want %d (the sequence as at the snapshot)", next.ID, later.ID)
		}

		// The snapshot outlives a reset and can be restored again.
		if err := m.Reset(ctx, marketplace.ResetOptions{}); err != nil {
			t.Fatal(err)
		}
		list, err := m.Snapshots(ctx)
		if err != nil || len(list) != 1 || list[0] != snap {
			t.Fatalf("snapshots after reset = %+v %v; want [%+v]", list, err, snap)
		}
		if err := m.RestoreSnapshot(ctx, snap.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Accounts.Authenticate(ctx, tok); err != nil {
			t.Errorf("token after reset and restore: %v", err)
		}

		if err := m.DeleteSnapshot(ctx, snap.ID); err != nil {
			t.Fatalf("DeleteSnapshot: %v", err)
		}
		if err := m.RestoreSnapshot(ctx, snap.ID); !errs.Is(err, errs.NotFound) {
			t.Errorf("restore of a deleted snapshot: %v; want NotFound", err)
		}
		if err := m.DeleteSnapshot(ctx, snap.ID); !errs.Is(err, errs.NotFound) {
			t.Errorf("second delete: %v; want NotFound", err)
		}
		if list, _ := m.Snapshots(ctx); len(list) != 0 {
			t.Errorf("snapshots after delete = %+v", list)
		}
	})
}

func TestLoadFixtures_AllOrNothingAndTwiceIsOnceOnEveryBackend(t *testing.T) {
	qty := int64(3)
	doc := fixtures.Document{
		Users: []fixtures.User{{Name: "shop", Nickname: "SHOP", SiteID: "MLA", Tokens: []string{"APP_USR-shop-token-000000000001"}}},
		Items: []fixtures.Item{{Name: "mate", Seller: "shop", Title: "Mate de calabaza", CategoryID: "MLA1055",
			Price: money.FromInt(900), ListingTypeID: "gold_special", CurrencyID: "ARS", AvailableQuantity: &qty}},
	}
	forEachBackend(t, func(t *testing.T, m *marketplace.Marketplace) {
		ctx := context.Background()
		bad := doc
		bad.Items = append([]fixtures.Item{doc.Items[0]}, doc.Items[0])
		bad.Items[1].Name, bad.Items[1].CategoryID = "broken", "NOPE"
		if _, err := m.LoadFixtures(ctx, bad); !errs.Is(err, errs.Invalid) {
			t.Fatalf("a refused item: %v; want Invalid", err)
		}
		if _, err := m.Accounts.Authenticate(ctx, "APP_USR-shop-token-000000000001"); !errs.Is(err, errs.Unauthorized) {
			t.Fatalf("the refused document's user exists: %v", err)
		}
		first, err := m.LoadFixtures(ctx, doc)
		if err != nil {
			t.Fatalf("LoadFixtures: %v", err)
		}
		if first.Users["shop"] != 100000001 || first.Items["mate"] != "MLA1400000001" {
			t.Errorf("ids after a refused load = %+v; want the first ones", first)
		}
		again, err := m.LoadFixtures(ctx, doc)
		if err != nil || !reflect.DeepEqual(again, first) {
			t.Errorf("second load = %+v %v; want %+v", again, err, first)
		}
	})
}
