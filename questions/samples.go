package questions

import (
	"bytes"
	"context"
	"slices"
	"time"

	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/storage"
)

// The response time refresh (package responsetime) reads questions through
// these two methods, its SampleSource.

// SellersWithQuestionsSince returns, in increasing order, the sellers that
// received at least one question asked at or after since. It reads the date
// index from since on, so its cost follows the window, not the history.
func (s *Service) SellersWithQuestionsSince(ctx context.Context, since time.Time) ([]int64, error) {
	seen := map[int64]bool{}
	err := s.store.View(ctx, func(tx storage.Tx) error {
		start := keycodec.Key(datePrefix()).Int(since.UnixNano())
		it := tx.Iterate(storage.Range{Start: start, End: storage.PrefixEnd(datePrefix())})
		defer it.Close()
		for ; it.Valid(); it.Next() {
			v, err := it.Value()
			if err != nil {
				return err
			}
			if len(v) == 8 {
				seen[keycodec.Read(v).Int()] = true
			}
		}
		return nil
	})
	if err != nil {
		return nil, wrap(err, "sellers with questions")
	}
	out := make([]int64, 0, len(seen))
	for id := range seen {
		out = append(out, id)
	}
	slices.Sort(out)
	return out, nil
}

// SellerSamplesSince returns the seller's questions asked at or after since,
// oldest first.
func (s *Service) SellerSamplesSince(ctx context.Context, sellerID int64, since time.Time) ([]Sample, error) {
	var out []Sample
	err := s.store.View(ctx, func(tx storage.Tx) error {
		// The seller's questions by date are split by status: each status's
		// part from since on, the ids sorted into the order of asking.
		var ids []int64
		for _, class := range sellerClasses("") {
			p := sellerByDate.classPrefix(partition{seller: sellerID}, class)
			start := append(bytes.Clone(p), keycodec.Raw().Int(since.UnixNano())...)
			func() {
				it := tx.Iterate(storage.Range{Start: start, End: storage.PrefixEnd(p)})
				defer it.Close()
				for ; it.Valid(); it.Next() {
					ids = append(ids, readTrailingID(it.Key()))
				}
			}()
		}
		for _, id := range ids {
			r, err := getRecord(tx, id)
			if err != nil {
				return err
			}
			sm := Sample{QuestionID: r.ID, SellerID: r.SellerID, BuyerID: r.BuyerID, ItemID: r.ItemID,
				Status: r.Status, Asked: r.Created}
			if r.Answer != nil {
				sm.Answered = r.Answer.Created
			}
			out = append(out, sm)
		}
		slices.SortFunc(out, func(a, b Sample) int {
			if c := a.Asked.Compare(b.Asked); c != 0 {
				return c
			}
			return cmpInt(a.QuestionID, b.QuestionID)
		})
		return nil
	})
	if err != nil {
		return nil, wrap(err, "seller samples")
	}
	return out, nil
}
