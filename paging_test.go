package marketplace_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/paging"
	"github.com/marketplace/marketplace/questions"
	"github.com/marketplace/marketplace/stock"
	"github.com/marketplace/marketplace/storage/memory"
)

// TestPaging_EveryListFollowsTheOneRule calls every list of the Go API with
// the windows the paging rule refuses and checks that each refuses them
// with the rule's own message, before anything else about the request.
func TestPaging_EveryListFollowsTheOneRule(t *testing.T) {
	ctx := context.Background()
	m, err := marketplace.New(memory.New(), marketplace.Options{Clock: clock.NewManual(time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	lists := map[string]func(offset, limit int) error{
		"stores": func(o, l int) error {
			_, _, err := m.Accounts.SearchStores(ctx, 1, 1, accounts.StoreQuery{Offset: o, Limit: l})
			return err
		},
		"questions": func(o, l int) error {
			_, err := m.Questions.Search(ctx, 1, questions.SearchQuery{ItemID: "MLA1", Offset: o, Limit: l})
			return err
		},
		"blacklist": func(o, l int) error { _, _, err := m.Questions.Blacklist(ctx, 1, 1, o, l); return err },
		"deliveries": func(o, l int) error {
			_, _, err := m.Notify.Attempts(ctx, 1, o, l)
			return err
		},
		"missed feeds": func(o, l int) error {
			_, err := m.Notify.MissedFeeds(ctx, 1, notify.FeedQuery{AppID: 1, Offset: o, Limit: l})
			return err
		},
		"site search": func(o, l int) error {
			_, err := m.Stock.Search(ctx, stock.SearchQuery{SiteID: "MLA", Offset: o, Limit: l})
			return err
		},
		"seller items": func(o, l int) error {
			_, err := m.Stock.SellerItems(ctx, 1, 1, stock.SellerItemsQuery{Offset: o, Limit: l})
			return err
		},
		"domain products": func(o, l int) error {
			_, err := m.Catalog.DomainProducts(ctx, "MLA-CELLPHONES", l, o)
			return err
		},
		"zip codes": func(o, l int) error {
			_, err := m.Geo.ZipCodesBetween(ctx, "AR", "1000", "2000", o, l)
			return err
		},
	}
	// The lists whose own maximum is below the house's, as the public API
	// has it.
	maxima := map[string]int{"seller items": stock.MaxSellerItemsLimit}
	for name, list := range lists {
		most := paging.MaxLimit
		if m, ok := maxima[name]; ok {
			most = m
		}
		for _, w := range []paging.Page{{Offset: 0, Limit: -1}, {Offset: 0, Limit: most + 1}, {Offset: -1, Limit: 10}} {
			want := errs.As(w.CheckMax(most)).Message
			err := list(w.Offset, w.Limit)
			if !errs.Is(err, errs.Invalid) || errs.As(err).Message != want {
				t.Errorf("%s, offset %d limit %d: %v; want %q", name, w.Offset, w.Limit, err, want)
			}
		}
		if err := list(0, most); errs.As(err) != nil && strings.HasPrefix(errs.As(err).Message, "Invalid limit") {
			t.Errorf("%s: the maximum itself was refused: %v", name, err)
		}
	}
}
