package feedback

// The reads of feedback: one by id, an order's two sides, the legacy
// routes' one side.

import (
	"context"
	"errors"
	"fmt"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/sales"
	"github.com/marketplace/marketplace/storage"
)

// Get returns feedback id to a party of its order. Errors: NotFound,
// Forbidden.
func (s *Service) Get(ctx context.Context, caller, id int64) (Single, error) {
	var out Single
	err := s.store.View(ctx, func(tx storage.Tx) error {
		rec, err := getRecord(tx, id)
		if err != nil {
			return err
		}
		if caller != rec.Feedback.From.ID && caller != rec.Feedback.To.ID && caller != sales.Operator {
			return forbidden("The user %d is not a party of the order of feedback %d", caller, id)
		}
		out = Single{Feedback: rec.Feedback}
		return nil
	})
	return out, err
}

// OfOrder returns both sides of order orderID's feedback to a party of
// it. Errors: NotFound, Forbidden.
func (s *Service) OfOrder(ctx context.Context, caller, orderID int64) (OrderFeedback, error) {
	var out OrderFeedback
	err := s.store.View(ctx, func(tx storage.Tx) error {
		if err := storage.Prefetch(tx, append(sales.OrderKeys(orderID), sideKeys(orderID)...)...); err != nil {
			return err
		}
		sale, err := s.sales.OrderOf(tx, orderID)
		if err != nil {
			return err
		}
		if _, err := roleOf(caller, sale.Order); err != nil {
			return err
		}
		// Both records in one round trip: the side keys are read.
		var records [][]byte
		for _, role := range []string{RoleSeller, RoleBuyer} {
			if id, err := sideID(tx, orderID, role); err == nil {
				records = append(records, feedbackKey(id))
			}
		}
		if err := storage.Prefetch(tx, records...); err != nil {
			return err
		}
		out = OrderFeedback{}
		for _, side := range []struct {
			role string
			to   **Feedback
		}{{RoleSeller, &out.Sale}, {RoleBuyer, &out.Purchase}} {
			rec, err := s.side(tx, orderID, side.role)
			if errs.Is(err, errs.NotFound) {
				continue
			}
			if err != nil {
				return err
			}
			*side.to = &rec.Feedback
		}
		return nil
	})
	return out, err
}

// Side is the side of an order's feedback a legacy route names: sale is
// the seller's, purchase the buyer's.
func Side(name string) (role string, ok bool) {
	switch name {
	case "sale":
		return RoleSeller, true
	case "purchase":
		return RoleBuyer, true
	}
	return "", false
}

// OfSide returns the feedback the author of role gave on order orderID,
// to a party of it. Errors: NotFound (none given), Forbidden.
func (s *Service) OfSide(ctx context.Context, caller, orderID int64, role string) (Feedback, error) {
	both, err := s.OfOrder(ctx, caller, orderID)
	if err != nil {
		return Feedback{}, err
	}
	f := both.Sale
	if role == RoleBuyer {
		f = both.Purchase
	}
	if f == nil {
		return Feedback{}, errs.WithCode(errs.NotFound, "not_found", fmt.Sprintf("Order %d has no %s feedback", orderID, role))
	}
	return *f, nil
}

// sideKeys are the keys that name an order's two feedbacks.
func sideKeys(orderID int64) [][]byte {
	return [][]byte{orderSideKey(orderID, RoleSeller), orderSideKey(orderID, RoleBuyer)}
}

func (s *Service) side(tx storage.Tx, orderID int64, role string) (record, error) {
	id, err := sideID(tx, orderID, role)
	if err != nil {
		return record{}, err
	}
	return getRecord(tx, id)
}

// sideID is the id of the feedback the author of role gave on the order.
// Errors: NotFound (none given).
func sideID(tx storage.Tx, orderID int64, role string) (int64, error) {
	b, err := tx.Get(orderSideKey(orderID, role))
	if errors.Is(err, storage.ErrNotFound) {
		return 0, errs.WithCode(errs.NotFound, "not_found", "no feedback")
	}
	if err != nil {
		return 0, err
	}
	r := keycodec.Read(b)
	id := r.Int()
	if err := r.Err(); err != nil {
		return 0, errs.Internalf(err, "decode feedback id of order %d", orderID)
	}
	return id, nil
}

func (s *Service) parties(tx storage.Tx, f *Feedback, o sales.Order) error {
	from, to := o.Seller.ID, o.Buyer.ID
	if f.Role == RoleBuyer {
		from, to = to, from
	}
	for _, p := range []struct {
		id   int64
		into *Party
	}{{from, &f.From}, {to, &f.To}} {
		u, err := accounts.GetUser(tx, p.id)
		if err != nil {
			return err
		}
		*p.into = Party{ID: u.ID, Nickname: u.Nickname, Status: "active"}
	}
	return nil
}
