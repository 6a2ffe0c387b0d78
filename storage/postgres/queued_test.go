package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/marketplace/marketplace/internal/pgtest"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/postgres"
)

// queuedRoundTrips opens a store behind the counting proxy holding 100 keys under
// each of the prefixes a/ and b/, and returns the round trips of one
// View of fn (run once before, so that pgx has prepared its statements).
func queuedRoundTrips(t *testing.T, fn func(tx storage.Tx) error) uint64 {
	t.Helper()
	proxy, url := throughProxy(t, pgtest.NewDatabase(t))
	st := openWith(t, url, postgres.Options{ReadConns: 1, ViewLinger: time.Hour})
	mustUpdate(t, st, func(tx storage.Tx) error {
		for i := range 100 {
			for _, p := range []string{"a", "b"} {
				if err := tx.Set(fmt.Appendf(nil, "%s/%03d", p, i), []byte("v")); err != nil {
					return err
				}
			}
		}
		return nil
	})
	var n uint64
	for range 2 {
		viewOne(t, st, "warm") // the parked ROLLBACK goes with this one
		before := proxy.RoundTrips()
		if err := st.View(context.Background(), fn); err != nil {
			t.Fatal(err)
		}
		n = proxy.RoundTrips() - before
	}
	return n
}

func walk(tx storage.Tx, r storage.Range) (int, error) {
	it := tx.Iterate(r)
	defer it.Close()
	n := 0
	for ; it.Valid(); it.Next() {
		n++
	}
	return n, nil
}

func TestQueuedReads_APrefetchGoesWithTheNextGet(t *testing.T) {
	n := queuedRoundTrips(t, func(tx storage.Tx) error {
		if err := storage.Prefetch(tx, []byte("a/001"), []byte("a/002"), []byte("b/missing")); err != nil {
			return err
		}
		for _, k := range []string{"b/050", "a/001", "a/002"} {
			if _, err := tx.Get([]byte(k)); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
		}
		return nil
	})
	if n != 1 {
		t.Fatalf("a prefetch of 3 keys, then a Get of another and of the prefetched: %d round trips; want 1", n)
	}
}

func TestQueuedReads_RangesOpenedTogetherAndAPrefetchShareTheFirstRoundTrip(t *testing.T) {
	n := queuedRoundTrips(t, func(tx storage.Tx) error {
		if err := storage.Prefetch(tx, []byte("a/010")); err != nil {
			return err
		}
		ia := tx.Iterate(storage.Range{Start: []byte("a/"), End: []byte("a0"), Expect: 10})
		defer ia.Close()
		ib := tx.Iterate(storage.Range{Start: []byte("b/"), End: []byte("b0"), Reverse: true, Expect: 10})
		defer ib.Close()
		for range 10 {
			if !ia.Valid() || !ib.Valid() {
				return fmt.Errorf("a range ended early")
			}
			ia.Next()
			ib.Next()
		}
		_, err := tx.Get([]byte("a/010"))
		return err
	})
	if n != 1 {
		t.Fatalf("a prefetch and the first 10 keys of two ranges: %d round trips; want 1", n)
	}
}

func TestQueuedReads_ARangeExpectingItsKeysReadsThemInOneRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		expect int
		want   uint64
	}{
		// Pages of 32, then 128: 100 keys and the end take two.
		{0, 2},
		// One page of 101 finds the end after the 100th key.
		{101, 1},
	} {
		n := queuedRoundTrips(t, func(tx storage.Tx) error {
			got, err := walk(tx, storage.Range{Start: []byte("a/"), End: []byte("a0"), Expect: tc.expect})
			if err == nil && got != 100 {
				err = fmt.Errorf("walked %d keys; want 100", got)
			}
			return err
		})
		if n != tc.want {
			t.Errorf("walking 100 keys expecting %d: %d round trips; want %d", tc.expect, n, tc.want)
		}
	}
}

func TestQueuedReads_ADrawGoesWithTheNextRead(t *testing.T) {
	ctx := context.Background()
	proxy, url := throughProxy(t, pgtest.NewDatabase(t))
	st := openWith(t, url, postgres.Options{})
	if _, err := storage.NextOfEach(ctx, st, []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	var n uint64
	for range 2 { // pgx prepares the statements the first time
		before := proxy.RoundTrips()
		mustUpdate(t, st, func(tx storage.Tx) error {
			values := storage.DrawLater(ctx, st, tx, "a", "b")
			if _, err := tx.Get([]byte("k")); err != nil && !errors.Is(err, storage.ErrNotFound) {
				return err
			}
			if _, err := values(); err != nil {
				return err
			}
			return tx.Set([]byte("k"), []byte("v"))
		})
		n = proxy.RoundTrips() - before
	}
	if n != 2 {
		t.Fatalf("a draw of two ids, a read and a write: %d round trips; want 2 (the read with the draw, the commit)", n)
	}
}
