package feedback_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/feedback"
	"github.com/marketplace/marketplace/internal/saletest"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/storage"
)

var ctx = context.Background()

func ptr[T any](v T) *T { return &v }

func good() feedback.Input {
	return feedback.Input{Fulfilled: ptr(true), Rating: ptr("positive"), Message: ptr("Todo bien")}
}

func TestGive_EachSideRatesOnceAndTheOrderNamesBothIDs(t *testing.T) {
	is := is.New(t)
	w := saletest.New(t, 5)
	o := w.Order(1)
	sale, err := w.M.Feedback.Give(ctx, w.Seller, o.ID, good(), 1505)
	is.NoErr(err)
	is.Equal(sale.Role, "seller")
	is.Equal(sale.From.ID, w.Seller)
	is.Equal(sale.To.ID, w.Buyer)
	is.Equal(*sale.AppID, "1505")
	is.True(sale.ID >= 5040000000001)
	is.Equal(sale.Item.ID, w.Item.ID)
	_, err = w.M.Feedback.Give(ctx, w.Seller, o.ID, good(), 0)
	e := errs.As(err)
	is.True(e != nil)
	is.Equal(e.Code, "feedback_already_exists")
	is.Equal(e.Message, "Feedback already exists for this order")

	purchase, err := w.M.Feedback.Give(ctx, w.Buyer, o.ID, good(), 0)
	is.NoErr(err)
	is.Equal(purchase.Role, "buyer")
	is.True(purchase.AppID == nil)
	order, err := w.M.Sales.Order(ctx, w.Seller, o.ID)
	is.NoErr(err)
	is.Equal(*order.Feedback.Sale, sale.ID)
	is.Equal(*order.Feedback.Seller, sale.ID)
	is.Equal(*order.Feedback.Purchase, purchase.ID)
	is.Equal(*order.Feedback.Buyer, purchase.ID)
	both, err := w.M.Feedback.OfOrder(ctx, w.Buyer, o.ID)
	is.NoErr(err)
	is.Equal(both.Sale.ID, sale.ID)
	is.Equal(both.Purchase.ID, purchase.ID)
}

func TestGive_OnlyThePartiesOfTheOrderRateIt(t *testing.T) {
	is := is.New(t)
	w := saletest.New(t, 5)
	o := w.Order(1)
	_, err := w.M.Feedback.Give(ctx, w.Other, o.ID, good(), 0)
	is.Equal(errs.KindOf(err), errs.Forbidden)
	_, err = w.M.Feedback.OfOrder(ctx, w.Other, o.ID)
	is.Equal(errs.KindOf(err), errs.Forbidden)
	_, err = w.M.Feedback.Give(ctx, w.Seller, o.ID+1000, good(), 0)
	is.Equal(errs.KindOf(err), errs.NotFound)
}

func TestGive_APositiveRatingNeedsAFulfilledSaleAndANotFulfilledOneAReasonOfItsSide(t *testing.T) {
	w := saletest.New(t, 5)
	o := w.Order(1)
	for _, c := range []struct {
		name string
		in   feedback.Input
		by   int64
		want string
	}{
		{"NoFulfilled", feedback.Input{Rating: ptr("positive"), Message: ptr("m")}, w.Seller, "The field 'fulfilled' is required"},
		{"NoRating", feedback.Input{Fulfilled: ptr(true), Message: ptr("m")}, w.Seller, "The field 'rating' is required"},
		{"NoMessage", feedback.Input{Fulfilled: ptr(true), Rating: ptr("positive")}, w.Seller, "The field 'message' is required"},
		{"BadRating", feedback.Input{Fulfilled: ptr(true), Rating: ptr("great"), Message: ptr("m")}, w.Seller, `Invalid rating: "great". Valid ratings are: positive, neutral, negative`},
		{"PositiveNotFulfilled", feedback.Input{Fulfilled: ptr(false), Rating: ptr("positive"), Message: ptr("m"), Reason: ptr("OUT_OF_STOCK")}, w.Seller, "A positive rating needs fulfilled: true"},
		{"NoReason", feedback.Input{Fulfilled: ptr(false), Rating: ptr("neutral"), Message: ptr("m")}, w.Seller, "The field 'reason' is required when fulfilled is false"},
		{"BuyerReasonFromSeller", feedback.Input{Fulfilled: ptr(false), Rating: ptr("neutral"), Message: ptr("m"), Reason: ptr("SELLER_DID_NOT_ANSWER")}, w.Seller, `Invalid reason: "SELLER_DID_NOT_ANSWER" for the seller's feedback`},
		{"LongMessage", feedback.Input{Fulfilled: ptr(true), Rating: ptr("positive"), Message: ptr(strings.Repeat("a", 161))}, w.Buyer, "The message must have at most 160 characters"},
		{"RestockByBuyer", feedback.Input{Fulfilled: ptr(false), Rating: ptr("negative"), Message: ptr("m"), Reason: ptr("BUYER_REGRETS"), RestockItem: ptr(true)}, w.Buyer, "The field 'restock_item' is only for the seller's feedback with fulfilled: false"},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			_, err := w.M.Feedback.Give(ctx, c.by, o.ID, c.in, 0)
			e := errs.As(err)
			is.True(e != nil)
			is.Equal(e.Kind, errs.Invalid)
			is.Equal(e.Message, c.want)
		})
	}
	is := is.New(t)
	both, err := w.M.Feedback.OfOrder(ctx, w.Seller, o.ID)
	is.NoErr(err)
	is.True(both.Sale == nil && both.Purchase == nil) // nothing refused was kept
	_, err = w.M.Feedback.Give(ctx, w.Buyer, o.ID, feedback.Input{Fulfilled: ptr(true), Rating: ptr("negative"), Message: ptr("m")}, 0)
	is.NoErr(err) // neutral and negative go with either fulfilled
}

func TestGive_ANotFulfilledSellerFeedbackWithRestockGivesTheUnitsBackOnce(t *testing.T) {
	is := is.New(t)
	w := saletest.New(t, 5)
	o := w.Order(2)
	is.Equal(w.Available(), int64(3))
	_, err := w.M.Feedback.Give(ctx, w.Seller, o.ID, feedback.Input{Fulfilled: ptr(false), Rating: ptr("neutral"),
		Message: ptr("Sin stock"), Reason: ptr("OUT_OF_STOCK"), RestockItem: ptr(true)}, 0)
	is.NoErr(err)
	is.Equal(w.Available(), int64(5))
	_, err = w.M.Feedback.Change(ctx, w.Seller, mustSaleID(t, w, o.ID), feedback.Input{Message: ptr("otro")})
	is.NoErr(err)
	is.Equal(w.Available(), int64(5))
}

func TestGive_ANotFulfilledSellerFeedbackAfterTheOrderExpiredIsRefused(t *testing.T) {
	is := is.New(t)
	w := saletest.New(t, 5)
	o := w.Order(1)
	w.Clock.Advance(feedback.ExpirationWindow)
	_, err := w.M.Feedback.Give(ctx, w.Seller, o.ID, feedback.Input{Fulfilled: ptr(false), Rating: ptr("neutral"),
		Message: ptr("m"), Reason: ptr("BUYER_REGRETS")}, 0)
	e := errs.As(err)
	is.True(e != nil)
	is.Equal(e.Code, "not_fulfilled_feedback_in_order_expired")
	is.Equal(e.Message, "You can't submit a not fulfilled feedback after order has expired.")
	_, err = w.M.Feedback.Give(ctx, w.Seller, o.ID, good(), 0)
	is.NoErr(err)
}

func TestChange_OnlyTheAuthorChangesAFeedbackAndOnlyBeforeTheOrderExpires(t *testing.T) {
	is := is.New(t)
	w := saletest.New(t, 5)
	o := w.Order(1)
	f, err := w.M.Feedback.Give(ctx, w.Buyer, o.ID, good(), 0)
	is.NoErr(err)
	_, err = w.M.Feedback.Change(ctx, w.Seller, f.ID, feedback.Input{Message: ptr("x")})
	is.Equal(errs.KindOf(err), errs.Forbidden)
	got, err := w.M.Feedback.Change(ctx, w.Buyer, f.ID, feedback.Input{Rating: ptr("neutral"), Message: ptr("It's ok.")})
	is.NoErr(err)
	is.True(got.Modified)
	is.Equal(got.Rating, "neutral")
	is.Equal(*got.Message, "It's ok.")
	w.Clock.Advance(feedback.ExpirationWindow)
	_, err = w.M.Feedback.Change(ctx, w.Buyer, f.ID, feedback.Input{Message: ptr("late")})
	is.Equal(errs.KindOf(err), errs.Forbidden)
}

func TestChangeSide_ChangesTheSidesFeedbackAsOfSideAndChangeDo(t *testing.T) {
	is := is.New(t)
	w := saletest.New(t, 5)
	o := w.Order(1)
	_, err := w.M.Feedback.ChangeSide(ctx, w.Buyer, o.ID, feedback.RoleBuyer, feedback.Input{Message: ptr("x")})
	is.Equal(errs.KindOf(err), errs.NotFound) // no purchase feedback yet
	f, err := w.M.Feedback.Give(ctx, w.Buyer, o.ID, good(), 0)
	is.NoErr(err)
	_, err = w.M.Feedback.ChangeSide(ctx, w.Buyer, o.ID, feedback.RoleSeller, feedback.Input{Message: ptr("x")})
	is.Equal(errs.KindOf(err), errs.NotFound) // no sale feedback
	_, err = w.M.Feedback.ChangeSide(ctx, w.Seller, o.ID, feedback.RoleBuyer, feedback.Input{Message: ptr("x")})
	is.Equal(errs.KindOf(err), errs.Forbidden) // a party, not the author
	_, err = w.M.Feedback.ChangeSide(ctx, w.Buyer, o.ID+1000, feedback.RoleBuyer, feedback.Input{Message: ptr("x")})
	is.Equal(errs.KindOf(err), errs.NotFound) // no such order
	got, err := w.M.Feedback.ChangeSide(ctx, w.Buyer, o.ID, feedback.RoleBuyer, feedback.Input{Rating: ptr("neutral"), Message: ptr("It's ok.")})
	is.NoErr(err)
	is.Equal(got.ID, f.ID)
	is.True(got.Modified)
	is.Equal(got.Rating, "neutral")
	is.Equal(*got.Message, "It's ok.")
	side, err := w.M.Feedback.OfSide(ctx, w.Seller, o.ID, feedback.RoleBuyer)
	is.NoErr(err)
	is.Equal(side, got)
}

func TestReply_OnlyTheAddresseeRepliesOnce(t *testing.T) {
	is := is.New(t)
	w := saletest.New(t, 5)
	o := w.Order(1)
	f, err := w.M.Feedback.Give(ctx, w.Buyer, o.ID, good(), 0)
	is.NoErr(err)
	_, err = w.M.Feedback.Reply(ctx, w.Buyer, f.ID, "gracias")
	is.Equal(errs.KindOf(err), errs.Forbidden)
	_, err = w.M.Feedback.Reply(ctx, w.Seller, f.ID, strings.Repeat("a", 161))
	is.Equal(errs.KindOf(err), errs.Invalid)
	got, err := w.M.Feedback.Reply(ctx, w.Seller, f.ID, "Muchas gracias")
	is.NoErr(err)
	is.Equal(*got.Reply, "Muchas gracias")
	_, err = w.M.Feedback.Reply(ctx, w.Seller, f.ID, "again")
	is.Equal(errs.KindOf(err), errs.Invalid)
	single, err := w.M.Feedback.Get(ctx, w.Seller, f.ID)
	is.NoErr(err)
	is.Equal(*single.Reply, "Muchas gracias")
}

func TestGive_VisibleToBothOnceBothRatedOrAtTheOrdersExpiration(t *testing.T) {
	is := is.New(t)
	w := saletest.New(t, 5)
	o := w.Order(1)
	f, err := w.M.Feedback.Give(ctx, w.Seller, o.ID, good(), 0)
	is.NoErr(err)
	is.Equal(f.VisibilityDate, "2026-04-01T12:00:00.000-03:00") // the order's expiration: 28 days after its creation, at the site's offset
	w.Clock.Advance(time.Hour)
	p, err := w.M.Feedback.Give(ctx, w.Buyer, o.ID, good(), 0)
	is.NoErr(err)
	is.Equal(p.VisibilityDate, p.DateCreated)
	both, err := w.M.Feedback.OfOrder(ctx, w.Seller, o.ID)
	is.NoErr(err)
	is.Equal(both.Sale.VisibilityDate, p.DateCreated)
}

func TestGive_WritesOrdersFeedbackAndOrdersV2InTheSameTransaction(t *testing.T) {
	is := is.New(t)
	w := saletest.New(t, 5)
	o := w.Order(1)
	before := outbox(t, w)
	_, err := w.M.Feedback.Give(ctx, w.Buyer, o.ID, good(), 0)
	is.NoErr(err)
	var topics []string
	for _, ev := range outbox(t, w)[len(before):] {
		is.Equal(ev.UserID, w.Seller)
		topics = append(topics, ev.Topic+" "+ev.Resource)
	}
	is.True(strings.Contains(strings.Join(topics, ","), "orders_feedback /orders/"))
	is.True(strings.Contains(strings.Join(topics, ","), "orders_v2 /orders/"))
}

func mustSaleID(t *testing.T, w *saletest.World, orderID int64) int64 {
	t.Helper()
	both, err := w.M.Feedback.OfOrder(ctx, w.Seller, orderID)
	if err != nil || both.Sale == nil {
		t.Fatalf("the sale's feedback: %v", err)
	}
	return both.Sale.ID
}

// outbox reads the events not yet fanned out (nothing delivers them here).
func outbox(t *testing.T, w *saletest.World) []notify.Event {
	t.Helper()
	var out []notify.Event
	err := w.M.Store().View(ctx, func(tx storage.Tx) error {
		it := tx.Iterate(storage.Range{Start: notify.OutboxPrefix(), End: storage.PrefixEnd(notify.OutboxPrefix())})
		defer it.Close()
		for ; it.Valid(); it.Next() {
			b, err := it.Value()
			if err != nil {
				return err
			}
			ev, err := notify.DecodeEvent(b)
			if err != nil {
				return err
			}
			out = append(out, ev)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
