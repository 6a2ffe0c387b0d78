package marketplace

import (
	"context"
	"encoding/binary"
	"errors"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/retrylog"
	"github.com/marketplace/marketplace/storage"
)

// A manual clock is shared by the engines on one store (several servers on
// one database): a move on any of them is written to the store, and each
// engine brings its own clock up to the stored time before every request
// its server answers (SyncClock) and, for its background work, whenever
// the store tells of a move (storage.Changes: a move announces
// clockTopic), or every clockPoll on a store that tells of nothing. The
// clocks only move forward, so the stored time is the latest any engine
// was moved to.

// sharedClockKey holds the shared manual time, Unix nanoseconds, 8 bytes
// big-endian.
var sharedClockKey = keycodec.New("sys/clock")

// clockPoll is how often, in real time, an engine on a manual clock looks
// for a move made by another engine on a store that other processes
// write and that does not tell of changes.
const clockPoll = 100 * time.Millisecond

// clockTopic is announced by every move of the shared clock.
const clockTopic = "clock"

// clockShare is what an engine on a manual clock knows of the moves of the
// other engines on its store.
type clockShare struct {
	// board counts the moves published on a store of one process; nil on
	// a store that other processes write (storage.Shared), where any read
	// may find a move.
	board *clockBoard
	// seen is the board's count, plus one, when the engine last read the
	// stored time; 0 before its first read.
	seen atomic.Uint64
}

// clockBoard counts the moves published through one store of this
// process. On such a store the engines of this process are the only ones
// that move the clock, so an engine reads the stored time only after the
// count changed: a request pays an atomic load, not a transaction.
type clockBoard struct {
	moves   atomic.Uint64
	engines int // guarded by clockBoardsMu
}

var (
	clockBoardsMu sync.Mutex
	clockBoards   = map[storage.Store]*clockBoard{}
)

// joinClockBoard returns the board of st, or nil when st is shared by
// processes or cannot be told apart from another store (a key of a type
// that is not comparable); leave gives it up.
func joinClockBoard(st storage.Store) (b *clockBoard, leave func()) {
	if storage.IsShared(st) || !reflect.TypeOf(st).Comparable() {
		return nil, func() {}
	}
	clockBoardsMu.Lock()
	defer clockBoardsMu.Unlock()
	b = clockBoards[st]
	if b == nil {
		b = &clockBoard{}
		clockBoards[st] = b
	}
	b.engines++
	return b, func() {
		clockBoardsMu.Lock()
		defer clockBoardsMu.Unlock()
		if b.engines--; b.engines == 0 {
			delete(clockBoards, st)
		}
	}
}

// shareManualClock starts sharing manual through the store; the returned
// function stops it.
func (m *Marketplace) shareManualClock(ctx context.Context, manual *clock.Manual) (stop func(), err error) {
	m.manual = manual
	board, leaveBoard := joinClockBoard(m.store)
	m.clockShare.board = board
	if err := m.SyncClock(ctx); err != nil {
		leaveBoard()
		return nil, err
	}
	unwatch := manual.OnChange(func(_, to time.Time) {
		if err := m.publishClock(context.Background(), to); err != nil {
			m.Logger.Error("share the manual clock", "err", err)
		}
	})
	// The follower outlives the opening: its ctx is its own.
	follow, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		// The next change tries again: an outage of the store is a
		// warning, once.
		log := retrylog.New(m.Logger, "follow the shared manual clock", time.Now)
		_ = storage.Follow(follow, m.store, clockTopic, clockPoll, func() {
			if err := m.SyncClock(follow); follow.Err() == nil {
				log.Report(err)
			}
		})
	}()
	return func() {
		cancel()
		<-done
		unwatch()
		leaveBoard()
	}, nil
}

// SyncClock moves the engine's manual clock up to the time another engine on
// the same store moved its own to. The server calls it before each request,
// so that a move made through one server is seen by the next request to any
// other. Without a manual clock it does nothing; on a store of one process
// (not storage.Shared) it reads the store only when an engine of the
// process has moved its clock since the last read.
func (m *Marketplace) SyncClock(ctx context.Context) error {
	if m.manual == nil {
		return nil
	}
	var moves uint64
	if b := m.clockShare.board; b != nil {
		moves = b.moves.Load()
		if m.clockShare.seen.Load() == moves+1 {
			return nil
		}
	}
	// A reset may set the clock back meanwhile: a time read before it
	// must not bring the clock forward again after it.
	epoch := m.manual.Epoch()
	var stored time.Time
	var found bool
	err := m.store.View(ctx, func(tx storage.Tx) error {
		var err error
		stored, found, err = readSharedClock(tx)
		return err
	})
	if err != nil {
		return err
	}
	if m.clockShare.board != nil {
		// A move published after the count was loaded counts again, so
		// the next sync reads it.
		m.clockShare.seen.Store(moves + 1)
	}
	if !found || !stored.After(m.manual.Now()) {
		return nil
	}
	// Another engine may move the clock on at the same moment: a refused
	// move backwards means this clock is already later.
	if err := m.manual.SetInEpoch(epoch, stored); err != nil && !errors.Is(err, clock.ErrBackwards) && !errors.Is(err, clock.ErrRewound) {
		return err
	}
	return nil
}

// publishClock writes to as the shared time, unless the store holds a later
// one.
func (m *Marketplace) publishClock(ctx context.Context, to time.Time) error {
	err := m.store.Update(ctx, func(tx storage.Tx) error {
		stored, found, err := readSharedClock(tx)
		if err != nil || (found && !to.After(stored)) {
			return err
		}
		// A reset set the clock back since this move: the move is
		// undone. Checked after the read, so that a reset committed
		// in between makes this transaction conflict and look again.
		if m.manual.Now().Before(to) {
			return nil
		}
		storage.Announce(tx, clockTopic)
		return tx.Set(sharedClockKey, binary.BigEndian.AppendUint64(nil, uint64(to.UnixNano())))
	})
	if b := m.clockShare.board; b != nil {
		// After the write: a sync that sees the new count reads it.
		b.moves.Add(1)
	}
	return err
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
