// Package postgres is the storage backend on PostgreSQL, for several
// stateless servers that share one database.
//
// Layout. One table holds every key: kv (k bytea PRIMARY KEY, v bytea NOT
// NULL). bytea compares bytewise, with no collation, which is the contract's
// key order: range reads use the primary key's btree. Point reads use a hash
// index on k (kv_k_hash), so that a read of a missing key does not conflict
// with writes of its neighbours (see createPointIndex), and the connections
// never scan the table sequentially. kv_meta records the version of this
// layout; Open creates both tables, or checks the version and brings an
// older layout up to date, under a transaction-scoped advisory lock, so
// that servers starting together do not race on CREATE TABLE, and it
// refuses a database whose layout is newer than the binary.
//
// Keys are at most MaxKeySize (2048) bytes: a btree index entry must fit in
// a third of a page (about 2.7 KB), so Set refuses a longer key with
// ErrKeyTooLong rather than the database in the middle of a commit. A
// longer key cannot be there, so Get, GetOne and Prefetch answer
// storage.ErrNotFound for it without a round trip, and Delete does
// nothing: a read of an id no one created is a miss, not an error.
//
// Transactions. An Update is a SERIALIZABLE read-write transaction and a
// View a REPEATABLE READ READ ONLY one, which reads one snapshot and never
// fails to serialize. An Update keeps its writes in memory until it commits
// (Get reads them back from there) and sends them with COMMIT in one round
// trip; a range read first sends the writes made so far, so that the
// database's ordered scan sees them. BEGIN travels with the first
// statement, so an Update that only writes costs one round trip.
//
// Retries. A serialization failure or a deadlock (SQLSTATE 40001, 40P01),
// which may arrive at COMMIT too, rolls the attempt back and runs the
// function again after a jittered, growing pause, up to maxAttempts times;
// then Update returns storage.ErrConflict with the database's error wrapped
// (errors.As finds the *pgconn.PgError). Conflicts counts the retries.
//
// Outages. A server that cannot be reached, or a connection that breaks,
// is storage.ErrUnavailable, returned as soon as a connection fails to
// open (Options.ConnectTimeout bounds that). An Update whose connection broke
// before COMMIT is tried again on a new connection (nothing was committed);
// one whose connection broke while its COMMIT was out cannot know whether
// it committed, and says so with ErrCommitUnknown, as does one whose COMMIT
// came back after its context ended: a COMMIT canceled while it waited for
// a synchronous standby commits on the primary alone. A View is never run
// twice, since its function may gather results as it reads. The pool opens
// new connections once the server is back, through the URL, so that a URL
// with several hosts and target_session_attrs=read-write finds the primary
// after a failover; Failovers and WithoutPrimary count what the store saw
// (primary.go).
//
// Changes. The Store tells other servers of a change by LISTEN/NOTIFY
// (storage.Changes): an Update that announces a topic sends pg_notify with
// its COMMIT, and each Store listens on one connection of its own, opened
// at its first Subscribe, that follows a failover as the pools do and
// wakes every subscriber after it had to connect again (see listen.go).
//
// A canceled context reaches the database: the statement running is
// canceled by a cancel request, not merely abandoned.
//
// Reads cannot starve writes. Views and single reads run on a pool of their
// own (Options.ReadConns), so that however many long reads run, the
// Updates' connections stay free; and each statement of a read is bounded
// by the server (statement_timeout, Options.ReadTimeout), also when its
// caller set no deadline. A read stopped by that bound returns an error
// that wraps context.DeadlineExceeded.
//
// Sequences are PostgreSQL sequences, one per name (kv_seq_ and a hash of
// the name), created on first use under the same advisory lock, with CACHE
// 1: a per-session cache would hand one process ids out of order across
// pooled connections. Next is a nextval outside any transaction, on a small
// pool of its own, so that drawing an id inside an Update never waits for a
// connection that Updates hold; the calls that overlap on one sequence
// share one statement that draws as many values. Advance blocks nextval (ALTER
// SEQUENCE) while it reads and moves the sequence, so it never moves back.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/marketplace/marketplace/internal/storeobs"
	"github.com/marketplace/marketplace/storage"
)

// MaxKeySize is the longest key the backend stores, in bytes.
const MaxKeySize = 2048

// maxAttempts bounds how often an Update that keeps failing to serialize is
// run; with the pauses between attempts it gives up after about two
// seconds. Contention that outlasts that is a hot key, which the domain
// packages avoid by design.
const maxAttempts = 30

// maxReconnects bounds how often an Update whose connection broke before
// its COMMIT is run again on a new one: a pool may hold several
// connections that a server restart has broken.
const maxReconnects = 3

// maxPendingBytes bounds the writes an Update keeps in memory before they
// are sent; more is storage.ErrTooBig.
const maxPendingBytes = 256 << 20

// layoutLock is the advisory lock key under which the tables and sequences
// are created: any constant shared by every process that opens a database.
const layoutLock int64 = 0x6d6b745f6b76 // "mkt_kv"

// Options tune the backend. The zero value suits a server.
type Options struct {
	// MaxConns caps the connections of the pool that runs transactions
	// (default: the pool_max_conns of the URL, else pgxpool's default, the
	// larger of 4 and the number of CPUs). Sequences use two more.
	MaxConns int32
	// ConnectTimeout bounds one attempt to open a connection (default:
	// the connect_timeout of the URL, else 2 seconds), so that requests
	// fail fast while the server cannot be reached.
	ConnectTimeout time.Duration
	// ReadConns caps the connections of the pool that runs Views and
	// single reads (default: the size of the transactions' pool). It is
	// apart from that pool so that reads never hold the connections that
	// writes need.
	ReadConns int32
	// ReadTimeout bounds each statement of a read on the server
	// (statement_timeout; default 5 seconds; negative: no bound).
	ReadTimeout time.Duration
	// ViewLinger is how long a connection may stay in the read-only
	// transaction of the View that used it last, so that the next read on
	// it sends the ROLLBACK in its own round trip (default
	// DefaultViewLinger). Past it the connection is rolled back on its
	// own; a reader of round-trip counts sets it long, so that no
	// ROLLBACK falls between requests.
	ViewLinger time.Duration
	// ListenPing is how long the connection that listens for the other
	// servers' changes may stay silent before it is pinged, to find a
	// connection that died without a word (default 1 second: the safety
	// poll of docs/scale-out.md). A reader of round-trip counts sets it
	// long.
	ListenPing time.Duration
}

// DefaultViewLinger is the default of Options.ViewLinger: long enough for
// the next request on a server that has traffic, short enough that no
// snapshot is held open on a quiet one.
const DefaultViewLinger = 50 * time.Millisecond

// defaultConnectTimeout is the default of Options.ConnectTimeout.
const defaultConnectTimeout = 2 * time.Second

// DefaultReadTimeout is the default of Options.ReadTimeout: far above what
// any page of the API takes (a few milliseconds), so that it only stops a
// read that has gone wrong.
const DefaultReadTimeout = 5 * time.Second

// cancelGrace is how long a canceled statement waits for the server's
// answer to the cancel request before the connection is closed.
const cancelGrace = time.Second

// Store is a PostgreSQL-backed storage.Store.
type Store struct {
	// pool runs Updates; readPool runs Views and GetOne.
	pool     *pgxpool.Pool
	readPool *pgxpool.Pool
	// readSlots bounds the reads that hold a connection of readPool, and
	// parked holds the connections that Views left in their transaction
	// (parked.go).
	readSlots  chan struct{}
	parkMu     sync.Mutex
	parked     []parkedConn
	parkTimer  *time.Timer
	viewLinger time.Duration
	// readTimeout is the statement_timeout of readPool's connections, for
	// the error that reports it (0: none).
	readTimeout time.Duration
	// seqPool runs nextval: Updates draw ids while they hold a
	// connection of pool, so ids must not wait for one.
	seqPool *pgxpool.Pool

	closed    atomic.Bool
	conflicts atomic.Uint64

	seqMu sync.Mutex
	seqs  map[string]*sequence

	// changes is the listening connection and its subscribers (listen.go).
	changes *listener
	// primary follows the server the connections reach (primary.go).
	primary *primaryWatch
}

var _ storage.Store = (*Store)(nil)

// Open connects to the database at url (a postgres:// URL or a key=value
// connection string), creates the backend's tables if they are missing and
// checks their layout version.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	return OpenConfig(ctx, cfg, opts)
}

// OpenConfig is Open with a pool configuration built by the caller (TLS,
// hooks, logging); opts overrides it where set. cfg is not modified.
func OpenConfig(ctx context.Context, cfg *pgxpool.Config, opts Options) (*Store, error) {
	cfg = cfg.Copy()
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	switch {
	case opts.ConnectTimeout > 0:
		cfg.ConnConfig.ConnectTimeout = opts.ConnectTimeout
	case cfg.ConnConfig.ConnectTimeout == 0:
		cfg.ConnConfig.ConnectTimeout = defaultConnectTimeout
	}
	// The table is only ever read by key or by key range. A sequential
	// scan, which the planner prefers while the table is small, takes a
	// predicate lock on the whole table, and every concurrent Update
	// that writes anything then conflicts with the reader.
	cfg.ConnConfig.RuntimeParams = maps.Clone(cfg.ConnConfig.RuntimeParams)
	if cfg.ConnConfig.RuntimeParams == nil {
		cfg.ConnConfig.RuntimeParams = map[string]string{}
	}
	cfg.ConnConfig.RuntimeParams["enable_seqscan"] = "off"
	cfg.ConnConfig.RuntimeParams["enable_bitmapscan"] = "off"
	// pgx's default answer to a canceled context is to drop the
	// connection, which leaves the statement running on the server.
	cfg.ConnConfig.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: cancelGrace}
	}
	watch := &primaryWatch{}
	cfg.AfterConnect = watch.afterConnect(cfg.AfterConnect)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", translate(err))
	}
	readCfg := cfg.Copy()
	if opts.ReadConns > 0 {
		readCfg.MaxConns = opts.ReadConns
	}
	readTimeout := opts.ReadTimeout
	if readTimeout == 0 {
		readTimeout = DefaultReadTimeout
	}
	readCfg.ConnConfig.RuntimeParams = maps.Clone(cfg.ConnConfig.RuntimeParams)
	if readTimeout > 0 {
		readCfg.ConnConfig.RuntimeParams["statement_timeout"] = fmt.Sprint(readTimeout.Milliseconds())
	} else {
		readTimeout = 0
	}
	readPool, err := pgxpool.NewWithConfig(ctx, readCfg)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres: %w", translate(err))
	}
	seqCfg := cfg.Copy()
	seqCfg.MaxConns, seqCfg.MinConns = 2, 0
	seqPool, err := pgxpool.NewWithConfig(ctx, seqCfg)
	if err != nil {
		pool.Close()
		readPool.Close()
		return nil, fmt.Errorf("open postgres: %w", translate(err))
	}
	s := &Store{pool: pool, readPool: readPool, readTimeout: readTimeout, seqPool: seqPool, seqs: map[string]*sequence{},
		changes: newListener(cfg.ConnConfig, opts.ListenPing, watch), primary: watch, readSlots: make(chan struct{}, readPool.Config().MaxConns), viewLinger: opts.ViewLinger}
	if s.viewLinger <= 0 {
		s.viewLinger = DefaultViewLinger
	}
	if err := s.prepareLayout(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	return s, nil
}

// layoutVersion is the version of the tables this package reads and
// writes, recorded in kv_meta. Version 2 added kv_k_hash.
const layoutVersion = 2

// createPointIndex creates the hash index that point reads use. A read of
// a key takes a predicate lock on the index page where the key is or would
// be, and a write of another key on that page then counts as a
// serialization conflict. On the primary key's btree, the page of a missing
// key is the one where its neighbours are, and neighbours are often keys
// that every writer appends (an outbox, a by-date index): every Update that
// looked up a missing key then conflicted with every other. In a hash index
// the page is the key's hash bucket, which other writers hit only by
// chance. Range reads keep the btree.
const createPointIndex = "CREATE INDEX kv_k_hash ON kv USING hash (k) WITH (fillfactor = 10)"

// prepareLayout creates the tables of an empty database, or checks the
// version of those it finds and brings an older layout up to date.
func (s *Store) prepareLayout(ctx context.Context) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// Concurrent CREATE TABLE IF NOT EXISTS can still fail on the
		// catalog's unique index: the lock makes the second one wait and
		// find the tables.
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", layoutLock); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS kv_meta (name text PRIMARY KEY, value bigint NOT NULL)"); err != nil {
			return err
		}
		var version int64
		err := tx.QueryRow(ctx, "SELECT value FROM kv_meta WHERE name = 'layout'").Scan(&version)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			// No IF NOT EXISTS: a kv table that is not ours is refused.
			if _, err := tx.Exec(ctx, "CREATE TABLE kv (k bytea PRIMARY KEY, v bytea NOT NULL) WITH (fillfactor = 70)"); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, createPointIndex); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "INSERT INTO kv_meta (name, value) VALUES ('layout', $1)", layoutVersion)
			return err
		case err != nil:
			return err
		case version > layoutVersion:
			return fmt.Errorf("the database has layout version %d, newer than this binary's %d", version, layoutVersion)
		case version == 1:
			// Writes wait while the index is built: once, at the first
			// start of a newer binary.
			if _, err := tx.Exec(ctx, createPointIndex); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "UPDATE kv_meta SET value = $1 WHERE name = 'layout'", layoutVersion)
			return err
		}
		return nil
	})
	return translate(err)
}

// Conflicts returns how many Update attempts have been run again after a
// serialization failure or a deadlock since the store was opened: near zero
// when concurrent writers touch different records.
func (s *Store) Conflicts() uint64 { return s.conflicts.Load() }

// View runs fn in a REPEATABLE READ READ ONLY transaction.
func (s *Store) View(ctx context.Context, fn func(storage.Tx) error) (err error) {
	defer func() { storeobs.ObserveTransaction(backendName, false, err) }()
	if s.closed.Load() {
		return storage.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// fn may gather results outside the transaction, so a View is never
	// run twice.
	t := &tx{s: s, ctx: ctx}
	err = t.run(fn)
	if t.failed == nil {
		if t.begun {
			s.primary.answered()
		}
		return err
	}
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("%w: %w", ctx.Err(), t.failed)
	case connectionLost(t.failed):
		return s.unavailable(t.failed)
	case statementTimedOut(t.failed):
		return s.readTimedOut(t.failed)
	}
	return err
}

// readTimedOut reports a read that the server stopped at its
// statement_timeout.
func (s *Store) readTimedOut(err error) error {
	return fmt.Errorf("%w: a read ran past the statement timeout of %s: %w", context.DeadlineExceeded, s.readTimeout, err)
}

// backendName labels this backend's transactions for storeobs.Observer.
const backendName = "postgres"

// Update runs fn in a SERIALIZABLE transaction and commits it, running fn
// again after a serialization failure, a deadlock, or a connection that
// broke before COMMIT.
func (s *Store) Update(ctx context.Context, fn func(storage.Tx) error) (err error) {
	defer func() { storeobs.ObserveTransaction(backendName, true, err) }()
	if s.closed.Load() {
		return storage.ErrClosed
	}
	reconnects := 0
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		t := &tx{s: s, ctx: ctx, write: true}
		err = t.run(fn)
		if t.failed == nil {
			if t.begun {
				s.primary.answered()
			}
			if err == nil && t.commitSent && ctx.Err() != nil {
				// The COMMIT came back after the caller gave up. A COMMIT
				// that waits for a synchronous standby (Patroni's
				// synchronous mode) stops waiting when it is canceled, and
				// answers that it committed: on the primary alone, which
				// is no acknowledgement.
				return fmt.Errorf("%w: %w: the commit returned after the context ended", ctx.Err(), ErrCommitUnknown)
			}
			return err
		}
		failed := t.failed
		switch {
		case t.commitSent && !statementFailed(failed) && !pgconn.SafeToRetry(failed):
			// The answer to COMMIT was lost: it may have committed.
			if ctx.Err() != nil {
				return fmt.Errorf("%w: %w: %w", ctx.Err(), ErrCommitUnknown, failed)
			}
			s.primary.lost()
			return fmt.Errorf("%w: %w: %w", storage.ErrUnavailable, ErrCommitUnknown, failed)
		case retryable(failed):
			s.conflicts.Add(1)
			storeobs.ObserveConflict(backendName, attempt < maxAttempts)
			if attempt >= maxAttempts {
				return fmt.Errorf("%w after %d attempts: %w", storage.ErrConflict, attempt, failed)
			}
			if err := pause(ctx, attempt); err != nil {
				return err
			}
		case ctx.Err() != nil:
			return fmt.Errorf("%w: %w", ctx.Err(), failed)
		case connectionLost(failed):
			if cannotConnect(failed) || reconnects >= maxReconnects {
				return s.unavailable(failed)
			}
			reconnects++
		default:
			return err
		}
	}
}

// unavailable reports a connection failure, or ErrClosed when it is the
// store's own Close that closed the pool.
func (s *Store) unavailable(err error) error {
	if s.closed.Load() {
		return storage.ErrClosed
	}
	s.primary.lost()
	return fmt.Errorf("%w: %w", storage.ErrUnavailable, err)
}

// pause waits before attempt+1: a random time below a bound that doubles
// from 2 ms to 100 ms, so that writers that failed together come back apart.
func pause(ctx context.Context, attempt int) error {
	bound := min(time.Millisecond<<min(attempt, 7), 100*time.Millisecond)
	t := time.NewTimer(bound/4 + rand.N(bound*3/4))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Close closes the connection pools, after the transactions running have
// ended. An acknowledged Update is already committed.
func (s *Store) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	s.changes.close()
	s.unparkAll()
	s.pool.Close()
	s.readPool.Close()
	s.seqPool.Close()
	return nil
}

// URL is the storage.Opener of a PostgreSQL database (a postgres:// URL or
// a key=value connection string), with the default Options: the pool is
// tuned by the URL itself (pool_max_conns, connect_timeout).
// marketplace.Open(ctx, postgres.URL(url), opts). An embedder who needs
// more (TLS set up in Go, pgx hooks) opens the store with OpenConfig and
// passes it to marketplace.New.
type URL string

var _ storage.Opener = URL("")

// Open connects to the database at u; see the package-level Open.
func (u URL) Open(ctx context.Context) (storage.Store, error) {
	st, err := Open(ctx, string(u), Options{})
	if err != nil {
		return nil, err
	}
	return st, nil
}

// SharedByProcesses reports true: several servers may share one database,
// and each sees the others' writes by reading again, when told of them
// (Subscribe) or on its own.
func (s *Store) SharedByProcesses() bool { return true }

var _ storage.Shared = (*Store)(nil)
