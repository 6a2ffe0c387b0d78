package stock_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/stock"
	"github.com/marketplace/marketplace/storage/memory"
)

// Example publishes an item whose stock is split across two of the
// seller's warehouses, replaces one warehouse's quantity with the version
// read, and shows that the same version again is refused as stale.
func Example() {
	ctx := context.Background()
	m, err := marketplace.New(memory.New(), marketplace.Options{Clock: clock.NewManual(time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC))})
	if err != nil {
		panic(err)
	}
	defer m.Close()
	seller, _, err := m.CreateUser(ctx, accounts.NewUser{Nickname: "ACME", SiteID: "MLA",
		Tags: []string{"normal", accounts.TagWarehouseManagement}})
	if err != nil {
		panic(err)
	}
	var stores []string
	for range 2 {
		st, err := m.Accounts.CreateStore(ctx, seller.ID, accounts.NewStore{Tags: []string{accounts.TagStockLocation}})
		if err != nil {
			panic(err)
		}
		stores = append(stores, st.ID)
	}

	item, err := m.Stock.PublishMultiOrigin(ctx, seller.ID, stock.NewItem{
		Title: "Auriculares Sony WH-1000XM5", CategoryID: "MLA1055", Price: money.MustParse("350000"),
		ListingTypeID: "gold_special",
		StockLocations: []stock.StockLocation{
			{StoreID: stores[0], Quantity: 5},
			{StoreID: stores[1], Quantity: 3},
		},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(item.ID, item.UserProductID, item.AvailableQuantity)

	st, err := m.Stock.Stock(ctx, seller.ID, item.UserProductID)
	if err != nil {
		panic(err)
	}
	up, err := m.Stock.PutStock(ctx, seller.ID, item.UserProductID, st.Version,
		[]stock.StockLocation{{Type: "seller_warehouse", StoreID: stores[0], Quantity: 10}})
	if err != nil {
		panic(err)
	}
	fmt.Println("version", st.Version, "->", up.Version)

	_, err = m.Stock.PutStock(ctx, seller.ID, item.UserProductID, st.Version,
		[]stock.StockLocation{{Type: "seller_warehouse", StoreID: stores[0], Quantity: 7}})
	var e *marketplace.Error
	if errors.As(err, &e) {
		fmt.Println(e.Kind == marketplace.KindConflict, e.Message)
	}

	after, err := m.Stock.Item(ctx, item.ID)
	if err != nil {
		panic(err)
	}
	fmt.Println(after.AvailableQuantity)
	// Output:
	// MLA1400000001 MLAU300000001 8
	// version 1 -> 2
	// true Version mismatch
	// 13
}
