package storagetest

import (
	"context"
	"sync"
	"testing"

	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
)

func readCounter(t testing.TB, st storage.Store, c kv.Counter) int64 {
	t.Helper()
	var n int64
	view(t, st, func(tx storage.Tx) error {
		var err error
		n, err = c.Read(tx)
		return err
	})
	return n
}

func (s *suite) testCounter(t *testing.T) {
	st := s.store(t)
	prefix := keycodec.New("count").Str("a")
	c := kv.NewCounter(prefix, 16)
	other := kv.NewCounter(keycodec.New("count").Str("ab"), 16)
	single := kv.NewCounter(keycodec.New("count").Str("b"), 1)
	// A counter written before as one plain 8-byte key reads as its first
	// shard.
	put(t, st, string(prefix), string(keycodec.Raw().Uint(7)))
	want := int64(7)
	for i := range 300 {
		d := int64(1)
		if i%3 == 0 {
			d = -1
		}
		update(t, st, func(tx storage.Tx) error {
			if err := c.Add(tx, d); err != nil {
				return err
			}
			if err := single.Add(tx, d); err != nil {
				return err
			}
			return other.Add(tx, 2)
		})
		want += d
		if got := readCounter(t, st, c); got != want {
			t.Fatalf("after %d adds: count %d; want %d", i+1, got, want)
		}
	}
	if got := readCounter(t, st, other); got != 600 {
		t.Fatalf("neighbouring counter = %d; want 600", got)
	}
	if got := readCounter(t, st, single); got != want-7 {
		t.Fatalf("one-shard counter = %d; want %d", got, want-7)
	}
	// The shards are a fixed set of keys, whatever the number of changes.
	if keys := keysOf(scan(t, st, storage.Prefix(prefix))); len(keys) > 16 {
		t.Fatalf("a 16-shard counter holds %d keys", len(keys))
	}
}

func (s *suite) testCounterConcurrent(t *testing.T) {
	st := s.store(t)
	c := kv.NewCounter(keycodec.New("count").Str("hot"), 16)
	const workers, each = 16, 40
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				err := st.Update(context.Background(), func(tx storage.Tx) error {
					if err := c.Add(tx, 1); err != nil {
						return err
					}
					return c.Add(tx, 1)
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if got := readCounter(t, st, c); got != 2*workers*each {
		t.Fatalf("count = %d; want %d", got, 2*workers*each)
	}
}
