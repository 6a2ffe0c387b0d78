package storagetest

import (
	"context"
	"sync"
	"testing"

	"marketplace/storage"
)

func member(i int) []byte { return storage.NewKeyRaw().Int(int64(i)) }

func readCounter(t testing.TB, st storage.Store, c storage.Counter) int64 {
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
	c := storage.Counter(storage.NewKey("count").Str("a"))
	other := storage.Counter(storage.NewKey("count").Str("ab"))
	// A counter written before as one plain 8-byte key reads as its base.
	put(t, st, string(c), string(storage.NewKeyRaw().Uint(7)))
	want := int64(7)
	for i := range 500 {
		d := int64(1)
		if i%3 == 0 {
			d = -1
		}
		update(t, st, func(tx storage.Tx) error {
			if err := c.Add(tx, member(i%40), d); err != nil {
				return err
			}
			return other.Add(tx, member(i), 2)
		})
		want += d
		if got := readCounter(t, st, c); got != want {
			t.Fatalf("after %d adds: count %d; want %d", i+1, got, want)
		}
	}
	if got := readCounter(t, st, other); got != 1000 {
		t.Fatalf("neighbouring counter = %d; want 1000", got)
	}
	update(t, st, func(tx storage.Tx) error { return c.Compact(tx) })
	if got := readCounter(t, st, c); got != want {
		t.Fatalf("after Compact: count %d; want %d", got, want)
	}
	keys := keysOf(scan(t, st, storage.Prefix(c)))
	if len(keys) != 1 || keys[0] != string(c) {
		t.Fatalf("after Compact the counter holds keys %q; want only its base", keys)
	}
}

func (s *suite) testCounterConcurrent(t *testing.T) {
	st := s.store(t)
	c := storage.Counter(storage.NewKey("count").Str("hot"))
	const workers, each = 16, 40
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				m := member(w*each + i)
				err := st.Update(context.Background(), func(tx storage.Tx) error {
					if err := c.Add(tx, m, 1); err != nil {
						return err
					}
					// A second change of the same record folds into its
					// contribution.
					return c.Add(tx, m, 1)
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
