package kv

import (
	"context"

	"github.com/marketplace/marketplace/storage"
)

// Bulk copies and deletes move more keys than one transaction may hold
// (storage.ErrTooBig), so they run in batches of at most bulkKeys keys and
// about bulkBytes bytes, far below every backend's limit.
const (
	bulkKeys  = 500
	bulkBytes = 1 << 20
)

// DeleteRange deletes every key of r, in as many Updates as it takes. A
// reader may see the range half deleted: the caller keeps readers away when
// that matters.
func DeleteRange(ctx context.Context, st storage.Store, r storage.Range) error {
	r.Reverse = false
	for {
		var keys [][]byte
		err := st.View(ctx, func(tx storage.Tx) error {
			keys = keys[:0]
			it := tx.Iterate(r)
			defer it.Close()
			for ; it.Valid() && len(keys) < bulkKeys; it.Next() {
				keys = append(keys, append([]byte(nil), it.Key()...))
			}
			return nil
		})
		if err != nil || len(keys) == 0 {
			return err
		}
		err = st.Update(ctx, func(tx storage.Tx) error {
			for _, k := range keys {
				if err := tx.Delete(k); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		// Keys below the last one deleted are gone: start after it.
		r.Start = append(keys[len(keys)-1], 0)
	}
}

// CopyRange writes the value of every key of r at the key that to returns
// for it (none when to returns nil), in as many Views and Updates as it
// takes. The copy is a consistent one only when nothing writes r meanwhile.
func CopyRange(ctx context.Context, st storage.Store, r storage.Range, to func(key []byte) []byte) error {
	r.Reverse = false
	type kv struct{ k, v []byte }
	for {
		var batch []kv
		var last []byte
		err := st.View(ctx, func(tx storage.Tx) error {
			batch, last = batch[:0], nil
			size := 0
			it := tx.Iterate(r)
			defer it.Close()
			for ; it.Valid() && len(batch) < bulkKeys && size < bulkBytes; it.Next() {
				last = append([]byte(nil), it.Key()...)
				dst := to(last)
				if dst == nil {
					continue
				}
				v, err := it.Value()
				if err != nil {
					return err
				}
				batch = append(batch, kv{dst, v})
				size += len(dst) + len(v)
			}
			return nil
		})
		if err != nil || last == nil {
			return err
		}
		err = st.Update(ctx, func(tx storage.Tx) error {
			for _, e := range batch {
				if err := tx.Set(e.k, e.v); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		r.Start = append(last, 0)
	}
}
