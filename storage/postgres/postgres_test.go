package postgres_test

import (
	"context"
	"sync"
	"testing"

	"github.com/marketplace/marketplace/internal/pgtest"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/postgres"
	"github.com/marketplace/marketplace/storage/storagetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// urls remembers the database of each store, for Reopen.
var urls sync.Map // *postgres.Store -> string

// open opens the store of the database at url, closed when the test ends.
func open(tb testing.TB, url string) *postgres.Store {
	tb.Helper()
	st, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	urls.Store(st, url)
	tb.Cleanup(func() { _ = st.Close() })
	return st
}

func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store { return open(t, pgtest.NewDatabase(t)) }, storagetest.Options{
		Reopen: func(t *testing.T, closed storage.Store) storage.Store {
			url, _ := urls.Load(closed)
			return open(t, url.(string))
		},
	})
}

func BenchmarkPostgres(b *testing.B) {
	storagetest.Bench(b, func(b *testing.B) storage.Store { return open(b, pgtest.NewDatabase(b)) })
}

// BenchmarkSequenceNext measures one id: a nextval round trip.
func BenchmarkSequenceNext(b *testing.B) {
	st := open(b, pgtest.NewDatabase(b))
	q, err := st.Sequence("bench")
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := q.Next(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := q.Next(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
