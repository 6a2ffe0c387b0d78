package httpapi

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"
)

type ctxKey struct{}

func TestLazyDeadline_EndsWhenContextWithTimeoutWould(t *testing.T) {
	parent := context.WithValue(context.Background(), ctxKey{}, "v")
	ctx := withLazyDeadline(parent, 30*time.Millisecond)
	defer ctx.stop()
	if ctx.Err() != nil || ctx.Value(ctxKey{}) != "v" {
		t.Fatalf("a fresh bound: err %v, value %v", ctx.Err(), ctx.Value(ctxKey{}))
	}
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > 30*time.Millisecond {
		t.Fatalf("deadline %v, %v", d, ok)
	}
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done never closed after the deadline")
	}
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) || ctx.Value(ctxKey{}) != "v" {
		t.Fatalf("after the deadline: err %v, value %v", ctx.Err(), ctx.Value(ctxKey{}))
	}
}

func TestLazyDeadline_ErrSeesThePassedDeadlineWithoutAWaiter(t *testing.T) {
	ctx := withLazyDeadline(context.Background(), time.Millisecond)
	defer ctx.stop()
	time.Sleep(5 * time.Millisecond)
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("err %v; want DeadlineExceeded", ctx.Err())
	}
	if ctx.timed.Load() != nil {
		t.Fatal("Err made a timer")
	}
}

func TestLazyDeadline_TheParentsCancellationAndDeadlineComeThrough(t *testing.T) {
	parent, cancel := context.WithCancel(context.Background())
	ctx := withLazyDeadline(parent, time.Hour)
	defer ctx.stop()
	cancel()
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("err %v; want Canceled", ctx.Err())
	}
	<-ctx.Done()
	soon, cancelSoon := context.WithTimeout(context.Background(), time.Minute)
	defer cancelSoon()
	ctx2 := withLazyDeadline(soon, time.Hour)
	defer ctx2.stop()
	if d, _ := ctx2.Deadline(); time.Until(d) > time.Minute {
		t.Fatalf("deadline %v; want the parent's, sooner", d)
	}
}

func TestLazyDeadline_StopEndsWaitersBeforeAndAfter(t *testing.T) {
	ctx := withLazyDeadline(context.Background(), time.Hour)
	before := ctx.Done()
	ctx.stop()
	<-before
	parent := context.WithValue(context.Background(), ctxKey{}, "v")
	ctx2 := withLazyDeadline(parent, time.Hour)
	ctx2.stop()
	<-ctx2.Done()
	if !errors.Is(ctx2.Err(), context.Canceled) || ctx2.Value(ctxKey{}) != "v" {
		t.Fatalf("after stop: err %v, value %v; want Canceled and the parent's value", ctx2.Err(), ctx2.Value(ctxKey{}))
	}
	ctx2.stop()
}

func TestLazyDeadline_ADerivedContextNeedsNoGoroutine(t *testing.T) {
	ctx := withLazyDeadline(context.Background(), time.Hour)
	defer ctx.stop()
	ctx.Done()
	n := runtime.NumGoroutine()
	var cancels []context.CancelFunc
	for range 100 {
		_, cancel := context.WithCancel(ctx)
		cancels = append(cancels, cancel)
	}
	if grew := runtime.NumGoroutine() - n; grew > 10 {
		t.Errorf("100 derived contexts started %d goroutines", grew)
	}
	for _, c := range cancels {
		c()
	}
}

// BenchmarkRequestDeadline: a request's bound as a read from a local store
// meets it (one Err, no wait), with context.WithTimeout and lazily, from
// parallel goroutines.
//
//	go test -run '^$' -bench BenchmarkRequestDeadline ./httpapi
func BenchmarkRequestDeadline(b *testing.B) {
	parent := context.Background()
	b.Run("WithTimeout", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				ctx, cancel := context.WithTimeout(parent, 30*time.Second)
				_ = ctx.Err()
				cancel()
			}
		})
	})
	b.Run("lazy", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				ctx := withLazyDeadline(parent, 30*time.Second)
				_ = ctx.Err()
				ctx.stop()
			}
		})
	})
}
