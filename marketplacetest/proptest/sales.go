package proptest

import (
	"fmt"
	"slices"
	"strings"

	"pgregory.net/rapid"
)

// Purchase is a generated purchase on a Shop: buyer Shop.Buyers[Buyer]
// buys Quantity units of item Shop.Items[Item], from the store
// Shop.Stores[Store] when Store is not negative, else from the store the
// rule picks; paid at once, or waiting for its payment when
// PaymentRequired.
type Purchase struct {
	Buyer           int
	Item            int
	Quantity        int64
	Store           int
	PaymentRequired bool
}

// Status is the order status the purchase asks for: paid or
// payment_required.
func (p Purchase) Status() string {
	if p.PaymentRequired {
		return "payment_required"
	}
	return "paid"
}

// Purchases draws purchases of the items of s by its buyers: 1 to 5 units
// (small beside MaxQuantity, so that most are served and stores run out
// within a few), about a third naming a store (any of the shop's: it may
// hold none of the item, or too few units), about a third waiting for
// their payment.
func Purchases(s Shop) *rapid.Generator[Purchase] {
	return rapid.Custom(func(t *rapid.T) Purchase {
		p := Purchase{
			Buyer:    rapid.IntRange(0, len(s.Buyers)-1).Draw(t, "buyer"),
			Item:     rapid.IntRange(0, len(s.Items)-1).Draw(t, "item"),
			Quantity: rapid.Int64Range(1, 5).Draw(t, "quantity"),
			Store:    -1,
		}
		if rapid.IntRange(0, 2).Draw(t, "names a store") == 0 {
			p.Store = rapid.IntRange(0, len(s.Stores)-1).Draw(t, "store")
		}
		p.PaymentRequired = rapid.IntRange(0, 2).Draw(t, "payment required") == 0
		return p
	})
}

// ItemStatuses draws a status the seller gives an item (PUT /items/{id}):
// active most often, paused, and closed, which is final, seldom.
func ItemStatuses() *rapid.Generator[string] {
	return rapid.SampledFrom([]string{"active", "active", "active", "paused", "paused", "closed"})
}

// ShipmentMoves draws a status to move a shipment to: any status of the
// flow, those a paid order's shipment goes through (shipped, then
// delivered or not_delivered) most often.
func ShipmentMoves() *rapid.Generator[string] {
	return rapid.SampledFrom([]string{"shipped", "shipped", "delivered", "not_delivered",
		"pending", "handling", "ready_to_ship", "cancelled"})
}

// SaleOutcome is what the model expects of a sales operation.
type SaleOutcome struct {
	// Status is the HTTP status: 201 for a purchase, 200 for another
	// change, 400 or 404 for a refusal, 409 for a stale stock version.
	Status int
	// Error and Message are the refusal's error code and message ("" on
	// success), as the body {message, error, status, cause} and a domain
	// error's Code and Message carry them.
	Error   string
	Message string
}

// OK reports whether the operation is expected to succeed.
func (o SaleOutcome) OK() bool { return o.Status < 300 }

// Check compares the engine's answer, the code and message of its error
// ("" and "" for none), with the outcome and describes the difference.
func (o SaleOutcome) Check(code, message string) error {
	switch {
	case o.OK() && code != "":
		return fmt.Errorf("refused with %s %q, want %d", code, message, o.Status)
	case !o.OK() && (code != o.Error || message != o.Message):
		if code == "" {
			return fmt.Errorf("accepted, want %d %s %q", o.Status, o.Error, o.Message)
		}
		return fmt.Errorf("refused with %s %q, want %d %s %q", code, message, o.Status, o.Error, o.Message)
	}
	return nil
}

func refused(format string, args ...any) SaleOutcome {
	return SaleOutcome{Status: 400, Error: "bad_request", Message: fmt.Sprintf(format, args...)}
}

// ItemState is what the model knows of an item, as GET /items/{id}
// answers it.
type ItemState struct {
	ID        string
	Status    string
	SubStatus []string
	Available int64
	Sold      int64
}

// OrderState is what the model knows of an order and its shipment.
type OrderState struct {
	ID       int64
	Shipment int64
	// Item is the position of the item in the Shop.
	Item     int
	Quantity int64
	// Status is payment_required, paid or cancelled.
	Status string
	// Store is the store the units left from ("" until they are taken;
	// kept after a cancellation gave them back); NamedStore the store the
	// purchase named ("" for the rule's).
	Store      string
	NamedStore string
	// Payment is the status of its payment: "" (none yet), approved or
	// refunded.
	Payment        string
	ShipmentStatus string
	Tags           []string
}

type itemSales struct {
	status     string
	outOfStock bool
	sold       int64
}

// shipmentNext is the shipment flow (docs/sales.md, "Shipments"): the
// statuses a shipment may move to from each; none from a final one.
var shipmentNext = map[string][]string{
	"pending":       {"handling", "ready_to_ship", "cancelled"},
	"handling":      {"ready_to_ship", "cancelled"},
	"ready_to_ship": {"shipped", "cancelled"},
	"shipped":       {"delivered", "not_delivered"},
	"delivered":     nil,
	"not_delivered": nil,
	"cancelled":     nil,
}

const shipmentStatusList = "[pending, handling, ready_to_ship, shipped, delivered, not_delivered, cancelled]"

// SalesModel is the reference model of the sales of a Shop's items:
// purchases, payments, cancellations, shipment moves, the seller's stock
// writes and status changes, and how each moves the stores' units, the
// stock version, the items' status, available and sold quantities and
// the orders. It is written from the rules of the sales companion of the
// specification and the choices docs/sales.md and docs/spec-decisions.md
// ("Sales") record, never from the engine:
//
//   - Which store: the units of an order leave from one store; a named
//     store must hold stock of the item and have all the units, else the
//     store with the most units serves, ties to the lowest store id as a
//     number, and it must have all the units.
//   - When the units leave: at once for a paid purchase, at the payment
//     for a payment_required one (nothing is held in between); each take
//     and each return moves the user product's version by one and the
//     item's sold_quantity the other way.
//   - A purchase and a payment need the item active; a payment needs a
//     payment_required order.
//   - A cancellation: once; refused while the shipment is shipped or
//     delivered; a paid order's units go back to their store, its payment
//     is refunded, and its shipment is cancelled unless final.
//   - The item follows its stock: published active whatever its units; an
//     active item whose user product is written to 0 units is paused as
//     out_of_stock, and active again when units come back; the seller's
//     pause and a closed item are left alone; the seller asking active
//     with no units gets paused as out_of_stock; closed is final.
//   - The shipment: pending until paid, then ready_to_ship; it moves
//     along the flow only once its order is paid; delivered and
//     not_delivered tag the order.
//
// The stock rules are StockModel's. The model covers what the
// generators draw: the Shop's multi-origin items (one user product
// each), bought by its buyers.
type SalesModel struct {
	ids    ShopIDs
	stock  *StockModel // by item id: each item of a Shop has its own user product
	items  []*itemSales
	orders map[int64]*OrderState
	placed []int64
}

// NewSalesModel returns the model of shop s as loaded, with ids its
// records' ids: every item active with its initial stock, at version 1.
func NewSalesModel(s Shop, ids ShopIDs) *SalesModel {
	m := &SalesModel{ids: ids, stock: NewStockModel(), orders: map[int64]*OrderState{}}
	for i, it := range s.Items {
		m.stock.Publish(ids.Items[i], ids.StoreIDs(it.StoreIndex), it.Quantity)
		m.items = append(m.items, &itemSales{status: "active"})
	}
	return m
}

// follow is the status rule of item i after its stock was written.
func (m *SalesModel) follow(i int) {
	it, q := m.items[i], m.stock.products[m.ids.Items[i]].quantity()
	switch {
	case it.status == "active" && q == 0:
		it.status, it.outOfStock = "paused", true
	case it.status == "paused" && it.outOfStock && q > 0:
		it.status, it.outOfStock = "active", false
	}
}

// lessStoreID orders store ids (strings of digits) by their number, and
// ids of one number by their text.
func lessStoreID(a, b string) bool {
	na, nb := strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(na) != len(nb) {
		return len(na) < len(nb)
	}
	if na != nb {
		return na < nb
	}
	return a < b
}

// source is the store q units of item i leave from, or the refusal.
func (m *SalesModel) source(i int, named string, q int64) (string, SaleOutcome) {
	item, p := m.ids.Items[i], m.stock.products[m.ids.Items[i]]
	if named != "" {
		have, ok := p.qty[named]
		switch {
		case !ok:
			return "", refused("Store %s holds no stock of item %s", named, item)
		case have < q:
			return "", refused("Store %s has %d units of item %s; the order needs %d", named, have, item, q)
		}
		return named, SaleOutcome{}
	}
	best := ""
	for _, s := range p.stores {
		if best == "" || p.qty[s] > p.qty[best] || (p.qty[s] == p.qty[best] && lessStoreID(s, best)) {
			best = s
		}
	}
	if best == "" || p.qty[best] < q {
		return "", refused("No store of item %s has the %d units the order needs", item, q)
	}
	return best, SaleOutcome{}
}

// move takes (negative delta) or gives back units of item i in store.
func (m *SalesModel) move(i int, store string, delta int64) {
	m.stock.move(m.ids.Items[i], store, delta)
	m.items[i].sold -= delta
	m.follow(i)
}

// pay takes the order's units from store and records its payment.
func (m *SalesModel) pay(o *OrderState, store string) {
	m.move(o.Item, store, -o.Quantity)
	o.Store = store
	o.Status, o.Payment = "paid", "approved"
	o.Tags = append(o.Tags, "paid")
	if o.ShipmentStatus == "pending" {
		o.ShipmentStatus = "ready_to_ship"
	}
}

// Buy applies purchase p. order and shipment are the ids the engine gave
// the order and its shipment, which the model uses as labels (0 when the
// engine refused the purchase: the model then expects a refusal too).
func (m *SalesModel) Buy(p Purchase, order, shipment int64) SaleOutcome {
	it := m.items[p.Item]
	if it.status != "active" {
		return refused("Item %s is not active: its status is %s", m.ids.Items[p.Item], it.status)
	}
	store, no := m.source(p.Item, m.ids.Store(p.Store), p.Quantity)
	if no.Status != 0 {
		return no
	}
	o := &OrderState{ID: order, Shipment: shipment, Item: p.Item, Quantity: p.Quantity, Status: "payment_required",
		NamedStore: m.ids.Store(p.Store), ShipmentStatus: "pending", Tags: []string{}}
	if !p.PaymentRequired {
		m.pay(o, store)
	}
	m.orders[order] = o
	m.placed = append(m.placed, order)
	return SaleOutcome{Status: 201}
}

func orderNotFound() SaleOutcome {
	return SaleOutcome{Status: 404, Error: "order_not_found", Message: "Order does not exist"}
}

// Pay applies the approved payment of order.
func (m *SalesModel) Pay(order int64) SaleOutcome {
	o := m.orders[order]
	if o == nil {
		return orderNotFound()
	}
	if o.Status != "payment_required" {
		return refused("Order %d is %s: only a payment_required order takes a payment", order, o.Status)
	}
	// The units leave now, from an item still on sale.
	if it := m.items[o.Item]; it.status != "active" {
		return refused("Order %d cannot be paid: item %s is %s", order, m.ids.Items[o.Item], it.status)
	}
	store, no := m.source(o.Item, o.NamedStore, o.Quantity)
	if no.Status != 0 {
		return no
	}
	m.pay(o, store)
	return SaleOutcome{Status: 200}
}

// Cancel applies the cancellation of order.
func (m *SalesModel) Cancel(order int64) SaleOutcome {
	o := m.orders[order]
	switch {
	case o == nil:
		return orderNotFound()
	case o.Status == "cancelled":
		return refused("Order %d is already cancelled", order)
	case o.ShipmentStatus == "shipped":
		return refused("Order %d cannot be cancelled: its shipment %d is shipped; it can be once the shipment is not_delivered", order, o.Shipment)
	case o.ShipmentStatus == "delivered":
		return refused("Order %d cannot be cancelled: its shipment %d is delivered; a delivered sale ends through a claim and a return", order, o.Shipment)
	}
	if o.Store != "" {
		m.move(o.Item, o.Store, o.Quantity)
	}
	if o.Payment != "" {
		o.Payment = "refunded"
	}
	o.Status = "cancelled"
	if slices.Contains(shipmentNext[o.ShipmentStatus], "cancelled") {
		o.ShipmentStatus = "cancelled"
	}
	return SaleOutcome{Status: 200}
}

// MoveShipment applies the move of order's shipment to status, with no
// substatus.
func (m *SalesModel) MoveShipment(order int64, status string) SaleOutcome {
	o := m.orders[order]
	if _, known := shipmentNext[status]; !known {
		return refused("Invalid status: %s. Valid values are: %s", status, shipmentStatusList)
	}
	switch {
	case o == nil:
		return SaleOutcome{Status: 404, Error: "shipment_not_found", Message: "Shipment does not exist"}
	case o.Status == "payment_required":
		return refused("Shipment %d waits for the payment of order %d", o.Shipment, order)
	case !slices.Contains(shipmentNext[o.ShipmentStatus], status):
		return refused("Shipment %d cannot move from %s to %s", o.Shipment, o.ShipmentStatus, status)
	}
	o.ShipmentStatus = status
	if status == "delivered" || status == "not_delivered" {
		o.Tags = append(o.Tags, status)
	}
	return SaleOutcome{Status: 200}
}

// SetItemStatus applies the seller's status change of item i.
func (m *SalesModel) SetItemStatus(i int, status string) SaleOutcome {
	it := m.items[i]
	switch {
	case status != "active" && status != "paused" && status != "closed":
		return refused("Invalid status: %s. Valid values are: [active, paused, closed]", status)
	case it.status == "closed" && status != "closed":
		return refused("Item %s is closed and cannot change status", m.ids.Items[i])
	}
	it.status, it.outOfStock = status, false
	if status == "active" && m.stock.products[m.ids.Items[i]].quantity() == 0 {
		it.status, it.outOfStock = "paused", true
	}
	return SaleOutcome{Status: 200}
}

// PutStock applies stock write w, made with the version the engine
// answered to the read before it (read): the version sent is read plus
// w.VersionOffset. A write with the model's version is taken and the
// item follows its new quantity; any other is a 409 "Version mismatch".
func (m *SalesModel) PutStock(w StockWrite, read int64) SaleOutcome {
	out := m.stock.Put(m.ids.Items[w.Item], read+w.VersionOffset, m.ids.StoreIDs(w.StoreIndex), w.Quantity)
	if out.Status != 200 {
		return SaleOutcome{Status: out.Status, Error: "conflict", Message: out.Message}
	}
	m.follow(w.Item)
	return SaleOutcome{Status: 200}
}

// Orders returns the ids of the orders placed so far, oldest first.
func (m *SalesModel) Orders() []int64 { return slices.Clone(m.placed) }

// Order returns what the model knows of order (the zero OrderState for
// an order it does not know).
func (m *SalesModel) Order(order int64) OrderState {
	o := m.orders[order]
	if o == nil {
		return OrderState{}
	}
	out := *o
	out.Tags = slices.Clone(o.Tags)
	return out
}

// Item returns what the model knows of item i.
func (m *SalesModel) Item(i int) ItemState {
	it := m.items[i]
	sub := []string{}
	if it.outOfStock {
		sub = []string{"out_of_stock"}
	}
	return ItemState{ID: m.ids.Items[i], Status: it.status, SubStatus: sub,
		Available: m.stock.products[m.ids.Items[i]].quantity(), Sold: it.sold}
}

// Version returns the stock version of item i's user product.
func (m *SalesModel) Version(i int) int64 { return m.stock.Version(m.ids.Items[i]) }

// Quantities returns the quantity of each store of item i's user
// product, by store id.
func (m *SalesModel) Quantities(i int) map[string]int64 { return m.stock.Quantities(m.ids.Items[i]) }

// CheckItem compares what the engine answers for item i (GET
// /items/{id}: its status, sub_status, available_quantity and
// sold_quantity, in got's fields of those names) with the model, and
// describes the difference.
func (m *SalesModel) CheckItem(i int, got ItemState) error {
	want := m.Item(i)
	if got.Status != want.Status || !slices.Equal(got.SubStatus, want.SubStatus) || got.Available != want.Available || got.Sold != want.Sold {
		return fmt.Errorf("item %s is %s %v, available %d, sold %d; want %s %v, available %d, sold %d", want.ID,
			got.Status, got.SubStatus, got.Available, got.Sold, want.Status, want.SubStatus, want.Available, want.Sold)
	}
	return nil
}

// CheckStock compares the stock the engine answers for item i's user
// product (its version and the quantity of each store, by store id) with
// the model, and describes the difference.
func (m *SalesModel) CheckStock(i int, version int64, quantities map[string]int64) error {
	return m.stock.Check(m.ids.Items[i], version, quantities)
}

// CheckOrder compares what the engine answers for an order (its Status,
// the Store of order_items[0].stock, "" when empty, the status of its
// Payment, "" when it has none, its Tags, and its shipment's status as
// ShipmentStatus; got's other fields are not compared) with the model, and
// describes the difference.
func (m *SalesModel) CheckOrder(order int64, got OrderState) error {
	want := m.Order(order)
	if got.Status != want.Status || got.Store != want.Store || got.Payment != want.Payment ||
		!slices.Equal(got.Tags, want.Tags) || got.ShipmentStatus != want.ShipmentStatus {
		return fmt.Errorf("order %d is %s from store %q, payment %q, tags %v, shipment %s; want %s from %q, payment %q, tags %v, shipment %s",
			order, got.Status, got.Store, got.Payment, got.Tags, got.ShipmentStatus,
			want.Status, want.Store, want.Payment, want.Tags, want.ShipmentStatus)
	}
	return nil
}
