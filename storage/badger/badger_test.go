package badger_test

import (
	"testing"

	"marketplace/storage"
	"marketplace/storage/badger"
	"marketplace/storage/storagetest"
)

// open opens a store in dir, closed when the test ends.
func open(tb testing.TB, dir string) *badger.Store {
	tb.Helper()
	st, err := badger.Open(dir, badger.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = st.Close() })
	return st
}

func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store { return open(t, t.TempDir()) }, storagetest.Options{
		Reopen: func(t *testing.T, closed storage.Store) storage.Store { return open(t, closed.(*badger.Store).Dir()) },
	})
}

func BenchmarkBadger(b *testing.B) {
	storagetest.Bench(b, func(b *testing.B) storage.Store { return open(b, b.TempDir()) })
}
