// Package retrylog reports the outcomes of background work that retries by
// itself (a poll, a scheduled refresh, a watcher): a passing outage of the
// store is logged once, at WARN, when it begins, and once more, at INFO,
// when the work succeeds again; any other failure is logged at ERROR, as is
// a job that gives up. A database restart then leaves two lines in the log,
// not one per attempt, and none at ERROR for work that recovered.
package retrylog

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/marketplace/marketplace/storage"
)

// Log reports the attempts of one job. It is safe for concurrent use.
type Log struct {
	logger *slog.Logger
	job    string
	now    func() time.Time

	mu       sync.Mutex
	failing  bool
	failures int
	since    time.Time
}

// New returns the log of job (a few words, "undo interrupted reference
// imports"), written to logger; now is the wall clock the outage's length
// is measured on.
func New(logger *slog.Logger, job string, now func() time.Time) *Log {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Log{logger: logger, job: job, now: now}
}

// Passing reports an error that the next attempt may not meet: the store
// cannot be reached, or a read ran out of its time (the database's
// statement timeout).
func Passing(err error) bool {
	return errors.Is(err, storage.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded)
}

// Report records the outcome of one attempt: nil for a success.
func (l *Log) Report(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case err == nil:
		if l.failing {
			l.logger.Info(l.job+": working again", "failed_attempts", l.failures,
				"outage", l.now().Sub(l.since).Round(time.Millisecond).String())
		}
		l.failing, l.failures = false, 0
	case Passing(err):
		if !l.failing {
			l.failing, l.since = true, l.now()
			l.logger.Warn(l.job+": the store is unavailable, retrying", "err", err)
		}
		l.failures++
	default:
		l.logger.Error(l.job, "err", err)
	}
}

// GaveUp reports that the job stopped trying after err: it is logged at
// ERROR whatever the error.
func (l *Log) GaveUp(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failing, l.failures = false, 0
	l.logger.Error(l.job+": giving up", "err", err)
}
