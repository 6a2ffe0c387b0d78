package kv

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/storage"
)

// A Lease gives one holder at a time a piece of work that several processes
// sharing a store could each start: a daily job, a sweep. It is an ordinary
// key written through the contract, so it works on every backend and in
// every process that shares the store, and it expires by itself: a holder
// that dies stops holding it once its time is up, and another takes over.
//
// Expiry is measured by the time the callers pass, which must be real time
// (a wall clock), never a test's manual clock: a lease exists to notice that
// a process is gone. Holders' clocks should agree to well within the lease's
// duration.
//
// A lease does not stop a holder that has lost it, by expiry, from acting on
// it: work that must not be done twice checks it inside its own Update
// (Check), so that a holder that paused past its expiry finds out before it
// commits (fencing).
type Lease struct {
	Name    string
	Holder  string
	Expires time.Time
	// Term counts the times the lease has changed hands; Check compares it,
	// so a holder that lost the lease and took it back later is a new term.
	Term uint64
}

// ErrLeaseLost is returned by Check, Renew and Release when the lease is no
// longer the caller's: it expired and another holder took it, or it was
// released.
var ErrLeaseLost = errors.New("storage: lease lost")

// LeaseTopic is the topic announced (storage.Announce) when the lease
// called name is released, so that a process waiting for it takes it at
// once rather than at its next look.
func LeaseTopic(name string) string { return "lease/" + name }

// LeaseKey is where the lease called name is kept.
func LeaseKey(name string) []byte { return keycodec.New("sys/lease").Str(name) }

// AcquireLease takes the lease called name for holder until now+ttl, when it
// is free, expired, or already holder's (then it is extended, in the same
// term). It returns the lease as it now stands and whether holder has it.
func AcquireLease(ctx context.Context, st storage.Store, name, holder string, now time.Time, ttl time.Duration) (Lease, bool, error) {
	if holder == "" || ttl <= 0 {
		return Lease{}, false, fmt.Errorf("storage: lease %q: a holder and a positive duration are needed", name)
	}
	var out Lease
	var held bool
	err := st.Update(ctx, func(tx storage.Tx) error {
		cur, found, err := readLease(tx, name)
		if err != nil {
			return err
		}
		if found && cur.Holder != holder && now.Before(cur.Expires) {
			out, held = cur, false
			return nil
		}
		next := Lease{Name: name, Holder: holder, Expires: now.Add(ttl), Term: cur.Term}
		if !found || cur.Holder != holder || !now.Before(cur.Expires) {
			next.Term++
		}
		out, held = next, true
		return tx.Set(LeaseKey(name), encodeLease(next))
	})
	if err != nil {
		return Lease{}, false, err
	}
	return out, held, nil
}

// Check returns ErrLeaseLost unless tx sees l still held by its holder, in
// its term, and not expired at now. Call it inside the Update that acts on
// the lease.
func (l Lease) Check(tx storage.Tx, now time.Time) error {
	cur, found, err := readLease(tx, l.Name)
	if err != nil {
		return err
	}
	if !found || cur.Holder != l.Holder || cur.Term != l.Term || !now.Before(cur.Expires) {
		return ErrLeaseLost
	}
	return nil
}

// Renew extends l to now+ttl, if it is still l's holder's.
func (l Lease) Renew(ctx context.Context, st storage.Store, now time.Time, ttl time.Duration) (Lease, error) {
	next := l
	next.Expires = now.Add(ttl)
	err := st.Update(ctx, func(tx storage.Tx) error {
		if err := l.Check(tx, now); err != nil {
			return err
		}
		return tx.Set(LeaseKey(l.Name), encodeLease(next))
	})
	if err != nil {
		return l, err
	}
	return next, nil
}

// Release gives l up at once, if it is still l's holder's, so that another
// holder need not wait for it to expire: the processes that wait for it
// are told (LeaseTopic). The term is kept, so the next holder starts a new
// one.
func (l Lease) Release(ctx context.Context, st storage.Store, now time.Time) error {
	return st.Update(ctx, func(tx storage.Tx) error {
		if err := l.Check(tx, now); err != nil {
			return err
		}
		storage.Announce(tx, LeaseTopic(l.Name))
		gone := l
		gone.Holder, gone.Expires = "", time.Time{}
		return tx.Set(LeaseKey(l.Name), encodeLease(gone))
	})
}

func readLease(tx storage.Tx, name string) (Lease, bool, error) {
	b, err := tx.Get(LeaseKey(name))
	if errors.Is(err, storage.ErrNotFound) {
		return Lease{Name: name}, false, nil
	}
	if err != nil {
		return Lease{}, false, err
	}
	l, err := decodeLease(name, b)
	if err != nil {
		return Lease{}, false, err
	}
	return l, l.Holder != "", nil
}

// A lease record: the term and the expiry in Unix nanoseconds (8 bytes
// big-endian each), then the holder.
func encodeLease(l Lease) []byte {
	var expires int64
	if !l.Expires.IsZero() {
		expires = l.Expires.UnixNano()
	}
	b := make([]byte, 16, 16+len(l.Holder))
	binary.BigEndian.PutUint64(b, l.Term)
	binary.BigEndian.PutUint64(b[8:], uint64(expires))
	return append(b, l.Holder...)
}

func decodeLease(name string, b []byte) (Lease, error) {
	if len(b) < 16 {
		return Lease{}, fmt.Errorf("storage: lease %q: corrupt record", name)
	}
	l := Lease{Name: name, Term: binary.BigEndian.Uint64(b), Holder: string(b[16:])}
	if ns := int64(binary.BigEndian.Uint64(b[8:])); ns != 0 {
		l.Expires = time.Unix(0, ns).UTC()
	}
	return l, nil
}
