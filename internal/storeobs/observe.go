// Package storeobs carries what the storage backends do to whoever counts
// it (the metrics package), so that no backend imports a metrics library.
package storeobs

import "sync/atomic"

// Observer receives what the backends do. There is one per process, not one
// per store, because stores are opened by code that knows nothing of
// metrics: metrics.ObserveStorage installs one (SetObserver) and every
// backend reports to it. Its methods are called on the hot path and must be
// cheap and safe for concurrent use.
type Observer interface {
	// Transaction is called once per View or Update when it returns,
	// whatever the number of attempts; err is what the caller got.
	Transaction(backend string, write bool, err error)
	// Conflict is called for every attempt of an Update that hit a
	// conflict, and Retry for every attempt run again after one.
	Conflict(backend string)
	Retry(backend string)
}

type observerBox struct{ o Observer }

var observer atomic.Pointer[observerBox]

// SetObserver installs o as the process's storage observer; nil removes it.
func SetObserver(o Observer) {
	if o == nil {
		observer.Store(nil)
		return
	}
	observer.Store(&observerBox{o})
}

// ObserveTransaction reports a finished View or Update of backend.
func ObserveTransaction(backend string, write bool, err error) {
	if b := observer.Load(); b != nil {
		b.o.Transaction(backend, write, err)
	}
}

// ObserveConflict reports an attempt of backend that hit a conflict, and
// whether it will be retried.
func ObserveConflict(backend string, retried bool) {
	if b := observer.Load(); b != nil {
		b.o.Conflict(backend)
		if retried {
			b.o.Retry(backend)
		}
	}
}
