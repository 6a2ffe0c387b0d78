package questions

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/memory"
)

// TestSearchTotal_LeavesOutTheClassesThatHoldNoQuestion: the ranges of a
// class without questions may hold only the keys its questions' changes of
// status deleted, which Badger's iterators walk to find nothing; the
// tallies tell which classes hold questions, and the search reads no
// other. Here every question of the asker is answered: only the ANSWERED
// range of the asker is read.
func TestSearchTotal_LeavesOutTheClassesThatHoldNoQuestion(t *testing.T) {
	st := memory.New()
	ctx := context.Background()
	at := time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC)
	err := st.Update(ctx, func(tx storage.Tx) error {
		for id := int64(1); id <= 3; id++ {
			r := record{ID: id, SellerID: 7, BuyerID: 9, ItemID: "MLA1", SiteID: "MLA", Text: "?", Status: StatusUnanswered, Created: at, Updated: at}
			if err := put(tx, nil, r); err != nil {
				return err
			}
			before := r
			r.Status = StatusAnswered
			if err := put(tx, &before, r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = st.View(ctx, func(tx storage.Tx) error {
		p, err := planSearch(tx, 7, SearchQuery{SellerID: 7, From: 9, Limit: 50})
		if err != nil {
			return err
		}
		if len(p.streams[0].classes) != len(Statuses) {
			t.Fatalf("planned classes %v, want every status", p.streams[0].classes)
		}
		total, err := p.total(ctx, tx, 0, 0)
		if err != nil {
			return err
		}
		if total != 3 || !slices.Equal(p.streams[0].classes, []byte{statusCode(StatusAnswered)}) {
			t.Errorf("total %d, classes read %v; want 3 and only ANSWERED's", total, p.streams[0].classes)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
