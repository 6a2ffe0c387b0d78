package storagetest

import (
	"bytes"
	"context"
	"testing"

	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
)

func (s *suite) testSequenceRewind(t *testing.T) {
	ctx := context.Background()
	st := s.store(t)
	if _, ok := st.(storage.SequenceRewinder); !ok {
		t.Fatal("the store does not implement storage.SequenceRewinder")
	}
	a, b := sequence(t, st, "a"), sequence(t, st, "b")
	for range 5 {
		next(t, a)
	}
	for range 3 {
		next(t, b)
	}
	states, err := storage.SequenceStates(ctx, st)
	if err != nil {
		t.Fatalf("SequenceStates: %v", err)
	}
	if states["a"] != 6 || states["b"] != 4 {
		t.Fatalf("states = %v; want a:6 b:4", states)
	}
	for range 1200 {
		next(t, a)
	}
	c := sequence(t, st, "c")
	next(t, c)
	if err := storage.RewindSequences(ctx, st, states); err != nil {
		t.Fatalf("RewindSequences: %v", err)
	}
	if id := next(t, a); id != 6 {
		t.Errorf("a after rewind = %d; want 6", id)
	}
	if id := next(t, sequence(t, st, "b")); id != 4 {
		t.Errorf("b after rewind = %d; want 4", id)
	}
	if id := next(t, c); id != 1 {
		t.Errorf("c, not named, after rewind = %d; want 1", id)
	}
	again, err := storage.SequenceStates(ctx, st)
	if err != nil {
		t.Fatalf("SequenceStates: %v", err)
	}
	if again["a"] != 7 || again["b"] != 5 || again["c"] != 2 {
		t.Errorf("states after rewind and one id each = %v; want a:7 b:5 c:2", again)
	}

	if err := storage.RewindSequences(ctx, st, nil); err != nil {
		t.Fatalf("RewindSequences(nil): %v", err)
	}
	for _, name := range []string{"a", "b", "c"} {
		if id := next(t, sequence(t, st, name)); id != 1 {
			t.Errorf("%s after a rewind to nothing = %d; want 1", name, id)
		}
	}
	// A sequence named but never used before starts where it is told.
	if err := storage.RewindSequences(ctx, st, map[string]uint64{"fresh": 40}); err != nil {
		t.Fatalf("RewindSequences(fresh): %v", err)
	}
	if id := next(t, sequence(t, st, "fresh")); id != 40 {
		t.Errorf("fresh after rewind = %d; want 40", id)
	}
}

func (s *suite) testBulkCopyAndDelete(t *testing.T) {
	ctx := context.Background()
	st := s.store(t)
	const n = 1234
	key := func(ns string, i int) []byte { return keycodec.New(ns).Int(int64(i)) }
	update(t, st, func(tx storage.Tx) error {
		for i := range n {
			if err := tx.Set(key("src", i), []byte{byte(i)}); err != nil {
				return err
			}
		}
		return tx.Set(key("keep", 0), []byte("k"))
	})
	src := storage.Prefix(keycodec.New("src"))
	err := kv.CopyRange(ctx, st, src, func(k []byte) []byte {
		r := keycodec.Read(k)
		r.Str()
		i := r.Int()
		if i%2 == 1 {
			return nil
		}
		return key("dst", int(i))
	})
	if err != nil {
		t.Fatalf("CopyRange: %v", err)
	}
	got := scan(t, st, storage.Prefix(keycodec.New("dst")))
	if len(got) != n/2 {
		t.Fatalf("copied %d keys; want %d", len(got), n/2)
	}
	for j, p := range got {
		i := 2 * j
		if p.K != string(key("dst", i)) || !bytes.Equal([]byte(p.V), []byte{byte(i)}) {
			t.Fatalf("copy %d = %v; want the value of src %d", j, p, i)
		}
	}
	if err := kv.DeleteRange(ctx, st, src); err != nil {
		t.Fatalf("DeleteRange: %v", err)
	}
	if left := scan(t, st, src); len(left) != 0 {
		t.Fatalf("%d keys left after DeleteRange", len(left))
	}
	if kept := scan(t, st, storage.Prefix(keycodec.New("keep"))); len(kept) != 1 {
		t.Fatal("DeleteRange removed a key outside its range")
	}
}
