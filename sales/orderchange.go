package sales

import (
	"context"
	"slices"
	"time"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/stock"
	"github.com/marketplace/marketplace/storage"
)

// PaymentInput is the payment the operator records on an order.
type PaymentInput struct {
	Status string `json:"status"`
}

// Pay records the approved payment of a payment_required order: its units
// leave stock (from the store named at creation, or the one the rule picks
// now), it becomes paid and its shipment ready to ship. The units are taken
// now, not held since the purchase, so the item must still be on sale: a
// payment for an item paused or closed since is refused and the order
// stays payment_required (it is cancelled instead). Errors: Invalid (a
// status other than approved, an order that is not payment_required, an
// item that is not active, no store with the units), NotFound.
func (s *Service) Pay(ctx context.Context, orderID int64, in PaymentInput) (Order, error) {
	if in.Status == "" {
		return Order{}, errs.Invalidf("The field [status] is required: approved")
	}
	if in.Status != "approved" {
		return Order{}, errs.Invalidf("Invalid status: %s. Valid values are: [approved]", in.Status)
	}
	payNo := kv.NewOnceID(s.store, paymentSequence)
	now := s.clock.Now()
	var out Order
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		// The payment's id and the numbers of the events of the order,
		// its shipment, the stock and the item go with the order's
		// read, where the store can.
		ctx := notify.DrawEventNumbers(ctx, tx, 4)
		drawn := kv.DrawOnceLater(ctx, tx, payNo)
		rec, err := getOrder(tx, orderID)
		if err != nil {
			return err
		}
		if rec.Order.Status != StatusPaymentRequired {
			return errs.Invalidf("Order %d is %s: only a payment_required order takes a payment", orderID, rec.Order.Status)
		}
		if err := storage.Prefetch(tx, orderReads(rec, StatusPaid)...); err != nil {
			return err
		}
		line := rec.Order.OrderItems[0]
		item, err := stock.GetItemWithoutStock(tx, line.Item.ID)
		if err != nil {
			return err
		}
		if item.Status != stock.StatusActive {
			return errs.Invalidf("Order %d cannot be paid: item %s is %s", orderID, item.ID, item.Status)
		}
		sh, err := getShipment(tx, *rec.Order.Shipping.ID)
		if err != nil {
			return err
		}
		// Where the store draws at once rather than with a read, the
		// payment is checked before anything is drawn.
		if err := drawn(); err != nil {
			return err
		}
		n, err := payNo.Get(ctx)
		if err != nil {
			return err
		}
		before := rec
		stamp := s.siteTime(tx, rec.Order.Context.Site, now)
		if err := s.pay(ctx, tx, &rec, &sh, int64(n)-1+firstPaymentID, now, stamp); err != nil {
			return err
		}
		if err := s.saveOrder(ctx, tx, &before, rec, "paid", now); err != nil {
			return err
		}
		if err := s.saveShipment(ctx, tx, sh, rec.Order.Seller.ID, now); err != nil {
			return err
		}
		out = rec.Order
		return nil
	})
	if err != nil {
		return Order{}, err
	}
	return out, nil
}

// Cancel cancels an order: its units go back to the store they came from
// (a paid order's), its payment is refunded, its pack is cancelled, and its
// shipment is cancelled unless it is in a final status. A sale is cancelled
// while its buyer has not received it: before its shipment ships, or once
// the shipment is not_delivered; a shipment on its way or delivered refuses
// it (cancelAfter). Errors: Invalid (the order is already cancelled, its
// shipment is shipped or delivered), NotFound.
func (s *Service) Cancel(ctx context.Context, orderID int64) (Order, error) {
	now := s.clock.Now()
	var out Order
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		// The numbers of the events of the order, its shipment, the
		// stock and the item go with the order's read, where the store
		// can.
		ctx := notify.DrawEventNumbers(ctx, tx, 4)
		rec, err := getOrder(tx, orderID)
		if err != nil {
			return err
		}
		if rec.Order.Status == StatusCancelled {
			return errs.Invalidf("Order %d is already cancelled", orderID)
		}
		if err := storage.Prefetch(tx, orderReads(rec, StatusCancelled)...); err != nil {
			return err
		}
		sh, err := getShipment(tx, *rec.Order.Shipping.ID)
		if err != nil {
			return err
		}
		if why, ok := cancelRefused[sh.Shipment.Status]; ok {
			return errs.Invalidf("Order %d cannot be cancelled: its shipment %d is %s; %s", orderID, sh.Shipment.ID, sh.Shipment.Status, why)
		}
		before := rec
		o := &rec.Order
		stamp := s.siteTime(tx, o.Context.Site, now)
		if err := s.restock(ctx, tx, &rec, OrderChange{Restock: true}, now); err != nil {
			return err
		}
		o.Payments = slices.Clone(o.Payments)
		for i := range o.Payments {
			p := &o.Payments[i]
			p.Status, p.StatusDetail = "refunded", "refunded"
			p.TransactionAmountRefunded, p.DateLastModified = p.TransactionAmount, stamp
		}
		o.Status = StatusCancelled
		o.CancelDetail = &CancelDetail{Group: "operator", Code: "cancelled_by_operator",
			Description: "The order was cancelled by the marketplace's operator", RequestedBy: "operator", Date: stamp}
		touch(&rec, now, stamp)
		if _, next, _ := flowOf(sh.Shipment.Status); slices.Contains(next, ShipmentCancelled) {
			moveShipment(&sh, ShipmentCancelled, "cancelled_manually", stamp)
			if err := s.saveShipment(ctx, tx, sh, o.Seller.ID, now); err != nil {
				return err
			}
		}
		if err := s.saveOrder(ctx, tx, &before, rec, "cancelled", now); err != nil {
			return err
		}
		out = rec.Order
		return nil
	})
	if err != nil {
		return Order{}, err
	}
	return out, nil
}

// cancelRefused are the shipment statuses in which an order can no longer
// be cancelled, with what ends the sale instead: the buyer has the parcel
// or it is on its way. A cancellation is the buyer's money back before
// receiving the product; after delivery a sale ends through a claim and a
// return (post-sale), which the emulator does not make.
var cancelRefused = map[string]string{
	ShipmentShipped:   "it can be once the shipment is not_delivered",
	ShipmentDelivered: "a delivered sale ends through a claim and a return",
}

// saveOrder writes a changed order, moves its search entries and
// announces the change.
func (s *Service) saveOrder(ctx context.Context, tx storage.Tx, before *orderRecord, rec orderRecord, action string, now time.Time) error {
	if err := indexOrder(tx, before, rec); err != nil {
		return err
	}
	if err := putOrder(tx, rec); err != nil {
		return err
	}
	return s.announce(ctx, tx, TopicOrders, rec.Order.Seller.ID, orderResource(rec.Order.ID), action, now)
}

func putShipment(tx storage.Tx, sh shipmentRecord) error {
	return kv.SetJSON(tx, shipmentKey(sh.Shipment.ID), sh)
}

func (s *Service) saveShipment(ctx context.Context, tx storage.Tx, sh shipmentRecord, sellerID int64, now time.Time) error {
	if err := putShipment(tx, sh); err != nil {
		return err
	}
	return s.announce(ctx, tx, TopicShipments, sellerID, shipmentResource(sh.Shipment.ID), sh.Shipment.Status, now)
}

// newOrderCounts are the keys of the counts that indexOrder changes for a
// new order (the shards its id picks), for a prefetch.
func newOrderCounts(sellerID, buyerID int64, status string, orderID int64) [][]byte {
	var keys [][]byte
	for _, p := range []struct {
		role string
		id   int64
	}{{roleSeller, sellerID}, {roleBuyer, buyerID}} {
		for _, list := range []string{"", status} {
			keys = append(keys, listCounter(p.role, p.id, list).ShardKey(uint64(orderID)))
		}
	}
	return keys
}

// orderReads are the keys that a change of order rec to status reads after
// the order, named by it: its shipment, its item and user product, the
// store its units left from, and the counts of the lists it leaves and
// joins. A change prefetches them right after reading the order, so that
// they go with its next read.
func orderReads(rec orderRecord, status string) [][]byte {
	line := rec.Order.OrderItems[0]
	keys := stock.ItemKeys(line.Item.ID)
	if line.Item.UserProductID != "" {
		keys = append(keys, stock.UserProductKeys(line.Item.UserProductID)...)
	}
	if rec.Order.Shipping.ID != nil {
		keys = append(keys, shipmentKey(*rec.Order.Shipping.ID))
	}
	store := rec.Store
	if rec.Taken != nil {
		store = rec.Taken.StoreID
	}
	keys = append(keys, accounts.StoreKeys(store)...)
	if status != rec.Order.Status {
		for _, p := range []struct {
			role string
			id   int64
		}{{roleSeller, rec.Order.Seller.ID}, {roleBuyer, rec.Order.Buyer.ID}} {
			for _, list := range []string{rec.Order.Status, status} {
				keys = append(keys, listCounter(p.role, p.id, list).ShardKey(uint64(rec.Order.ID)))
			}
		}
	}
	return keys
}

// indexOrder moves the order's search entries and counts from before (nil
// for a new order) to rec.
func indexOrder(tx storage.Tx, before *orderRecord, rec orderRecord) error {
	type change struct {
		counter kv.Counter
		delta   int64
	}
	var changes []change
	parties := []struct {
		role string
		id   int64
	}{{roleSeller, rec.Order.Seller.ID}, {roleBuyer, rec.Order.Buyer.ID}}
	for _, p := range parties {
		for _, list := range []string{"", rec.Order.Status} {
			if before != nil && (list == "" || before.Order.Status == rec.Order.Status) {
				continue
			}
			if err := tx.Set(listKey(p.role, p.id, list, rec.CreatedMs, rec.Order.ID), nil); err != nil {
				return err
			}
			changes = append(changes, change{listCounter(p.role, p.id, list), 1})
		}
		if before != nil && before.Order.Status != rec.Order.Status {
			if err := tx.Delete(listKey(p.role, p.id, before.Order.Status, rec.CreatedMs, rec.Order.ID)); err != nil {
				return err
			}
			changes = append(changes, change{listCounter(p.role, p.id, before.Order.Status), -1})
		}
	}
	// Each count changes the shard its order's id picks, so the shards are
	// known at once and read together: one round trip on a backend at
	// network distance, and orders placed together change different ones.
	spread := uint64(rec.Order.ID)
	if _, ok := tx.(storage.Prefetcher); ok {
		keys := make([][]byte, len(changes))
		for i, c := range changes {
			keys[i] = c.counter.ShardKey(spread)
		}
		if err := storage.Prefetch(tx, keys...); err != nil {
			return err
		}
	}
	for _, c := range changes {
		if err := c.counter.AddAt(tx, c.delta, spread); err != nil {
			return err
		}
	}
	return nil
}
