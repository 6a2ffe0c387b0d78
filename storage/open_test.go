package storage_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/memory"
)

// sharedStore declares what it is told, as a backend would.
type sharedStore struct {
	storage.Store
	shared bool
}

func (s sharedStore) SharedByProcesses() bool { return s.shared }

func TestIsShared_OnlyAStoreThatDeclaresItselfSharedIsShared(t *testing.T) {
	is := is.New(t)
	is.True(!storage.IsShared(memory.New()))                     // memory is one process's
	is.True(!storage.IsShared(sharedStore{memory.New(), false})) // declared not shared
	is.True(storage.IsShared(sharedStore{memory.New(), true}))   // declared shared
}
