package questions

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/storage"
)

// getRecord reads question id; a missing one is the NotFound callers see.
func getRecord(tx storage.Tx, id int64) (record, error) {
	b, err := tx.Get(questionKey(id))
	if errors.Is(err, storage.ErrNotFound) {
		return record{}, errNotFound(id)
	}
	if err != nil {
		return record{}, errs.Internalf(err, "read question %d", id)
	}
	r, err := decodeRecord(b)
	if err != nil {
		return record{}, errs.Internalf(err, "decode question %d", id)
	}
	return r, nil
}

func errNotFound(id int64) error {
	return errs.NotFoundf("Question with id %d not found", id)
}

// put writes r and keeps every index and counter in step with the change
// from before (nil for a new question). It is the one place that writes a
// question, so the indexes cannot drift from the records.
func put(tx storage.Tx, before *record, r record) error {
	if before == nil {
		if err := tx.Set(sellerDateKey(r.SellerID, r.Created, r.ID), nil); err != nil {
			return err
		}
		if err := tx.Set(itemDateKey(r.ItemID, r.Created, r.ID), nil); err != nil {
			return err
		}
		if err := tx.Set(sellerItemKey(r.SellerID, r.ItemID, r.Created, r.ID), nil); err != nil {
			return err
		}
		if err := tx.Set(sellerFromKey(r.SellerID, r.BuyerID, r.Created, r.ID), nil); err != nil {
			return err
		}
		if err := tx.Set(dateKey(r.Created, r.ID), keycodec.Raw().Int(r.SellerID)); err != nil {
			return err
		}
		if err := sellerCounter(r.SellerID).AddAt(tx, 1, uint64(r.ID)); err != nil {
			return err
		}
	}
	if before == nil || before.Status != r.Status {
		if before != nil {
			if err := tx.Delete(sellerStatusKey(r.SellerID, before.Status, r.Created, r.ID)); err != nil {
				return err
			}
			if err := sellerStatusCounter(r.SellerID, before.Status).AddAt(tx, -1, uint64(r.ID)); err != nil {
				return err
			}
			if before.Status == StatusAnswered {
				if err := answeredCounter(r.BuyerID).AddAt(tx, -1, uint64(r.ID)); err != nil {
					return err
				}
			}
		}
		if err := tx.Set(sellerStatusKey(r.SellerID, r.Status, r.Created, r.ID), nil); err != nil {
			return err
		}
		if err := sellerStatusCounter(r.SellerID, r.Status).AddAt(tx, 1, uint64(r.ID)); err != nil {
			return err
		}
		if r.Status == StatusAnswered {
			if err := answeredCounter(r.BuyerID).AddAt(tx, 1, uint64(r.ID)); err != nil {
				return err
			}
		}
	}
	return tx.Set(questionKey(r.ID), encodeRecord(r))
}

func (s *Service) appendEvent(ctx context.Context, tx storage.Tx, r record, action string, now time.Time) error {
	return s.appendDrawnEvent(ctx, tx, r, action, now, 0)
}

// appendDrawnEvent appends the event of r with seq, a number the caller drew
// before its transaction (0: drawn here).
func (s *Service) appendDrawnEvent(ctx context.Context, tx storage.Tx, r record, action string, now time.Time, seq uint64) error {
	_, err := notify.Append(ctx, s.store, tx, notify.Event{Seq: seq, Topic: notify.TopicQuestions, UserID: r.SellerID,
		Resource: "/questions/" + strconv.FormatInt(r.ID, 10), Action: action, Received: now})
	return err
}
