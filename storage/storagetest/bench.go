package storagetest

import (
	"context"
	"testing"

	"marketplace/storage"
)

// Bench runs the storage benchmarks on a backend: Get (one View per Get, over
// 10,000 keys), Set (one Update per Set) and Iterate1000 (one View walking a
// prefix of 1,000 keys among 10,000, reading every value). open must return a
// new, empty store; Bench closes it.
func Bench(b *testing.B, open func(b *testing.B) storage.Store) {
	const keys = 10000
	value := make([]byte, 100)
	key := func(ns string, i int) []byte { return storage.NewKey(ns).Int(int64(i)) }
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

	b.Run("Iterate1000", func(b *testing.B) {
		st := open(b)
		defer st.Close()
		fill(b, st)
		r := storage.Prefix(storage.NewKey("walk"))
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
