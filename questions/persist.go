package questions

import (
	"bytes"
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

// put writes r and keeps every index and tally in step with the change
// from before (nil for a new question). It is the one place that writes a
// question, so the indexes cannot drift from the records.
func put(tx storage.Tx, before *record, r record) error {
	if before == nil {
		if err := tx.Set(dateKey(r), keycodec.Raw().Int(r.SellerID)); err != nil {
			return err
		}
	} else if err := storage.Prefetch(tx, writtenKeys(r)...); err != nil {
		// A change of status reads its tallies, lists and count in one
		// round trip where the store can, before its first write (an
		// ask prefetches them with its blacklist entry).
		return err
	}
	for _, ix := range indexes {
		k := ix.key(r)
		if before != nil {
			old := ix.key(*before)
			if bytes.Equal(old, k) {
				continue
			}
			if err := tx.Delete(old); err != nil {
				return err
			}
		}
		if err := tx.Set(k, nil); err != nil {
			return err
		}
	}
	// The asker tallies whose shard a change of status left without a
	// question of before's class: the asker leaves the class's list only
	// if no other shard holds one.
	var emptied []tallyFamily
	for _, f := range tallies {
		from := byte(noClass)
		if before != nil {
			if from = f.classOf(*before); from == f.classOf(r) {
				continue
			}
		}
		shardEmptied, filled, err := moveInTally(tx, f.keyOf(r), r.ID, from, f.classOf(r))
		if err != nil {
			return err
		}
		if list, ok := f.askers(); ok {
			if shardEmptied {
				emptied = append(emptied, f)
			}
			if err := list.follow(tx, before, r, false, filled); err != nil {
				return err
			}
		}
	}
	if len(emptied) > 0 {
		// Both families' shards in one round trip where the store can.
		var keys [][]byte
		for _, f := range emptied {
			keys = append(keys, f.shardKeys(f.partitionOf(*before), before.BuyerID)...)
		}
		if err := storage.Prefetch(tx, keys...); err != nil {
			return err
		}
		for _, f := range emptied {
			held, err := anyShardHolds(tx, f.shardKeys(f.partitionOf(*before), before.BuyerID), f.classOf(*before))
			if err != nil {
				return err
			}
			if list, _ := f.askers(); !held {
				if err := list.follow(tx, before, r, true, false); err != nil {
					return err
				}
			}
		}
	}
	if wasAnswered, isAnswered := before != nil && before.Status == StatusAnswered, r.Status == StatusAnswered; wasAnswered != isAnswered {
		delta := int64(1)
		if wasAnswered {
			delta = -1
		}
		if err := answeredCounter(r.BuyerID).AddAt(tx, delta, uint64(r.ID)); err != nil {
			return err
		}
	}
	return tx.Set(questionKey(r.ID), encodeRecord(r))
}

// writtenKeys are the keys put reads for r: its tallies, the asker lists
// it may read, and its asker's answered count, for storage.Prefetch.
func writtenKeys(r record) [][]byte {
	keys := [][]byte{answeredCounter(r.BuyerID).ShardKey(0)}
	for _, f := range tallies {
		keys = append(keys, f.keyOf(r))
		if list, ok := f.askers(); ok {
			keys = append(keys, list.key(r, list.classOf(r)))
		}
	}
	return keys
}

func (s *Service) appendEvent(ctx context.Context, tx storage.Tx, r record, action string, now time.Time) error {
	return s.appendDrawnEvent(ctx, tx, r, action, now, 0)
}

// eventNumber draws the number of the event that a change will append,
// with the transaction's next read where the store can
// (storage.DrawLater): a function calls it before its first read.
func (s *Service) eventNumber(ctx context.Context, tx storage.Tx) func() (uint64, error) {
	drawn := storage.DrawLater(ctx, s.store, tx, notify.OutboxSequence)
	return func() (uint64, error) {
		v, err := drawn()
		if err != nil {
			return 0, err
		}
		return v[0], nil
	}
}

// appendNumberedEvent appends the event of r with the number that
// eventNumber drew.
func (s *Service) appendNumberedEvent(ctx context.Context, tx storage.Tx, r record, action string, now time.Time, number func() (uint64, error)) error {
	seq, err := number()
	if err != nil {
		return err
	}
	return s.appendDrawnEvent(ctx, tx, r, action, now, seq)
}

// appendDrawnEvent appends the event of r with seq, a number the caller drew
// (0: drawn here).
func (s *Service) appendDrawnEvent(ctx context.Context, tx storage.Tx, r record, action string, now time.Time, seq uint64) error {
	_, err := notify.Append(ctx, s.store, tx, notify.Event{Seq: seq, Topic: notify.TopicQuestions, UserID: r.SellerID,
		Resource: "/questions/" + strconv.FormatInt(r.ID, 10), Action: action, Received: now})
	return err
}
