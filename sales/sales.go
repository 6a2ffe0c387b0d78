// Package sales is what happens when something sells: orders, their packs
// and payments, shipments and their statuses. An order takes its units
// from stock (one store of the item's user product) in its own
// transaction, at the moment it is paid, and gives them back when it is
// cancelled; every change writes its notification events (orders_v2,
// shipments) in the same transaction. The sale itself is made by the
// operator (PlaceOrder, Pay, Cancel, MoveShipment): the public API has no
// route that creates an order.
package sales

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/fees"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/stock"
	"github.com/marketplace/marketplace/storage"
)

// Notification topics of sales.
const (
	TopicOrders    = notify.TopicOrders
	TopicShipments = notify.TopicShipments
)

// Service makes and reads sales.
type Service struct {
	store storage.Store
	clock clock.Clock
	stock *stock.Service
	fees  *fees.Service

	zones sync.Map // site id -> *time.Location
}

// New returns the sales service over the stock it takes units from and the
// fees that price a sale.
func New(store storage.Store, clk clock.Clock, st *stock.Service, f *fees.Service) *Service {
	return &Service{store: store, clock: clk, stock: st, fees: f}
}

// siteTime writes t in the time zone of site (UTC when the site is
// unknown to the store).
func (s *Service) siteTime(tx storage.Tx, siteID string, t time.Time) string {
	if z, ok := s.zones.Load(siteID); ok {
		return t.In(z.(*time.Location)).Format(TimeLayout)
	}
	loc := time.UTC
	if site, err := geo.GetSite(tx, siteID); err == nil {
		if l, err := time.LoadLocation(site.TimeZone); err == nil {
			loc = l
			s.zones.Store(siteID, loc)
		}
	}
	return t.In(loc).Format(TimeLayout)
}

func getOrder(tx storage.Tx, id int64) (orderRecord, error) {
	b, err := tx.Get(orderKey(id))
	if errors.Is(err, storage.ErrNotFound) {
		return orderRecord{}, errOrderNotFound()
	}
	if err != nil {
		return orderRecord{}, errs.Internalf(err, "read order %d", id)
	}
	r, err := decodeOrderRecord(b)
	if err != nil {
		return orderRecord{}, errs.Internalf(err, "decode order %d", id)
	}
	return r, nil
}

func putOrder(tx storage.Tx, r orderRecord) error {
	b, err := encodeOrderRecord(r)
	if err != nil {
		return errs.Internalf(err, "encode order %d", r.Order.ID)
	}
	return tx.Set(orderKey(r.Order.ID), b)
}

func errOrderNotFound() error {
	return errs.WithCode(errs.NotFound, "order_not_found", "Order does not exist")
}

func getShipment(tx storage.Tx, id int64) (shipmentRecord, error) {
	var r shipmentRecord
	err := kv.GetJSON(tx, shipmentKey(id), &r)
	if errors.Is(err, storage.ErrNotFound) {
		return r, errs.WithCode(errs.NotFound, "shipment_not_found", "Shipment does not exist")
	}
	if err != nil {
		return r, errs.Internalf(err, "read shipment %d", id)
	}
	return r, nil
}

func getPackOrder(tx storage.Tx, id int64) (int64, error) {
	b, err := tx.Get(packKey(id))
	if errors.Is(err, storage.ErrNotFound) {
		return 0, errs.WithCode(errs.NotFound, "pack_not_found", "Pack does not exist")
	}
	if err != nil {
		return 0, errs.Internalf(err, "read pack %d", id)
	}
	r := keycodec.Read(b)
	orderID := r.Int()
	if err := r.Err(); err != nil {
		return 0, errs.Internalf(err, "decode pack %d", id)
	}
	return orderID, nil
}

// announce writes a notification event for the order's seller.
func (s *Service) announce(ctx context.Context, tx storage.Tx, topic string, sellerID int64, resource, action string, now time.Time) error {
	_, err := notify.Append(ctx, s.store, tx, notify.Event{Topic: topic, UserID: sellerID, Resource: resource, Action: action, Received: now})
	return err
}
