package storagetest

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/marketplace/marketplace/storage"
)

func sequence(t testing.TB, st storage.Store, name string) storage.Sequence {
	t.Helper()
	q, err := st.Sequence(name)
	if err != nil {
		t.Fatalf("Sequence(%q): %v", name, err)
	}
	return q
}

func next(t testing.TB, q storage.Sequence) uint64 {
	t.Helper()
	id, err := q.Next(context.Background())
	if err != nil {
		t.Fatalf("Next: %v", err)
	}
	return id
}

func (s *suite) testSequenceStartsAtOneAndIncreases(t *testing.T) {
	st := s.store(t)
	q := sequence(t, st, "a")
	if id := next(t, q); id != 1 {
		t.Fatalf("first id = %d; want 1", id)
	}
	last := uint64(1)
	for range 2500 {
		id := next(t, q)
		if id <= last {
			t.Fatalf("id %d after %d: ids of one process must increase", id, last)
		}
		last = id
	}
}

func (s *suite) testSequencesAreIndependent(t *testing.T) {
	st := s.store(t)
	a, b := sequence(t, st, "a"), sequence(t, st, "b")
	next(t, a)
	next(t, a)
	if id := next(t, b); id != 1 {
		t.Fatalf("first id of b = %d after two of a; want 1", id)
	}
	if again := sequence(t, st, "a"); next(t, again) <= 2 {
		t.Fatal("the same name gave a sequence that repeats ids")
	}
}

func (s *suite) testSequenceIsUniqueUnderConcurrency(t *testing.T) {
	st := s.store(t)
	const workers, each = 32, 300
	ids := make(chan uint64, workers*each)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each goroutine asks for the sequence itself, as services do.
			q, err := st.Sequence("shared")
			if err != nil {
				t.Error(err)
				return
			}
			for range each {
				id, err := q.Next(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				ids <- id
			}
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[uint64]bool{}
	for id := range ids {
		if seen[id] {
			t.Fatalf("id %d handed out twice", id)
		}
		seen[id] = true
	}
	if len(seen) != workers*each {
		t.Fatalf("%d ids; want %d", len(seen), workers*each)
	}
}

func (s *suite) testSequenceAdvance(t *testing.T) {
	st := s.store(t)
	q := sequence(t, st, "a")
	next(t, q)
	if err := q.Advance(context.Background(), 5000); err != nil {
		t.Fatalf("Advance: %v", err)
	}
	if id := next(t, q); id <= 5000 {
		t.Fatalf("id after Advance(5000) = %d; want more than 5000", id)
	}
	last := next(t, q)
	if err := q.Advance(context.Background(), 10); err != nil {
		t.Fatalf("Advance below: %v", err)
	}
	if id := next(t, q); id <= last {
		t.Fatalf("Advance below the sequence moved it back: %d after %d", id, last)
	}
}

func (s *suite) testSequenceAfterClose(t *testing.T) {
	st := s.open(t)
	q := sequence(t, st, "a")
	next(t, q)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	// A closed store hands out nothing, even from a block it leased before.
	if _, err := st.Sequence("b"); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("Sequence after Close = %v; want ErrClosed", err)
	}
	if _, err := q.Next(context.Background()); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("Next after Close = %v; want ErrClosed", err)
	}
}

func (s *suite) testSequenceSurvivesReopen(t *testing.T) {
	st := s.open(t)
	q := sequence(t, st, "a")
	var last uint64
	for range 1500 {
		last = next(t, q)
	}
	if err := q.Advance(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st2 := s.opts.Reopen(t, st)
	t.Cleanup(func() { _ = st2.Close() })
	if id := next(t, sequence(t, st2, "a")); id <= last {
		t.Fatalf("id after reopen = %d; the last one before was %d", id, last)
	} else if id != last+1 {
		// A clean close gives the leased rest back.
		t.Errorf("id after a clean reopen = %d; want %d (no gap)", id, last+1)
	}
}
