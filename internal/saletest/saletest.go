// Package saletest makes the sales that the tests of what follows a sale
// (messages, claims, feedback, notes) start from: an engine on the test's
// backend with a manual clock, a seller with an item, a buyer, and a paid
// order.
package saletest

import (
	"context"
	"testing"
	"time"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/internal/teststore"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/sales"
	"github.com/marketplace/marketplace/stock"
)

// Start is the engine's first instant in these tests.
var Start = time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC)

// World is an engine with one seller, one buyer and one item on sale.
type World struct {
	TB     testing.TB
	M      *marketplace.Marketplace
	Clock  *clock.Manual
	Seller int64
	Buyer  int64
	Other  int64
	Item   stock.Published
}

// New opens a world on the backend MARKETPLACE_TEST_STORE names; the item
// has quantity units.
func New(tb testing.TB, quantity int64) *World {
	tb.Helper()
	clk := clock.NewManual(Start)
	m, err := marketplace.New(teststore.New(tb), marketplace.Options{Clock: clk})
	if err != nil {
		tb.Fatalf("open the engine: %v", err)
	}
	tb.Cleanup(func() { m.Close() })
	w := &World{TB: tb, M: m, Clock: clk}
	w.Seller, w.Buyer, w.Other = w.User("SELLER"), w.User("BUYER"), w.User("STRANGER")
	w.Item, err = m.Stock.Publish(context.Background(), w.Seller, stock.NewItem{Title: "Mesa de roble", CategoryID: "MLA1055",
		Price: money.MustParse("100"), ListingTypeID: "gold_special", CurrencyID: "ARS", AvailableQuantity: &quantity})
	if err != nil {
		tb.Fatalf("publish: %v", err)
	}
	return w
}

// User creates a user of site MLA.
func (w *World) User(nick string) int64 {
	w.TB.Helper()
	u, err := w.M.Accounts.CreateUser(context.Background(), accounts.NewUser{Nickname: nick, SiteID: "MLA"})
	if err != nil {
		w.TB.Fatalf("create user %s: %v", nick, err)
	}
	return u.ID
}

// Order places a paid order of quantity units by the buyer.
func (w *World) Order(quantity int64) sales.Order {
	w.TB.Helper()
	o, err := w.M.Sales.PlaceOrder(context.Background(), sales.NewOrder{BuyerID: w.Buyer, ItemID: w.Item.ID, Quantity: quantity})
	if err != nil {
		w.TB.Fatalf("place order: %v", err)
	}
	return o
}

// Available is the item's available quantity now.
func (w *World) Available() int64 {
	w.TB.Helper()
	it, err := w.M.Stock.Item(context.Background(), w.Item.ID)
	if err != nil {
		w.TB.Fatalf("item: %v", err)
	}
	return it.AvailableQuantity
}
