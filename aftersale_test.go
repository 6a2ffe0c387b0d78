package marketplace_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/marketplace/marketplace/claims"
	"github.com/marketplace/marketplace/internal/saletest"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/storage"
)

func TestManualClock_AMovePastAClaimsDueDateWritesTheDisputeAndItsNotificationBeforeItReturns(t *testing.T) {
	ctx := context.Background()
	w := saletest.New(t, 5)
	o := w.Order(1)
	c, err := w.M.Claims.Open(ctx, claims.NewClaim{OrderID: o.ID, ReasonID: "PNR3430"})
	if err != nil {
		t.Fatalf("open a claim: %v", err)
	}
	resource := fmt.Sprintf("/post-purchase/v1/claims/%d", c.ID)
	before := claimEvents(t, w, resource)
	if err := w.Clock.Advance(claims.AnswerWindow + 1); err != nil {
		t.Fatal(err)
	}
	after := claimEvents(t, w, resource)
	if after <= before {
		t.Fatalf("post_purchase events of the claim: %d before the move, %d after; want the timeout's", before, after)
	}
	got, err := w.M.Claims.Claim(ctx, w.Seller, c.ID)
	if err != nil || got.Stage != "dispute" {
		t.Fatalf("the claim after its due date: %+v %v; want it in dispute", got, err)
	}
}

// claimEvents counts the outbox's post_purchase events of resource.
func claimEvents(t *testing.T, w *saletest.World, resource string) int {
	t.Helper()
	n := 0
	err := w.M.Store().View(context.Background(), func(tx storage.Tx) error {
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
			if ev.Topic == notify.TopicPostPurchase && ev.Resource == resource {
				n++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
