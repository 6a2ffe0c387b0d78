package sales_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/sales"
	"github.com/marketplace/marketplace/stock"
)

// The rules of sales-api.md, one test each.

func TestPlaceOrder_TheBodyIsCheckedFieldByField(t *testing.T) {
	e := newEnv(t)
	_, item := e.mustPlainItem(5)
	buyer := e.mustUser("BUYER")
	for _, c := range []struct {
		name string
		in   sales.NewOrder
		msg  string
	}{
		{"NoBuyer", sales.NewOrder{ItemID: item.ID, Quantity: 1}, "The field [buyer_id] is required: the id of the user who buys"},
		{"NoItem", sales.NewOrder{BuyerID: buyer, Quantity: 1}, "The field [item_id] is required: the id of the item bought"},
		{"ZeroQuantity", sales.NewOrder{BuyerID: buyer, ItemID: item.ID}, "Invalid quantity: 0. It must be between 1 and 1000000000"},
		{"NegativeQuantity", sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: -2}, "Invalid quantity: -2. It must be between 1 and 1000000000"},
		{"TooManyUnits", sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: 1000000001}, "Invalid quantity: 1000000001. It must be between 1 and 1000000000"},
		{"UnknownStatus", sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: 1, Status: "confirmed"}, "Invalid status: confirmed. Valid values are: [paid, payment_required]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := e.dump()
			_, err := e.sales.PlaceOrder(ctx, c.in)
			wantErr(t, err, errs.Invalid, c.msg)
			e.unchanged(before, c.name)
		})
	}
}

func TestPlaceOrder_AnUnknownBuyerOrItemIsNotFound(t *testing.T) {
	e := newEnv(t)
	_, item := e.mustPlainItem(5)
	buyer := e.mustUser("BUYER")
	before := e.dump()
	_, err := e.sales.PlaceOrder(ctx, sales.NewOrder{BuyerID: 999, ItemID: item.ID, Quantity: 1})
	wantErr(t, err, errs.NotFound, "User not found: 999")
	_, err = e.sales.PlaceOrder(ctx, sales.NewOrder{BuyerID: buyer, ItemID: "MLA999", Quantity: 1})
	wantErr(t, err, errs.NotFound, "Item with id MLA999 not found")
	e.unchanged(before, "orders of unknown users and items")
}

func TestPlaceOrder_AnItemThatIsNotActiveIsRefused(t *testing.T) {
	e := newEnv(t)
	seller, item := e.mustPlainItem(5)
	buyer := e.mustUser("BUYER")
	for _, status := range []string{stock.StatusPaused, stock.StatusClosed} {
		if _, err := e.stock.UpdateItem(ctx, seller, item.ID, stock.ItemUpdate{Status: &status}); err != nil {
			t.Fatal(err)
		}
		before := e.dump()
		_, err := e.sales.PlaceOrder(ctx, sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: 1})
		wantErr(t, err, errs.Invalid, "Item "+item.ID+" is not active: its status is "+status)
		e.unchanged(before, "order of a "+status+" item")
	}
}

func TestPlaceOrder_TheSellerCannotBuyTheirOwnItem(t *testing.T) {
	e := newEnv(t)
	seller, item := e.mustPlainItem(5)
	before := e.dump()
	_, err := e.sales.PlaceOrder(ctx, sales.NewOrder{BuyerID: seller, ItemID: item.ID, Quantity: 1})
	wantErr(t, err, errs.Invalid, fmt.Sprintf("User %d is the seller of item %s and cannot buy it", seller, item.ID))
	e.unchanged(before, "the seller's own order")
}

func TestPlaceOrder_AStoreIsNamedOnlyForAnItemWithStockPerStore(t *testing.T) {
	e := newEnv(t)
	_, stores, _ := e.mustMultiItem(1)
	_, item := e.mustPlainItem(5)
	buyer := e.mustUser("BUYER")
	before := e.dump()
	_, err := e.sales.PlaceOrder(ctx, sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: 1, StoreID: stores[0]})
	wantErr(t, err, errs.Invalid, "Item "+item.ID+" has no stock per store: send no store_id")
	e.unchanged(before, "a store for a plain item")
}

func TestPlaceOrder_APlainItemSellsNoMoreThanItsUnits(t *testing.T) {
	e := newEnv(t)
	_, item := e.mustPlainItem(2)
	buyer := e.mustUser("BUYER")
	before := e.dump()
	_, err := e.sales.PlaceOrder(ctx, sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: 3})
	wantErr(t, err, errs.Invalid, "Item "+item.ID+" has 2 units available; the order needs 3")
	e.unchanged(before, "an order beyond the units")
	e.mustOrder(sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: 2})
}

func TestPlaceOrder_ANamedStoreMustHoldTheItemsStockAndAllTheUnits(t *testing.T) {
	e := newEnv(t)
	seller, stores, item := e.mustMultiItem(1, 6)
	other := e.mustStore(seller) // the seller's, but holding none of the item
	_, foreign, _ := e.mustMultiItem(3)
	buyer := e.mustUser("BUYER")
	for _, c := range []struct {
		store string
		q     int64
		msg   string
	}{
		{other, 1, "Store " + other + " holds no stock of item " + item.ID},
		{foreign[0], 1, "Store " + foreign[0] + " holds no stock of item " + item.ID},
		{"424242", 1, "Store 424242 holds no stock of item " + item.ID},
		{stores[0], 2, "Store " + stores[0] + " has 1 units of item " + item.ID + "; the order needs 2"},
	} {
		for _, status := range []string{sales.StatusPaid, sales.StatusPaymentRequired} {
			before := e.dump()
			_, err := e.sales.PlaceOrder(ctx, sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: c.q, StoreID: c.store, Status: status})
			wantErr(t, err, errs.Invalid, c.msg)
			e.unchanged(before, "an order from store "+c.store)
		}
	}
	// A named store serves the order even when another has more units.
	o := e.mustOrder(sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: 1, StoreID: stores[0]})
	if got := o.OrderItems[0].Stock; len(got) != 1 || got[0].StoreID != stores[0] {
		t.Fatalf("units from %+v, want store %s", got, stores[0])
	}
	if q := quantities(e.mustStock(seller, item.UserProductID)); q[stores[0]] != 0 || q[stores[1]] != 6 {
		t.Fatalf("stock %v", q)
	}
}

func TestPlaceOrder_WithoutAStoreTheStoreWithTheMostUnitsServesTheOrder(t *testing.T) {
	e := newEnv(t)
	seller, stores, item := e.mustMultiItem(2, 7, 4)
	buyer := e.mustUser("BUYER")
	for _, want := range []struct {
		q     int64
		store string
		left  map[string]int64
	}{
		// 2 7 4: the 7 serves 3 units.
		{3, stores[1], map[string]int64{stores[0]: 2, stores[1]: 4, stores[2]: 4}},
		// 2 4 4: a tie, to the lower id.
		{4, stores[1], map[string]int64{stores[0]: 2, stores[1]: 0, stores[2]: 4}},
		{4, stores[2], map[string]int64{stores[0]: 2, stores[1]: 0, stores[2]: 0}},
	} {
		q := want.q
		o := e.mustOrder(sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: q})
		if got := o.OrderItems[0].Stock; len(got) != 1 || got[0].StoreID != want.store {
			t.Fatalf("%d units from %+v, want store %s", q, got, want.store)
		}
		sh := e.mustShipment(*o.Shipping.ID)
		if sh.Origin.Type != "seller_warehouse" || sh.Origin.ShippingAddress.Node == nil ||
			sh.Origin.ShippingAddress.Node.NodeID != got0(o).NetworkNodeID {
			t.Fatalf("shipment origin %+v, want the store %s", sh.Origin, want.store)
		}
		if got := quantities(e.mustStock(seller, item.UserProductID)); !mapsEqual(got, want.left) {
			t.Fatalf("stock %v, want %v", got, want.left)
		}
	}
}

func got0(o sales.Order) stock.Source { return o.OrderItems[0].Stock[0] }

func mapsEqual(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestPlaceOrder_ATieGoesToTheLowestStoreIdAsANumber(t *testing.T) {
	e := newEnv(t)
	seller := e.mustUser("SELLER", "warehouse_management")
	// "10" sorts before "9" as text; as a number 9 is the lower id. The
	// stock lists 10 first.
	var ids []string
	for _, id := range []string{"10", "9"} {
		st, err := e.acc.CreateStore(ctx, seller, accounts.NewStore{ID: id, Description: "warehouse", Tags: []string{"stock_location"}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, st.ID)
	}
	item, err := e.stock.PublishMultiOrigin(ctx, seller, stock.NewItem{Title: "Bicicleta", CategoryID: "MLA1055",
		Price: money.MustParse("10"), ListingTypeID: "gold_special", CurrencyID: "ARS",
		StockLocations: []stock.StockLocation{{StoreID: ids[0], Quantity: 3}, {StoreID: ids[1], Quantity: 3}}})
	if err != nil {
		t.Fatal(err)
	}
	buyer := e.mustUser("BUYER")
	for _, status := range []string{sales.StatusPaymentRequired, sales.StatusPaid} {
		o := e.mustOrder(sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: 1, Status: status})
		if status == sales.StatusPaymentRequired {
			if o, err = e.sales.Pay(ctx, o.ID, sales.PaymentInput{Status: "approved"}); err != nil {
				t.Fatal(err)
			}
			// Store 9 gave one unit: 10 has the most now.
			if got := o.OrderItems[0].Stock[0].StoreID; got != "9" {
				t.Fatalf("a tie served from store %s, want 9", got)
			}
			continue
		}
		if got := o.OrderItems[0].Stock[0].StoreID; got != "10" {
			t.Fatalf("served from store %s, want 10 (3 units against 2)", got)
		}
	}
	if q := quantities(e.mustStock(seller, item.UserProductID)); q["9"] != 2 || q["10"] != 2 {
		t.Fatalf("stock %v", q)
	}
}

func TestPlaceOrder_ATieGoesToTheLowestStoreIdAsANumberWhateverItsLeadingZeros(t *testing.T) {
	e := newEnv(t)
	seller := e.mustUser("SELLER", "warehouse_management")
	// Store ids are strings of digits: 0099 is the number 99, lower than
	// 100 though its text is longer.
	for _, id := range []string{"100", "0099"} {
		if _, err := e.acc.CreateStore(ctx, seller, accounts.NewStore{ID: id, Description: "warehouse", Tags: []string{"stock_location"}}); err != nil {
			t.Fatal(err)
		}
	}
	item, err := e.stock.PublishMultiOrigin(ctx, seller, stock.NewItem{Title: "Bicicleta", CategoryID: "MLA1055",
		Price: money.MustParse("10"), ListingTypeID: "gold_special", CurrencyID: "ARS",
		StockLocations: []stock.StockLocation{{StoreID: "100", Quantity: 2}, {StoreID: "0099", Quantity: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	o := e.mustOrder(sales.NewOrder{BuyerID: e.mustUser("BUYER"), ItemID: item.ID, Quantity: 1})
	if got := o.OrderItems[0].Stock[0].StoreID; got != "0099" {
		t.Fatalf("a tie served from store %s, want 0099 (the number 99)", got)
	}
}

func TestPlaceOrder_AllTheUnitsOfAnOrderComeFromOneStore(t *testing.T) {
	e := newEnv(t)
	seller, _, item := e.mustMultiItem(2, 2)
	buyer := e.mustUser("BUYER")
	stockBefore := e.mustStock(seller, item.UserProductID)
	for _, status := range []string{sales.StatusPaid, sales.StatusPaymentRequired} {
		before := e.dump()
		_, err := e.sales.PlaceOrder(ctx, sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: 3, Status: status})
		wantErr(t, err, errs.Invalid, "No store of item "+item.ID+" has the 3 units the order needs")
		e.unchanged(before, "an order no store can serve")
	}
	if after := e.mustStock(seller, item.UserProductID); after.Version != stockBefore.Version {
		t.Fatalf("version moved from %d to %d", stockBefore.Version, after.Version)
	}
}

func TestPlaceOrder_PaidTakesTheUnitsAtOnce(t *testing.T) {
	e := newEnv(t)
	seller, stores, item := e.mustMultiItem(4)
	buyer := e.mustUser("BUYER")
	v := e.mustStock(seller, item.UserProductID).Version
	o := e.mustOrder(sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: 3})
	now := e.now()
	if o.Status != sales.StatusPaid || o.DateClosed == nil || *o.DateClosed != now || o.DateCreated != now ||
		string(o.PaidAmount) != string(o.TotalAmount) || !slices.Equal(o.Tags, []string{sales.TagPaid}) {
		t.Fatalf("order %+v", o)
	}
	if len(o.Payments) != 1 || o.Payments[0].Status != "approved" || o.Payments[0].StatusDetail != "accredited" ||
		string(o.Payments[0].TransactionAmount) != "4501.5" || o.Payments[0].OrderID != o.ID || o.Payments[0].PayerID != buyer {
		t.Fatalf("payments %+v", o.Payments)
	}
	if o.Seller.ID != seller || o.Buyer.ID != buyer || o.OrderItems[0].Item.ID != item.ID || o.OrderItems[0].Quantity != 3 {
		t.Fatalf("parties or line %+v", o)
	}
	st := e.mustStock(seller, item.UserProductID)
	if st.Version != v+1 || quantities(st)[stores[0]] != 1 {
		t.Fatalf("stock version %d (before %d) %v", st.Version, v, quantities(st))
	}
	sh := e.mustShipment(*o.Shipping.ID)
	if sh.Status != sales.ShipmentReadyToShip || sh.Substatus == nil || *sh.Substatus != "ready_to_print" ||
		sh.OrderID != o.ID || sh.Destination.ShippingAddress != nil {
		t.Fatalf("shipment %+v", sh)
	}
	p, err := e.sales.Pack(ctx, buyer, o.PackID)
	if err != nil || p.Status != sales.PackReleased || len(p.Orders) != 1 || p.Orders[0].ID != o.ID || p.Shipment.ID != sh.ID {
		t.Fatalf("pack %+v %v", p, err)
	}
}

func TestPlaceOrder_PaymentRequiredTakesTheUnitsWhenPaid(t *testing.T) {
	e := newEnv(t)
	seller, stores, item := e.mustMultiItem(1, 4)
	buyer := e.mustUser("BUYER")
	before := e.mustStock(seller, item.UserProductID)
	// The named store is the one the payment takes from, though the other
	// has more.
	o := e.mustOrder(sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: 1, StoreID: stores[0], Status: sales.StatusPaymentRequired})
	if o.Status != sales.StatusPaymentRequired || len(o.Payments) != 0 || string(o.PaidAmount) != "0" ||
		o.DateClosed != nil || len(o.Tags) != 0 || len(o.OrderItems[0].Stock) != 0 {
		t.Fatalf("unpaid order %+v", o)
	}
	if st := e.mustStock(seller, item.UserProductID); st.Version != before.Version || !mapsEqual(quantities(st), quantities(before)) {
		t.Fatalf("an unpaid order took units: %v version %d", quantities(st), st.Version)
	}
	if it := e.mustItem(item.ID); it.SoldQuantity != 0 || it.AvailableQuantity != 5 {
		t.Fatalf("item sold %d available %d", it.SoldQuantity, it.AvailableQuantity)
	}
	sh := e.mustShipment(*o.Shipping.ID)
	if sh.Status != sales.ShipmentPending || *sh.Substatus != "waiting_for_payment" || sh.Destination.ShippingAddress != nil {
		t.Fatalf("unpaid shipment %+v", sh)
	}

	e.clock.Advance(time.Hour)
	paid, err := e.sales.Pay(ctx, o.ID, sales.PaymentInput{Status: "approved"})
	if err != nil {
		t.Fatal(err)
	}
	now := e.now()
	if paid.Status != sales.StatusPaid || len(paid.Payments) != 1 || paid.Payments[0].Status != "approved" ||
		paid.DateClosed == nil || *paid.DateClosed != now || paid.LastUpdated != now || paid.DateCreated == now ||
		string(paid.PaidAmount) != string(paid.TotalAmount) || !slices.Equal(paid.Tags, []string{sales.TagPaid}) {
		t.Fatalf("paid order %+v", paid)
	}
	if got := paid.OrderItems[0].Stock; len(got) != 1 || got[0].StoreID != stores[0] {
		t.Fatalf("paid from %+v, want the named store %s", got, stores[0])
	}
	st := e.mustStock(seller, item.UserProductID)
	if st.Version != before.Version+1 || quantities(st)[stores[0]] != 0 || quantities(st)[stores[1]] != 4 {
		t.Fatalf("stock after payment %v version %d", quantities(st), st.Version)
	}
	sh = e.mustShipment(sh.ID)
	if sh.Status != sales.ShipmentReadyToShip || *sh.Substatus != "ready_to_print" || sh.Destination.ShippingAddress != nil {
		t.Fatalf("paid shipment %+v", sh)
	}
}

func TestPay_WithNoUnitsLeftIsRefusedAndChangesNothing(t *testing.T) {
	e := newEnv(t)
	_, item := e.mustPlainItem(2)
	_, multiStores, multi := e.mustMultiItem(2, 2)
	buyer := e.mustUser("BUYER")
	plainOrder := e.mustOrder(sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: 2, Status: sales.StatusPaymentRequired})
	anyStore := e.mustOrder(sales.NewOrder{BuyerID: buyer, ItemID: multi.ID, Quantity: 2, Status: sales.StatusPaymentRequired})
	named := e.mustOrder(sales.NewOrder{BuyerID: buyer, ItemID: multi.ID, Quantity: 2, StoreID: multiStores[1], Status: sales.StatusPaymentRequired})
	// Paid orders take units first.
	e.mustOrder(sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: 1})
	e.mustOrder(sales.NewOrder{BuyerID: buyer, ItemID: multi.ID, Quantity: 1, StoreID: multiStores[0]})
	e.mustOrder(sales.NewOrder{BuyerID: buyer, ItemID: multi.ID, Quantity: 1, StoreID: multiStores[1]})
	for _, c := range []struct {
		order int64
		msg   string
	}{
		{plainOrder.ID, "Item " + item.ID + " has 1 units available; the order needs 2"},
		{anyStore.ID, "No store of item " + multi.ID + " has the 2 units the order needs"},
		{named.ID, "Store " + multiStores[1] + " has 1 units of item " + multi.ID + "; the order needs 2"},
	} {
		before := e.dump()
		_, err := e.sales.Pay(ctx, c.order, sales.PaymentInput{Status: "approved"})
		wantErr(t, err, errs.Invalid, c.msg)
		e.unchanged(before, "a payment with no units")
		if o := e.mustReadOrder(c.order); o.Status != sales.StatusPaymentRequired {
			t.Fatalf("order %d is %s", c.order, o.Status)
		}
	}
}

func TestPay_OnlyAnApprovedPaymentOfAPaymentRequiredOrder(t *testing.T) {
	e := newEnv(t)
	_, item := e.mustPlainItem(5)
	buyer := e.mustUser("BUYER")
	paid := e.mustOrder(sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: 1})
	unpaid := e.mustOrder(sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: 1, Status: sales.StatusPaymentRequired})
	cancelled := e.mustOrder(sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: 1, Status: sales.StatusPaymentRequired})
	if _, err := e.sales.Cancel(ctx, cancelled.ID); err != nil {
		t.Fatal(err)
	}
	before := e.dump()
	for _, c := range []struct {
		order  int64
		status string
		msg    string
	}{
		{unpaid.ID, "rejected", "Invalid status: rejected. Valid values are: [approved]"},
		{unpaid.ID, "", "The field [status] is required: approved"},
		{paid.ID, "approved", fmt.Sprintf("Order %d is paid: only a payment_required order takes a payment", paid.ID)},
		{cancelled.ID, "approved", fmt.Sprintf("Order %d is cancelled: only a payment_required order takes a payment", cancelled.ID)},
	} {
		_, err := e.sales.Pay(ctx, c.order, sales.PaymentInput{Status: c.status})
		wantErr(t, err, errs.Invalid, c.msg)
	}
	_, err := e.sales.Pay(ctx, 42, sales.PaymentInput{Status: "approved"})
	if de := wantErr(t, err, errs.NotFound, "Order does not exist"); de.Code != "order_not_found" || len(de.Causes) != 0 {
		t.Fatalf("code %s causes %v", de.Code, de.Causes)
	}
	e.unchanged(before, "refused payments")
}

func TestPay_AnItemClosedOrPausedSinceThePurchaseIsRefusedAndKeepsItsUnits(t *testing.T) {
	for _, status := range []string{stock.StatusClosed, stock.StatusPaused} {
		t.Run(status, func(t *testing.T) {
			e := newEnv(t)
			seller, stores, item := e.mustMultiItem(3, 2)
			buyer := e.mustUser("BUYER")
			o := e.mustOrder(sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: 2, Status: sales.StatusPaymentRequired})
			if _, err := e.stock.UpdateItem(ctx, seller, item.ID, stock.ItemUpdate{Status: &status}); err != nil {
				t.Fatal(err)
			}
			before := e.dump()
			_, err := e.sales.Pay(ctx, o.ID, sales.PaymentInput{Status: "approved"})
			wantErr(t, err, errs.Invalid, fmt.Sprintf("Order %d cannot be paid: item %s is %s", o.ID, item.ID, status))
			e.unchanged(before, "a payment for a "+status+" item")
			if st := e.mustStock(seller, item.UserProductID); !mapsEqual(quantities(st), map[string]int64{stores[0]: 3, stores[1]: 2}) {
				t.Fatalf("units left the %s item: %v", status, quantities(st))
			}
			if status == stock.StatusClosed {
				return
			}
			// Back on sale, the order is paid as any other.
			active := stock.StatusActive
			if _, err := e.stock.UpdateItem(ctx, seller, item.ID, stock.ItemUpdate{Status: &active}); err != nil {
				t.Fatal(err)
			}
			if paid, err := e.sales.Pay(ctx, o.ID, sales.PaymentInput{Status: "approved"}); err != nil || paid.Status != sales.StatusPaid {
				t.Fatalf("payment once active again: %s %v", paid.Status, err)
			}
		})
	}
}

func TestPay_ABuyerWithoutAnAddressHasANullShippingAddress(t *testing.T) {
	e := newEnv(t)
	_, _, item := e.mustMultiItem(3)
	buyer := e.mustUser("BUYER")
	paid := e.mustOrder(sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: 1})
	unpaid := e.mustOrder(sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: 1, Status: sales.StatusPaymentRequired})
	if _, err := e.sales.Pay(ctx, unpaid.ID, sales.PaymentInput{Status: "approved"}); err != nil {
		t.Fatal(err)
	}
	for _, o := range []sales.Order{paid, unpaid} {
		sh := e.mustShipment(*o.Shipping.ID)
		if sh.Status != sales.ShipmentReadyToShip || sh.Destination.ShippingAddress != nil {
			t.Fatalf("shipment of paid order %d: %s, destination address %+v", o.ID, sh.Status, sh.Destination.ShippingAddress)
		}
		// The key is sent, as null: the engine keeps no buyer's address.
		b, err := json.Marshal(sh)
		if err != nil {
			t.Fatal(err)
		}
		var wire struct {
			Destination map[string]json.RawMessage `json:"destination"`
		}
		if err := json.Unmarshal(b, &wire); err != nil {
			t.Fatal(err)
		}
		if got, ok := wire.Destination["shipping_address"]; !ok || string(got) != "null" {
			t.Fatalf("destination.shipping_address is %s (sent: %v), want null", got, ok)
		}
	}
}

func TestCancel_APaidOrderGivesItsUnitsBackToTheStoreTheyCameFrom(t *testing.T) {
	e := newEnv(t)
	seller, stores, item := e.mustMultiItem(5, 5)
	buyer := e.mustUser("BUYER")
	o := e.mustOrder(sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: 2, StoreID: stores[1]})
	// The other store has the most units when the order is cancelled.
	st := e.mustStock(seller, item.UserProductID)
	if _, err := e.stock.PutStock(ctx, seller, item.UserProductID, st.Version, []stock.StockLocation{{StoreID: stores[0], Quantity: 9}}); err != nil {
		t.Fatal(err)
	}
	before := e.mustStock(seller, item.UserProductID)
	e.clock.Advance(time.Minute)
	c, err := e.sales.Cancel(ctx, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	now := e.now()
	after := e.mustStock(seller, item.UserProductID)
	if after.Version != before.Version+1 || !mapsEqual(quantities(after), map[string]int64{stores[0]: 9, stores[1]: 5}) {
		t.Fatalf("stock after cancel %v version %d (before %d)", quantities(after), after.Version, before.Version)
	}
	if it := e.mustItem(item.ID); it.SoldQuantity != 0 || it.AvailableQuantity != 14 {
		t.Fatalf("item sold %d available %d", it.SoldQuantity, it.AvailableQuantity)
	}
	if c.Status != sales.StatusCancelled || c.CancelDetail == nil || c.CancelDetail.Date != now || c.LastUpdated != now {
		t.Fatalf("cancelled order %+v %+v", c, c.CancelDetail)
	}
	p := c.Payments[0]
	if len(c.Payments) != 1 || p.Status != "refunded" || p.StatusDetail != "refunded" ||
		p.TransactionAmountRefunded != p.TransactionAmount || p.DateLastModified != now {
		t.Fatalf("payments %+v", c.Payments)
	}
	sh := e.mustShipment(*o.Shipping.ID)
	if sh.Status != sales.ShipmentCancelled || *sh.Substatus != "cancelled_manually" || sh.LastUpdated != now {
		t.Fatalf("shipment %+v", sh)
	}
	pack, err := e.sales.Pack(ctx, seller, o.PackID)
	if err != nil || pack.Status != sales.PackCancelled {
		t.Fatalf("pack %+v %v", pack, err)
	}
	if got := e.mustReadOrder(o.ID); got.Status != sales.StatusCancelled {
		t.Fatalf("read back %s", got.Status)
	}
}

func TestCancel_AShippedOrDeliveredOrderIsRefusedWith400(t *testing.T) {
	for _, c := range []struct {
		path []string
		why  string
	}{
		{[]string{sales.ShipmentShipped}, "is shipped; it can be once the shipment is not_delivered"},
		{[]string{sales.ShipmentShipped, sales.ShipmentDelivered}, "is delivered; a delivered sale ends through a claim and a return"},
	} {
		t.Run(c.path[len(c.path)-1], func(t *testing.T) {
			e := newEnv(t)
			seller, _, item := e.mustMultiItem(3)
			o := e.mustOrder(sales.NewOrder{BuyerID: e.mustUser("BUYER"), ItemID: item.ID, Quantity: 2})
			for _, to := range c.path {
				if _, err := e.sales.MoveShipment(ctx, *o.Shipping.ID, sales.ShipmentMove{Status: to}); err != nil {
					t.Fatal(err)
				}
			}
			before := e.dump()
			_, err := e.sales.Cancel(ctx, o.ID)
			de := wantErr(t, err, errs.Invalid, fmt.Sprintf("Order %d cannot be cancelled: its shipment %d %s", o.ID, *o.Shipping.ID, c.why))
			if de.Code != "bad_request" || len(de.Causes) != 0 {
				t.Fatalf("code %s causes %v", de.Code, de.Causes)
			}
			e.unchanged(before, "a cancellation after shipping")
			if got := e.mustReadOrder(o.ID); got.Status != sales.StatusPaid || got.Payments[0].Status != "approved" {
				t.Fatalf("order %s, payment %s", got.Status, got.Payments[0].Status)
			}
			if it := e.mustItem(item.ID); it.AvailableQuantity != 1 || it.SoldQuantity != 2 {
				t.Fatalf("units came back: %d available, %d sold (stock %v)", it.AvailableQuantity, it.SoldQuantity,
					quantities(e.mustStock(seller, item.UserProductID)))
			}
		})
	}
}

func TestCancel_BeforeShippingOrOnceNotDeliveredTheUnitsComeBack(t *testing.T) {
	for _, c := range []struct {
		name string
		path []sales.ShipmentMove
		want string // the shipment's status after the cancellation
	}{
		{"ReadyToShip", nil, sales.ShipmentCancelled},
		{"Printed", []sales.ShipmentMove{{Status: sales.ShipmentReadyToShip, Substatus: "printed"}}, sales.ShipmentCancelled},
		{"ShipmentCancelled", []sales.ShipmentMove{{Status: sales.ShipmentCancelled}}, sales.ShipmentCancelled},
		{"NotDelivered", []sales.ShipmentMove{{Status: sales.ShipmentShipped}, {Status: sales.ShipmentNotDelivered, Substatus: "returning_to_sender"}},
			sales.ShipmentNotDelivered},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			_, item := e.mustPlainItem(3)
			o := e.mustOrder(sales.NewOrder{BuyerID: e.mustUser("BUYER"), ItemID: item.ID, Quantity: 2})
			for _, mv := range c.path {
				if _, err := e.sales.MoveShipment(ctx, *o.Shipping.ID, mv); err != nil {
					t.Fatal(err)
				}
			}
			history, err := e.sales.ShipmentHistory(ctx, sales.Operator, *o.Shipping.ID)
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.sales.Cancel(ctx, o.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != sales.StatusCancelled || got.Payments[0].Status != "refunded" {
				t.Fatalf("order %s, payment %s", got.Status, got.Payments[0].Status)
			}
			if it := e.mustItem(item.ID); it.AvailableQuantity != 3 || it.SoldQuantity != 0 {
				t.Fatalf("units not back: %d available, %d sold", it.AvailableQuantity, it.SoldQuantity)
			}
			// A shipment in a final status keeps it and its history.
			sh := e.mustShipment(*o.Shipping.ID)
			after, _ := e.sales.ShipmentHistory(ctx, sales.Operator, *o.Shipping.ID)
			final := history[len(history)-1].Status == c.want
			if sh.Status != c.want || final != (len(after) == len(history)) {
				t.Fatalf("shipment %s with %d moves (%d before), want %s", sh.Status, len(after), len(history), c.want)
			}
		})
	}
}

func TestCancel_AnUnpaidOrderGivesNoUnitsBack(t *testing.T) {
	e := newEnv(t)
	seller, _, item := e.mustMultiItem(2)
	buyer := e.mustUser("BUYER")
	o := e.mustOrder(sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: 2, Status: sales.StatusPaymentRequired})
	before := e.mustStock(seller, item.UserProductID)
	c, err := e.sales.Cancel(ctx, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	if after := e.mustStock(seller, item.UserProductID); after.Version != before.Version || !mapsEqual(quantities(after), quantities(before)) {
		t.Fatalf("stock moved: %v version %d", quantities(after), after.Version)
	}
	if c.Status != sales.StatusCancelled || len(c.Payments) != 0 || c.CancelDetail == nil {
		t.Fatalf("cancelled %+v", c)
	}
	if sh := e.mustShipment(*o.Shipping.ID); sh.Status != sales.ShipmentCancelled {
		t.Fatalf("shipment %s", sh.Status)
	}
}

func TestCancel_AnOrderIsCancelledOnce(t *testing.T) {
	e := newEnv(t)
	_, item := e.mustPlainItem(3)
	buyer := e.mustUser("BUYER")
	o := e.mustOrder(sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: 2})
	if _, err := e.sales.Cancel(ctx, o.ID); err != nil {
		t.Fatal(err)
	}
	before := e.dump()
	_, err := e.sales.Cancel(ctx, o.ID)
	wantErr(t, err, errs.Invalid, fmt.Sprintf("Order %d is already cancelled", o.ID))
	_, err = e.sales.Cancel(ctx, 7)
	if de := wantErr(t, err, errs.NotFound, "Order does not exist"); de.Code != "order_not_found" {
		t.Fatalf("code %s", de.Code)
	}
	e.unchanged(before, "a second cancellation")
	if it := e.mustItem(item.ID); it.AvailableQuantity != 3 {
		t.Fatalf("units given back twice: %d", it.AvailableQuantity)
	}
}

// shippedOrder is a paid order whose shipment has moved along path.
func (e *env) shippedOrder(path ...string) sales.Order {
	e.tb.Helper()
	_, item := e.mustPlainItem(1)
	o := e.mustOrder(sales.NewOrder{BuyerID: e.mustUser("BUYER"), ItemID: item.ID, Quantity: 1})
	for _, to := range path {
		if _, err := e.sales.MoveShipment(ctx, *o.Shipping.ID, sales.ShipmentMove{Status: to}); err != nil {
			e.tb.Fatalf("move to %s: %v", to, err)
		}
	}
	return o
}

func TestMoveShipment_EveryMoveTheFlowAllowsFromAPaidOrder(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct {
		path    []string
		to, sub string
	}{
		{nil, sales.ShipmentShipped, "out_for_delivery"},
		{nil, sales.ShipmentCancelled, "label_expired"},
		{[]string{sales.ShipmentShipped}, sales.ShipmentDelivered, ""},
		{[]string{sales.ShipmentShipped}, sales.ShipmentNotDelivered, "returned"},
	} {
		o := e.shippedOrder(c.path...)
		id := *o.Shipping.ID
		e.clock.Advance(90 * time.Second)
		sh, err := e.sales.MoveShipment(ctx, id, sales.ShipmentMove{Status: c.to, Substatus: c.sub})
		if err != nil {
			t.Fatalf("%v -> %s: %v", c.path, c.to, err)
		}
		now := e.now()
		if sh.Status != c.to || (c.sub == "") != (sh.Substatus == nil) || sh.LastUpdated != now {
			t.Fatalf("moved to %s %v at %s", sh.Status, sh.Substatus, sh.LastUpdated)
		}
		hist, err := e.sales.ShipmentHistory(ctx, o.Seller.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		// Created pending, paid ready_to_ship, then the path and the move.
		if len(hist) != 3+len(c.path) {
			t.Fatalf("history %+v", hist)
		}
		if last := hist[len(hist)-1]; last.Status != c.to || last.Date != now {
			t.Fatalf("last move %+v, want %s at %s", last, c.to, now)
		}
		if hist[0].Status != sales.ShipmentPending || hist[1].Status != sales.ShipmentReadyToShip {
			t.Fatalf("history %+v", hist)
		}
	}
}

func TestMoveShipment_AnUnpaidOrdersShipmentWaitsForThePaymentAndIsCancelledWithItsOrder(t *testing.T) {
	e := newEnv(t)
	_, item := e.mustPlainItem(1)
	o := e.mustOrder(sales.NewOrder{BuyerID: e.mustUser("BUYER"), ItemID: item.ID, Quantity: 1, Status: sales.StatusPaymentRequired})
	id := *o.Shipping.ID
	before := e.dump()
	for _, to := range []string{sales.ShipmentHandling, sales.ShipmentReadyToShip, sales.ShipmentCancelled} {
		_, err := e.sales.MoveShipment(ctx, id, sales.ShipmentMove{Status: to})
		wantErr(t, err, errs.Invalid, fmt.Sprintf("Shipment %d waits for the payment of order %d", id, o.ID))
	}
	e.unchanged(before, "moves before the payment")
	if _, err := e.sales.Cancel(ctx, o.ID); err != nil {
		t.Fatal(err)
	}
	if sh, err := e.sales.Shipment(ctx, sales.Operator, id); err != nil || sh.Status != sales.ShipmentCancelled {
		t.Fatalf("the cancelled order's shipment: %+v %v", sh, err)
	}
}

func TestMoveShipment_ANewSubstatusWithinAStatusIsAMove(t *testing.T) {
	e := newEnv(t)
	_, item := e.mustPlainItem(1)
	o := e.mustOrder(sales.NewOrder{BuyerID: e.mustUser("BUYER"), ItemID: item.ID, Quantity: 1})
	id := *o.Shipping.ID
	sh, err := e.sales.MoveShipment(ctx, id, sales.ShipmentMove{Status: sales.ShipmentReadyToShip, Substatus: "printed"})
	if err != nil || sh.Status != sales.ShipmentReadyToShip || sh.Substatus == nil || *sh.Substatus != "printed" {
		t.Fatalf("ready_to_print -> printed: %+v %v", sh, err)
	}
	// The same substatus again, or none, is no move.
	for _, sub := range []string{"printed", ""} {
		_, err := e.sales.MoveShipment(ctx, id, sales.ShipmentMove{Status: sales.ShipmentReadyToShip, Substatus: sub})
		wantErr(t, err, errs.Invalid, fmt.Sprintf("Shipment %d cannot move from ready_to_ship to ready_to_ship", id))
	}
	hist, err := e.sales.ShipmentHistory(ctx, sales.Operator, id)
	if err != nil || len(hist) != 3 || hist[2].Substatus == nil || *hist[2].Substatus != "printed" {
		t.Fatalf("history %+v %v", hist, err)
	}
}

func TestMoveShipment_AMoveTheFlowDoesNotAllowNamesTheAllowedNextStatuses(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct {
		path    []string
		to      string
		allowed []string
	}{
		{nil, sales.ShipmentDelivered, []string{sales.ShipmentShipped, sales.ShipmentCancelled}},
		{nil, sales.ShipmentPending, []string{sales.ShipmentShipped, sales.ShipmentCancelled}},
		{nil, sales.ShipmentReadyToShip, []string{sales.ShipmentShipped, sales.ShipmentCancelled}},
		{[]string{sales.ShipmentShipped}, sales.ShipmentCancelled, []string{sales.ShipmentDelivered, sales.ShipmentNotDelivered}},
		{[]string{sales.ShipmentShipped}, sales.ShipmentReadyToShip, []string{sales.ShipmentDelivered, sales.ShipmentNotDelivered}},
		{[]string{sales.ShipmentShipped, sales.ShipmentDelivered}, sales.ShipmentNotDelivered, nil},
		{[]string{sales.ShipmentShipped, sales.ShipmentNotDelivered}, sales.ShipmentDelivered, nil},
		{[]string{sales.ShipmentCancelled}, sales.ShipmentShipped, nil},
		{[]string{sales.ShipmentCancelled}, sales.ShipmentCancelled, nil},
	} {
		o := e.shippedOrder(c.path...)
		id := *o.Shipping.ID
		from := e.mustShipment(id).Status
		before := e.dump()
		_, err := e.sales.MoveShipment(ctx, id, sales.ShipmentMove{Status: c.to})
		de := wantErr(t, err, errs.Invalid, fmt.Sprintf("Shipment %d cannot move from %s to %s", id, from, c.to))
		var allowed []string
		for _, cause := range de.Causes {
			if cause.Code != "allowed_next_status" {
				t.Fatalf("cause %+v", cause)
			}
			allowed = append(allowed, cause.Message)
		}
		if !slices.Equal(allowed, c.allowed) {
			t.Fatalf("%s -> %s: causes %v, want %v", from, c.to, allowed, c.allowed)
		}
		e.unchanged(before, "a move the flow does not allow")
	}
}

func TestMoveShipment_UnknownStatusesSubstatusesAndShipmentsAreRefused(t *testing.T) {
	e := newEnv(t)
	o := e.shippedOrder()
	before := e.dump()
	_, err := e.sales.MoveShipment(ctx, *o.Shipping.ID, sales.ShipmentMove{Status: "lost"})
	wantErr(t, err, errs.Invalid, "Invalid status: lost. Valid values are: [pending, handling, ready_to_ship, shipped, delivered, not_delivered, cancelled]")
	_, err = e.sales.MoveShipment(ctx, *o.Shipping.ID, sales.ShipmentMove{Status: sales.ShipmentShipped, Substatus: "returned"})
	wantErr(t, err, errs.Invalid, "Invalid substatus: returned. Valid values for status shipped are: [out_for_delivery, soon_deliver, receiver_absent, bad_address, delayed, waiting_for_withdrawal, at_customs]")
	_, err = e.sales.MoveShipment(ctx, 40000099999, sales.ShipmentMove{Status: sales.ShipmentShipped})
	if de := wantErr(t, err, errs.NotFound, "Shipment does not exist"); de.Code != "shipment_not_found" {
		t.Fatalf("code %s", de.Code)
	}
	e.unchanged(before, "refused moves")
}

func TestShipmentStatuses_ListEveryStatusWithItsNextStatuses(t *testing.T) {
	got := map[string][]string{}
	var order []string
	for _, st := range sales.ShipmentStatuses() {
		got[st.ID] = st.Next
		order = append(order, st.ID)
		if len(st.Substatuses) == 0 {
			t.Fatalf("%s has no substatuses", st.ID)
		}
	}
	if !slices.Equal(order, []string{"pending", "handling", "ready_to_ship", "shipped", "delivered", "not_delivered", "cancelled"}) {
		t.Fatalf("statuses %v", order)
	}
	for status, next := range shipmentNext {
		if !slices.Equal(got[status], next) {
			t.Fatalf("%s next %v, want %v", status, got[status], next)
		}
		if got[status] == nil {
			t.Fatalf("%s: next_statuses is null, want []", status)
		}
	}
}

func TestMoveShipment_DeliveredAndNotDeliveredTagTheOrder(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct{ to, tag string }{
		{sales.ShipmentDelivered, sales.TagDelivered},
		{sales.ShipmentNotDelivered, sales.TagNotDelivered},
	} {
		o := e.shippedOrder(sales.ShipmentShipped)
		e.clock.Advance(time.Hour)
		if _, err := e.sales.MoveShipment(ctx, *o.Shipping.ID, sales.ShipmentMove{Status: c.to}); err != nil {
			t.Fatal(err)
		}
		got := e.mustReadOrder(o.ID)
		if !slices.Equal(got.Tags, []string{sales.TagPaid, c.tag}) || got.LastUpdated != e.now() || got.Status != sales.StatusPaid {
			t.Fatalf("order after %s: %s tags %v updated %s", c.to, got.Status, got.Tags, got.LastUpdated)
		}
	}
}

func TestReads_OnlyTheSellerAndTheBuyerSeeASale(t *testing.T) {
	e := newEnv(t)
	seller, item := e.mustPlainItem(1)
	buyer := e.mustUser("BUYER")
	other := e.mustUser("OTHER")
	o := e.mustOrder(sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: 1})
	ship := *o.Shipping.ID
	for _, caller := range []int64{seller, buyer, sales.Operator} {
		if got, err := e.sales.Order(ctx, caller, o.ID); err != nil || got.ID != o.ID {
			t.Fatalf("order for %d: %v", caller, err)
		}
		if got, err := e.sales.Pack(ctx, caller, o.PackID); err != nil || got.ID != o.PackID {
			t.Fatalf("pack for %d: %v", caller, err)
		}
		if got, err := e.sales.Shipment(ctx, caller, ship); err != nil || got.ID != ship {
			t.Fatalf("shipment for %d: %v", caller, err)
		}
		if got, err := e.sales.ShipmentHistory(ctx, caller, ship); err != nil || len(got) != 2 {
			t.Fatalf("history for %d: %v", caller, err)
		}
	}
	_, err := e.sales.Order(ctx, other, o.ID)
	wantErr(t, err, errs.Forbidden, "The user has not access to the order")
	_, err = e.sales.Pack(ctx, other, o.PackID)
	wantErr(t, err, errs.Forbidden, "The user has not access to the pack")
	_, err = e.sales.Shipment(ctx, other, ship)
	wantErr(t, err, errs.Forbidden, "The user has not access to the shipment")
	_, err = e.sales.ShipmentHistory(ctx, other, ship)
	wantErr(t, err, errs.Forbidden, "The user has not access to the shipment")

	for _, c := range []struct {
		err       error
		msg, code string
	}{
		{err: second(e.sales.Order(ctx, seller, o.ID+1000)), msg: "Order does not exist", code: "order_not_found"},
		{err: second(e.sales.Pack(ctx, seller, o.PackID+1000)), msg: "Pack does not exist", code: "pack_not_found"},
		{err: second(e.sales.Shipment(ctx, seller, ship+1000)), msg: "Shipment does not exist", code: "shipment_not_found"},
		{err: second(e.sales.ShipmentHistory(ctx, seller, ship+1000)), msg: "Shipment does not exist", code: "shipment_not_found"},
	} {
		if de := wantErr(t, c.err, errs.NotFound, c.msg); de.Code != c.code {
			t.Fatalf("%s: code %s, want %s", c.msg, de.Code, c.code)
		}
	}
}

func second[T any](_ T, err error) error { return err }

// eventKey is what an event says, without its number and time.
type eventKey struct {
	topic, resource string
	user            int64
}

// wantEvents checks the events written after from: exactly want, in any
// order, at the clock's time.
func (e *env) wantEvents(t *testing.T, from uint64, what string, want ...eventKey) {
	t.Helper()
	got := map[eventKey]int{}
	for _, ev := range e.outbox(from) {
		got[eventKey{ev.Topic, ev.Resource, ev.UserID}]++
		if !ev.Received.Equal(e.clock.Now()) {
			t.Fatalf("%s: event %+v received %v, want %v", what, ev, ev.Received, e.clock.Now())
		}
	}
	wantN := map[eventKey]int{}
	for _, w := range want {
		wantN[w]++
	}
	if fmt.Sprint(got) != fmt.Sprint(wantN) {
		t.Fatalf("%s wrote events %v, want %v", what, got, wantN)
	}
}

func TestEvents_EverySaleWritesItsOrderShipmentItemAndStockEvents(t *testing.T) {
	e := newEnv(t)
	seller, _, item := e.mustMultiItem(3)
	buyer := e.mustUser("BUYER")
	orders := func(o sales.Order) eventKey { return eventKey{sales.TopicOrders, "/orders/" + itoa(o.ID), seller} }
	ships := func(o sales.Order) eventKey {
		return eventKey{sales.TopicShipments, "/shipments/" + itoa(*o.Shipping.ID), seller}
	}
	items := eventKey{stock.TopicItems, "/items/" + item.ID, seller}
	stockLoc := eventKey{stock.TopicStockLocation, "/user-products/" + item.UserProductID + "/stock", seller}

	mark := e.lastEvent()
	paid := e.mustOrder(sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: 1})
	e.wantEvents(t, mark, "a paid order", orders(paid), ships(paid), items, stockLoc)

	mark = e.lastEvent()
	unpaid := e.mustOrder(sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: 1, Status: sales.StatusPaymentRequired})
	e.wantEvents(t, mark, "an unpaid order", orders(unpaid), ships(unpaid))

	e.clock.Advance(time.Second)
	mark = e.lastEvent()
	if _, err := e.sales.Pay(ctx, unpaid.ID, sales.PaymentInput{Status: "approved"}); err != nil {
		t.Fatal(err)
	}
	e.wantEvents(t, mark, "a payment", orders(unpaid), ships(unpaid), items, stockLoc)

	e.clock.Advance(time.Second)
	mark = e.lastEvent()
	if _, err := e.sales.MoveShipment(ctx, *paid.Shipping.ID, sales.ShipmentMove{Status: sales.ShipmentShipped}); err != nil {
		t.Fatal(err)
	}
	e.wantEvents(t, mark, "a shipment move", ships(paid))

	e.clock.Advance(time.Second)
	mark = e.lastEvent()
	if _, err := e.sales.MoveShipment(ctx, *paid.Shipping.ID, sales.ShipmentMove{Status: sales.ShipmentDelivered}); err != nil {
		t.Fatal(err)
	}
	e.wantEvents(t, mark, "a delivery", ships(paid), orders(paid))

	e.clock.Advance(time.Second)
	mark = e.lastEvent()
	if _, err := e.sales.Cancel(ctx, unpaid.ID); err != nil {
		t.Fatal(err)
	}
	// The last unit comes back: the item (paused as out_of_stock) changes.
	e.wantEvents(t, mark, "a cancellation", orders(unpaid), ships(unpaid), items, stockLoc)

	e.clock.Advance(time.Second)
	mark = e.lastEvent()
	before := e.dump()
	_, err := e.sales.Cancel(ctx, unpaid.ID)
	wantErr(t, err, errs.Invalid, fmt.Sprintf("Order %d is already cancelled", unpaid.ID))
	e.unchanged(before, "a second cancellation")
	e.wantEvents(t, mark, "a refused cancellation")
}

func TestEvents_APlainItemsSaleWritesNoStockLocationEvent(t *testing.T) {
	e := newEnv(t)
	seller, item := e.mustPlainItem(3)
	mark := e.lastEvent()
	o := e.mustOrder(sales.NewOrder{BuyerID: e.mustUser("BUYER"), ItemID: item.ID, Quantity: 1})
	e.wantEvents(t, mark, "a plain sale",
		eventKey{sales.TopicOrders, "/orders/" + itoa(o.ID), seller},
		eventKey{sales.TopicShipments, "/shipments/" + itoa(*o.Shipping.ID), seller},
		eventKey{stock.TopicItems, "/items/" + item.ID, seller})
}

func TestPlaceOrder_AStockPutWithTheVersionReadBeforeASaleOrACancellationIsRefused(t *testing.T) {
	e := newEnv(t)
	seller, stores, item := e.mustMultiItem(4)
	buyer := e.mustUser("BUYER")
	read := e.mustStock(seller, item.UserProductID)
	o := e.mustOrder(sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: 1})
	put := []stock.StockLocation{{StoreID: stores[0], Quantity: 10}}
	before := e.dump()
	_, err := e.stock.PutStock(ctx, seller, item.UserProductID, read.Version, put)
	wantErr(t, err, errs.Conflict, "Version mismatch")
	e.unchanged(before, "a stock put older than a sale")

	read = e.mustStock(seller, item.UserProductID)
	if _, err := e.sales.Cancel(ctx, o.ID); err != nil {
		t.Fatal(err)
	}
	before = e.dump()
	_, err = e.stock.PutStock(ctx, seller, item.UserProductID, read.Version, put)
	wantErr(t, err, errs.Conflict, "Version mismatch")
	e.unchanged(before, "a stock put older than a cancellation")
	read = e.mustStock(seller, item.UserProductID)
	if _, err := e.stock.PutStock(ctx, seller, item.UserProductID, read.Version, put); err != nil {
		t.Fatalf("a put with the current version: %v", err)
	}
}

func TestPlaceOrder_IdsAreNumberedAsThePublicAPIsAre(t *testing.T) {
	e := newEnv(t)
	_, item := e.mustPlainItem(5)
	o := e.mustOrder(sales.NewOrder{BuyerID: e.mustUser("BUYER"), ItemID: item.ID, Quantity: 1})
	for _, c := range []struct {
		what      string
		id, first int64
		digits    int
	}{
		{"order", o.ID, 2000000000000001, 16},
		{"pack", o.PackID, 2100000000000001, 16},
		{"shipment", *o.Shipping.ID, 40000000001, 11},
		{"payment", o.Payments[0].ID, 10000000001, 11},
	} {
		if c.id < c.first || len(itoa(c.id)) != c.digits {
			t.Fatalf("%s id %d, want %d digits from %d", c.what, c.id, c.digits, c.first)
		}
	}
}
