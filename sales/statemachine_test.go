package sales_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/sales"
	"github.com/marketplace/marketplace/stock"
)

// The plain model of sales over stock, written from the rules of
// sales-api.md and never by calling the engine's helpers.

// shipmentNext is the shipment flow: the statuses each status may move to.
var shipmentNext = map[string][]string{
	"pending":       {"handling", "ready_to_ship", "cancelled"},
	"handling":      {"ready_to_ship", "cancelled"},
	"ready_to_ship": {"shipped", "cancelled"},
	"shipped":       {"delivered", "not_delivered"},
	"delivered":     nil,
	"not_delivered": nil,
	"cancelled":     nil,
}

// shipmentStatusList is every shipment status as the error messages list
// them.
const shipmentStatusList = "[pending, handling, ready_to_ship, shipped, delivered, not_delivered, cancelled]"

// modelUP is a user product: its version and units, and the units its
// seller put there (what the stores and the paid orders share).
type modelUP struct {
	id      string
	seller  int64
	multi   bool
	version int64
	stores  []string         // in the order they joined the stock
	qty     map[string]int64 // units per store (multi-origin)
	plain   int64            // units of a single-origin user product
	put     int64
}

func (u *modelUP) quantity() int64 {
	if !u.multi {
		return u.plain
	}
	var n int64
	for _, s := range u.stores {
		n += u.qty[s]
	}
	return n
}

// setUnits is the seller writing units for a store ("" for a plain user
// product).
func (u *modelUP) setUnits(store string, q int64) {
	if !u.multi {
		u.put += q - u.plain
		u.plain = q
		return
	}
	if _, ok := u.qty[store]; !ok {
		u.stores = append(u.stores, store)
	}
	u.put += q - u.qty[store]
	u.qty[store] = q
}

type modelItem struct {
	id         string
	up         *modelUP
	seller     int64
	status     string
	outOfStock bool
	sold       int64
}

type modelMove struct{ status, substatus, date string }

type modelOrder struct {
	id       int64
	ship     int64
	item     *modelItem
	buyer    int64
	qty      int64
	status   string
	store    string  // named at creation
	taken    *string // the store the units left from ("" plain); nil until paid
	tags     []string
	payments []string // their statuses
	closed   bool     // has a date_closed
	history  []modelMove
}

func (o *modelOrder) shipment() modelMove { return o.history[len(o.history)-1] }

// salesMachine drives purchases, payments, cancellations, stock and
// available_quantity writes, status changes and shipment moves against
// the model.
type salesMachine struct {
	e      *env
	stores []string // the warehouse seller's
	buyers []int64
	ups    []*modelUP
	items  []*modelItem
	orders []*modelOrder
}

func newSalesMachine(t *rapid.T, e *env) *salesMachine {
	m := &salesMachine{e: e}
	warehouse := e.mustUser("WAREHOUSE", "warehouse_management")
	for range 3 {
		m.stores = append(m.stores, e.mustStore(warehouse))
	}
	m.buyers = []int64{e.mustUser("BUYER_ONE"), e.mustUser("BUYER_TWO")}

	// Two items share a user product stocked in two or three stores (the
	// second joins it with a stock of its own for one store); a third has
	// its own, in every store.
	first := rapid.SliceOfNDistinct(rapid.SampledFrom(m.stores), 2, 3, rapid.ID[string]).Draw(t, "first stores")
	shared := m.publishMulti(t, warehouse, "", first)
	joinStore := rapid.SampledFrom(m.stores).Draw(t, "join store")
	m.publishMulti(t, warehouse, shared.up.id, []string{joinStore})
	m.publishMulti(t, warehouse, "", m.stores)

	// Two plain items share a user product.
	plainSeller := e.mustUser("PLAIN")
	p := m.publishPlain(t, plainSeller, "")
	m.publishPlain(t, plainSeller, p.up.id)
	return m
}

func (m *salesMachine) publishMulti(t *rapid.T, seller int64, join string, stores []string) *modelItem {
	var locs []stock.StockLocation
	for i, s := range stores {
		locs = append(locs, stock.StockLocation{StoreID: s, Quantity: rapid.Int64Range(0, 4).Draw(t, fmt.Sprintf("units %d", i))})
	}
	p, err := m.e.stock.PublishMultiOrigin(ctx, seller, stock.NewItem{Title: "Bicicleta", CategoryID: "MLA1055",
		Price: money.MustParse("10"), ListingTypeID: "gold_special", CurrencyID: "ARS", StockLocations: locs, UserProductID: join})
	if err != nil {
		t.Fatalf("publish: %v", err)
	}
	up := m.upByID(p.UserProductID)
	if up == nil {
		up = &modelUP{id: p.UserProductID, seller: seller, multi: true, qty: map[string]int64{}}
		m.ups = append(m.ups, up)
	}
	m.writeStock(up, locs)
	return m.addItem(p, up)
}

func (m *salesMachine) publishPlain(t *rapid.T, seller int64, join string) *modelItem {
	q := rapid.Int64Range(0, 5).Draw(t, "plain units")
	p, err := m.e.stock.Publish(ctx, seller, stock.NewItem{Title: "Mesa", CategoryID: "MLA1055",
		Price: money.MustParse("100"), ListingTypeID: "gold_special", CurrencyID: "ARS", AvailableQuantity: &q, UserProductID: join})
	if err != nil {
		t.Fatalf("publish: %v", err)
	}
	up := m.upByID(p.UserProductID)
	if up == nil {
		up = &modelUP{id: p.UserProductID, seller: seller}
		m.ups = append(m.ups, up)
	}
	// A new user product starts at version 1; joining one is a write of
	// its stock.
	up.version++
	up.setUnits("", q)
	m.follow(up)
	return m.addItem(p, up)
}

// addItem models a new item: a publication is active whatever its
// quantity.
func (m *salesMachine) addItem(p stock.Published, up *modelUP) *modelItem {
	it := &modelItem{id: p.ID, up: up, seller: up.seller, status: stock.StatusActive}
	m.items = append(m.items, it)
	return it
}

func (m *salesMachine) upByID(id string) *modelUP {
	for _, u := range m.ups {
		if u.id == id {
			return u
		}
	}
	return nil
}

// writeStock is a stock write by the seller (a publication joining the
// user product, or a PUT): listed stores get their units, the version
// moves, and the items follow.
func (m *salesMachine) writeStock(up *modelUP, locs []stock.StockLocation) {
	if up.version > 0 {
		up.version++
	} else {
		up.version = 1
	}
	for _, l := range locs {
		up.setUnits(l.StoreID, l.Quantity)
	}
	m.follow(up)
}

// follow is the status rule of every item of up after its quantity was
// written: active with no units is paused as out_of_stock, paused as
// out_of_stock with units is active again; the seller's pause and a
// closed item are left alone.
func (m *salesMachine) follow(up *modelUP) {
	q := up.quantity()
	for _, it := range m.items {
		if it.up != up {
			continue
		}
		switch {
		case it.status == stock.StatusActive && q == 0:
			it.status, it.outOfStock = stock.StatusPaused, true
		case it.status == stock.StatusPaused && it.outOfStock && q > 0:
			it.status, it.outOfStock = stock.StatusActive, false
		}
	}
}

// moveUnits takes (negative delta) or gives back units of item it in
// store, as a sale or its cancellation does.
func (m *salesMachine) moveUnits(it *modelItem, store string, delta int64) {
	up := it.up
	if up.multi {
		up.qty[store] += delta
	} else {
		up.plain += delta
	}
	up.version++
	it.sold -= delta
	m.follow(up)
}

// lessNumber orders store ids as numbers.
func lessNumber(a, b string) bool {
	x, _ := strconv.ParseInt(a, 10, 64)
	y, _ := strconv.ParseInt(b, 10, 64)
	return x < y
}

// source is where q units of it come from (store "" for a plain item), or
// the message that refuses the order.
func source(it *modelItem, store string, q int64) (string, string) {
	up := it.up
	if !up.multi {
		if store != "" {
			return "", fmt.Sprintf("Item %s has no stock per store: send no store_id", it.id)
		}
		if up.plain < q {
			return "", fmt.Sprintf("Item %s has %d units available; the order needs %d", it.id, up.plain, q)
		}
		return "", ""
	}
	if store != "" {
		have, ok := up.qty[store]
		if !ok {
			return "", fmt.Sprintf("Store %s holds no stock of item %s", store, it.id)
		}
		if have < q {
			return "", fmt.Sprintf("Store %s has %d units of item %s; the order needs %d", store, have, it.id, q)
		}
		return store, ""
	}
	best := ""
	for _, s := range up.stores {
		if best == "" || up.qty[s] > up.qty[best] || (up.qty[s] == up.qty[best] && lessNumber(s, best)) {
			best = s
		}
	}
	if best == "" || up.qty[best] < q {
		return "", fmt.Sprintf("No store of item %s has the %d units the order needs", it.id, q)
	}
	return best, ""
}

func (m *salesMachine) tick(t *rapid.T) {
	m.e.clock.Advance(time.Duration(rapid.IntRange(0, 5000).Draw(t, "ms")) * time.Millisecond)
}

// refused runs op, which the model says is refused with kind and msg, and
// checks that it changed nothing.
func (m *salesMachine) refused(t *rapid.T, name string, kind errs.Kind, msg string, op func() error) *errs.Error {
	before := m.e.dump()
	de := wantErr(t, op(), kind, msg)
	m.e.unchanged(before, name)
	return de
}

func (m *salesMachine) pickItem(t *rapid.T) *modelItem {
	return rapid.SampledFrom(m.items).Draw(t, "item")
}

// pickOrder draws an order, most of the time one that prefer accepts, so
// that the operations that succeed only on some orders are tried often.
func (m *salesMachine) pickOrder(t *rapid.T, prefer func(*modelOrder) bool) *modelOrder {
	if len(m.orders) == 0 {
		t.Skip("no order yet")
	}
	var preferred []*modelOrder
	for _, o := range m.orders {
		if prefer(o) {
			preferred = append(preferred, o)
		}
	}
	if len(preferred) > 0 && rapid.IntRange(0, 3).Draw(t, "preferred") > 0 {
		return rapid.SampledFrom(preferred).Draw(t, "order")
	}
	return rapid.SampledFrom(m.orders).Draw(t, "order")
}

func (o *modelOrder) live() bool { return o.status != sales.StatusCancelled }

// pay models a payment taking the order's units from store.
func (m *salesMachine) pay(o *modelOrder, store string) {
	m.moveUnits(o.item, store, -o.qty)
	o.taken = &store
	o.status = sales.StatusPaid
	o.payments = append(o.payments, "approved")
	o.tags = append(o.tags, sales.TagPaid)
	o.closed = true
	if o.shipment().status == sales.ShipmentPending {
		o.history = append(o.history, modelMove{sales.ShipmentReadyToShip, "ready_to_print", m.e.now()})
	}
}

func (m *salesMachine) Buy(t *rapid.T) {
	it := m.pickItem(t)
	buyer := rapid.SampledFrom(append(slices.Concat(m.buyers, m.buyers), it.seller)).Draw(t, "buyer")
	q := rapid.Int64Range(1, 4).Draw(t, "quantity")
	store := rapid.SampledFrom(append([]string{"", ""}, m.stores...)).Draw(t, "store")
	status := rapid.SampledFrom([]string{"", sales.StatusPaid, sales.StatusPaymentRequired}).Draw(t, "status")
	m.tick(t)
	in := sales.NewOrder{BuyerID: buyer, ItemID: it.id, Quantity: q, StoreID: store, Status: status}
	var src, msg string
	switch {
	case it.status != stock.StatusActive:
		msg = fmt.Sprintf("Item %s is not active: its status is %s", it.id, it.status)
	case buyer == it.seller:
		msg = fmt.Sprintf("User %d is the seller of item %s and cannot buy it", buyer, it.id)
	default:
		src, msg = source(it, store, q)
	}
	if msg != "" {
		m.refused(t, "order", errs.Invalid, msg, func() error { _, err := m.e.sales.PlaceOrder(ctx, in); return err })
		return
	}
	o, err := m.e.sales.PlaceOrder(ctx, in)
	if err != nil {
		t.Fatalf("order %+v: %v", in, err)
	}
	mo := &modelOrder{id: o.ID, ship: *o.Shipping.ID, item: it, buyer: buyer, qty: q, status: sales.StatusPaymentRequired,
		store: store, tags: []string{}, payments: []string{},
		history: []modelMove{{sales.ShipmentPending, "waiting_for_payment", m.e.now()}}}
	if status != sales.StatusPaymentRequired {
		m.pay(mo, src)
	}
	m.orders = append(m.orders, mo)
}

func (m *salesMachine) Pay(t *rapid.T) {
	o := m.pickOrder(t, func(o *modelOrder) bool { return o.status == sales.StatusPaymentRequired })
	status := rapid.SampledFrom([]string{"approved", "approved", "approved", "rejected"}).Draw(t, "payment")
	m.tick(t)
	pay := func() error { _, err := m.e.sales.Pay(ctx, o.id, sales.PaymentInput{Status: status}); return err }
	var src, msg string
	switch {
	case status != "approved":
		msg = "Invalid status: " + status + ". Valid values are: [approved]"
	case o.status != sales.StatusPaymentRequired:
		msg = fmt.Sprintf("Order %d is %s: only a payment_required order takes a payment", o.id, o.status)
	case o.item.status != stock.StatusActive:
		// The units are taken at the payment, from an item still on sale.
		msg = fmt.Sprintf("Order %d cannot be paid: item %s is %s", o.id, o.item.id, o.item.status)
	default:
		src, msg = source(o.item, o.store, o.qty)
	}
	if msg != "" {
		m.refused(t, "payment", errs.Invalid, msg, pay)
		return
	}
	if err := pay(); err != nil {
		t.Fatalf("pay %d: %v", o.id, err)
	}
	m.pay(o, src)
}

func (m *salesMachine) Cancel(t *rapid.T) {
	o := m.pickOrder(t, (*modelOrder).live)
	m.tick(t)
	cancel := func() error { _, err := m.e.sales.Cancel(ctx, o.id); return err }
	if o.status == sales.StatusCancelled {
		m.refused(t, "cancel", errs.Invalid, fmt.Sprintf("Order %d is already cancelled", o.id), cancel)
		return
	}
	// A sale is cancelled while its buyer has not received it: not once
	// its shipment is on its way or delivered.
	switch st := o.shipment().status; st {
	case sales.ShipmentShipped:
		m.refused(t, "cancel", errs.Invalid, fmt.Sprintf("Order %d cannot be cancelled: its shipment %d is shipped; "+
			"it can be once the shipment is not_delivered", o.id, o.ship), cancel)
		return
	case sales.ShipmentDelivered:
		m.refused(t, "cancel", errs.Invalid, fmt.Sprintf("Order %d cannot be cancelled: its shipment %d is delivered; "+
			"a delivered sale ends through a claim and a return", o.id, o.ship), cancel)
		return
	}
	if err := cancel(); err != nil {
		t.Fatalf("cancel %d: %v", o.id, err)
	}
	if o.taken != nil {
		m.moveUnits(o.item, *o.taken, o.qty)
	}
	for i := range o.payments {
		o.payments[i] = "refunded"
	}
	o.status = sales.StatusCancelled
	if slices.Contains(shipmentNext[o.shipment().status], sales.ShipmentCancelled) {
		o.history = append(o.history, modelMove{sales.ShipmentCancelled, "cancelled_manually", m.e.now()})
	}
}

func (m *salesMachine) pickMulti(t *rapid.T) *modelUP {
	var multi []*modelUP
	for _, u := range m.ups {
		if u.multi {
			multi = append(multi, u)
		}
	}
	return rapid.SampledFrom(multi).Draw(t, "user product")
}

func (m *salesMachine) PutStock(t *rapid.T) {
	up := m.pickMulti(t)
	stores := rapid.SliceOfNDistinct(rapid.SampledFrom(m.stores), 1, len(m.stores), rapid.ID[string]).Draw(t, "stores")
	var locs []stock.StockLocation
	for i, s := range stores {
		locs = append(locs, stock.StockLocation{StoreID: s, Quantity: rapid.Int64Range(0, 5).Draw(t, fmt.Sprintf("units %d", i))})
	}
	m.tick(t)
	read := m.e.mustStock(up.seller, up.id)
	version := read.Version
	if rapid.IntRange(0, 3).Draw(t, "stale") == 0 {
		version -= rapid.Int64Range(1, 2).Draw(t, "behind")
		m.refused(t, "stale stock put", errs.Conflict, "Version mismatch", func() error {
			_, err := m.e.stock.PutStock(ctx, up.seller, up.id, version, locs)
			return err
		})
		return
	}
	out, err := m.e.stock.PutStock(ctx, up.seller, up.id, version, locs)
	if err != nil {
		t.Fatalf("put stock %s: %v", up.id, err)
	}
	m.writeStock(up, locs)
	if out.Version != up.version {
		t.Fatalf("put answered version %d, model %d", out.Version, up.version)
	}
}

// setStatus is the seller's status change: as asked with no sub-status,
// except active with no units, which is paused as out_of_stock.
func setStatus(it *modelItem, status string) {
	it.status, it.outOfStock = status, false
	if status == stock.StatusActive && it.up.quantity() == 0 {
		it.status, it.outOfStock = stock.StatusPaused, true
	}
}

func (m *salesMachine) UpdateItem(t *rapid.T) {
	it := m.pickItem(t)
	var in stock.ItemUpdate
	if rapid.Bool().Draw(t, "with quantity") {
		q := rapid.Int64Range(0, 5).Draw(t, "available_quantity")
		in.AvailableQuantity = &q
	}
	if in.AvailableQuantity == nil || rapid.Bool().Draw(t, "with status") {
		// Closing is final: seldom, so that the items stay on sale.
		s := rapid.SampledFrom([]string{stock.StatusActive, stock.StatusActive, stock.StatusActive,
			stock.StatusPaused, stock.StatusPaused, stock.StatusClosed}).Draw(t, "status")
		in.Status = &s
	}
	m.tick(t)
	update := func() error { _, err := m.e.stock.UpdateItem(ctx, it.seller, it.id, in); return err }
	switch {
	case in.Status != nil && it.status == stock.StatusClosed && *in.Status != stock.StatusClosed:
		m.refused(t, "status of a closed item", errs.Invalid, "Item "+it.id+" is closed and cannot change status", update)
		return
	case in.AvailableQuantity != nil && it.up.multi:
		de := m.refused(t, "available_quantity of a multi-origin item", errs.Invalid,
			"The fields [available_quantity] are invalid for requested call", update)
		if len(de.Causes) != 1 || de.Causes[0].Code != "item.multi_origin" {
			t.Fatalf("causes %+v, want item.multi_origin", de.Causes)
		}
		return
	case in.AvailableQuantity != nil && it.status == stock.StatusClosed:
		// Closed is final: its quantity is not edited either.
		m.refused(t, "available_quantity of a closed item", errs.Invalid,
			"Item "+it.id+" is closed and cannot change: relist it with POST /items/"+it.id+"/relist", update)
		return
	}
	if err := update(); err != nil {
		t.Fatalf("update %s: %v", it.id, err)
	}
	if q := in.AvailableQuantity; q != nil {
		it.up.version++
		it.up.setUnits("", *q)
		m.follow(it.up)
	}
	if in.Status != nil {
		setStatus(it, *in.Status)
	}
}

// substatuses are the published substatuses of each shipment status:
// reference data, which the moves draw from.
func substatuses() map[string][]string {
	out := map[string][]string{}
	for _, st := range sales.ShipmentStatuses() {
		for _, sub := range st.Substatuses {
			out[st.ID] = append(out[st.ID], sub.ID)
		}
	}
	return out
}

func (m *salesMachine) MoveShipment(t *rapid.T) {
	o := m.pickOrder(t, func(o *modelOrder) bool { return len(shipmentNext[o.shipment().status]) > 0 })
	from := o.shipment().status
	to := rapid.SampledFrom(append([]string{"lost_in_space"}, sales.ShipmentPending, sales.ShipmentHandling,
		sales.ShipmentReadyToShip, sales.ShipmentShipped, sales.ShipmentDelivered, sales.ShipmentNotDelivered,
		sales.ShipmentCancelled)).Draw(t, "to")
	if next := shipmentNext[from]; len(next) > 0 && rapid.Bool().Draw(t, "an allowed status") {
		to = rapid.SampledFrom(next).Draw(t, "next")
	}
	subs := substatuses()[to]
	sub := rapid.SampledFrom(append([]string{"", "not_a_substatus"}, subs...)).Draw(t, "substatus")
	m.tick(t)
	move := func() error {
		_, err := m.e.sales.MoveShipment(ctx, o.ship, sales.ShipmentMove{Status: to, Substatus: sub})
		return err
	}
	cur := o.history[len(o.history)-1].substatus
	within := to == from && len(shipmentNext[from]) > 0 && sub != "" && sub != cur
	switch {
	case !known(to):
		m.refused(t, "unknown status", errs.Invalid, "Invalid status: "+to+". Valid values are: "+shipmentStatusList, move)
		return
	case sub != "" && !slices.Contains(subs, sub):
		m.refused(t, "unknown substatus", errs.Invalid,
			fmt.Sprintf("Invalid substatus: %s. Valid values for status %s are: [%s]", sub, to, strings.Join(subs, ", ")), move)
		return
	case o.status == sales.StatusPaymentRequired:
		m.refused(t, "move before payment", errs.Invalid, fmt.Sprintf("Shipment %d waits for the payment of order %d", o.ship, o.id), move)
		return
	case !within && !slices.Contains(shipmentNext[from], to):
		de := m.refused(t, "move", errs.Invalid, fmt.Sprintf("Shipment %d cannot move from %s to %s", o.ship, from, to), move)
		var allowed []string
		for _, c := range de.Causes {
			if c.Code != "allowed_next_status" {
				t.Fatalf("cause %+v", c)
			}
			allowed = append(allowed, c.Message)
		}
		if !slices.Equal(allowed, shipmentNext[from]) {
			t.Fatalf("causes name %v, want the allowed next statuses %v", allowed, shipmentNext[from])
		}
		return
	}
	if err := move(); err != nil {
		t.Fatalf("move %d %s -> %s: %v", o.ship, from, to, err)
	}
	o.history = append(o.history, modelMove{to, sub, m.e.now()})
	switch to {
	case sales.ShipmentDelivered:
		o.tags = append(o.tags, sales.TagDelivered)
	case sales.ShipmentNotDelivered:
		o.tags = append(o.tags, sales.TagNotDelivered)
	}
}

func known(status string) bool {
	_, ok := shipmentNext[status]
	return ok
}

func (m *salesMachine) Check(t *rapid.T) {
	sold := map[*modelUP]int64{}
	for _, o := range m.orders {
		got := m.e.mustReadOrder(o.id)
		m.checkOrder(t, o, got)
		if got.Status == sales.StatusPaid {
			sold[o.item.up] += got.OrderItems[0].Quantity
		}
	}
	for _, up := range m.ups {
		st := m.e.mustStock(up.seller, up.id)
		if st.Version != up.version {
			t.Fatalf("%s version %d, model %d", up.id, st.Version, up.version)
		}
		var units int64
		if up.multi {
			if len(st.Locations) != len(up.stores) {
				t.Fatalf("%s stores %+v, model %v %v", up.id, st.Locations, up.stores, up.qty)
			}
			for i, l := range st.Locations {
				if l.StoreID != up.stores[i] || l.Quantity != up.qty[l.StoreID] {
					t.Fatalf("%s store %d is %s:%d, model %s:%d", up.id, i, l.StoreID, l.Quantity, up.stores[i], up.qty[up.stores[i]])
				}
				units += l.Quantity
			}
		} else {
			units = m.e.mustItem(m.itemOf(up).id).AvailableQuantity
		}
		// What the stores hold and what the paid orders took is what the
		// seller put there.
		if units+sold[up] != up.put {
			t.Fatalf("%s: %d units in stock and %d sold, but the seller put %d", up.id, units, sold[up], up.put)
		}
	}
	for _, it := range m.items {
		got := m.e.mustItem(it.id)
		sub := []string{}
		if it.outOfStock {
			sub = []string{stock.SubStatusOutOfStock}
		}
		if got.Status != it.status || !slices.Equal(got.SubStatus, sub) || got.SoldQuantity != it.sold ||
			got.AvailableQuantity != it.up.quantity() {
			t.Fatalf("item %s is %s %v sold %d available %d; model %s %v sold %d available %d", it.id,
				got.Status, got.SubStatus, got.SoldQuantity, got.AvailableQuantity, it.status, sub, it.sold, it.up.quantity())
		}
	}
}

func (m *salesMachine) itemOf(up *modelUP) *modelItem {
	for _, it := range m.items {
		if it.up == up {
			return it
		}
	}
	return nil
}

func (m *salesMachine) checkOrder(t *rapid.T, o *modelOrder, got sales.Order) {
	var payments []string
	for _, p := range got.Payments {
		payments = append(payments, p.Status)
	}
	if got.Status != o.status || !slices.Equal(got.Tags, o.tags) || !slices.Equal(payments, o.payments) ||
		(got.DateClosed != nil) != o.closed || (got.CancelDetail != nil) != (o.status == sales.StatusCancelled) {
		t.Fatalf("order %d is %s tags %v payments %v closed %v cancel_detail %v; model %s %v %v %v", o.id, got.Status,
			got.Tags, payments, got.DateClosed != nil, got.CancelDetail != nil, o.status, o.tags, o.payments, o.closed)
	}
	var from []string
	for _, s := range got.OrderItems[0].Stock {
		from = append(from, s.StoreID)
	}
	var want []string
	if o.taken != nil && *o.taken != "" {
		want = []string{*o.taken}
	}
	if !slices.Equal(from, want) {
		t.Fatalf("order %d took its units from %v, model %v", o.id, from, want)
	}
	hist, err := m.e.sales.ShipmentHistory(ctx, sales.Operator, o.ship)
	if err != nil {
		t.Fatalf("history %d: %v", o.ship, err)
	}
	if len(hist) != len(o.history) {
		t.Fatalf("shipment %d history %+v, model %+v", o.ship, hist, o.history)
	}
	for i, h := range hist {
		sub := ""
		if h.Substatus != nil {
			sub = *h.Substatus
		}
		if (modelMove{h.Status, sub, h.Date}) != o.history[i] {
			t.Fatalf("shipment %d move %d is %s/%s at %s, model %+v", o.ship, i, h.Status, sub, h.Date, o.history[i])
		}
	}
	sh := m.e.mustShipment(o.ship)
	last := o.shipment()
	if sh.Status != last.status || (sh.Substatus == nil) != (last.substatus == "") || sh.LastUpdated != last.date {
		t.Fatalf("shipment %d is %s %v (%s), model %+v", o.ship, sh.Status, sh.Substatus, sh.LastUpdated, last)
	}
}

func TestSalesStateMachine_StockItemsOrdersAndShipmentsFollowTheModel(t *testing.T) {
	owner := t
	rapid.Check(t, func(t *rapid.T) {
		e, done := newPropertyEnv(t, owner)
		defer done()
		t.Repeat(rapid.StateMachineActions(newSalesMachine(t, e)))
	})
}
