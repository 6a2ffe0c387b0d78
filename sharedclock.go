package marketplace

import (
	"context"
	"encoding/binary"
	"errors"
	"time"

	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/storage"
)

// A manual clock is shared by the engines on one store (several servers on
// one database): a move on any of them is written to the store, and each
// engine brings its own clock up to the stored time before every request
// its server answers (SyncClock) and, for its background work, every
// clockPoll. The clocks only move forward, so the stored time is the
// latest any engine was moved to.

// sharedClockKey holds the shared manual time, Unix nanoseconds, 8 bytes
// big-endian.
var sharedClockKey = keycodec.New("sys/clock")

// clockPoll is how often, in real time, an engine on a manual clock looks
// for a move made by another engine on its store.
const clockPoll = 100 * time.Millisecond

// shareManualClock starts sharing manual through the store; the returned
// function stops it.
func (m *Marketplace) shareManualClock(manual *clock.Manual) (stop func(), err error) {
	m.manual = manual
	if err := m.SyncClock(context.Background()); err != nil {
		return nil, err
	}
	unwatch := manual.OnChange(func(_, to time.Time) {
		if err := m.publishClock(context.Background(), to); err != nil {
			m.Logger.Error("share the manual clock", "err", err)
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(clockPoll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if err := m.SyncClock(ctx); err != nil && ctx.Err() == nil {
				m.Logger.Error("follow the shared manual clock", "err", err)
			}
		}
	}()
	return func() {
		cancel()
		<-done
		unwatch()
	}, nil
}

// SyncClock moves the engine's manual clock up to the time another engine on
// the same store moved its own to. The server calls it before each request,
// so that a move made through one server is seen by the next request to any
// other. Without a manual clock it does nothing.
func (m *Marketplace) SyncClock(ctx context.Context) error {
	if m.manual == nil {
		return nil
	}
	var stored time.Time
	var found bool
	err := m.store.View(ctx, func(tx storage.Tx) error {
		var err error
		stored, found, err = readSharedClock(tx)
		return err
	})
	if err != nil || !found || !stored.After(m.manual.Now()) {
		return err
	}
	// Another engine may move the clock on at the same moment: a refused
	// move backwards means this clock is already later.
	if err := m.manual.Set(stored); err != nil && !errors.Is(err, clock.ErrBackwards) {
		return err
	}
	return nil
}

// publishClock writes to as the shared time, unless the store holds a later
// one.
func (m *Marketplace) publishClock(ctx context.Context, to time.Time) error {
	return m.store.Update(ctx, func(tx storage.Tx) error {
		stored, found, err := readSharedClock(tx)
		if err != nil || (found && !to.After(stored)) {
			return err
		}
		return tx.Set(sharedClockKey, binary.BigEndian.AppendUint64(nil, uint64(to.UnixNano())))
	})
}

func readSharedClock(tx storage.Tx) (time.Time, bool, error) {
	b, err := tx.Get(sharedClockKey)
	if errors.Is(err, storage.ErrNotFound) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, err
	}
	if len(b) != 8 {
		return time.Time{}, false, errors.New("marketplace: corrupt shared clock record")
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(b))).UTC(), true, nil
}
