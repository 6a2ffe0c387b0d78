package marketplacetest_test

import (
	"context"
	"fmt"
	"time"

	"github.com/marketplace/marketplace/marketplacetest"
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
