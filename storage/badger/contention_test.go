package badger_test

import (
	"context"
	"sync"
	"testing"

	"marketplace/storage"
)

func TestUpdate_HotKeyUnderHeavyContentionIsNeverReportedAsConflict(t *testing.T) {
	st := open(t, t.TempDir())
	const workers, rounds = 128, 4
	key := []byte("hot")
	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				errs <- st.Update(context.Background(), func(tx storage.Tx) error {
					_, err := storage.NextSeq(tx, key, 1)
					return err
				})
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Update under contention: %v", err)
		}
	}
	var got uint64
	err := st.View(context.Background(), func(tx storage.Tx) error {
		v, err := tx.Get(key)
		got = storage.ReadKey(v).Uint()
		return err
	})
	if err != nil || got != workers*rounds {
		t.Fatalf("counter = %d, %v; want %d", got, err, workers*rounds)
	}
}
