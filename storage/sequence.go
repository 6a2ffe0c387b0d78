package storage

import "context"

// Sequence hands out ids outside any transaction, so that writers of
// different records never touch a common key to number them.
//
// Promises, checked by storagetest: Next returns 1 or more; an id is never
// returned twice by one sequence of one store, whatever the concurrency, and
// not after a restart or a crash either (a crash may leave gaps, never a
// repeat); ids returned in one process increase in the order of the calls.
type Sequence interface {
	// Next returns a new id.
	Next(ctx context.Context) (uint64, error)
	// Advance makes every later Next return more than n; a sequence already
	// past n is left as it is. Migrations use it to carry an older counter
	// over.
	Advance(ctx context.Context, n uint64) error
}
