package proptest_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/fixtures"
	"github.com/marketplace/marketplace/marketplacetest"
	"github.com/marketplace/marketplace/marketplacetest/proptest"
	"github.com/marketplace/marketplace/stock"
)

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
		ids, err := shop.IDs(res)
		if err != nil {
			t.Fatal(err)
		}
		seller := srv.Client(shop.SellerToken)
		model := proptest.NewStockModel()
		ups := make([]string, len(shop.Items))
		for i, it := range shop.Items {
			var item struct {
				UserProductID string `json:"user_product_id"`
			}
			mustDo(t, seller, ctx, "GET", "/items/"+ids.Items[i], nil, nil, 200, &item)
			ups[i] = item.UserProductID
			model.Publish(ups[i], ids.StoreIDs(it.StoreIndex), it.Quantity)
		}
		for i, w := range proptest.StockWrites(shop, 8).Draw(t, "writes") {
			path := "/user-products/" + ups[w.Item] + "/stock"
			read := mustDo(t, seller, ctx, "GET", path, nil, nil, 200, nil)
			version, err := strconv.ParseInt(read.Header.Get("x-version"), 10, 64)
			if err != nil {
				t.Fatalf("x-version of the read: %q", read.Header.Get("x-version"))
			}
			stores := ids.StoreIDs(w.StoreIndex)
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
			quantities := map[string]int64{}
			for _, l := range after.Locations {
				quantities[l.StoreID] = l.Quantity
			}
			if err := model.Check(ups[w.Item], v, quantities); err != nil {
				t.Fatalf("after write %d: %v", i, err)
			}
		}
	})
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
