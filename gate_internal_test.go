package marketplace

import (
	"context"
	"testing"

	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/memory"
)

// BenchmarkGatedView compares a View of one Get on the memory store with
// the same View as the services make it, through the engine's gate.
//
//	go test -run '^$' -bench BenchmarkGatedView -benchtime 1000000x .
func BenchmarkGatedView(b *testing.B) {
	ctx := context.Background()
	st := memory.New()
	key := []byte("bench/key")
	_ = st.Update(ctx, func(tx storage.Tx) error { return tx.Set(key, []byte("value")) })
	var m Marketplace
	for _, c := range []struct {
		name string
		st   storage.Store
	}{{"raw", st}, {"gated", m.gateServices(st)}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					_ = c.st.View(ctx, func(tx storage.Tx) error { _, err := tx.Get(key); return err })
				}
			})
		})
	}
}
