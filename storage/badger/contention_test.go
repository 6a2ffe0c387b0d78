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

func TestUpdate_WritersOfDifferentRecordsSharingACounterAndASequenceDoNotConflict(t *testing.T) {
	st := open(t, t.TempDir())
	const workers, rounds = 64, 20
	ids, err := st.Sequence("records")
	if err != nil {
		t.Fatal(err)
	}
	count := storage.Counter(storage.NewKey("count").Str("all"))
	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				id, err := ids.Next(context.Background())
				if err != nil {
					errs <- err
					return
				}
				member := storage.NewKeyRaw().Uint(id)
				errs <- st.Update(context.Background(), func(tx storage.Tx) error {
					if err := tx.Set(storage.NewKey("record").Uint(id), []byte("r")); err != nil {
						return err
					}
					return count.Add(tx, member, 1)
				})
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var n int64
	if err := st.View(context.Background(), func(tx storage.Tx) error {
		var err error
		n, err = count.Read(tx)
		return err
	}); err != nil || n != workers*rounds {
		t.Fatalf("count = %d, %v; want %d", n, err, workers*rounds)
	}
	// Only compactions (about one write in 64) may meet each other.
	if c := st.Conflicts(); c > workers*rounds/50 {
		t.Fatalf("%d of %d Updates were run again after a conflict; want near zero", c, workers*rounds)
	}
	t.Logf("%d conflicts in %d Updates", st.Conflicts(), workers*rounds)
}
