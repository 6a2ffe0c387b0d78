package badger_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/badger"
	"github.com/marketplace/marketplace/storage/storagetest"
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
					_, err := storagetest.Increment(tx, key)
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
		got = keycodec.Read(v).Uint()
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
	count := kv.NewCounter(keycodec.New("count").Str("all"), kv.MaxCounterShards)
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
				errs <- st.Update(context.Background(), func(tx storage.Tx) error {
					if err := tx.Set(keycodec.New("record").Uint(id), []byte("r")); err != nil {
						return err
					}
					return count.Add(tx, 1)
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
	if c := st.Conflicts(); c > workers*rounds/50 {
		t.Fatalf("%d of %d Updates were run again after a conflict; want near zero", c, workers*rounds)
	}
	t.Logf("%d conflicts in %d Updates", st.Conflicts(), workers*rounds)
}

// TestSequence_IDsDrawnInsideContendedUpdatesNeverDeadlock draws ids inside
// Updates of one hot key, so that some Updates wait to run alone while
// others, holding the store shared, lease new blocks (two ids at a time
// here, so leases are frequent). A lease that waited for the store would
// wait forever.
func TestSequence_IDsDrawnInsideContendedUpdatesNeverDeadlock(t *testing.T) {
	st, err := badger.Open(t.TempDir(), badger.Options{SequenceLease: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	const workers, rounds = 64, 10
	done := make(chan error, workers*rounds)
	for range workers {
		go func() {
			for range rounds {
				id := kv.NewOnceID(st, "hot")
				done <- st.Update(context.Background(), func(tx storage.Tx) error {
					n, err := id.Get(context.Background())
					if err != nil {
						return err
					}
					if err := tx.Set(keycodec.New("record").Uint(n), nil); err != nil {
						return err
					}
					_, err = storagetest.Increment(tx, []byte("hot"))
					return err
				})
			}
		}()
	}
	timeout := time.After(time.Minute)
	for range workers * rounds {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-timeout:
			// Not t.Fatal: closing a deadlocked store would hang too. The
			// panic ends the test binary with every goroutine's stack.
			panic("Updates drawing ids did not end within a minute: deadlock")
		}
	}
}
