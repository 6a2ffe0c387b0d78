package sales_test

import (
	"testing"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/sales"
)

func TestSetLogisticType_AKnownTypeIsSetBeforeTheShipmentShips(t *testing.T) {
	e := newEnv(t)
	_, item := e.mustPlainItem(5)
	buyer := e.mustUser("BUYER")
	o := e.mustOrder(sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: 1})
	ship := *o.Shipping.ID
	before := e.lastEvent()
	sh, err := e.sales.SetLogisticType(ctx, ship, sales.LogisticFulfillment)
	if err != nil {
		t.Fatal(err)
	}
	if sh.Logistic.Type != "fulfillment" || e.mustShipment(ship).Logistic.Type != "fulfillment" {
		t.Fatalf("logistic = %+v", sh.Logistic)
	}
	if evs := e.outbox(before); len(evs) != 1 || evs[0].Topic != sales.TopicShipments {
		t.Fatalf("events = %+v, want one shipments event", evs)
	}
	_, err = e.sales.SetLogisticType(ctx, ship, "teleport")
	wantErr(t, err, errs.Invalid, "Invalid logistic type: teleport. Valid values are: [drop_off, cross_docking, fulfillment, self_service]")
	if _, err := e.sales.MoveShipment(ctx, ship, sales.ShipmentMove{Status: sales.ShipmentShipped}); err != nil {
		t.Fatal(err)
	}
	_, err = e.sales.SetLogisticType(ctx, ship, sales.LogisticDropOff)
	wantErr(t, err, errs.Invalid, "Shipment "+itoa(ship)+" is shipped: its logistic type is set before it ships")
}
