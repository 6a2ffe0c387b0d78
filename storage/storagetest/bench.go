package storagetest

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/storage"
)

// Bench runs the storage benchmarks on a backend: Get (one View per Get, over
// 10,000 keys), Set (one Update per Set), ParallelSet (single-key Updates from
// parallelWriters goroutines, each on keys of its own) and Iterate1000 (one
// View walking a prefix of 1,000 keys among 10,000, reading every value).
// open must return a new, empty store; Bench closes it.
//
// On a durable backend, ParallelSet's time per Update well below Set's shows
// that concurrent commits share their syncs; about the same shows that each
// commit is synced on its own.
func Bench(b *testing.B, open func(b *testing.B) storage.Store) {
	const keys = 10000
	value := make([]byte, 100)
	key := func(ns string, i int) []byte { return keycodec.New(ns).Int(int64(i)) }
	fill := func(b *testing.B, st storage.Store) {
		for lo := 0; lo < keys; lo += 1000 {
			err := st.Update(context.Background(), func(tx storage.Tx) error {
				for i := lo; i < lo+1000; i++ {
					ns := "other"
					if i%10 == 0 {
						ns = "walk"
					}
					if err := tx.Set(key(ns, i), value); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	ctx := context.Background()

	b.Run("Get", func(b *testing.B) {
		st := open(b)
		defer st.Close()
		fill(b, st)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			ns := "other"
			if i%10 == 0 {
				ns = "walk"
			}
			err := st.View(ctx, func(tx storage.Tx) error {
				_, err := tx.Get(key(ns, i%keys))
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})

	b.Run("Set", func(b *testing.B) {
		st := open(b)
		defer st.Close()
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			err := st.Update(ctx, func(tx storage.Tx) error {
				return tx.Set(key("set", i), value)
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})

	b.Run("ParallelSet", func(b *testing.B) {
		st := open(b)
		defer st.Close()
		b.ReportAllocs()
		// About parallelWriters goroutines, whatever GOMAXPROCS is.
		b.SetParallelism(max(1, parallelWriters/runtimeProcs()))
		var writers atomic.Int64
		// Unlike b.Loop, RunParallel leaves the timer running from the
		// start: opening the store (creating a database, for a server
		// backend) is not a write.
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			w := writers.Add(1)
			i := 0
			for pb.Next() {
				i++
				err := st.Update(ctx, func(tx storage.Tx) error {
					return tx.Set(keycodec.New("par").Int(w).Int(int64(i)), value)
				})
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "updates/s")
	})

	b.Run("Iterate1000", func(b *testing.B) {
		st := open(b)
		defer st.Close()
		fill(b, st)
		r := storage.Prefix(keycodec.New("walk"))
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			err := st.View(ctx, func(tx storage.Tx) error {
				it := tx.Iterate(r)
				defer it.Close()
				for ; it.Valid(); it.Next() {
					if _, err := it.Value(); err != nil {
						return err
					}
					n++
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			if n != keys/10 {
				b.Fatalf("walked %d keys; want %d", n, keys/10)
			}
		}
	})
}

// parallelWriters is about how many goroutines ParallelSet runs: as many as
// the clients of the write benchmark (bench/, -write).
const parallelWriters = 64

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }
