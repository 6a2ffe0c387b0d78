// Package storage is the contract between the domain packages and the
// backends that keep their data: a transactional, ordered key-value store.
//
// Keys are compared as bytes. Transactions are serializable: an Update whose
// function returns an error changes nothing, and when two Updates conflict one
// commits and the other is run again from the start, so a rule re-checked
// inside the function sees the winner's write. Secondary indexes and event
// outboxes are ordinary keys that the domain packages write in the same
// transaction as the record they belong to. Ids come from sequences, which
// work outside transactions, and counts are split over shard keys: no key is
// written by every writer of a kind, so concurrent writers of different
// records do not conflict.
//
// Backends: storage/memory (ordered, in process), storage/badger (durable:
// an acknowledged Update is on disk) and storage/postgres (a database that
// several servers share). All pass storage/storagetest, which is all an
// outside backend needs besides this package: the key layout, counters and
// leases that the engine builds on the contract call nothing else, so they
// work on any backend that passes it.
package storage

import (
	"context"
	"errors"
	"time"
)

// ErrNotFound is returned by Tx.Get for a key that does not exist.
var ErrNotFound = errors.New("storage: key not found")

// ErrConflict is returned by Update when the transaction kept conflicting with
// concurrent ones after the backend's retries.
var ErrConflict = errors.New("storage: transaction conflict")

// ErrClosed is returned by a store after Close.
var ErrClosed = errors.New("storage: store closed")

// ErrEmptyKey is returned by Get, Set and Delete for an empty key, which no
// backend stores (Badger refuses it, so the memory backend does too).
var ErrEmptyKey = errors.New("storage: empty key")

// ErrTooBig is returned by Set, Delete or Update when one transaction holds
// more writes than the backend can commit at once (Badger: about 2.4 MB or
// some 10,000 small writes with the default options). Nothing is committed;
// split the work into several Updates.
var ErrTooBig = errors.New("storage: transaction too big")

// ErrReadOnly is returned by Set and Delete inside View.
var ErrReadOnly = errors.New("storage: write in a read-only transaction")

// ErrNoSpace is returned by Update (and by a Sequence that must lease ids)
// when the backend's disk has too little free space left to take the change
// safely. A durable backend refuses before the disk is actually full
// (storage/badger keeps a margin), and then nothing is committed; Views keep
// working, and Updates are taken again once space is freed. A write that the
// disk itself refused (ENOSPC) is reported this way too.
var ErrNoSpace = errors.New("storage: not enough disk space")

// ErrUnavailable is returned when the backend cannot be reached right now (a
// database server that is down, restarting or unreachable, or a connection
// that broke); nothing was committed unless the caller is told otherwise: a
// backend whose commit was sent but whose answer was lost cannot know, and
// says so in the error it wraps (storage/postgres: ErrCommitUnknown). The
// same request may succeed once the backend is back, with no restart.
var ErrUnavailable = errors.New("storage: backend unavailable")

// IterationCheckEvery bounds how many keys a range walk reads after its
// transaction's context has ended: a backend looks at the context at least
// once per that many keys (and at every round trip it makes), ends the
// walk there, and the View or Update returns the context's error whatever
// fn returns, committing nothing. A request's deadline thereby bounds its
// reads on every backend, not only where a database enforces it.
const IterationCheckEvery = 1024

// Store is a transactional, ordered key-value store.
type Store interface {
	// View runs fn in a read-only transaction over a consistent snapshot.
	View(ctx context.Context, fn func(Tx) error) error
	// Update runs fn in a read-write transaction and commits it if fn returns
	// nil. fn may be called more than once (after a conflict), so it must not
	// have effects outside the transaction.
	Update(ctx context.Context, fn func(Tx) error) error
	// Sequence returns the id sequence called name, created on first use.
	// The same name gives the same sequence for the life of the store.
	Sequence(name string) (Sequence, error)
	// Close releases the store. An acknowledged Update survives it.
	Close() error
}

// Tx is one transaction. It is not safe for concurrent use, and neither it
// nor the slices it returns may be used after its function returns.
type Tx interface {
	// Get returns the value stored at key, or ErrNotFound. The returned slice
	// belongs to the caller.
	Get(key []byte) ([]byte, error)
	// Set stores value at key. Both slices are copied.
	Set(key, value []byte) error
	// Delete removes key; deleting a missing key is not an error.
	Delete(key []byte) error
	// Iterate returns an iterator over r, positioned at its first key (the
	// last one when r.Reverse). Set and Delete must not be called on the same
	// transaction while the iterator is open.
	Iterate(r Range) Iterator
}

// Range is the half-open key range [Start, End) in byte order. A nil Start is
// the smallest key, a nil End has no upper bound. Reverse walks from the
// largest key down.
type Range struct {
	Start   []byte
	End     []byte
	Reverse bool
	// Expect is how many keys the reader expects to read, where it knows
	// (a page of a listing and the one after it): a backend that reads a
	// range in pages of its own (storage/postgres) makes its first page
	// that big rather than start small and grow. It changes nothing of
	// what the iterator yields; 0 is unknown.
	Expect int
}

// Prefix returns the range of every key that starts with p.
func Prefix(p []byte) Range {
	return Range{Start: p, End: PrefixEnd(p)}
}

// PrefixEnd returns the smallest key greater than every key that starts with
// p, or nil when there is none (p is empty or all 0xff).
func PrefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// Iterator walks a range in order. Use it as
//
//	it := tx.Iterate(r)
//	defer it.Close()
//	for ; it.Valid(); it.Next() { ... }
type Iterator interface {
	// Valid reports whether the iterator is on a key inside the range.
	Valid() bool
	// Key returns the current key; valid until the next call to Next or Seek.
	Key() []byte
	// Value returns a copy of the current value.
	Value() ([]byte, error)
	// Next moves to the next key in the iteration order.
	Next()
	// Seek moves to the first key >= key (forward) or the last key <= key
	// (reverse), clamped to the range.
	Seek(key []byte)
	// Close releases the iterator.
	Close()
}

// SingleGetter is implemented by a Store that reads a single key outside any
// transaction more cheaply than inside a View: storage/postgres sends one
// statement rather than BEGIN, the read and ROLLBACK, which is a round trip
// saved on every request that authenticates a token.
type SingleGetter interface {
	// GetOne returns the value at key as a View's Get would.
	GetOne(ctx context.Context, key []byte) ([]byte, error)
}

// GetOne returns the value at key, or ErrNotFound, from the latest commit:
// a View of one Get, without the transaction where the store can skip it.
func GetOne(ctx context.Context, st Store, key []byte) ([]byte, error) {
	if g, ok := st.(SingleGetter); ok {
		return g.GetOne(ctx, key)
	}
	var v []byte
	err := st.View(ctx, func(tx Tx) error {
		// A token, read by every request, is seldom written: prefetched,
		// a store that keeps the newest values of such keys in memory
		// answers it from there.
		if err := Prefetch(tx, key); err != nil {
			return err
		}
		var err error
		v, err = tx.Get(key)
		return err
	})
	return v, err
}

// Prefetcher is implemented by a Tx that reads several keys in one round
// trip: storage/postgres sends their reads together, with its next round
// trip whatever that is for (a Get, a range's page), and answers the Gets
// that follow from what it received.
type Prefetcher interface {
	// Prefetch reads keys, now or with the transaction's next read, so
	// that later Gets of them cost nothing. Its results are those the
	// Gets would have had.
	Prefetch(keys [][]byte) error
}

// Prefetch tells tx which keys it is about to Get, where the backend reads
// several keys at once more cheaply than one by one; elsewhere it does
// nothing. Reads through a transaction see one snapshot and the
// transaction's own writes, so what a Get returns does not depend on it.
// A caller saves the most by prefetching before its first read: the
// keys then travel with it. On storage/postgres, the ranges opened before
// a read travel with it too (their first pages).
func Prefetch(tx Tx, keys ...[]byte) error {
	if p, ok := tx.(Prefetcher); ok {
		return p.Prefetch(keys)
	}
	return nil
}

// SequenceGroup is implemented by a Store that draws from several sequences
// in one round trip (storage/postgres): a request that makes several
// records at once (an order, its pack, its shipment and its payment) then
// waits for one draw, not one per record.
type SequenceGroup interface {
	// NextOfEach returns the next value of each sequence of names, in the
	// order of names, as Next of each would.
	NextOfEach(ctx context.Context, names []string) ([]uint64, error)
}

// TxDrawer is implemented by a Tx that can draw from sequences in its own
// round trips (storage/postgres): the draw then goes with the
// transaction's next read instead of taking a round trip of its own.
type TxDrawer interface {
	// DrawLater queues a draw of the next value of each sequence of
	// names and returns the function that gives the values, in the order
	// of names, sending the draw if no read has yet. The values are
	// drawn whether the transaction commits or not: those of an attempt
	// that does not are gaps. It is false where the transaction cannot
	// draw (a View, a sequence never drawn from): the caller draws with
	// NextOfEach.
	DrawLater(names []string) (func() ([]uint64, error), bool)
}

// DrawLater draws the next value of each sequence of names of st, inside
// tx, a transaction of st: with tx's next read where tx can (TxDrawer),
// else when the function returned is first called. That function gives
// the values, in the order of names. An Update's function that calls it
// draws again when it runs again.
func DrawLater(ctx context.Context, st Store, tx Tx, names ...string) func() ([]uint64, error) {
	if d, ok := tx.(TxDrawer); ok {
		if values, ok := d.DrawLater(names); ok {
			return values
		}
	}
	var (
		ids   []uint64
		err   error
		drawn bool
	)
	return func() ([]uint64, error) {
		if !drawn {
			ids, err = NextOfEach(ctx, st, names)
			drawn = true
		}
		return ids, err
	}
}

// NextOfEach draws the next value of each sequence of names, in the order
// of names: together where st is a SequenceGroup, else one after another.
func NextOfEach(ctx context.Context, st Store, names []string) ([]uint64, error) {
	if g, ok := st.(SequenceGroup); ok {
		return g.NextOfEach(ctx, names)
	}
	ids := make([]uint64, len(names))
	for i, name := range names {
		q, err := st.Sequence(name)
		if err != nil {
			return nil, err
		}
		if ids[i], err = q.Next(ctx); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// Changes is implemented by a Store that several processes share (Shared)
// and that can tell each of them that a topic changed, so that what one
// server writes reaches the others' caches and background work without
// their polling the store. storage/postgres is one (LISTEN/NOTIFY). The
// stores of one process (memory, Badger) have no need of it: their writers
// wake their readers in memory.
//
// The contract:
//   - After an Update that called Announce(topic) commits, every channel
//     that Subscribe returned for topic, in every process that has the
//     store open (the announcing one included), receives a value. An
//     Update that does not commit announces nothing.
//   - Receives are coalesced: a channel holds at most one value, and one
//     receive may stand for many changes. Only "topic may have changed,
//     read it again" is said, never what changed.
//   - When the store may have missed announcements (its connection for
//     them broke and is back, or the database failed over to another
//     server), every channel receives, whatever its topic: a subscriber
//     that reads the state it follows after each receive misses nothing,
//     provided it also read that state once after it subscribed.
//   - A subscription costs the store nothing per change that no one
//     announced; an idle store's cost of watching is bounded (storage/postgres:
//     one statement per second on one connection).
type Changes interface {
	// Subscribe returns a channel that receives after each change of
	// topic, as above, and a function that ends the subscription (the
	// channel then receives no more; it is not closed).
	Subscribe(topic string) (changed <-chan struct{}, cancel func())
}

// Announcer is implemented by a Tx of a store that has Changes.
type Announcer interface {
	// Announce tells the subscribers of topic, once the transaction
	// commits, that it changed. Announcing a topic twice in one
	// transaction announces it once.
	Announce(topic string)
}

// Announce tells the subscribers of topic in every process sharing the
// store that it changed, once tx commits, where the store tells other
// processes of changes (Changes); elsewhere it does nothing and costs a
// type assertion. Call it inside the Update that makes the change.
func Announce(tx Tx, topic string) {
	if a, ok := tx.(Announcer); ok {
		a.Announce(topic)
	}
}

// Subscribe subscribes to topic on st, or on the store st wraps (a store
// with an Unwrap() Store method, such as the engine's gate), when that
// store has Changes. ok is false when it has not: the store is then one
// process's, and its writers must wake their readers themselves.
func Subscribe(st Store, topic string) (changed <-chan struct{}, cancel func(), ok bool) {
	for {
		if c, is := st.(Changes); is {
			changed, cancel = c.Subscribe(topic)
			return changed, cancel, true
		}
		w, is := st.(interface{ Unwrap() Store })
		if !is {
			return nil, func() {}, false
		}
		st = w.Unwrap()
	}
}

// Follow calls read once, then after every change of topic on st until ctx
// ends, and returns ctx's error: where st tells of changes (Subscribe),
// after each announcement; elsewhere every interval, in real time (a poll,
// for a store that other processes write but that tells of nothing; none
// when interval is not positive). read is never called twice at once.
func Follow(ctx context.Context, st Store, topic string, every time.Duration, read func()) error {
	changed, cancel, ok := Subscribe(st, topic)
	defer cancel()
	var tick <-chan time.Time
	if !ok && every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		tick = t.C
	}
	for {
		read()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		case <-tick:
		}
	}
}
