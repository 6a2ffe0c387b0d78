// Package logbuf writes log lines from many goroutines to one file with
// fewer write calls: a line handed to Write is copied and written by a
// goroutine of the Writer's own, together with the lines that arrived
// while it wrote the previous ones.
//
// A request log line written straight to stderr costs a write(2) under the
// logger's lock, about 6% of the rate of a server asking questions on the
// memory backend; batched, it costs a copy. A line is not held back for a
// timer: the writer goroutine writes it as soon as it runs, so a line
// written alone reaches the file microseconds later, and only the lines in
// that gap are lost when the process is killed.
package logbuf

import (
	"io"
	"sync"
)

// maxPending bounds the bytes waiting to be written: past it, Write waits
// for the file, as an unbatched write would, rather than hold an unbounded
// backlog in memory.
const maxPending = 1 << 20

// Writer is an io.Writer that batches the lines written to it; it is safe
// for concurrent use. Close writes what is left.
type Writer struct {
	out io.Writer

	mu      sync.Mutex
	room    *sync.Cond // signalled when the writer goroutine took the pending bytes
	pending []byte
	closed  bool
	err     error // the first error of out

	wake chan struct{} // has a value when pending may hold bytes
	done chan struct{} // closed when the writer goroutine has ended
}

// New returns a Writer that writes to out, and starts its goroutine.
func New(out io.Writer) *Writer {
	w := &Writer{out: out, wake: make(chan struct{}, 1), done: make(chan struct{})}
	w.room = sync.NewCond(&w.mu)
	go w.run()
	return w
}

// Write copies p to be written. It returns the first error out returned,
// if any, and io.ErrClosedPipe after Close.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	for len(w.pending) > 0 && len(w.pending)+len(p) > maxPending && !w.closed && w.err == nil {
		w.room.Wait()
	}
	if w.closed {
		w.mu.Unlock()
		return 0, io.ErrClosedPipe
	}
	if w.err != nil {
		err := w.err
		w.mu.Unlock()
		return 0, err
	}
	w.pending = append(w.pending, p...)
	// Under mu, so that Close cannot close wake in between.
	select {
	case w.wake <- struct{}{}:
	default: // already woken
	}
	w.mu.Unlock()
	return len(p), nil
}

// run writes the pending bytes whenever there are some, until Close.
func (w *Writer) run() {
	defer close(w.done)
	var writing []byte
	for range w.wake {
		for {
			w.mu.Lock()
			writing, w.pending = w.pending, writing[:0]
			w.room.Broadcast()
			w.mu.Unlock()
			if len(writing) == 0 {
				break
			}
			if _, err := w.out.Write(writing); err != nil {
				w.mu.Lock()
				if w.err == nil {
					w.err = err
				}
				w.room.Broadcast()
				w.mu.Unlock()
			}
		}
	}
}

// Close writes the bytes still pending and stops the Writer. It returns
// the first error out returned, if any.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		<-w.done
		return w.err
	}
	w.closed = true
	w.room.Broadcast()
	w.mu.Unlock()
	close(w.wake)
	<-w.done
	return w.err
}
