package kv_test

import (
	"context"
	"testing"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/memory"
)

// Changes made together count as the same changes made one by one: a shard
// changed twice keeps both, and the counters that no change names keep
// their counts.
func TestChanges_ApplyCountsAsTheChangesMadeOneByOne(t *testing.T) {
	is := is.New(t)
	st := memory.New()
	ctx := context.Background()
	sharded := kv.NewCounter(keycodec.New("cnt/a"), 8)
	single := kv.NewCounter(keycodec.New("cnt/b"), 1)
	untouched := kv.NewCounter(keycodec.New("cnt/c"), 4)
	is.NoErr(st.Update(ctx, func(tx storage.Tx) error {
		if err := untouched.Add(tx, 7); err != nil {
			return err
		}
		return sharded.AddAt(tx, 10, 3)
	}))
	is.NoErr(st.Update(ctx, func(tx storage.Tx) error {
		var cs kv.Changes
		cs.AddAt(sharded, 5, 3) // the shard written above
		cs.AddAt(sharded, -2, 3)
		cs.AddAt(sharded, 1, 4)
		cs.Add(single, 1)
		cs.Add(single, 1)
		cs.Add(single, 0) // no change
		return cs.Apply(tx)
	}))
	read := func(c kv.Counter) int64 {
		var n int64
		is.NoErr(st.View(ctx, func(tx storage.Tx) error {
			var err error
			n, err = c.Read(tx)
			return err
		}))
		return n
	}
	is.Equal(read(sharded), int64(14))
	is.Equal(read(single), int64(2))
	is.Equal(read(untouched), int64(7))
}
