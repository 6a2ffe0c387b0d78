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
