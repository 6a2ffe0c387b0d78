package kv

import (
	"context"

	"github.com/marketplace/marketplace/storage"
)

// OnceID draws one id from a store's sequence the first time it is asked
// for and gives the same id after that. An Update's function may run again
// after a conflict; the record it writes keeps the id drawn the first time,
// and an id drawn for an Update that then fails is a gap, never a repeat.
type OnceID struct {
	store storage.Store
	name  string
	id    uint64
}

// NewOnceID returns an OnceID for the sequence called name of store.
func NewOnceID(store storage.Store, name string) *OnceID { return &OnceID{store: store, name: name} }

// Get returns the id, drawing it on the first call.
func (o *OnceID) Get(ctx context.Context) (uint64, error) {
	if o.id != 0 {
		return o.id, nil
	}
	q, err := o.store.Sequence(o.name)
	if err != nil {
		return 0, err
	}
	if o.id, err = q.Next(ctx); err != nil {
		return 0, err
	}
	return o.id, nil
}

// DrawOnce draws the ids of those of ids not drawn yet, together where the
// store can (storage.NextOfEach): one round trip for all of them on a
// backend at network distance. The ids must share one store.
func DrawOnce(ctx context.Context, ids ...*OnceID) error {
	var pending []*OnceID
	var names []string
	for _, o := range ids {
		if o.id == 0 {
			pending = append(pending, o)
			names = append(names, o.name)
		}
	}
	if len(pending) == 0 {
		return nil
	}
	drawn, err := storage.NextOfEach(ctx, pending[0].store, names)
	if err != nil {
		return err
	}
	for i, o := range pending {
		o.id = drawn[i]
	}
	return nil
}

// DrawOnceLater draws, inside tx, the ids of those of ids not drawn yet,
// with tx's next read where tx can (storage.DrawLater: on PostgreSQL, no
// round trip of their own), and returns the function that completes the
// draw: after it returns nil, Get gives each id without drawing. A
// function calls it before its first read. The ids must share one store,
// whose transaction tx is.
func DrawOnceLater(ctx context.Context, tx storage.Tx, ids ...*OnceID) func() error {
	var pending []*OnceID
	var names []string
	for _, o := range ids {
		if o.id == 0 {
			pending = append(pending, o)
			names = append(names, o.name)
		}
	}
	if len(pending) == 0 {
		return func() error { return nil }
	}
	values := storage.DrawLater(ctx, pending[0].store, tx, names...)
	return func() error {
		drawn, err := values()
		if err != nil {
			return err
		}
		for i, o := range pending {
			if o.id == 0 {
				o.id = drawn[i]
			}
		}
		return nil
	}
}
