package badger_test

import (
	"context"
	"testing"

	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/badger"
	"github.com/marketplace/marketplace/storage/storagetest"
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

func TestDir_OpensTheStoreInTheFolderAndItIsNotShared(t *testing.T) {
	dir := t.TempDir()
	st, err := badger.Dir(dir).Open(context.Background())
	if err != nil {
		t.Fatalf("Dir.Open: %v", err)
	}
	defer st.Close()
	if got := st.(*badger.Store).Dir(); got != dir {
		t.Errorf("store folder = %q, want %q", got, dir)
	}
	if storage.IsShared(st) {
		t.Error("a Badger store is one process's, yet it declares itself shared")
	}
}
