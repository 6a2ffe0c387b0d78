package sales_test

import (
	"testing"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/sales"
	"github.com/marketplace/marketplace/stock"
)

func TestPlaceOrder_PaidTakesUnitsFromTheStoreWithTheMostAndMovesTheVersion(t *testing.T) {
	e := newEnv(t)
	seller, stores, item := e.mustMultiItem(2, 5)
	buyer := e.mustUser("BUYER")
	before, err := e.stock.Stock(ctx, seller, item.UserProductID)
	if err != nil {
		t.Fatal(err)
	}
	o, err := e.sales.PlaceOrder(ctx, sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: 3})
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != sales.StatusPaid || o.DateClosed == nil || string(o.TotalAmount) != "4501.5" {
		t.Fatalf("order %+v", o)
	}
	if got := o.OrderItems[0].Stock; len(got) != 1 || got[0].StoreID != stores[1] {
		t.Fatalf("stock %+v, want store %s", got, stores[1])
	}
	after, _ := e.stock.Stock(ctx, seller, item.UserProductID)
	if after.Version != before.Version+1 || after.Locations[1].Quantity != 2 {
		t.Fatalf("stock after %+v (version %d, before %d)", after.Locations, after.Version, before.Version)
	}
	it, _ := e.stock.Item(ctx, item.ID)
	if it.SoldQuantity != 3 || it.AvailableQuantity != 4 {
		t.Fatalf("item sold %d available %d", it.SoldQuantity, it.AvailableQuantity)
	}
	sh, err := e.sales.Shipment(ctx, seller, *o.Shipping.ID)
	if err != nil || sh.Status != sales.ShipmentReadyToShip {
		t.Fatalf("shipment %+v %v", sh, err)
	}
	res, err := e.sales.Search(ctx, seller, sales.SearchQuery{Seller: seller, Limit: 50})
	if err != nil || res.Paging.Total != 1 || len(res.Results) != 1 {
		t.Fatalf("search %+v %v", res, err)
	}
	// Cancel gives the units back.
	if _, err := e.sales.Cancel(ctx, o.ID); err != nil {
		t.Fatal(err)
	}
	back, _ := e.stock.Stock(ctx, seller, item.UserProductID)
	if back.Locations[1].Quantity != 5 || back.Version != after.Version+1 {
		t.Fatalf("after cancel %+v", back)
	}
	if _, err := e.sales.Cancel(ctx, o.ID); !errs.Is(err, errs.Invalid) {
		t.Fatalf("second cancel: %v", err)
	}
	res, _ = e.sales.Search(ctx, seller, sales.SearchQuery{Seller: seller, Status: sales.StatusCancelled, Limit: 50})
	if res.Paging.Total != 1 {
		t.Fatalf("cancelled search %+v", res.Paging)
	}
}

func TestPlaceOrder_LastUnitPausesTheItemOutOfStockAndACancellationActivatesIt(t *testing.T) {
	e := newEnv(t)
	_, item := e.mustPlainItem(1)
	buyer := e.mustUser("BUYER")
	o, err := e.sales.PlaceOrder(ctx, sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: 1})
	if err != nil {
		t.Fatal(err)
	}
	it, _ := e.stock.Item(ctx, item.ID)
	if it.Status != stock.StatusPaused || len(it.SubStatus) != 1 || it.SubStatus[0] != stock.SubStatusOutOfStock {
		t.Fatalf("item %s %v", it.Status, it.SubStatus)
	}
	if _, err := e.sales.PlaceOrder(ctx, sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: 1}); !errs.Is(err, errs.Invalid) {
		t.Fatalf("a paused item sold: %v", err)
	}
	if _, err := e.sales.Cancel(ctx, o.ID); err != nil {
		t.Fatal(err)
	}
	it, _ = e.stock.Item(ctx, item.ID)
	if it.Status != stock.StatusActive || len(it.SubStatus) != 0 || it.SoldQuantity != 0 {
		t.Fatalf("item after cancel %s %v sold %d", it.Status, it.SubStatus, it.SoldQuantity)
	}
}
