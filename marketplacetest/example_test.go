package marketplacetest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/marketplace/marketplace/marketplacetest"
	"github.com/marketplace/marketplace/sales"
)

// Example starts a server, reads the seller's stock-location stores as the
// seller would over HTTP, moves the clock, and resets between two tests.
func Example() {
	// In a test: srv := marketplacetest.NewServer(t), stopped by t.Cleanup.
	srv, err := marketplacetest.Start()
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	ctx := context.Background()

	seller := srv.Client(srv.Seller.Token)
	res, err := seller.Do(ctx, "GET", fmt.Sprintf("/users/%d/stores/search?tags=stock_location", srv.Seller.ID), nil)
	if err != nil {
		panic(err)
	}
	var page struct {
		Paging struct {
			Total int `json:"total"`
		} `json:"paging"`
	}
	if err := res.Decode(&page); err != nil {
		panic(err)
	}
	fmt.Println(res.Status, page.Paging.Total)

	_ = srv.Clock.Advance(24 * time.Hour)
	fmt.Println(srv.Clock.Now().Format(time.DateOnly))

	// Between tests: back to the state NewServer made, ids included.
	if err := srv.Reset(); err != nil {
		panic(err)
	}
	res, _ = srv.Operator.Do(ctx, "GET", "/operator/snapshots", nil)
	fmt.Println(res.Status)
	// Output:
	// 200 2
	// 2026-03-05
	// 200
}

// ExampleServer_PlaceOrder makes sales inside a test: the buyer buys from
// one of the seller's stores, the shipment travels, a second order is paid
// late and cancelled, and the seller's app reads what is left over HTTP.
// The helpers take the test's t, so this example is compiled but not run.
func ExampleServer_PlaceOrder() {
	var t *testing.T // the test's own: func TestMyApp(t *testing.T)
	srv := marketplacetest.NewServer(t)
	ctx := context.Background()
	seller := srv.Client(srv.Seller.Token)
	res, _ := seller.Do(ctx, "POST", "/items/multiwarehouse", map[string]any{
		"title": "Zapatillas Running", "category_id": "MLA1055", "price": 1500,
		"listing_type_id": "gold_special", "currency_id": "ARS",
		"stock_locations": []map[string]any{{"store_id": srv.Seller.Stores[0].ID, "quantity": 5}},
	})
	var item struct {
		ID            string `json:"id"`
		UserProductID string `json:"user_product_id"`
	}
	_ = res.Decode(&item)

	// srv.Buyer buys 2 units; the order is paid and its shipment ready.
	order := srv.PlaceOrder(t, sales.NewOrder{ItemID: item.ID, Quantity: 2, StoreID: srv.Seller.Stores[0].ID})
	srv.MoveShipment(t, *order.Shipping.ID, "shipped")
	srv.MoveShipment(t, *order.Shipping.ID, "delivered")

	late := srv.PlaceOrder(t, sales.NewOrder{ItemID: item.ID, Quantity: 1, Status: "payment_required"})
	srv.PayOrder(t, late.ID)
	srv.CancelOrder(t, late.ID) // its unit goes back to the store

	// What the seller's app reads: 3 units left in the store.
	res, _ = seller.Do(ctx, "GET", "/user-products/"+item.UserProductID+"/stock", nil)
	fmt.Println(res.Status, string(res.Body))
}
