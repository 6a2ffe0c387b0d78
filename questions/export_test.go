package questions

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/marketplace/marketplace/notify"
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

// Asked is one question of a store that WriteAsked fills: asked by Buyer
// on Item (an active item of Seller, on Site) at At, as Ask writes it; then
// answered with Answer at Answered, or deleted by the seller at Deleted,
// where those are set, as Answer and Delete write it.
type Asked struct {
	Seller   int64
	Site     string
	Item     string
	Buyer    int64
	Text     string
	At       time.Time
	Answer   string
	Answered time.Time
	Deleted  time.Time
}

// WriteAsked writes the questions through put and the events' append, the
// writers Ask, Answer and Delete use, in transactions of batch questions
// whose numbers are drawn beforehand, many at once: a store of a million
// questions filled through Ask would take far longer than the benchmark it
// is for. What it writes is what those calls, one after the other in the
// order given, write (TestWriteAsked_WritesWhatAskAnswerAndDeleteWrite),
// but for the random ids of the events. It returns the questions' ids.
func (s *Service) WriteAsked(ctx context.Context, asked []Asked, batch int) ([]int64, error) {
	qseq, err := s.store.Sequence(questionSequence)
	if err != nil {
		return nil, err
	}
	eseq, err := s.store.Sequence(notify.OutboxSequence)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, 0, len(asked))
	for done := 0; done < len(asked); {
		part := asked[done:min(done+batch, len(asked))]
		events := 0
		for _, a := range part {
			events++
			if !a.Answered.IsZero() {
				events++
			}
			if !a.Deleted.IsZero() {
				events++
			}
		}
		nums, err := drawMany(ctx, qseq, len(part))
		if err != nil {
			return nil, err
		}
		seqs, err := drawMany(ctx, eseq, events)
		if err != nil {
			return nil, err
		}
		err = s.store.Update(ctx, func(tx storage.Tx) error {
			recs := make([]record, len(part))
			var keys [][]byte
			for i, a := range part {
				recs[i] = record{ID: firstQuestionID - 1 + int64(nums[i]), SellerID: a.Seller, BuyerID: a.Buyer,
					ItemID: a.Item, SiteID: a.Site, Text: a.Text, Status: StatusUnanswered, Created: a.At, Updated: a.At}
				keys = append(keys, writtenKeys(recs[i])...)
			}
			if err := storage.Prefetch(tx, keys...); err != nil {
				return err
			}
			seq := seqs
			next := func() uint64 { n := seq[0]; seq = seq[1:]; return n }
			for i, a := range part {
				r := recs[i]
				if err := put(tx, nil, r); err != nil {
					return err
				}
				if err := s.appendDrawnEvent(ctx, tx, r, ActionCreated, a.At, next()); err != nil {
					return err
				}
				if !a.Answered.IsZero() {
					before := r
					r.Status, r.Updated = StatusAnswered, a.Answered
					r.Answer = &answerRecord{Text: a.Answer, Status: AnswerActive, Created: a.Answered}
					if err := put(tx, &before, r); err != nil {
						return err
					}
					if err := s.appendDrawnEvent(ctx, tx, r, ActionAnswered, a.Answered, next()); err != nil {
						return err
					}
				}
				if !a.Deleted.IsZero() {
					before := r
					r.Status, r.Updated = StatusDeleted, a.Deleted
					if err := put(tx, &before, r); err != nil {
						return err
					}
					if err := s.appendDrawnEvent(ctx, tx, r, ActionDeleted, a.Deleted, next()); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		for _, n := range nums {
			ids = append(ids, firstQuestionID-1+int64(n))
		}
		done += len(part)
	}
	return ids, nil
}

// drawMany draws n numbers of seq from many goroutines at once, which a
// sequence that draws in round trips (PostgreSQL) serves several to a
// trip, and returns them in increasing order: the numbers n calls one
// after the other would have drawn.
func drawMany(ctx context.Context, seq storage.Sequence, n int) ([]uint64, error) {
	out := make([]uint64, n)
	var wg sync.WaitGroup
	errc := make(chan error, 1)
	const drawers = 64
	for w := range drawers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += drawers {
				v, err := seq.Next(ctx)
				if err != nil {
					select {
					case errc <- err:
					default:
					}
					return
				}
				out[i] = v
			}
		}()
	}
	wg.Wait()
	select {
	case err := <-errc:
		return nil, err
	default:
	}
	slices.Sort(out)
	return out, nil
}
