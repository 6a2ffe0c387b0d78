package marketplace

import (
	"context"
	"encoding/binary"
	"time"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/storage"
)

// RestoreOptions configure Restore.
type RestoreOptions struct {
	// Clock, when not zero, sets the engine's manual clock to this time
	// together with the restore (see ResetOptions.Clock).
	Clock time.Time
}

// Restore is RestoreSnapshot with options: with opts.Clock the manual
// clock is set as well, so that a replay started from the snapshot starts
// at the same instant every time. Errors: NotFound for an unknown id;
// Conflict when opts.Clock is set on an engine whose clock is not manual,
// or moves it back on a store other engines use; the storage's.
func (m *Marketplace) Restore(ctx context.Context, id int64, opts RestoreOptions) error {
	if opts.Clock.IsZero() {
		return m.RestoreSnapshot(ctx, id)
	}
	if err := m.checkClockReset(opts.Clock); err != nil {
		return err
	}
	err := m.restoreState(ctx, id, func(ctx context.Context) error { return m.rewindClock(ctx, opts.Clock) })
	if err != nil {
		return err
	}
	return m.forwardClock(opts.Clock)
}

// errClockNotManual refuses a reset of the clock on an engine that runs
// on another clock than a *clock.Manual.
var errClockNotManual = errs.Conflictf("The engine runs on the wall clock; only a manual clock can be set by a reset")

// errClockShared refuses to move the clock back on a store that other
// engines use: their clocks only move forward, so they would stay ahead
// and bring this one forward again.
var errClockShared = errs.Conflictf("The clock can be set back only on a store that one engine uses")

// checkClockReset tells whether the clock may be set to t by a reset,
// before anything is cleared, so that a refused reset changes nothing.
func (m *Marketplace) checkClockReset(t time.Time) error {
	if m.manual == nil {
		return errClockNotManual
	}
	if !t.Before(m.manual.Now()) {
		return nil
	}
	if storage.IsShared(m.store) {
		return errClockShared
	}
	if b := m.clockShare.board; b != nil {
		clockBoardsMu.Lock()
		n := b.engines
		clockBoardsMu.Unlock()
		if n > 1 {
			return errClockShared
		}
	}
	return nil
}

// rewindClock sets the clock back to t while the state is held, once the
// state that remembers times (refresh instants, retries, expiries) is
// cleared or restored: nothing is left that a backward step could
// confuse. A t that is not earlier is left to forwardClock, a move like
// any other.
func (m *Marketplace) rewindClock(ctx context.Context, t time.Time) error {
	if !t.Before(m.manual.Now()) {
		return nil
	}
	// The shared time first: the next SyncClock would bring the clock
	// forward to it again.
	err := m.store.Update(ctx, func(tx storage.Tx) error {
		return tx.Set(sharedClockKey, binary.BigEndian.AppendUint64(nil, uint64(t.UnixNano())))
	})
	if err != nil {
		return err
	}
	m.manual.Rewind(t)
	if b := m.clockShare.board; b != nil {
		b.moves.Add(1)
	}
	return nil
}

// forwardClock moves the clock forward to t after the state is in place,
// so that what the move crosses (the daily refresh) runs on the new state,
// as after PUT /operator/clock.
func (m *Marketplace) forwardClock(t time.Time) error {
	if !t.After(m.manual.Now()) {
		return nil
	}
	if err := m.manual.Set(t); err != nil {
		return errs.Internalf(err, "Set the clock failed")
	}
	return nil
}
