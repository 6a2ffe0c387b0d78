package sales

import (
	"context"
	"slices"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/storage"
)

// Logistic types a shipment may travel by: Mercado Envíos' drop off (the
// engine's default), cross docking, fulfillment (Full) and self service
// (Flex).
const (
	LogisticDropOff      = "drop_off"
	LogisticCrossDocking = "cross_docking"
	LogisticFulfillment  = "fulfillment"
	LogisticSelfService  = "self_service"
)

// LogisticTypes lists the logistic types SetLogisticType accepts.
var LogisticTypes = []string{LogisticDropOff, LogisticCrossDocking, LogisticFulfillment, LogisticSelfService}

// SetLogisticType sets how shipment id travels, before it ships. What
// follows the sale reads it: a fulfillment sale's messages are blocked
// until it is delivered, and the messages' action guide offers its
// options by it. The shipments notification is written as for any change
// of the shipment. Errors: Invalid (an unknown type; a shipment that
// shipped, was delivered or not, or was cancelled), NotFound.
func (s *Service) SetLogisticType(ctx context.Context, shipmentID int64, logisticType string) (Shipment, error) {
	if !slices.Contains(LogisticTypes, logisticType) {
		return Shipment{}, errs.Invalidf("Invalid logistic type: %s. Valid values are: [drop_off, cross_docking, fulfillment, self_service]", logisticType)
	}
	now := s.clock.Now()
	var out Shipment
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		sh, err := getShipment(tx, shipmentID)
		if err != nil {
			return err
		}
		switch sh.Shipment.Status {
		case ShipmentPending, ShipmentHandling, ShipmentReadyToShip:
		default:
			return errs.Invalidf("Shipment %d is %s: its logistic type is set before it ships", shipmentID, sh.Shipment.Status)
		}
		sh.Shipment.Logistic.Type = logisticType
		sh.Shipment.LastUpdated = s.siteTime(tx, sh.Shipment.Source.SiteID, now)
		if err := s.saveShipment(ctx, tx, sh, sh.SellerID, now); err != nil {
			return err
		}
		out = sh.Shipment
		return nil
	})
	return out, err
}

// PackKeys returns the keys that PackOrder reads for id, and the key of
// the order id would name if it is an order's id (an order without a pack
// is named by its own id in the pack's place), for storage.Prefetch.
func PackKeys(id int64) [][]byte { return [][]byte{packKey(id), orderKey(id)} }

// SaleKeys returns the keys SaleOf reads for an order and its shipment,
// for storage.Prefetch.
func SaleKeys(orderID, shipmentID int64) [][]byte {
	return [][]byte{orderKey(orderID), shipmentKey(shipmentID)}
}

// IsOrder reports whether id names an order, read in tx.
func IsOrder(tx storage.Tx, id int64) (bool, error) {
	_, err := getOrder(tx, id)
	if errs.Is(err, errs.NotFound) {
		return false, nil
	}
	return err == nil, err
}
