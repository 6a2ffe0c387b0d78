package marketplace_test

import (
	"context"
	"fmt"
	"time"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/storage/memory"
)

// Example embeds the engine on the in-memory store with a manual clock,
// creates a seller with a stock-location store, and lists the seller's stores
// as the seller.
func Example() {
	ctx := context.Background()
	clk := clock.NewManual(time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC))
	m, err := marketplace.New(memory.New(), marketplace.Options{Clock: clk})
	if err != nil {
		panic(err)
	}
	defer m.Close()

	seller, token, err := m.CreateUser(ctx, accounts.NewUser{
		Nickname: "ACME", SiteID: "MLA", Tags: []string{"normal", accounts.TagWarehouseManagement},
	})
	if err != nil {
		panic(err)
	}
	if _, err := m.Accounts.CreateStore(ctx, seller.ID, accounts.NewStore{
		Description: "Main warehouse", Tags: []string{accounts.TagStockLocation},
	}); err != nil {
		panic(err)
	}
	caller, err := m.Accounts.Authenticate(ctx, token)
	if err != nil {
		panic(err)
	}
	stores, total, err := m.Accounts.SearchStores(ctx, caller, seller.ID, accounts.StoreQuery{
		Tags: []string{accounts.TagStockLocation}, Limit: 50,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(seller.ID, seller.CountryID, seller.RegistrationDate)
	fmt.Println(total, stores[0].Description, stores[0].IsStockLocation())
	// Output:
	// 100000001 AR 2026-03-04T12:00:00.000-03:00
	// 1 Main warehouse true
}
