package marketplace_test

import (
	"context"
	"errors"
	"testing"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/memory"
)

// openerFunc opens what its function returns.
type openerFunc func(context.Context) (storage.Store, error)

func (f openerFunc) Open(ctx context.Context) (storage.Store, error) { return f(ctx) }

// closeCounter counts the Close calls of a memory store.
type closeCounter struct {
	*memory.Store
	closed int
}

func (c *closeCounter) Close() error { c.closed++; return c.Store.Close() }

func TestOpen_TheEngineOwnsTheStoreItsOpenerOpened(t *testing.T) {
	st := &closeCounter{Store: memory.New()}
	m, err := marketplace.Open(context.Background(), openerFunc(func(context.Context) (storage.Store, error) { return st, nil }), marketplace.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if m.Store() != storage.Store(st) {
		t.Fatal("the engine does not run on the store the opener opened")
	}
	if err := m.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if st.closed != 1 {
		t.Fatalf("store closed %d times by Close; want 1", st.closed)
	}
}

func TestOpen_AnOpenerThatFailsOrOpensNothingIsAnError(t *testing.T) {
	refused := errors.New("no such folder")
	for name, opener := range map[string]storage.Opener{
		"NilOpener":   nil,
		"OpenerError": openerFunc(func(context.Context) (storage.Store, error) { return nil, refused }),
		"NoStore":     openerFunc(func(context.Context) (storage.Store, error) { return nil, nil }),
	} {
		t.Run(name, func(t *testing.T) {
			m, err := marketplace.Open(context.Background(), opener, marketplace.Options{})
			if err == nil || m != nil {
				t.Fatalf("Open = %v, %v; want an error and no engine", m, err)
			}
			if name == "OpenerError" && !errors.Is(err, refused) {
				t.Fatalf("Open error = %v; want the opener's", err)
			}
		})
	}
}
