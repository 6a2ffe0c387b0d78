package sales

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/storage"
)

// What follows a sale (packages messages, claims, feedback, notes) reads
// and changes the sale inside its own transactions, so that a claim's
// refund and the order it marks commit together. These are those
// transaction-level reads and changes; the rules of the sale itself stay
// here.

// Sale is an order and its shipment, as the rules after a sale see them.
type Sale struct {
	Order    Order
	Shipment Shipment
	// Created is the order's date_created.
	Created time.Time
}

// SaleOf reads order id and its shipment in tx, whoever asks: the caller
// checks who may see them. Errors: NotFound ("Order does not exist").
func (s *Service) SaleOf(tx storage.Tx, id int64) (Sale, error) {
	r, err := getOrder(tx, id)
	if err != nil {
		return Sale{}, err
	}
	out := Sale{Order: r.Order, Created: time.UnixMilli(r.CreatedMs)}
	if r.Order.Shipping.ID != nil {
		sh, err := getShipment(tx, *r.Order.Shipping.ID)
		if err != nil {
			return Sale{}, err
		}
		out.Shipment = sh.Shipment
	}
	return out, nil
}

// OrderOf reads order id in tx, without its shipment, whoever asks: the
// caller checks who may see it. Errors: NotFound ("Order does not exist").
func (s *Service) OrderOf(tx storage.Tx, id int64) (Sale, error) {
	r, err := getOrder(tx, id)
	if err != nil {
		return Sale{}, err
	}
	return Sale{Order: r.Order, Created: time.UnixMilli(r.CreatedMs)}, nil
}

// OrderKeys returns the keys OrderOf reads for ids, for storage.Prefetch.
func OrderKeys(ids ...int64) [][]byte {
	keys := make([][]byte, 0, len(ids))
	for _, id := range ids {
		keys = append(keys, orderKey(id))
	}
	return keys
}

// PackOrder returns the id of the order of pack id, read in tx. Errors:
// NotFound ("Pack does not exist").
func (s *Service) PackOrder(tx storage.Tx, id int64) (int64, error) {
	return getPackOrder(tx, id)
}

// SiteTime writes t as sales dates are written, in the time zone of site.
func (s *Service) SiteTime(tx storage.Tx, siteID string, t time.Time) string {
	return s.siteTime(tx, siteID, t)
}

// OrderChange is what a post-sale event does to its order; each field
// left zero changes nothing.
type OrderChange struct {
	// AddTags and RemoveTags change the order's tags.
	AddTags, RemoveTags []string
	// Mediation adds a claim to the order's mediations, and
	// MediationStatus, when given, is where that claim now stands (one of
	// MediationStatuses).
	Mediation       int64
	MediationStatus string
	// SaleFeedback and PurchaseFeedback name the feedback the seller and
	// the buyer gave.
	SaleFeedback, PurchaseFeedback int64
	// Refund is the amount refunded to the buyer, in the order's currency:
	// the payments become refunded (partially when it is less than what
	// was paid).
	Refund *money.Dec
	// Restock gives the order's units back to the store they came from,
	// once; RestockUnits gives back that many of them (a partial
	// return). Neither gives back more units than the order took.
	Restock      bool
	RestockUnits int64
}

// restock gives back to their store the units change asks for, at most
// those the order took and has not given back.
func (s *Service) restock(ctx context.Context, tx storage.Tx, rec *orderRecord, change OrderChange, now time.Time) error {
	line := rec.Order.OrderItems[0]
	units := change.RestockUnits
	if change.Restock {
		units = line.Quantity
	}
	if units <= 0 || rec.Taken == nil || rec.Returned {
		return nil
	}
	units = min(units, line.Quantity-rec.ReturnedUnits)
	if err := s.stock.ReturnUnits(ctx, tx, line.Item.ID, *rec.Taken, units, now); err != nil {
		return err
	}
	rec.ReturnedUnits += units
	rec.Returned = rec.ReturnedUnits >= line.Quantity
	return nil
}

// ChangeOrder applies change to order id in tx at now: the order is saved
// and its orders_v2 notification written with action. Errors: NotFound.
func (s *Service) ChangeOrder(ctx context.Context, tx storage.Tx, id int64, change OrderChange, action string, now time.Time) (Order, error) {
	rec, err := getOrder(tx, id)
	if err != nil {
		return Order{}, err
	}
	before := rec
	o := &rec.Order
	stamp := s.siteTime(tx, o.Context.Site, now)
	if len(change.AddTags) > 0 || len(change.RemoveTags) > 0 {
		tags := slices.DeleteFunc(slices.Clone(o.Tags), func(t string) bool { return slices.Contains(change.RemoveTags, t) })
		for _, t := range change.AddTags {
			if !slices.Contains(tags, t) {
				tags = append(tags, t)
			}
		}
		o.Tags = tags
	}
	if change.Mediation != 0 && !slices.Contains(o.Mediations, Mediation{ID: change.Mediation}) {
		o.Mediations = append(slices.Clone(o.Mediations), Mediation{ID: change.Mediation})
	}
	if change.Mediation != 0 && change.MediationStatus != "" {
		statuses := make(map[int64]string, len(rec.MediationStatuses)+1)
		maps.Copy(statuses, rec.MediationStatuses)
		statuses[change.Mediation] = change.MediationStatus
		rec.MediationStatuses = statuses
	}
	if id := change.SaleFeedback; id != 0 {
		o.Feedback.Seller, o.Feedback.Sale = &id, &id
	}
	if id := change.PurchaseFeedback; id != 0 {
		o.Feedback.Buyer, o.Feedback.Purchase = &id, &id
	}
	if change.Refund != nil {
		if err := refundPayments(o, *change.Refund, stamp); err != nil {
			return Order{}, err
		}
	}
	if err := s.restock(ctx, tx, &rec, change, now); err != nil {
		return Order{}, err
	}
	touch(&rec, now, stamp)
	if err := s.saveOrder(ctx, tx, &before, rec, action, now); err != nil {
		return Order{}, err
	}
	return rec.Order, nil
}

// refundPayments marks the order's approved payments refunded by amount,
// taken from the first payment on.
func refundPayments(o *Order, amount money.Dec, stamp string) error {
	left := amount
	o.Payments = slices.Clone(o.Payments)
	for i := range o.Payments {
		p := &o.Payments[i]
		if left.Sign() <= 0 || p.Status != "approved" && p.Status != "refunded" {
			continue
		}
		paid, err := money.Parse(string(p.TransactionAmount))
		if err != nil {
			return errs.Internalf(err, "payment %d amount", p.ID)
		}
		done, err := money.Parse(string(p.TransactionAmountRefunded))
		if err != nil {
			done = money.FromInt(0)
		}
		give := paid.Sub(done)
		if left.Cmp(give) < 0 {
			give = left
		}
		if give.Sign() <= 0 {
			continue
		}
		done, left = done.Add(give), left.Sub(give)
		p.TransactionAmountRefunded = json.Number(done.String())
		p.Status, p.StatusDetail = "refunded", "refunded"
		if done.Cmp(paid) < 0 {
			p.StatusDetail = "partially_refunded"
		}
		p.DateLastModified = stamp
	}
	return nil
}
