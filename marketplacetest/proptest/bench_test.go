package proptest_test

import (
	"context"
	"testing"
	"time"

	"github.com/marketplace/marketplace/marketplacetest"
	"github.com/marketplace/marketplace/marketplacetest/proptest"
)

// replayCase is the work of one case on a server: its shop loaded, one
// stock read. What differs between the benchmarks is how the case gets a
// clean server at the start instant.
func replayCase(b *testing.B, srv *marketplacetest.Server, shop proptest.Shop) {
	ctx := context.Background()
	res, err := srv.Marketplace.LoadFixtures(ctx, shop.Doc)
	if err != nil {
		b.Fatal(err)
	}
	item, err := srv.Marketplace.Stock.Item(ctx, res.Items[shop.Items[0].Name])
	if err != nil {
		b.Fatal(err)
	}
	if _, err := srv.Marketplace.Stock.Stock(ctx, res.Users[shop.Seller], item.UserProductID); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkReplay_ResetClock is one case on a shared server after
// ResetClock.
func BenchmarkReplay_ResetClock(b *testing.B) {
	shop := proptest.Shops(3, 2).Example(1)
	srv := marketplacetest.NewServer(b)
	for b.Loop() {
		if err := srv.Clock.Advance(time.Hour); err != nil { // so that the reset moves the clock back
			b.Fatal(err)
		}
		if err := srv.ResetClock(); err != nil {
			b.Fatal(err)
		}
		replayCase(b, srv, shop)
	}
}

// BenchmarkReplay_FreshServer is one case on a server of its own, started
// and closed.
func BenchmarkReplay_FreshServer(b *testing.B) {
	shop := proptest.Shops(3, 2).Example(1)
	for b.Loop() {
		srv, err := marketplacetest.Start()
		if err != nil {
			b.Fatal(err)
		}
		replayCase(b, srv, shop)
		if err := srv.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
