package memory_test

import (
	"testing"

	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/memory"
	"github.com/marketplace/marketplace/storage/storagetest"
)

func TestConformance(t *testing.T) {
	storagetest.Run(t, func(*testing.T) storage.Store { return memory.New() }, storagetest.Options{SerialUpdates: true})
}

func BenchmarkMemory(b *testing.B) {
	storagetest.Bench(b, func(*testing.B) storage.Store { return memory.New() })
}

// Every ask looks its sequences up: a lookup of one that exists makes
// nothing.
func TestSequence_LookupOfAnExistingSequenceAllocatesNothing(t *testing.T) {
	st := memory.New()
	if _, err := st.Sequence("questions"); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = st.Sequence("questions") }); n != 0 {
		t.Errorf("allocations per lookup: %v, want 0", n)
	}
}
