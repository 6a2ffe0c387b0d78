package httpapi

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// lazyDeadline is a request's time bound that starts no timer until
// something waits on it. A read from a local store checks Err at most, and
// never waits: context.WithTimeout's timer, started and stopped for every
// request, was about a tenth of a GET's time. Whoever calls Done (a
// PostgreSQL query, a select on a slot) gets a context.WithDeadline made
// then, with the same deadline, so what it waits for ends when it would
// have.
type lazyDeadline struct {
	parent   context.Context
	deadline time.Time
	once     sync.Once
	timed    atomic.Pointer[context.Context]
	cancel   context.CancelFunc
}

// withLazyDeadline bounds parent by d from now; its stop releases it, as
// the CancelFunc of context.WithTimeout does.
func withLazyDeadline(parent context.Context, d time.Duration) *lazyDeadline {
	c := &lazyDeadline{parent: parent, deadline: time.Now().Add(d)}
	if pd, ok := parent.Deadline(); ok && pd.Before(c.deadline) {
		c.deadline = pd
	}
	return c
}

// waiting returns the context that Done, Err and Value answer from once
// something waits: made at the first call.
func (c *lazyDeadline) waiting() context.Context {
	c.once.Do(func() {
		ctx, cancel := context.WithDeadline(c.parent, c.deadline)
		c.cancel = cancel
		c.timed.Store(&ctx)
	})
	return *c.timed.Load()
}

// stopped stands for the timed context of a bound stopped before anyone
// waited: it is over, as after a CancelFunc, and its values are the
// parent's.
var stopped = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

func (c *lazyDeadline) stop() {
	c.once.Do(func() { c.timed.Store(&stopped) })
	if c.cancel != nil {
		c.cancel()
	}
}

// Deadline is the request's bound (the parent's, when it comes sooner).
func (c *lazyDeadline) Deadline() (time.Time, bool) { return c.deadline, true }

// Done makes the timer, on first use.
func (c *lazyDeadline) Done() <-chan struct{} { return c.waiting().Done() }

// Err answers without a timer until one exists: the parent's error, or
// DeadlineExceeded once the deadline passed.
func (c *lazyDeadline) Err() error {
	if t := c.timed.Load(); t != nil {
		return (*t).Err()
	}
	if err := c.parent.Err(); err != nil {
		return err
	}
	if !time.Now().Before(c.deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

// Value answers from the timed context once it exists, so that a context
// derived from this one finds its cancellation there (the context
// package then links the two without a goroutine).
func (c *lazyDeadline) Value(key any) any {
	if t := c.timed.Load(); t != nil && t != &stopped {
		return (*t).Value(key)
	}
	return c.parent.Value(key)
}
