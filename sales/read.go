package sales

import (
	"context"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/storage"
)

// Operator is the caller of reads made for the marketplace's operator,
// which see every sale.
const Operator int64 = -1

func canSee(caller int64, r orderRecord) bool {
	return caller == Operator || caller == r.Order.Seller.ID || caller == r.Order.Buyer.ID
}

// Order returns order id to its seller or its buyer (or the Operator).
// Errors: NotFound ("Order does not exist"), Forbidden ("The user has not
// access to the order").
func (s *Service) Order(ctx context.Context, caller, id int64) (Order, error) {
	var out Order
	err := s.store.View(ctx, func(tx storage.Tx) error {
		r, err := getOrder(tx, id)
		if err != nil {
			return err
		}
		if !canSee(caller, r) {
			return errs.Forbiddenf("The user has not access to the order")
		}
		out = r.Order
		return nil
	})
	return out, err
}

// Pack returns pack id to the seller or the buyer of its order. Errors:
// NotFound ("Pack does not exist"), Forbidden.
func (s *Service) Pack(ctx context.Context, caller, id int64) (Pack, error) {
	var out Pack
	err := s.store.View(ctx, func(tx storage.Tx) error {
		orderID, err := getPackOrder(tx, id)
		if err != nil {
			return err
		}
		r, err := getOrder(tx, orderID)
		if err != nil {
			return errs.Internalf(err, "pack %d names order %d", id, orderID)
		}
		if !canSee(caller, r) {
			return errs.Forbiddenf("The user has not access to the pack")
		}
		o := r.Order
		status := PackReleased
		if o.Status == StatusCancelled {
			status = PackCancelled
		}
		out = Pack{ID: id, Status: status, Buyer: IDRef{ID: o.Buyer.ID}, Shipment: IDRef{ID: *o.Shipping.ID},
			Orders: []IDRef{{ID: o.ID}}, DateCreated: o.DateCreated, LastUpdated: o.LastUpdated}
		return nil
	})
	return out, err
}

func (s *Service) shipment(ctx context.Context, caller, id int64) (shipmentRecord, error) {
	var out shipmentRecord
	err := s.store.View(ctx, func(tx storage.Tx) error {
		r, err := getShipment(tx, id)
		if err != nil {
			return err
		}
		if caller != Operator && caller != r.SellerID && caller != r.BuyerID {
			return errs.Forbiddenf("The user has not access to the shipment")
		}
		out = r
		return nil
	})
	return out, err
}

// Shipment returns shipment id to the seller or the buyer of its order.
// Errors: NotFound ("Shipment does not exist"), Forbidden.
func (s *Service) Shipment(ctx context.Context, caller, id int64) (Shipment, error) {
	r, err := s.shipment(ctx, caller, id)
	return r.Shipment, err
}

// ShipmentHistory returns the moves of shipment id, oldest first, to the
// seller or the buyer of its order. Errors: as Shipment.
func (s *Service) ShipmentHistory(ctx context.Context, caller, id int64) ([]HistoryEntry, error) {
	r, err := s.shipment(ctx, caller, id)
	return r.History, err
}
