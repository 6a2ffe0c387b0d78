package storagetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
)

// leaseStart is the time the lease tests pass as now.
var leaseStart = time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC)

func (s *suite) testLeaseOneHolderAtATime(t *testing.T) {
	st := s.store(t)
	const n = 8
	var wg sync.WaitGroup
	held := make([]bool, n)
	seen := make([]kv.Lease, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			seen[i], held[i], errs[i] = kv.AcquireLease(context.Background(), st, "job", fmt.Sprintf("holder-%d", i), leaseStart, time.Minute)
		})
	}
	wg.Wait()
	winner := -1
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("acquire %d: %v", i, errs[i])
		}
		if held[i] {
			if winner >= 0 {
				t.Fatalf("holders %d and %d both got the lease", winner, i)
			}
			winner = i
		}
	}
	if winner < 0 {
		t.Fatal("nobody got the lease")
	}
	for i := range n {
		if seen[i].Holder != fmt.Sprintf("holder-%d", winner) {
			t.Fatalf("acquirer %d sees holder %q; want holder-%d", i, seen[i].Holder, winner)
		}
	}
}

func (s *suite) testLeaseExpiresAndFencesItsOldHolder(t *testing.T) {
	st := s.store(t)
	ctx := context.Background()
	a, ok, err := kv.AcquireLease(ctx, st, "job", "a", leaseStart, 10*time.Second)
	if err != nil || !ok {
		t.Fatalf("a: %v, %v", ok, err)
	}
	if _, ok, err := kv.AcquireLease(ctx, st, "job", "b", leaseStart.Add(9*time.Second), 10*time.Second); err != nil || ok {
		t.Fatalf("b took a lease that had a second left: %v, %v", ok, err)
	}
	b, ok, err := kv.AcquireLease(ctx, st, "job", "b", leaseStart.Add(10*time.Second), 10*time.Second)
	if err != nil || !ok {
		t.Fatalf("b could not take the expired lease: %v, %v", ok, err)
	}
	if b.Term != a.Term+1 {
		t.Fatalf("term %d after a change of holder; want %d", b.Term, a.Term+1)
	}
	err = st.Update(ctx, func(tx storage.Tx) error { return a.Check(tx, leaseStart.Add(10*time.Second)) })
	if !errors.Is(err, kv.ErrLeaseLost) {
		t.Fatalf("the old holder's check: %v; want ErrLeaseLost", err)
	}
	if _, err := a.Renew(ctx, st, leaseStart.Add(10*time.Second), time.Minute); !errors.Is(err, kv.ErrLeaseLost) {
		t.Fatalf("the old holder's renewal: %v; want ErrLeaseLost", err)
	}
	if err := a.Release(ctx, st, leaseStart.Add(10*time.Second)); !errors.Is(err, kv.ErrLeaseLost) {
		t.Fatalf("the old holder's release: %v; want ErrLeaseLost", err)
	}
	if err := st.View(ctx, func(tx storage.Tx) error { return b.Check(tx, leaseStart.Add(11*time.Second)) }); err != nil {
		t.Fatalf("the new holder's check: %v", err)
	}
}

func (s *suite) testLeaseRenewAndRelease(t *testing.T) {
	st := s.store(t)
	ctx := context.Background()
	a, _, err := kv.AcquireLease(ctx, st, "job", "a", leaseStart, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	again, ok, err := kv.AcquireLease(ctx, st, "job", "a", leaseStart.Add(5*time.Second), 10*time.Second)
	if err != nil || !ok || again.Term != a.Term || !again.Expires.Equal(leaseStart.Add(15*time.Second)) {
		t.Fatalf("the holder acquiring again: %+v, %v, %v; want the same term until %s", again, ok, err, leaseStart.Add(15*time.Second))
	}
	renewed, err := again.Renew(ctx, st, leaseStart.Add(14*time.Second), 10*time.Second)
	if err != nil || !renewed.Expires.Equal(leaseStart.Add(24*time.Second)) {
		t.Fatalf("renewal: %+v, %v", renewed, err)
	}
	if _, ok, _ := kv.AcquireLease(ctx, st, "job", "b", leaseStart.Add(20*time.Second), 10*time.Second); ok {
		t.Fatal("b took a renewed lease before it expired")
	}
	if err := renewed.Release(ctx, st, leaseStart.Add(20*time.Second)); err != nil {
		t.Fatalf("release: %v", err)
	}
	b, ok, err := kv.AcquireLease(ctx, st, "job", "b", leaseStart.Add(20*time.Second), 10*time.Second)
	if err != nil || !ok || b.Term != a.Term+1 {
		t.Fatalf("b after the release: %+v, %v, %v; want it in term %d", b, ok, err, a.Term+1)
	}
}
