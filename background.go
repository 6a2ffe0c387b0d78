package marketplace

import (
	"context"
	"sync"
)

// background lets a Reset or a restore stop the delivery loop that Start
// runs and start it again afterwards, without ending Start.
type background struct {
	mu      sync.Mutex
	paused  int
	resumed chan struct{} // closed when the last pause ends
	cancel  context.CancelFunc
	done    chan struct{} // closed when the running loop has returned
	closed  bool
}

// runNotify runs the delivery loop for Start, again after every pause.
func (m *Marketplace) runNotify(ctx context.Context) error {
	b := &m.bg
	for {
		b.mu.Lock()
		for b.paused > 0 && !b.closed {
			wait := b.resumed
			b.mu.Unlock()
			select {
			case <-wait:
			case <-ctx.Done():
				return ctx.Err()
			}
			b.mu.Lock()
		}
		if b.closed {
			b.mu.Unlock()
			return nil
		}
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		b.cancel, b.done = cancel, done
		b.mu.Unlock()

		err := m.Notify.Run(runCtx)
		// Read before our own cancel: the loop's context ended while ctx
		// lives only when a pause (or close) stopped it. The pause count
		// cannot say so, because a pause may have ended already by the
		// time this goroutine looks, and the loop would then stop for good.
		pausedOrClosed := runCtx.Err() != nil && ctx.Err() == nil
		cancel()

		b.mu.Lock()
		b.cancel, b.done = nil, nil
		b.mu.Unlock()
		close(done)
		if !pausedOrClosed {
			return err
		}
	}
}

// pauseBackground stops the delivery loop, waiting for its POSTs in flight
// to end and be recorded, and keeps it stopped until resume is called.
func (m *Marketplace) pauseBackground() (resume func()) {
	b := &m.bg
	b.mu.Lock()
	if b.paused == 0 {
		b.resumed = make(chan struct{})
	}
	b.paused++
	cancel, done := b.cancel, b.done
	b.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.paused--
		if b.paused == 0 {
			close(b.resumed)
		}
	}
}

// close ends runNotify for good (Close).
func (b *background) close() {
	b.mu.Lock()
	b.closed = true
	cancel, resumed := b.cancel, b.resumed
	if b.paused > 0 && resumed != nil {
		// Wake a loop waiting for the end of a pause: it sees closed.
		select {
		case <-resumed:
		default:
			close(resumed)
			b.resumed = make(chan struct{})
		}
	}
	b.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}
