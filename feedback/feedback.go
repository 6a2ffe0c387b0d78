// Package feedback holds the ratings the parties of a sale give each other:
// the seller's on the sale, the buyer's on the purchase, once each, changed
// by their author before the order expires, answered once by the other
// party (docs/post-sale.md).
package feedback

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/sales"
	"github.com/marketplace/marketplace/stock"
	"github.com/marketplace/marketplace/storage"
)

// Roles of a feedback's author.
const (
	RoleSeller = "seller"
	RoleBuyer  = "buyer"
)

// Ratings.
const (
	RatingPositive = "positive"
	RatingNeutral  = "neutral"
	RatingNegative = "negative"
)

// MaxLength is the most characters of a feedback's message and of a reply.
const MaxLength = 160

// ExpirationWindow is how long after its creation an order may be rated:
// its expiration_date. After it a seller may no longer say the sale did
// not happen, and no feedback is changed.
const ExpirationWindow = 28 * 24 * time.Hour

// SellerReasons and BuyerReasons are the reasons each side may give for a
// sale that did not happen (fulfilled false).
var (
	SellerReasons = []string{"OUT_OF_STOCK", "BUYER_NOT_ENOUGH_MONEY", "BUYER_REGRETS", "SELLER_REGRETS",
		"BUYER_DID_NOT_ANSWER", "THEY_NOT_HONORING_POLICIES", "OTHER_MY_RESPONSIBILITY", "OTHER_THEIR_RESPONSIBILITY",
		"DUBIOUS_BUYER", "HIGH_ML_COMISSION", "HIGH_TAXES", "SELLER_HOLIDAY", "UNFRIENDLY_SHIPMENT_POLICY",
		"UNAVAILABLE_PRODUCT", "SELLER_ADDRESS_WITHDRAWAL", "WRONG_RECEIVER_ADDRESS", "HIGH_SHIPMENT_COST",
		"WRONG_SHIPMENT_COST", "UNPRINTED_LABEL", "UNWITHDRAWN_PRODUCT_BY_DELIVER_COMPANY", "DENIED_PACKAGE",
		"UNABLE_TO_READ_LABEL", "MANUFACTURING_PRODUCT_NOT_FINISHED", "SHIPMENT_PROBLEM_OTHER", "DELIVERY_COMPANY_PROBLEM_OTHER"}
	BuyerReasons = []string{"OUT_OF_STOCK", "BUYER_PAID_BUT_DID_NOT_RECEIVE", "OTHER_MY_RESPONSIBILITY", "BUYER_REGRETS",
		"HIGH_SHIPMENT_COST", "SELLER_DID_NOT_ANSWER", "THEY_NOT_HONORING_POLICIES", "OTHER_THEIR_RESPONSIBILITY",
		"DESCRIPTION_DIDNT_MATCH_ARTICLE"}
)

// Feedback is a feedback in the public API's shape, as the order's
// feedback route shows it.
type Feedback struct {
	ID                     int64    `json:"id"`
	OrderID                int64    `json:"order_id"`
	Role                   string   `json:"role"`
	Fulfilled              bool     `json:"fulfilled"`
	Rating                 string   `json:"rating"`
	Reason                 *string  `json:"reason"`
	Message                *string  `json:"message"`
	Reply                  *string  `json:"reply"`
	RestockItem            bool     `json:"restock_item"`
	HasSellerRefundedMoney *bool    `json:"has_seller_refunded_money"`
	ExtendedFeedback       []string `json:"extended_feedback"`
	Modified               bool     `json:"modified"`
	Status                 string   `json:"status"`
	SiteID                 string   `json:"site_id"`
	AppID                  *string  `json:"app_id"`
	DateCreated            string   `json:"date_created"`
	VisibilityDate         string   `json:"visibility_date"`
	Item                   Item     `json:"item"`
	From                   Party    `json:"from"`
	To                     Party    `json:"to"`
}

// Single is a feedback as GET /feedback/{id} shows it: with
// adult_content, without app_id.
type Single struct {
	Feedback
	AppID        *string `json:"app_id,omitempty"`
	AdultContent bool    `json:"adult_content"`
}

// Item is the item sold, as the feedback names it.
type Item struct {
	ID         string  `json:"id"`
	Title      string  `json:"title"`
	Price      float64 `json:"price"`
	CurrencyID string  `json:"currency_id"`
}

// Party is the author or the addressee of a feedback.
type Party struct {
	ID       int64  `json:"id"`
	Nickname string `json:"nickname"`
	Status   string `json:"status"`
	Points   int64  `json:"points"`
}

// OrderFeedback is both sides of an order's feedback: sale is what the
// seller wrote, purchase what the buyer wrote.
type OrderFeedback struct {
	Sale     *Feedback `json:"sale"`
	Purchase *Feedback `json:"purchase"`
}

// Input is a feedback as a POST or a PUT sends it; a PUT's absent fields
// keep their value.
type Input struct {
	Fulfilled              *bool   `json:"fulfilled"`
	Rating                 *string `json:"rating"`
	Message                *string `json:"message"`
	Reason                 *string `json:"reason"`
	RestockItem            *bool   `json:"restock_item"`
	HasSellerRefundedMoney *bool   `json:"has_seller_refunded_money"`
}

// record is a stored feedback: the feedback and when its order expires.
type record struct {
	Feedback Feedback `json:"feedback"`
	// ExpiresMs is the order's expiration_date in Unix milliseconds.
	ExpiresMs int64 `json:"expires_ms"`
}

// Service holds the feedback.
type Service struct {
	store storage.Store
	clock clock.Clock
	sales *sales.Service
}

// New returns the feedback over store, on the sales of s.
func New(store storage.Store, clk clock.Clock, s *sales.Service) *Service {
	return &Service{store: store, clock: clk, sales: s}
}

// Give writes the caller's feedback on order orderID: the seller's on the
// sale or the buyer's on the purchase, once. appID is the application
// the caller's token belongs to (0: none). A seller's feedback that the
// sale did not happen with restock_item gives the units back to their
// store, unless the item is closed. Errors: Invalid (the input, a second
// feedback, a not-fulfilled feedback after the order expired), NotFound,
// Forbidden (not a party).
func (s *Service) Give(ctx context.Context, caller, orderID int64, in Input, appID int64) (Feedback, error) {
	now := s.clock.Now()
	number := kv.NewOnceID(s.store, feedbackSequence)
	var out Feedback
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		// The feedback's id and its events' numbers go with the order's
		// read, where the store can; a refused feedback leaves a gap in
		// the sequence.
		ctx := notify.DrawEventNumbers(ctx, tx, 2)
		drawn := kv.DrawOnceLater(ctx, tx, number)
		if err := storage.Prefetch(tx, append(sales.OrderKeys(orderID), sideKeys(orderID)...)...); err != nil {
			return err
		}
		if err := drawn(); err != nil {
			return err
		}
		no, err := number.Get(ctx)
		if err != nil {
			return err
		}
		sale, err := s.sales.OrderOf(tx, orderID)
		if err != nil {
			return err
		}
		role, err := roleOf(caller, sale.Order)
		if err != nil {
			return err
		}
		expires := sale.Created.Add(ExpirationWindow)
		if in.Fulfilled == nil {
			return invalid("The field 'fulfilled' is required")
		}
		if in.Rating == nil {
			return invalid("The field 'rating' is required")
		}
		if in.Message == nil {
			return invalid("The field 'message' is required")
		}
		f := Feedback{OrderID: orderID, Role: role, ExtendedFeedback: []string{}, Status: "active",
			SiteID: sale.Order.Context.Site}
		if err := apply(&f, in); err != nil {
			return err
		}
		if role == RoleSeller && !f.Fulfilled && !now.Before(expires) {
			return errs.WithCode(errs.Invalid, "not_fulfilled_feedback_in_order_expired",
				"You can't submit a not fulfilled feedback after order has expired.")
		}
		if _, err := tx.Get(orderSideKey(orderID, role)); err == nil {
			return errs.WithCode(errs.Invalid, "feedback_already_exists", "Feedback already exists for this order")
		} else if !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		line := sale.Order.OrderItems[0]
		if err := storage.Prefetch(tx, append(accounts.UserKeys(sale.Order.Seller.ID, sale.Order.Buyer.ID), stock.ItemKeys(line.Item.ID)...)...); err != nil {
			return err
		}
		f.ID = firstFeedbackID + int64(no) - 1
		if appID != 0 {
			app := strconv.FormatInt(appID, 10)
			f.AppID = &app
		}
		stamp := s.sales.SiteTime(tx, f.SiteID, now)
		f.DateCreated, f.VisibilityDate = stamp, s.sales.SiteTime(tx, f.SiteID, expires)
		if err := s.parties(tx, &f, sale.Order); err != nil {
			return err
		}
		price, _ := strconv.ParseFloat(string(line.UnitPrice), 64)
		f.Item = Item{ID: line.Item.ID, Title: line.Item.Title, Price: price, CurrencyID: line.CurrencyID}
		// Once both sides have rated, both ratings are visible.
		if other, err := s.side(tx, orderID, counterpart(role)); err == nil {
			f.VisibilityDate = stamp
			if now.Before(expires) {
				other.Feedback.VisibilityDate = stamp
				if err := kv.SetJSON(tx, feedbackKey(other.Feedback.ID), other); err != nil {
					return err
				}
			}
		} else if !errs.Is(err, errs.NotFound) {
			return err
		}
		change := sales.OrderChange{}
		if role == RoleSeller {
			change.SaleFeedback = f.ID
			if f.RestockItem {
				item, err := stock.GetItemWithoutStock(tx, line.Item.ID)
				if err != nil {
					return err
				}
				change.Restock = item.Status != stock.StatusClosed
			}
		} else {
			change.PurchaseFeedback = f.ID
		}
		if err := tx.Set(orderSideKey(orderID, role), keycodec.Raw().Int(f.ID)); err != nil {
			return err
		}
		if err := kv.SetJSON(tx, feedbackKey(f.ID), record{Feedback: f, ExpiresMs: expires.UnixMilli()}); err != nil {
			return err
		}
		if _, err := s.sales.ChangeOrder(ctx, tx, orderID, change, "feedback", now); err != nil {
			return err
		}
		out = f
		return s.announce(ctx, tx, sale.Order, "created", now)
	})
	return out, err
}

// Change replaces the fields in of feedback id, by its author, until the
// order expires. Errors: Invalid, NotFound, Forbidden.
func (s *Service) Change(ctx context.Context, caller, id int64, in Input) (Feedback, error) {
	now := s.clock.Now()
	var out Feedback
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		var err error
		out, err = s.changeIn(ctx, tx, caller, id, in, now, nil)
		return err
	})
	return out, err
}

// ChangeSide is Change of the feedback the author of role gave on order
// orderID, as OfSide finds it, in one transaction: at network distance,
// the order and its side with the event's number, the record, and the
// commit. Errors: those of OfSide and Change.
func (s *Service) ChangeSide(ctx context.Context, caller, orderID int64, role string, in Input) (Feedback, error) {
	now := s.clock.Now()
	var out Feedback
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		ctx := notify.DrawEventNumbers(ctx, tx, 1)
		if err := storage.Prefetch(tx, append(sales.OrderKeys(orderID), orderSideKey(orderID, role))...); err != nil {
			return err
		}
		sale, err := s.sales.OrderOf(tx, orderID)
		if err != nil {
			return err
		}
		if _, err := roleOf(caller, sale.Order); err != nil {
			return err
		}
		id, err := sideID(tx, orderID, role)
		if errs.Is(err, errs.NotFound) {
			return errs.WithCode(errs.NotFound, "not_found", fmt.Sprintf("Order %d has no %s feedback", orderID, role))
		}
		if err != nil {
			return err
		}
		out, err = s.changeIn(ctx, tx, caller, id, in, now, &sale.Order)
		return err
	})
	return out, err
}

// changeIn changes feedback id inside tx; order is its order when the
// caller has read it already.
func (s *Service) changeIn(ctx context.Context, tx storage.Tx, caller, id int64, in Input, now time.Time, order *sales.Order) (Feedback, error) {
	rec, err := getRecord(tx, id)
	if err != nil {
		return Feedback{}, err
	}
	if caller != rec.Feedback.From.ID {
		return Feedback{}, forbidden("Only the author of feedback %d may change it", id)
	}
	if !now.Before(time.UnixMilli(rec.ExpiresMs)) {
		return Feedback{}, forbidden("Feedback %d can no longer be changed: its order has expired", id)
	}
	f := rec.Feedback
	if in.RestockItem != nil && *in.RestockItem != f.RestockItem {
		return Feedback{}, invalid("The field 'restock_item' cannot be changed")
	}
	if err := apply(&f, in); err != nil {
		return Feedback{}, err
	}
	f.Modified = true
	rec.Feedback = f
	if err := kv.SetJSON(tx, feedbackKey(id), rec); err != nil {
		return Feedback{}, err
	}
	if order == nil {
		sale, err := s.sales.OrderOf(tx, f.OrderID)
		if err != nil {
			return Feedback{}, err
		}
		order = &sale.Order
	}
	return f, s.announce(ctx, tx, *order, "changed", now)
}

// Reply answers feedback id, by the party it was given to, once. Errors:
// Invalid (empty, too long, a second reply), NotFound, Forbidden.
func (s *Service) Reply(ctx context.Context, caller, id int64, text string) (Feedback, error) {
	if text == "" {
		return Feedback{}, invalid("The field 'reply' is required")
	}
	if utf8.RuneCountInString(text) > MaxLength {
		return Feedback{}, invalid(fmt.Sprintf("The reply must have at most %d characters", MaxLength))
	}
	now := s.clock.Now()
	var out Feedback
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		rec, err := getRecord(tx, id)
		if err != nil {
			return err
		}
		if caller != rec.Feedback.To.ID {
			return forbidden("Only the user feedback %d was given to may reply to it", id)
		}
		if rec.Feedback.Reply != nil {
			return errs.WithCode(errs.Invalid, "reply_already_exists", "The feedback already has a reply")
		}
		rec.Feedback.Reply = &text
		if err := kv.SetJSON(tx, feedbackKey(id), rec); err != nil {
			return err
		}
		sale, err := s.sales.OrderOf(tx, rec.Feedback.OrderID)
		if err != nil {
			return err
		}
		out = rec.Feedback
		return s.announce(ctx, tx, sale.Order, "replied", now)
	})
	return out, err
}

// announce writes the orders_feedback notification of a change to the
// order's feedback, for its seller.
func (s *Service) announce(ctx context.Context, tx storage.Tx, o sales.Order, action string, now time.Time) error {
	_, err := notify.Append(ctx, s.store, tx, notify.Event{Topic: notify.TopicOrdersFeedback, UserID: o.Seller.ID,
		Resource: fmt.Sprintf("/orders/%d/feedback", o.ID), Action: action, Received: now})
	return err
}

// apply checks in and writes its fields over f.
func apply(f *Feedback, in Input) error {
	if in.Fulfilled != nil {
		f.Fulfilled = *in.Fulfilled
	}
	if in.Rating != nil {
		if !slices.Contains([]string{RatingPositive, RatingNeutral, RatingNegative}, *in.Rating) {
			return invalid(fmt.Sprintf("Invalid rating: %q. Valid ratings are: positive, neutral, negative", *in.Rating))
		}
		f.Rating = *in.Rating
	}
	if in.Message != nil {
		if *in.Message == "" {
			return invalid("The field 'message' is required")
		}
		if utf8.RuneCountInString(*in.Message) > MaxLength {
			return invalid(fmt.Sprintf("The message must have at most %d characters", MaxLength))
		}
		m := *in.Message
		f.Message = &m
	}
	if in.Reason != nil {
		r := *in.Reason
		f.Reason = &r
	}
	if f.Rating == RatingPositive && !f.Fulfilled {
		return invalid("A positive rating needs fulfilled: true")
	}
	if f.Fulfilled {
		f.Reason = nil
	} else {
		reasons := SellerReasons
		if f.Role == RoleBuyer {
			reasons = BuyerReasons
		}
		switch {
		case f.Reason == nil:
			return invalid("The field 'reason' is required when fulfilled is false")
		case !slices.Contains(reasons, *f.Reason):
			return invalid(fmt.Sprintf("Invalid reason: %q for the %s's feedback", *f.Reason, f.Role))
		}
	}
	if in.RestockItem != nil {
		if *in.RestockItem && (f.Role != RoleSeller || f.Fulfilled) {
			return invalid("The field 'restock_item' is only for the seller's feedback with fulfilled: false")
		}
		f.RestockItem = *in.RestockItem
	}
	if in.HasSellerRefundedMoney != nil {
		if f.Role != RoleSeller || f.Fulfilled {
			return invalid("The field 'has_seller_refunded_money' is only for the seller's feedback with fulfilled: false")
		}
		v := *in.HasSellerRefundedMoney
		f.HasSellerRefundedMoney = &v
	}
	return nil
}

func roleOf(caller int64, o sales.Order) (string, error) {
	switch caller {
	case o.Seller.ID:
		return RoleSeller, nil
	case o.Buyer.ID:
		return RoleBuyer, nil
	}
	return "", forbidden("The user %d is not a party of order %d", caller, o.ID)
}

func counterpart(role string) string {
	if role == RoleSeller {
		return RoleBuyer
	}
	return RoleSeller
}

func getRecord(tx storage.Tx, id int64) (record, error) {
	var r record
	err := kv.GetJSON(tx, feedbackKey(id), &r)
	if errors.Is(err, storage.ErrNotFound) {
		return r, errs.WithCode(errs.NotFound, "not_found", fmt.Sprintf("Feedback %d not found", id))
	}
	if err != nil {
		return r, errs.Internalf(err, "read feedback %d", id)
	}
	return r, nil
}

func invalid(message string) error { return errs.WithCode(errs.Invalid, "bad_request", message) }

func forbidden(format string, args ...any) error {
	return errs.WithCode(errs.Forbidden, "forbidden", fmt.Sprintf(format, args...))
}
