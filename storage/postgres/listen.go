package postgres

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"

	"github.com/marketplace/marketplace/storage"
)

// Changes between servers travel by LISTEN/NOTIFY. An Update that
// announces topics sends one pg_notify statement for them in its commit
// batch, before COMMIT: PostgreSQL delivers the notifications when, and
// only if, the transaction commits, and the statement costs no round trip
// of its own. Each Store listens on one connection of its own, opened at
// the first Subscribe, and hands each notification's topic (its payload)
// to that topic's subscribers.
//
// A listening session misses no notification while it lives, so the only
// way to miss one is to lose the connection: the listener then connects
// again (through the same URL, so that a multi-host URL with
// target_session_attrs finds the new primary after a failover), LISTENs,
// and wakes every subscriber, whatever its topic, to read again what it
// follows. A connection that died without a word (a host gone, a network
// cut) is found by the safety poll: after safetyPeriod with no
// notification the listener pings the server, which is the only statement
// an idle store sends for its changes.

// changesChannel is the channel every Store of a database listens on.
const changesChannel = "marketplace_changes"

// notifyTopics sends one notification per topic of $1.
const notifyTopics = "SELECT pg_notify('" + changesChannel + "', topic) FROM unnest($1::text[]) AS topic"

// safetyPeriod is how long the listener waits for a notification before it
// pings the server to know its connection still lives.
const safetyPeriod = time.Second

// pingTimeout bounds the safety poll's ping: a server that does not answer
// in time is taken as lost, and the listener connects again.
const pingTimeout = 5 * time.Second

// Reconnection pauses grow from reconnectMin to reconnectMax while the
// server cannot be reached.
const (
	reconnectMin = 20 * time.Millisecond
	reconnectMax = time.Second
)

var (
	_ storage.Changes   = (*Store)(nil)
	_ storage.Announcer = (*tx)(nil)
)

// Announce notifies the subscribers of topic, in every process on the
// database, when the Update commits. In a View it does nothing: a View
// changes nothing.
func (t *tx) Announce(topic string) {
	if !t.write || slices.Contains(t.announced, topic) {
		return
	}
	t.announced = append(t.announced, topic)
}

// queueAnnouncements adds the attempt's notifications to its commit batch.
func (t *tx) queueAnnouncements(b *pgx.Batch) {
	if len(t.announced) > 0 {
		b.Queue(notifyTopics, t.announced).Exec(func(pgconn.CommandTag) error { return nil })
	}
}

// Subscribe returns a channel that receives after each committed Update,
// through any Store on the database, that announced topic, and after the
// listening connection was lost and opened again; see storage.Changes.
func (s *Store) Subscribe(topic string) (<-chan struct{}, func()) {
	return s.changes.subscribe(topic)
}

// listener is a Store's listening connection and its subscribers.
type listener struct {
	cfg *pgx.ConnConfig
	// period is the silence after which the connection is pinged
	// (Options.ListenPing).
	period time.Duration

	mu      sync.Mutex
	subs    map[string][]chan struct{}
	started bool
	closed  bool
	stop    context.CancelFunc
	done    chan struct{}

	// pid is the backend process of the listening connection (0 while
	// there is none); listens counts the LISTENs made and pings the
	// safety polls: for tests.
	pid     atomic.Uint32
	listens atomic.Uint64
	pings   atomic.Uint64
	// beforeConnect, set by tests, runs before each connection attempt.
	beforeConnect atomic.Pointer[func()]
	// primary is told of the server each connection reaches, and of
	// connections lost (primary.go).
	primary *primaryWatch
}

// newListener returns the listener of a store whose pool connects with cfg
// and follows the primary with w.
func newListener(cfg *pgx.ConnConfig, period time.Duration, w *primaryWatch) *listener {
	cfg = cfg.Copy()
	// The pool cancels a statement with a cancel request, a connection
	// of its own: the listener's wait ends by its deadline every
	// safetyPeriod, which must cost nothing, and leave the connection
	// usable.
	cfg.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.DeadlineContextWatcherHandler{Conn: c.Conn()}
	}
	if period <= 0 {
		period = safetyPeriod
	}
	return &listener{cfg: cfg, subs: map[string][]chan struct{}{}, period: period, primary: w}
}

func (l *listener) subscribe(topic string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ch, func() {}
	}
	l.subs[topic] = append(l.subs[topic], ch)
	if !l.started {
		l.started = true
		ctx, cancel := context.WithCancel(context.Background())
		l.stop, l.done = cancel, make(chan struct{})
		go func() {
			defer close(l.done)
			l.run(ctx)
		}()
	}
	return ch, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		subs := slices.DeleteFunc(l.subs[topic], func(c chan struct{}) bool { return c == ch })
		if len(subs) == 0 {
			delete(l.subs, topic)
		} else {
			l.subs[topic] = subs
		}
	}
}

// close stops listening, for the Store's Close.
func (l *listener) close() {
	l.mu.Lock()
	l.closed = true
	stop, done := l.stop, l.done
	l.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// wake tells the subscribers of topic, or every subscriber when all is set.
func (l *listener) wake(topic string, all bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	send := func(ch chan struct{}) {
		select {
		case ch <- struct{}{}:
		default:
			// A change is already waiting to be read.
		}
	}
	if !all {
		for _, ch := range l.subs[topic] {
			send(ch)
		}
		return
	}
	for _, subs := range l.subs {
		for _, ch := range subs {
			send(ch)
		}
	}
}

// run listens until ctx ends, connecting again whenever the connection is
// lost.
func (l *listener) run(ctx context.Context) {
	pause := reconnectMin
	for {
		conn, err := l.connect(ctx)
		if err == nil {
			pause = reconnectMin
			// Whatever was announced while no connection listened is
			// lost: every subscriber reads again.
			l.wake("", true)
			l.listens.Add(1)
			// receive ends when the connection is lost or ctx ends: either
			// way the loop below tells which, and its error says nothing
			// more.
			_ = l.receive(ctx, conn)
			l.pid.Store(0)
			if ctx.Err() == nil {
				l.primary.lost()
			}
			closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = conn.Close(closeCtx)
			cancel()
		}
		if ctx.Err() != nil {
			return
		}
		if err != nil && connectionLost(err) {
			l.primary.lost()
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		pause = min(pause*2, reconnectMax)
	}
}

// connect opens the listening connection: through the pool's URL, so that
// a multi-host URL with target_session_attrs finds the current primary.
func (l *listener) connect(ctx context.Context) (*pgx.Conn, error) {
	if f := l.beforeConnect.Load(); f != nil {
		(*f)()
	}
	conn, err := pgx.ConnectConfig(ctx, l.cfg)
	if err != nil {
		return nil, err
	}
	// The question of primary.go goes with the LISTEN, in one round trip.
	results, err := conn.PgConn().Exec(ctx, "LISTEN "+changesChannel+"; "+identifyServer).ReadAll()
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// A server that refuses the question rolled the LISTEN back with
		// it: listen alone.
		results, err = conn.PgConn().Exec(ctx, "LISTEN "+changesChannel).ReadAll()
	}
	if err != nil {
		_ = conn.Close(context.Background())
		return nil, err
	}
	l.primary.record(results[len(results)-1])
	l.pid.Store(conn.PgConn().PID())
	return conn, nil
}

// receive hands notifications to the subscribers until the connection
// fails or ctx ends; after each period of silence it pings the server.
func (l *listener) receive(ctx context.Context, conn *pgx.Conn) error {
	for {
		wait, cancel := context.WithTimeout(ctx, l.period)
		n, err := conn.WaitForNotification(wait)
		cancel()
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err == nil:
			l.wake(n.Payload, false)
			continue
		case !pgconn.Timeout(err) || conn.IsClosed():
			return err
		}
		ping, cancel := context.WithTimeout(ctx, pingTimeout)
		err = conn.Ping(ping)
		cancel()
		l.pings.Add(1)
		if err != nil {
			return err
		}
	}
}
