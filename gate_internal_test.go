package marketplace

import (
	"context"
	"testing"
	"time"

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

// lockInBackground starts a replacement on g and returns once it waits for
// the gate to empty; the channel is closed when it holds the gate.
func lockInBackground(t *testing.T, g *gate) (held chan struct{}) {
	t.Helper()
	held = make(chan struct{})
	go func() {
		g.lock(context.Background())
		close(held)
	}()
	for g.state.Load() >= 0 {
		time.Sleep(time.Millisecond)
	}
	return held
}

func TestGate_EntriesNestedInAHolderPassAWaitingReplacementOthersWait(t *testing.T) {
	ctx := context.Background()
	var g gate
	g.enterHolder()
	held := lockInBackground(t, &g)

	// A holder's own transaction, and an id drawn inside it, get in: the
	// replacement waits for the holder, which waits for them.
	counted, err := g.enterTx(ctx)
	if err != nil || !counted {
		t.Fatalf("transaction in a holder: %v, %v", counted, err)
	}
	if counted, err := g.enterDraw(ctx); err != nil || !counted {
		t.Fatalf("draw in a transaction: %v, %v", counted, err)
	}
	g.leave(txUnit)
	g.leave(txUnit)

	// A new holder waits for the replacement.
	entered := make(chan struct{})
	go func() {
		g.enterHolder()
		close(entered)
	}()
	g.leaveHolder()
	<-held
	// Alone now: a transaction with no holder inside waits (until its
	// context ends), and the replacement's own passes uncounted.
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := g.enterTx(short); err == nil {
		t.Fatal("a transaction got in while the replacement held the gate")
	}
	if counted, err := g.enterTx(context.WithValue(ctx, exclusiveKey{}, &g)); err != nil || counted {
		t.Fatalf("the replacement's own transaction: %v, %v", counted, err)
	}
	select {
	case <-entered:
		t.Fatal("a holder got in while the replacement held the gate")
	default:
	}
	g.unlock()
	<-entered
	g.leaveHolder()
	if v := g.state.Load(); v != 0 {
		t.Fatalf("state after everything left: %d", v)
	}
}
