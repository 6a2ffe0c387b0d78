package questions

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/marketplace/marketplace/storage"
)

// SearchByScan runs a search by loading every question of the item (or of
// the seller) and filtering and sorting them in memory, as the spec's rules
// read, without the indexes: the reference the index-backed pages must
// equal. Checks and errors are Search's.
func (s *Service) SearchByScan(ctx context.Context, caller int64, q SearchQuery) (SearchResult, error) {
	if err := checkSearch(caller, q); err != nil {
		return SearchResult{}, err
	}
	sorts := q.Sorts
	if len(sorts) == 0 {
		sorts = []Sort{{Field: SortDateCreated, Type: "DESC"}}
	}
	var out SearchResult
	err := s.store.View(ctx, func(tx storage.Tx) error {
		var recs []record
		it := tx.Iterate(storage.Prefix([]byte("q/q\x00")))
		for ; it.Valid(); it.Next() {
			v, err := it.Value()
			if err != nil {
				it.Close()
				return err
			}
			r, err := decodeRecord(v)
			if err != nil {
				it.Close()
				return err
			}
			switch {
			case q.SellerID != 0 && r.SellerID != q.SellerID,
				q.ItemID != "" && r.ItemID != q.ItemID,
				q.From != 0 && r.BuyerID != q.From,
				q.Status != "" && r.Status != q.Status,
				q.TotalDivisions > 0 && r.ID%q.TotalDivisions != q.Division,
				!scanVisible(r, caller):
				continue
			}
			recs = append(recs, r)
		}
		it.Close()
		slices.SortStableFunc(recs, func(a, b record) int { return scanCompare(a, b, sorts) })
		out = SearchResult{Total: len(recs), Questions: []Question{}}
		for i := q.Offset; i < len(recs) && len(out.Questions) < q.Limit; i++ {
			out.Questions = append(out.Questions, s.searchView(tx, recs[i], q.V4))
		}
		return nil
	})
	return out, err
}

// scanVisible: the seller sees every question on its items; the asker its
// own, unless deleted or banned; anyone else only public, not hidden ones.
func scanVisible(r record, caller int64) bool {
	if caller != 0 && caller == r.SellerID {
		return true
	}
	if caller != 0 && caller == r.BuyerID && r.Status != StatusDeleted && r.Status != StatusBanned {
		return true
	}
	public := r.Status == StatusUnanswered || r.Status == StatusAnswered || r.Status == StatusClosedUnanswered
	return !r.DeletedFromListing && public
}

// scanCompare orders by the sorts in turn; the date's ties are broken by
// the id in the date's direction, which settles the order; without a date
// sort, the date and the id in the last sort's direction end it.
func scanCompare(a, b record, sorts []Sort) int {
	dir := func(typ string, c int) int {
		if typ == "DESC" {
			return -c
		}
		return c
	}
	byDate := func(a, b record) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return cmpInt(a.ID, b.ID)
	}
	for _, srt := range sorts {
		c := 0
		switch srt.Field {
		case SortItemID:
			c = strings.Compare(a.ItemID, b.ItemID)
		case SortSellerID:
			c = cmpInt(a.SellerID, b.SellerID)
		case SortFromID:
			c = cmpInt(a.BuyerID, b.BuyerID)
		case SortDateCreated:
			return dir(srt.Type, byDate(a, b))
		}
		if c != 0 {
			return dir(srt.Type, c)
		}
	}
	return dir(sorts[len(sorts)-1].Type, byDate(a, b))
}

// LoadForBenchmark writes n questions on the items, by the askers, in
// turn, the i-th at start plus i milliseconds, straight through put in
// transactions of batch questions: filling a store with a million
// questions through Ask would take far longer than the benchmark it is
// for. Every fifth is answered. The items must be the seller's.
func (s *Service) LoadForBenchmark(ctx context.Context, seller int64, items []string, askers []int64, n, batch int, start time.Time) error {
	q, err := s.store.Sequence(questionSequence)
	if err != nil {
		return err
	}
	for done := 0; done < n; {
		size := min(batch, n-done)
		err := s.store.Update(ctx, func(tx storage.Tx) error {
			for i := done; i < done+size; i++ {
				num, err := q.Next(ctx)
				if err != nil {
					return err
				}
				at := start.Add(time.Duration(i) * time.Millisecond)
				r := record{ID: firstQuestionID - 1 + int64(num), SellerID: seller, BuyerID: askers[i%len(askers)],
					ItemID: items[i%len(items)], SiteID: "MLA", Text: "Is it still available?", Status: StatusUnanswered,
					Created: at, Updated: at}
				if err := put(tx, nil, r); err != nil {
					return err
				}
				if i%5 == 0 {
					before := r
					r.Status, r.Answer = StatusAnswered, &answerRecord{Text: "Yes", Status: AnswerActive, Created: at}
					if err := put(tx, &before, r); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		done += size
	}
	return nil
}
