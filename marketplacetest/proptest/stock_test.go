package proptest_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"testing"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/fixtures"
	"github.com/marketplace/marketplace/marketplacetest"
	"github.com/marketplace/marketplace/marketplacetest/proptest"
	"github.com/marketplace/marketplace/stock"
)

// TestStock_StaleVersionIsRefusedWith409AndChangesNothing drives the
// engine in Go: one server for the whole property, ResetClock before each
// case, a generated shop, then generated stock writes with fresh and
// stale versions, each compared with the model and followed by a read.
func TestStock_StaleVersionIsRefusedWith409AndChangesNothing(t *testing.T) {
	ctx := context.Background()
	srv := marketplacetest.NewServer(t)
	rapid.Check(t, func(t *rapid.T) {
		if err := srv.ResetClock(); err != nil {
			t.Fatal(err)
		}
		shop := proptest.Shops(3, 2).Draw(t, "shop")
		res, err := srv.Marketplace.LoadFixtures(ctx, shop.Doc)
		if err != nil {
			t.Fatal(err)
		}
		seller := res.Users[shop.Seller]
		model := proptest.NewStockModel()
		ups := make([]string, len(shop.Items))
		for i, it := range shop.Items {
			item, err := srv.Marketplace.Stock.Item(ctx, res.Items[it.Name])
			if err != nil {
				t.Fatal(err)
			}
			ups[i] = item.UserProductID
			model.Publish(ups[i], storeIDs(shop, res, it.StoreIndex), it.Quantity)
		}
		for i, w := range proptest.StockWrites(shop, 8).Draw(t, "writes") {
			up := ups[w.Item]
			read, err := srv.Marketplace.Stock.Stock(ctx, seller, up)
			if err != nil {
				t.Fatal(err)
			}
			stores := storeIDs(shop, res, w.StoreIndex)
			want := model.Put(up, read.Version+w.VersionOffset, stores, w.Quantity)
			locs := make([]stock.StockLocation, len(stores))
			for j, s := range stores {
				locs[j] = stock.StockLocation{StoreID: s, Quantity: w.Quantity[j]}
			}
			out, err := srv.Marketplace.Stock.PutStock(ctx, seller, up, read.Version+w.VersionOffset, locs)
			switch {
			case want.Status == 409:
				if !errs.Is(err, errs.Conflict) || errs.As(err).Message != want.Message {
					t.Fatalf("write %d (version %+d): err = %v, want Conflict %q", i, w.VersionOffset, err, want.Message)
				}
			case err != nil:
				t.Fatalf("write %d with the fresh version: %v", i, err)
			case out.Version != want.Version:
				t.Fatalf("write %d: version = %d, want %d", i, out.Version, want.Version)
			}
			after, err := srv.Marketplace.Stock.Stock(ctx, seller, up)
			if err != nil {
				t.Fatal(err)
			}
			checkStock(t, fmt.Sprintf("after write %d", i), after.Version, quantities(after.Locations), model, up)
		}
	})
}

// TestStockHTTP_StaleVersionIsRefusedWith409AndChangesNothing is the same
// property over HTTP: the shop through PUT /operator/fixtures, the reads
// and writes through the public routes with x-version sent by DoWith.
func TestStockHTTP_StaleVersionIsRefusedWith409AndChangesNothing(t *testing.T) {
	ctx := context.Background()
	srv := marketplacetest.NewServer(t)
	rapid.Check(t, func(t *rapid.T) {
		if err := srv.ResetClock(); err != nil {
			t.Fatal(err)
		}
		shop := proptest.Shops(3, 2).Draw(t, "shop")
		var res fixtures.Result
		mustDo(t, srv.Operator, ctx, "PUT", "/operator/fixtures", shop.Doc, nil, 200, &res)
		seller := srv.Client(shop.SellerToken)
		model := proptest.NewStockModel()
		ups := make([]string, len(shop.Items))
		for i, it := range shop.Items {
			var item struct {
				UserProductID string `json:"user_product_id"`
			}
			mustDo(t, seller, ctx, "GET", "/items/"+res.Items[it.Name], nil, nil, 200, &item)
			ups[i] = item.UserProductID
			model.Publish(ups[i], storeIDs(shop, res, it.StoreIndex), it.Quantity)
		}
		for i, w := range proptest.StockWrites(shop, 8).Draw(t, "writes") {
			path := "/user-products/" + ups[w.Item] + "/stock"
			read := mustDo(t, seller, ctx, "GET", path, nil, nil, 200, nil)
			version, err := strconv.ParseInt(read.Header.Get("x-version"), 10, 64)
			if err != nil {
				t.Fatalf("x-version of the read: %q", read.Header.Get("x-version"))
			}
			stores := storeIDs(shop, res, w.StoreIndex)
			type loc struct {
				StoreID  string `json:"store_id"`
				Quantity int64  `json:"quantity"`
			}
			body := struct {
				Locations []loc `json:"locations"`
			}{}
			for j, s := range stores {
				body.Locations = append(body.Locations, loc{s, w.Quantity[j]})
			}
			sent := version + w.VersionOffset
			want := model.Put(ups[w.Item], sent, stores, w.Quantity)
			hdr := http.Header{"X-Version": {strconv.FormatInt(sent, 10)}}
			var errBody struct {
				Message string `json:"message"`
			}
			out := mustDo(t, seller, ctx, "PUT", path+"/type/seller_warehouse", body, hdr, want.Status, &errBody)
			if want.Status == 409 && errBody.Message != want.Message {
				t.Fatalf("write %d: message %q, want %q", i, errBody.Message, want.Message)
			}
			if want.Status == 200 && out.Header.Get("x-version") != strconv.FormatInt(want.Version, 10) {
				t.Fatalf("write %d: x-version %q, want %d", i, out.Header.Get("x-version"), want.Version)
			}
			var after stock.Stock
			again := mustDo(t, seller, ctx, "GET", path, nil, nil, 200, &after)
			v, _ := strconv.ParseInt(again.Header.Get("x-version"), 10, 64)
			checkStock(t, fmt.Sprintf("after write %d", i), v, quantities(after.Locations), model, ups[w.Item])
		}
	})
}

func storeIDs(shop proptest.Shop, res fixtures.Result, idx []int) []string {
	out := make([]string, len(idx))
	for i, j := range idx {
		out[i] = res.Stores[shop.Stores[j]]
	}
	return out
}

func quantities(locs []stock.StockLocation) map[string]int64 {
	out := map[string]int64{}
	for _, l := range locs {
		out[l.StoreID] = l.Quantity
	}
	return out
}

func checkStock(t *rapid.T, when string, version int64, got map[string]int64, model *proptest.StockModel, up string) {
	t.Helper()
	if want := model.Version(up); version != want {
		t.Fatalf("%s: version %d, want %d", when, version, want)
	}
	want := model.Quantities(up)
	if len(got) != len(want) {
		t.Fatalf("%s: stock %v, want %v", when, got, want)
	}
	for s, q := range want {
		if got[s] != q {
			t.Fatalf("%s: stock %v, want %v", when, got, want)
		}
	}
}

// mustDo sends a request, fails t unless the status is want, and decodes
// the body into v when v is not nil.
func mustDo(t *rapid.T, c *marketplacetest.Client, ctx context.Context, method, path string, body any, hdr http.Header, want int, v any) *marketplacetest.Response {
	t.Helper()
	res, err := c.DoWith(ctx, method, path, body, hdr)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if res.Status != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, res.Status, want, res.Body)
	}
	if v != nil {
		if err := res.Decode(v); err != nil {
			t.Fatalf("%s %s: decode: %v", method, path, err)
		}
	}
	return res
}
