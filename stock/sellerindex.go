package stock

import (
	"hash/fnv"
	"strconv"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/storage"
)

// indexSeller moves the item's entries of its seller's lists (keys.go: all
// the seller's items, and those of its status) and their counts from
// before (zero for a new item) to after. A seller's item never changes
// seller, and is never deleted.
func indexSeller(tx storage.Tx, before, after Item) error {
	spread := itemSpread(after)
	if before.ID == "" {
		if err := tx.Set(sellerItemKey(after.SellerID, after.ID), nil); err != nil {
			return err
		}
		if err := sellerCounter(after.SellerID, "").AddAt(tx, 1, spread); err != nil {
			return err
		}
	} else {
		if before.Status == after.Status {
			return nil
		}
		if err := tx.Delete(sellerStatusKey(before.SellerID, before.Status, before.ID)); err != nil {
			return err
		}
		if err := sellerCounter(before.SellerID, before.Status).AddAt(tx, -1, spread); err != nil {
			return err
		}
	}
	if err := tx.Set(sellerStatusKey(after.SellerID, after.Status, after.ID), nil); err != nil {
		return err
	}
	return sellerCounter(after.SellerID, after.Status).AddAt(tx, 1, spread)
}

// itemSpread picks the item's shard of its seller's counts: its number,
// drawn from the items' sequence, so that consecutive publications change
// different shards and every change of one item the same one.
func itemSpread(it Item) uint64 {
	if len(it.ID) > len(it.SiteID) {
		if n, err := strconv.ParseUint(it.ID[len(it.SiteID):], 10, 64); err == nil {
			return n
		}
	}
	h := fnv.New64a()
	h.Write([]byte(it.ID))
	return h.Sum64()
}

// sellerPage reads the seller's items of status ("" for all) as a total,
// from the list's count, and the ids of the window offset, limit, from the
// list's keys up to the window's end: at most offset+limit keys, whatever
// the number of the seller's items.
func sellerPage(tx storage.Tx, sellerID int64, status string, offset, limit int) ([]string, int, error) {
	c := sellerCounter(sellerID, status)
	shards := make([][]byte, sellerCounterShards)
	for i := range shards {
		shards[i] = c.ShardKey(uint64(i))
	}
	if err := storage.Prefetch(tx, shards...); err != nil {
		return nil, 0, err
	}
	n, err := c.Read(tx)
	if err != nil {
		return nil, 0, err
	}
	total := int(n)
	ids := []string{}
	if limit == 0 || offset >= total {
		return ids, total, nil
	}
	prefix := sellerItemsPrefix(sellerID)
	if status != "" {
		prefix = sellerStatusPrefix(sellerID, status)
	}
	it := tx.Iterate(storage.Prefix(prefix))
	defer it.Close()
	for seen := 0; len(ids) < limit && it.Valid(); it.Next() {
		if seen >= offset {
			r := keycodec.Read(it.Key()[len(prefix):])
			id := r.Str()
			if err := r.Err(); err != nil {
				return nil, 0, errs.Internalf(err, "seller %d item key", sellerID)
			}
			ids = append(ids, id)
		}
		seen++
	}
	return ids, total, nil
}
