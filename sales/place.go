package sales

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"time"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/fees"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/stock"
	"github.com/marketplace/marketplace/storage"
)

// NewOrder is a purchase: buyer BuyerID buys Quantity units of ItemID.
type NewOrder struct {
	BuyerID  int64  `json:"buyer_id"`
	ItemID   string `json:"item_id"`
	Quantity int64  `json:"quantity"`
	// StoreID names the store the units leave from; empty lets the rule
	// pick it (stock.PickSource).
	StoreID string `json:"store_id"`
	// Status is paid (the default) or payment_required.
	Status string `json:"status"`
}

func checkNewOrder(in *NewOrder) error {
	if in.BuyerID == 0 {
		return errs.Invalidf("The field [buyer_id] is required: the id of the user who buys")
	}
	if in.BuyerID < 0 {
		return errs.Invalidf("Invalid buyer_id: %d. It must be a user id", in.BuyerID)
	}
	if in.ItemID == "" {
		return errs.Invalidf("The field [item_id] is required: the id of the item bought")
	}
	if in.Quantity < 1 || in.Quantity > stock.MaxQuantity {
		return errs.Invalidf("Invalid quantity: %d. It must be between 1 and %d", in.Quantity, stock.MaxQuantity)
	}
	switch in.Status {
	case "":
		in.Status = StatusPaid
	case StatusPaid, StatusPaymentRequired:
	default:
		return errs.Invalidf("Invalid status: %s. Valid values are: [paid, payment_required]", in.Status)
	}
	return nil
}

// PlaceOrder makes a sale happen: buyer in.BuyerID buys in.Quantity units
// of active item in.ItemID, in one transaction with its pack, its shipment
// and its notifications. A paid order takes its units from one store of
// the item's user product at once (its date_closed); a payment_required
// one checks that a store can serve them and takes them when paid (Pay).
// Errors: Invalid (the body, an item that is not active, the buyer is the
// seller, a store that is not the item's or lacks the units, no store with
// all the units), NotFound (buyer, item).
func (s *Service) PlaceOrder(ctx context.Context, in NewOrder) (Order, error) {
	if err := checkNewOrder(&in); err != nil {
		return Order{}, err
	}
	// The item names what the transaction reads first (prefetchSale),
	// its sale fee included.
	var item stock.Item
	err := s.store.View(ctx, func(tx storage.Tx) error {
		var err error
		item, err = stock.GetItemWithoutStock(tx, in.ItemID)
		return err
	})
	if err != nil {
		return Order{}, err
	}
	orderNo := kv.NewOnceID(s.store, orderSequence)
	packNo := kv.NewOnceID(s.store, packSequence)
	shipNo := kv.NewOnceID(s.store, shipmentSequence)
	payNo := kv.NewOnceID(s.store, paymentSequence)
	now := s.clock.Now()
	var out Order
	// A payment_required order has no payment yet: its payment's id is
	// drawn when it is paid.
	numbers := []*kv.OnceID{orderNo, packNo, shipNo}
	// The order's and the shipment's events; a paid order's also the
	// stock's and the item's.
	events := 2
	if in.Status == StatusPaid {
		numbers = append(numbers, payNo)
		events += 2
	}
	err = s.store.Update(ctx, func(tx storage.Tx) error {
		// The ids and the event numbers go with the first read, where
		// the store can.
		ctx := notify.DrawEventNumbers(ctx, tx, events)
		drawn := kv.DrawOnceLater(ctx, tx, numbers...)
		if err := prefetchSale(tx, in, item); err != nil {
			return err
		}
		buyer, err := accounts.GetUser(tx, in.BuyerID)
		if err != nil {
			return err
		}
		item, err := stock.GetItem(tx, in.ItemID)
		if err != nil {
			return err
		}
		if item.Status != stock.StatusActive {
			return errs.Invalidf("Item %s is not active: its status is %s", item.ID, item.Status)
		}
		if item.SellerID == buyer.ID {
			return errs.Invalidf("User %d is the seller of item %s and cannot buy it", buyer.ID, item.ID)
		}
		fee := s.saleFee(tx, item)
		seller, err := accounts.GetUser(tx, item.SellerID)
		if err != nil {
			return err
		}
		src, err := stock.PickSource(tx, item, in.StoreID, in.Quantity)
		if err != nil {
			return err
		}
		if err := drawn(); err != nil {
			return err
		}
		ids := make([]int64, 4)
		for i, o := range numbers {
			n, err := o.Get(ctx)
			if err != nil {
				return err
			}
			ids[i] = int64(n) - 1 + []int64{firstOrderID, firstPackID, firstShipmentID, firstPaymentID}[i]
		}
		// What the rest reads beside the stock goes with the stock's
		// next read: the store the units leave from, and the counts
		// of the new order's lists.
		keys := accounts.StoreKeys(src.StoreID)
		keys = append(keys, newOrderCounts(item.SellerID, buyer.ID, in.Status, ids[0])...)
		if err := storage.Prefetch(tx, keys...); err != nil {
			return err
		}
		stamp := s.siteTime(tx, item.SiteID, now)
		total := money.MustParse(string(item.Price)).Mul(money.FromInt(in.Quantity))
		shipID := ids[2]
		o := Order{
			ID: ids[0], Status: in.Status, DateCreated: stamp, LastUpdated: stamp, PackID: ids[1],
			BuyingMode: "buy_equals_pay", TotalAmount: json.Number(total.String()), PaidAmount: "0",
			CurrencyID: item.CurrencyID,
			OrderItems: []OrderItem{{
				Item: OrderItemItem{ID: item.ID, Title: item.Title, CategoryID: item.CategoryID,
					VariationAttributes: []any{}, Condition: item.Condition, UserProductID: item.UserProductID,
					ParentItemID: item.ParentItemID},
				Quantity: in.Quantity, RequestedQuantity: RequestedQuantity{Measure: "unit", Value: in.Quantity},
				UnitPrice: item.Price, FullUnitPrice: item.Price, CurrencyID: item.CurrencyID, SaleFee: fee,
				ListingTypeID: item.ListingTypeID, Stock: []stock.Source{},
			}},
			Payments: []Payment{}, Shipping: Shipping{ID: &shipID},
			Buyer: Party{ID: buyer.ID, Nickname: buyer.Nickname}, Seller: Party{ID: seller.ID, Nickname: seller.Nickname},
			Tags: []string{}, Context: OrderContext{Channel: "marketplace", Site: item.SiteID, Flows: []string{}},
			Mediations: []Mediation{},
		}
		rec := orderRecord{Order: o, Store: in.StoreID, CreatedMs: now.UnixMilli(), UpdatedMs: now.UnixMilli()}
		sh := newShipment(shipID, rec, seller, buyer, item, stamp)
		if in.Status != StatusPaid {
			// The store the units will leave from when paid; pay names
			// the store they do leave from.
			if err := originFrom(tx, &sh, src); err != nil {
				return err
			}
		}
		if in.Status == StatusPaid {
			if err := s.pay(ctx, tx, &rec, &sh, ids[3], now, stamp); err != nil {
				return err
			}
		}
		if err := tx.Set(packKey(o.PackID), keycodec.Raw().Int(o.ID)); err != nil {
			return err
		}
		if err := putShipment(tx, sh); err != nil {
			return err
		}
		if err := indexOrder(tx, nil, rec); err != nil {
			return err
		}
		if err := putOrder(tx, rec); err != nil {
			return err
		}
		if err := s.announce(ctx, tx, TopicOrders, seller.ID, orderResource(o.ID), "created", now); err != nil {
			return err
		}
		if err := s.announce(ctx, tx, TopicShipments, seller.ID, shipmentResource(shipID), "created", now); err != nil {
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

func orderResource(id int64) string    { return "/orders/" + strconv.FormatInt(id, 10) }
func shipmentResource(id int64) string { return "/shipments/" + strconv.FormatInt(id, 10) }

// saleFee is the fee of selling one unit of item at its price, by the
// site's listing prices; 0 where they have none for the item.
func (s *Service) saleFee(tx storage.Tx, item stock.Item) json.Number {
	if s.fees == nil {
		return "0"
	}
	lp, err := s.fees.ListingPriceIn(tx, item.SiteID, item.ListingTypeID,
		fees.Query{Price: string(item.Price), CategoryID: item.CategoryID, CurrencyID: item.CurrencyID})
	if err != nil {
		return "0"
	}
	return json.Number(lp.SaleFeeAmount.String())
}

// pay takes the order's units and records its approved payment, in the
// order's transaction: the order is paid, closed (date_closed) and tagged
// paid, and its shipment is ready to ship. The shipment's destination
// address stays null: the engine keeps no buyer's address, and an address
// of empty fields would read as one.
func (s *Service) pay(ctx context.Context, tx storage.Tx, rec *orderRecord, sh *shipmentRecord, paymentID int64, now time.Time, stamp string) error {
	o := &rec.Order
	line := &o.OrderItems[0]
	src, err := s.stock.TakeUnits(ctx, tx, line.Item.ID, rec.Store, line.Quantity, now)
	if err != nil {
		return err
	}
	rec.Taken = &src
	if src.StoreID != "" {
		line.Stock = []stock.Source{src}
	}
	if err := originFrom(tx, sh, src); err != nil {
		return err
	}
	fee := money.MustParse(string(line.SaleFee)).Mul(money.FromInt(line.Quantity))
	o.Payments = append(o.Payments, Payment{
		ID: paymentID, OrderID: o.ID, PayerID: o.Buyer.ID, Collector: IDRef{ID: o.Seller.ID}, SiteID: o.Context.Site,
		PaymentMethodID: "account_money", PaymentType: "account_money", OperationType: "regular_payment",
		Installments: 1, Status: "approved", StatusDetail: "accredited", TransactionAmount: o.TotalAmount,
		TransactionAmountRefunded: "0", TotalPaidAmount: o.TotalAmount, ShippingCost: "0",
		MarketplaceFee: json.Number(fee.String()), CurrencyID: o.CurrencyID, DateApproved: &stamp,
		DateCreated: stamp, DateLastModified: stamp,
	})
	o.Status, o.PaidAmount = StatusPaid, o.TotalAmount
	if o.DateClosed == nil {
		o.DateClosed = &stamp
		rec.ClosedMs = now.UnixMilli()
	}
	if !slices.Contains(o.Tags, TagPaid) {
		o.Tags = append(o.Tags, TagPaid)
	}
	touch(rec, now, stamp)
	if sh.Shipment.Status == ShipmentPending {
		moveShipment(sh, ShipmentReadyToShip, "ready_to_print", stamp)
	}
	return nil
}

func touch(rec *orderRecord, now time.Time, stamp string) {
	rec.Order.LastUpdated = stamp
	rec.UpdatedMs = now.UnixMilli()
}

// prefetchSale reads together, on a backend at network distance, what a
// sale's transaction reads first: the buyer, the item, its user product,
// its seller, and what prices its sale fee (its site, its currency and the
// fees' revision), named by the item read before the transaction (an
// item's seller, user product and site never change; the sale is priced by
// the item the transaction reads, so a currency changed in between costs a
// read more, not a wrong fee).
func prefetchSale(tx storage.Tx, in NewOrder, item stock.Item) error {
	if _, ok := tx.(storage.Prefetcher); !ok {
		return nil
	}
	keys := append(accounts.UserKeys(in.BuyerID, item.SellerID), stock.ItemKeys(in.ItemID)...)
	keys = append(keys, stock.UserProductKeys(item.UserProductID)...)
	keys = append(keys, fees.PriceKeys(item.SiteID, item.CurrencyID)...)
	return storage.Prefetch(tx, keys...)
}
