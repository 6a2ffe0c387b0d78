package proptest_test

import (
	"context"
	"testing"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/marketplacetest"
	"github.com/marketplace/marketplace/marketplacetest/proptest"
	"github.com/marketplace/marketplace/sales"
	"github.com/marketplace/marketplace/stock"
)

// TestSales_StockItemsAndOrdersFollowTheModel is a rapid state machine on
// one generated shop per case: purchases (paid and payment_required),
// payments, cancellations, shipment moves, stock writes and the seller's
// status changes, each answered as the model says; after each, every
// item, its stock and every order read as the model has them.
func TestSales_StockItemsAndOrdersFollowTheModel(t *testing.T) {
	srv := marketplacetest.NewServer(t)
	rapid.Check(t, func(t *rapid.T) {
		if err := srv.ResetClock(); err != nil {
			t.Fatal(err)
		}
		shop := proptest.Shops(3, 2).Draw(t, "shop")
		res, err := srv.Marketplace.LoadFixtures(context.Background(), shop.Doc)
		if err != nil {
			t.Fatal(err)
		}
		ids, err := shop.IDs(res)
		if err != nil {
			t.Fatal(err)
		}
		m := &salesMachine{srv: srv, shop: shop, ids: ids, model: proptest.NewSalesModel(shop, ids), ctx: context.Background()}
		t.Repeat(rapid.StateMachineActions(m))
	})
}

type salesMachine struct {
	srv   *marketplacetest.Server
	shop  proptest.Shop
	ids   proptest.ShopIDs
	model *proptest.SalesModel
	ctx   context.Context
}

// answered fails t unless the engine's answer to an operation, err, is
// the one the model expects.
func answered(t *rapid.T, op string, err error, want proptest.SaleOutcome) {
	t.Helper()
	code, message := "", ""
	if de := errs.As(err); de != nil {
		code, message = de.Code, de.Message
	} else if err != nil {
		code, message = "internal", err.Error()
	}
	if err := want.Check(code, message); err != nil {
		t.Fatalf("%s: %v", op, err)
	}
}

// order draws one of the orders placed so far.
func (m *salesMachine) order(t *rapid.T) int64 {
	orders := m.model.Orders()
	if len(orders) == 0 {
		t.Skip("no order yet")
	}
	return rapid.SampledFrom(orders).Draw(t, "order")
}

func (m *salesMachine) Buy(t *rapid.T) {
	p := proptest.Purchases(m.shop).Draw(t, "purchase")
	o, err := m.srv.Marketplace.Sales.PlaceOrder(m.ctx, sales.NewOrder{BuyerID: m.ids.Buyers[p.Buyer],
		ItemID: m.ids.Items[p.Item], Quantity: p.Quantity, StoreID: m.ids.Store(p.Store), Status: p.Status()})
	var shipment int64
	if o.Shipping.ID != nil {
		shipment = *o.Shipping.ID
	}
	answered(t, "purchase", err, m.model.Buy(p, o.ID, shipment))
}

func (m *salesMachine) Pay(t *rapid.T) {
	id := m.order(t)
	_, err := m.srv.Marketplace.Sales.Pay(m.ctx, id, sales.PaymentInput{Status: "approved"})
	answered(t, "payment", err, m.model.Pay(id))
}

func (m *salesMachine) Cancel(t *rapid.T) {
	id := m.order(t)
	_, err := m.srv.Marketplace.Sales.Cancel(m.ctx, id)
	answered(t, "cancellation", err, m.model.Cancel(id))
}

func (m *salesMachine) MoveShipment(t *rapid.T) {
	id := m.order(t)
	to := proptest.ShipmentMoves().Draw(t, "to")
	_, err := m.srv.Marketplace.Sales.MoveShipment(m.ctx, m.model.Order(id).Shipment, sales.ShipmentMove{Status: to})
	answered(t, "shipment move", err, m.model.MoveShipment(id, to))
}

func (m *salesMachine) SetItemStatus(t *rapid.T) {
	i := rapid.IntRange(0, len(m.ids.Items)-1).Draw(t, "item")
	status := proptest.ItemStatuses().Draw(t, "status")
	_, err := m.srv.Marketplace.Stock.UpdateItem(m.ctx, m.ids.Seller, m.ids.Items[i], stock.ItemUpdate{Status: &status})
	answered(t, "status change", err, m.model.SetItemStatus(i, status))
}

func (m *salesMachine) PutStock(t *rapid.T) {
	w := proptest.StockWrites(m.shop, 1).Draw(t, "write")[0]
	up, read := m.stock(t, w.Item)
	var locs []stock.StockLocation
	for j, s := range m.ids.StoreIDs(w.StoreIndex) {
		locs = append(locs, stock.StockLocation{StoreID: s, Quantity: w.Quantity[j]})
	}
	_, err := m.srv.Marketplace.Stock.PutStock(m.ctx, m.ids.Seller, up, read.Version+w.VersionOffset, locs)
	answered(t, "stock write", err, m.model.PutStock(w, read.Version))
}

// stock reads the user product of item i and its stock.
func (m *salesMachine) stock(t *rapid.T, i int) (string, stock.Stock) {
	it, err := m.srv.Marketplace.Stock.Item(m.ctx, m.ids.Items[i])
	if err != nil {
		t.Fatal(err)
	}
	st, err := m.srv.Marketplace.Stock.Stock(m.ctx, m.ids.Seller, it.UserProductID)
	if err != nil {
		t.Fatal(err)
	}
	return it.UserProductID, st
}

func (m *salesMachine) Check(t *rapid.T) {
	for i, id := range m.ids.Items {
		it, err := m.srv.Marketplace.Stock.Item(m.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		got := proptest.ItemState{Status: it.Status, SubStatus: it.SubStatus, Available: it.AvailableQuantity, Sold: it.SoldQuantity}
		if err := m.model.CheckItem(i, got); err != nil {
			t.Fatal(err)
		}
		_, st := m.stock(t, i)
		quantities := map[string]int64{}
		for _, l := range st.Locations {
			quantities[l.StoreID] = l.Quantity
		}
		if err := m.model.CheckStock(i, st.Version, quantities); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range m.model.Orders() {
		o, err := m.srv.Marketplace.Sales.Order(m.ctx, sales.Operator, id)
		if err != nil {
			t.Fatal(err)
		}
		sh, err := m.srv.Marketplace.Sales.Shipment(m.ctx, sales.Operator, *o.Shipping.ID)
		if err != nil {
			t.Fatal(err)
		}
		got := proptest.OrderState{Status: o.Status, Tags: o.Tags, ShipmentStatus: sh.Status}
		if taken := o.OrderItems[0].Stock; len(taken) > 0 {
			got.Store = taken[0].StoreID
		}
		if len(o.Payments) > 0 {
			got.Payment = o.Payments[0].Status
		}
		if err := m.model.CheckOrder(id, got); err != nil {
			t.Fatal(err)
		}
	}
}
