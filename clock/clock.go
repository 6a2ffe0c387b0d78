// Package clock gives the domain packages their notion of now. Domain code
// never reads the wall clock; it is handed a Clock, so that tests and the
// server's manual mode can decide what time it is.
package clock

import (
	"errors"
	"sync"
	"time"
)

// Clock tells the time.
type Clock interface {
	Now() time.Time
}

// Func adapts a function to a Clock.
type Func func() time.Time

// Now calls f.
func (f Func) Now() time.Time { return f() }

// Wall is the real time.
type Wall struct{}

// Now returns time.Now().
func (Wall) Now() time.Time { return time.Now() }

// ErrBackwards is returned when a manual clock is asked to move into the past.
var ErrBackwards = errors.New("clock cannot move backwards")

// Manual is a clock that moves only when told to. It is safe for concurrent
// use. Watchers registered with OnChange are called after each move, outside
// the lock, with the old and the new time, so that schedules (the daily
// response-time refresh, notification retries) can run what the move crossed.
type Manual struct {
	mu       sync.Mutex
	now      time.Time
	epoch    uint64
	nextID   int
	watchers []watcher
}

type watcher struct {
	id int
	fn func(from, to time.Time)
}

// NewManual returns a manual clock set to start.
func NewManual(start time.Time) *Manual { return &Manual{now: start} }

// Now returns the clock's current time.
func (m *Manual) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now
}

// Set moves the clock to t. Moving backwards returns ErrBackwards and changes
// nothing; setting the same time is allowed and notifies nobody. Watchers run
// before Set returns, so whatever the move made due is done when it returns.
func (m *Manual) Set(t time.Time) error {
	m.mu.Lock()
	return m.setLocked(t)
}

// setLocked is Set with m.mu held; it releases it.
func (m *Manual) setLocked(t time.Time) error {
	from := m.now
	if t.Before(from) {
		m.mu.Unlock()
		return ErrBackwards
	}
	m.now = t
	watchers := append([]watcher{}, m.watchers...)
	m.mu.Unlock()
	if t.Equal(from) {
		return nil
	}
	for _, w := range watchers {
		w.fn(from, t)
	}
	return nil
}

// Rewind puts the clock at t, earlier or later, without telling the
// watchers. It is for an owner that clears every state that remembers a
// time in the same step (marketplace's reset to a start instant): the
// watchers' schedules would otherwise see time run backwards. Anything else
// moves the clock with Set.
func (m *Manual) Rewind(t time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.now = t
	m.epoch++
}

// ErrRewound is returned by SetInEpoch when the clock was rewound since
// the epoch was read.
var ErrRewound = errors.New("clock was rewound")

// Epoch counts the Rewinds: a time read from elsewhere before a Rewind
// (a copy of the clock shared by another engine) is no longer one the
// clock may move forward to after it.
func (m *Manual) Epoch() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.epoch
}

// SetInEpoch is Set, unless the clock was rewound since epoch was read
// (Epoch): then it returns ErrRewound and changes nothing.
func (m *Manual) SetInEpoch(epoch uint64, t time.Time) error {
	m.mu.Lock()
	if m.epoch != epoch {
		m.mu.Unlock()
		return ErrRewound
	}
	return m.setLocked(t)
}

// Advance moves the clock forward by d (d < 0 returns ErrBackwards).
func (m *Manual) Advance(d time.Duration) error {
	return m.Set(m.Now().Add(d))
}

// OnChange registers fn to be called after every forward move. The returned
// function unregisters it (for an engine that closes while the clock lives
// on); calling it more than once is harmless.
func (m *Manual) OnChange(fn func(from, to time.Time)) (cancel func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.nextID++
	id := m.nextID
	m.watchers = append(m.watchers, watcher{id: id, fn: fn})
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		for i, w := range m.watchers {
			if w.id == id {
				m.watchers = append(m.watchers[:i:i], m.watchers[i+1:]...)
				return
			}
		}
	}
}
