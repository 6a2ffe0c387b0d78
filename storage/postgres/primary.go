package postgres

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A store follows the primary it writes to, for an operator who runs
// PostgreSQL with failover (Patroni, see docs/scale-out.md): how often its
// connections found a different primary than before (Failovers), and how
// long it found none (WithoutPrimary).
//
// Each new connection, in the pools and the listener's, asks the server
// which run of which cluster it is: the cluster's system identifier, which
// its replicas share, and the time its postmaster started, which differs
// from one server of the cluster to another and changes when a server
// restarts. That is one statement per new connection; a request that finds
// a connection open asks nothing. A connection made to another run than the
// last one counts a failover. A run that was replaced never serves as the
// primary again (a demoted primary restarts, and so starts another run), so
// a late connection to it, made just before the failover and reported
// after, counts nothing.
//
// The time without a primary runs from the first failure to reach the
// database (storage.ErrUnavailable: no connection could be opened, or one
// broke) to the next statement that a server answers, through a new
// connection or an open one. A server that makes no request notices an
// outage by its listener's safety poll (listen.go), within a second.

// identifyServer names the run of the server that answers it, in one text
// column (the simple protocol, one round trip): the cluster's system
// identifier and the postmaster's start time in microseconds.
const identifyServer = "SELECT system_identifier::text || '/' || (extract(epoch FROM pg_postmaster_start_time()) * 1000000)::bigint::text FROM pg_control_system()"

// retiredRuns bounds how many replaced runs a store remembers: a late
// connection can only come from the last few.
const retiredRuns = 8

// primaryWatch holds what a store knows of the primary its connections
// reach. Its methods are safe for concurrent use; answered, called after
// every successful statement, costs one atomic load while a primary
// answers.
type primaryWatch struct {
	// down is set while no primary answers: answered's fast path.
	down atomic.Bool

	mu sync.Mutex
	// run is the primary's run ("" until the first connection says).
	run     string
	retired []string
	// failovers counts the changes of run.
	failovers uint64
	// downSince is when the current outage began (down set); downFor
	// sums the outages that ended.
	downSince time.Time
	downFor   time.Duration
}

// reached records a new connection to the server run: a failover when run
// is not the primary's run, and the end of an outage.
func (w *primaryWatch) reached(run string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.run == "":
		w.run = run
	case run == w.run:
	case retired(w.retired, run):
		// Made to the former primary before the failover: it proves
		// nothing about the primary of now.
		return
	default:
		w.retired = append(w.retired, w.run)
		if len(w.retired) > retiredRuns {
			w.retired = w.retired[1:]
		}
		w.run = run
		w.failovers++
	}
	w.endOutage()
}

func retired(runs []string, run string) bool {
	for _, r := range runs {
		if r == run {
			return true
		}
	}
	return false
}

// answered records a statement that the primary answered.
func (w *primaryWatch) answered() {
	if !w.down.Load() {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.endOutage()
}

// endOutage ends the outage in course, if any; w.mu is held.
func (w *primaryWatch) endOutage() {
	if !w.down.Load() {
		return
	}
	w.downFor += time.Since(w.downSince)
	w.down.Store(false)
}

// lost records a failure to reach the primary: an outage begins, unless
// one is in course.
func (w *primaryWatch) lost() {
	if w.down.Load() {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.down.Load() {
		w.downSince = time.Now()
		w.down.Store(true)
	}
}

// counts returns the failovers and the time without a primary, the outage
// in course included. Both only grow.
func (w *primaryWatch) counts() (uint64, time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	d := w.downFor
	if w.down.Load() {
		d += time.Since(w.downSince)
	}
	return w.failovers, d
}

// identify asks the server of a new connection which run it is, and
// records it. A server that refuses the question (a role that may not read
// pg_control_system, on some hosted services) leaves the connection usable
// and the failovers uncounted; a connection that fails is an error.
func (w *primaryWatch) identify(ctx context.Context, c *pgconn.PgConn) error {
	results, err := c.Exec(ctx, identifyServer).ReadAll()
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			return nil
		}
		return err
	}
	w.record(results[len(results)-1])
	return nil
}

// afterConnect returns a pool's AfterConnect hook: then (the caller's own
// hook, if any), and the question of the server's run.
func (w *primaryWatch) afterConnect(then func(context.Context, *pgx.Conn) error) func(context.Context, *pgx.Conn) error {
	return func(ctx context.Context, c *pgx.Conn) error {
		if then != nil {
			if err := then(ctx, c); err != nil {
				return err
			}
		}
		return w.identify(ctx, c.PgConn())
	}
}

// record reads the run from the result of identifyServer.
func (w *primaryWatch) record(r *pgconn.Result) {
	if r.Err == nil && len(r.Rows) == 1 && len(r.Rows[0]) == 1 {
		w.reached(string(r.Rows[0][0]))
	}
}

// Failovers returns how many times the store's new connections have found
// a different primary than the one before: another server of the
// cluster after a failover or a switchover, or the same server after a
// restart. The first connection counts none.
func (s *Store) Failovers() uint64 {
	n, _ := s.primary.counts()
	return n
}

// WithoutPrimary returns how long, since the store was opened, it has
// found no primary to answer it: from a failure to reach the database to
// the next statement answered, the outage in course included.
func (s *Store) WithoutPrimary() time.Duration {
	_, d := s.primary.counts()
	return d
}
