package postgres

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/marketplace/marketplace/storage"
)

const (
	beginUpdate = "BEGIN ISOLATION LEVEL SERIALIZABLE"
	beginView   = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
	selectValue = "SELECT v FROM kv WHERE k = $1"
	// selectValues reads many keys in one statement, a row per key in
	// their order, NULL for a missing one (v is never NULL). Each key is
	// looked up by a subquery of its own, which the planner cannot turn
	// into a join: every lookup goes through the point index as
	// selectValue's does (see createPointIndex), never through a scan
	// of the btree that a merge or hash join would choose.
	selectValues = "SELECT (SELECT v FROM kv WHERE k = q.k) FROM unnest($1::bytea[]) WITH ORDINALITY AS q(k, i) ORDER BY q.i"
	// The keys are sent in order, so that Updates writing the same keys
	// lock them in the same order rather than deadlock.
	upsertKeys = "INSERT INTO kv (k, v) SELECT * FROM unnest($1::bytea[], $2::bytea[]) ON CONFLICT (k) DO UPDATE SET v = excluded.v"
	deleteKeys = "DELETE FROM kv WHERE k = ANY($1::bytea[])"
)

// rollbackTimeout bounds the ROLLBACK of an attempt whose context may be
// done; a connection that does not answer in time is closed, which rolls
// back too.
const rollbackTimeout = 5 * time.Second

var (
	_ storage.Tx         = (*tx)(nil)
	_ storage.Prefetcher = (*tx)(nil)
	_ storage.TxDrawer   = (*tx)(nil)
)

// tx is one attempt of a View or an Update. Its connection is taken from
// the pool at its first statement, and BEGIN is sent with that statement.
type tx struct {
	s     *Store
	ctx   context.Context
	write bool

	conn  *pgxpool.Conn
	begun bool
	// pending holds the writes not yet sent, by key; a nil value is a
	// delete.
	pending      map[string][]byte
	pendingBytes int
	// fetched holds what Prefetch read, by key; Get answers from it.
	fetched map[string]fetched
	// queued are reads asked for and not sent yet: the keys of a
	// Prefetch and the next pages of ranges. They go with the next
	// exchange, whatever it is for, so that a prefetch and the read
	// after it, or the ranges of a merge opened together, share one
	// round trip; queued lists the keys once each.
	queuedKeys  [][]byte
	queued      map[string]bool
	queuedPages []*iterator
	queuedDraws []*queuedDraw
	// failed is the first database error: the transaction is then
	// aborted, and every later call returns it.
	failed error
	// commitSent is set once COMMIT has gone out.
	commitSent bool
	// announced are the topics to notify with COMMIT (Announce).
	announced []string
}

// run runs fn and, for an Update, commits; it always ends the
// transaction, also when fn panics.
func (t *tx) run(fn func(storage.Tx) error) error {
	defer t.end()
	err := fn(t)
	switch {
	case t.failed != nil:
		if err == nil {
			err = translate(t.failed)
		}
		return err
	case err != nil:
		return err
	case !t.write:
		return nil
	}
	// A caller that gave up while fn ran must not find its writes
	// committed.
	if err := t.ctx.Err(); err != nil {
		return err
	}
	if !t.begun && len(t.pending) == 0 && len(t.announced) == 0 {
		return nil
	}
	return t.exchange(true, true)
}

// end rolls back whatever is left open and gives the connection back.
func (t *tx) end() {
	c := t.conn
	if c == nil {
		return
	}
	t.conn = nil
	pg := c.Conn().PgConn()
	if !t.write && t.failed == nil && !pg.IsClosed() && !pg.IsBusy() && pg.TxStatus() == 'T' {
		// A View's transaction wrote nothing: its ROLLBACK goes with the
		// next read on the connection (parked.go).
		t.s.giveReadConn(c, true)
		return
	}
	if !pg.IsClosed() && pg.TxStatus() != 'I' {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(t.ctx), rollbackTimeout)
		// On failure the pool drops the connection, which the server
		// rolls back.
		_, _ = c.Exec(ctx, "ROLLBACK")
		cancel()
	}
	if !t.write {
		t.s.giveReadConn(c, false)
		return
	}
	c.Release()
}

// fail records the transaction's first database error and returns it as
// the contract's error.
func (t *tx) fail(err error) error {
	if t.failed == nil {
		t.failed = err
	}
	return translate(err)
}

// query is a statement whose rows are read with scan.
type query struct {
	sql  string
	args []any
	scan func(pgx.Rows) error
}

// exchange sends, in one round trip, BEGIN if the transaction has not begun,
// the pending writes if flush, the queued reads (unless it commits: no one
// is left to read them), the queries, and COMMIT if commit.
func (t *tx) exchange(flush, commit bool, queries ...query) error {
	if t.failed != nil {
		t.dropQueued()
		return translate(t.failed)
	}
	if commit {
		t.dropQueued()
	}
	var keys [][]byte
	var found []fetched
	pages, draws := t.queuedPages, t.queuedDraws
	for _, k := range t.queuedKeys {
		if t.queued[string(k)] {
			keys = append(keys, k)
		}
	}
	if len(keys) > 0 {
		found = make([]fetched, len(keys))
		read := readManyQuery(keys, found)
		if len(keys) == 1 {
			read = readQuery(keys[0], &found[0])
		}
		queries = append([]query{read}, queries...)
	}
	for i := len(pages) - 1; i >= 0; i-- {
		queries = append([]query{pages[i].pageQuery()}, queries...)
		// A page includes the writes made before its range was asked
		// for (put sends the queued reads before it records a write).
		flush = flush || t.write
	}
	for _, d := range draws {
		queries = append(queries, d.query())
	}
	t.queuedKeys, t.queuedPages, t.queuedDraws = nil, nil, nil
	clear(t.queued)
	err := t.send(flush, commit, queries)
	for _, it := range pages {
		it.received(err)
	}
	for _, d := range draws {
		d.received(err)
	}
	if err != nil {
		return err
	}
	if len(keys) > 0 && t.fetched == nil {
		t.fetched = make(map[string]fetched, len(keys))
	}
	for i, key := range keys {
		t.fetched[string(key)] = found[i]
	}
	return nil
}

// dropQueued forgets the queued reads; the ranges among them end.
func (t *tx) dropQueued() {
	for _, it := range t.queuedPages {
		it.received(errDropped)
	}
	for _, d := range t.queuedDraws {
		d.received(errDropped)
	}
	t.queuedKeys, t.queuedPages, t.queuedDraws = nil, nil, nil
	clear(t.queued)
}

var errDropped = errors.New("postgres: the read was not sent")

// sendQueued sends the queued reads on their own.
func (t *tx) sendQueued() error { return t.exchange(false, false) }

// send is exchange's round trip.
func (t *tx) send(flush, commit bool, queries []query) error {
	parked := false
	if t.conn == nil {
		var c *pgxpool.Conn
		var err error
		if t.write {
			c, err = t.s.pool.Acquire(t.ctx)
		} else {
			c, parked, err = t.s.takeReadConn(t.ctx)
		}
		if err != nil {
			if t.s.closed.Load() {
				err = storage.ErrClosed
			}
			return t.fail(err)
		}
		t.conn = c
	}
	var b pgx.Batch
	done := func(pgconn.CommandTag) error { return nil }
	if parked {
		// The transaction of the View that used the connection last.
		b.Queue("ROLLBACK").Exec(done)
	}
	if !t.begun {
		if t.write {
			b.Queue(beginUpdate).Exec(done)
		} else {
			b.Queue(beginView).Exec(done)
		}
	}
	if flush && len(t.pending) > 0 {
		var setKeys, setValues, delKeys [][]byte
		for _, k := range slices.Sorted(maps.Keys(t.pending)) {
			if v := t.pending[k]; v != nil {
				setKeys, setValues = append(setKeys, []byte(k)), append(setValues, v)
			} else {
				delKeys = append(delKeys, []byte(k))
			}
		}
		if len(setKeys) > 0 {
			b.Queue(upsertKeys, setKeys, setValues).Exec(done)
		}
		if len(delKeys) > 0 {
			b.Queue(deleteKeys, delKeys).Exec(done)
		}
	}
	for _, q := range queries {
		b.Queue(q.sql, q.args...).Query(q.scan)
	}
	if commit {
		t.queueAnnouncements(&b)
		b.Queue("COMMIT").Exec(done)
	}
	t.begun = true
	t.commitSent = commit
	if err := t.conn.SendBatch(t.ctx, &b).Close(); err != nil {
		return t.fail(err)
	}
	if flush {
		clear(t.pending)
		t.pendingBytes = 0
	}
	return nil
}

// cannotExist reports a key longer than any key Set stores: a read of it
// finds nothing without asking the database, and deleting it changes
// nothing. Such keys come from ids that no one ever created (a request
// naming an item by a 60 KB id), which must read as missing like any other.
func cannotExist(key []byte) bool { return len(key) > MaxKeySize }

func (t *tx) Get(key []byte) ([]byte, error) {
	if len(key) == 0 {
		return nil, storage.ErrEmptyKey
	}
	if cannotExist(key) {
		if t.failed != nil {
			return nil, translate(t.failed)
		}
		return nil, storage.ErrNotFound
	}
	if v, ok := t.pending[string(key)]; ok {
		if v == nil {
			return nil, storage.ErrNotFound
		}
		return append([]byte{}, v...), nil
	}
	if t.queued[string(key)] {
		if err := t.sendQueued(); err != nil {
			return nil, err
		}
	}
	f, ok := t.fetched[string(key)]
	if !ok {
		var err error
		if f, err = t.read(key); err != nil {
			return nil, err
		}
		// The transaction reads one snapshot: a key read again answers
		// from here, with no round trip.
		if t.fetched == nil {
			t.fetched = make(map[string]fetched)
		}
		t.fetched[string(key)] = f
	}
	if !f.found {
		return nil, storage.ErrNotFound
	}
	return append([]byte{}, f.value...), nil
}

// fetched is what a read found at a key.
type fetched struct {
	value []byte
	found bool
}

// readQuery reads key into *f.
func readQuery(key []byte, f *fetched) query {
	return query{sql: selectValue, args: []any{key}, scan: func(rows pgx.Rows) error {
		for rows.Next() {
			f.found = true
			if err := rows.Scan(&f.value); err != nil {
				return err
			}
		}
		return rows.Err()
	}}
}

func (t *tx) read(key []byte) (fetched, error) {
	var f fetched
	if err := t.exchange(false, false, readQuery(key, &f)); err != nil {
		return fetched{}, err
	}
	return f, nil
}

// Prefetch queues the keys that are neither written nor read nor queued
// yet, to be read with the transaction's next round trip, whatever it is
// for, in one statement (selectValues); the Gets that follow answer from
// what it found: the transaction reads one snapshot, so a key read twice
// has one value. One statement rather than one per key: the server plans
// and runs it once, and the client parses one answer, which for the 64
// shards of a tally is most of what a search costs.
func (t *tx) Prefetch(keys [][]byte) error {
	if t.failed != nil {
		return translate(t.failed)
	}
	for _, key := range keys {
		if len(key) == 0 {
			return storage.ErrEmptyKey
		}
		if cannotExist(key) {
			// Get answers it without a read.
			continue
		}
		if _, ok := t.pending[string(key)]; ok {
			continue
		}
		if _, ok := t.fetched[string(key)]; ok || t.queued[string(key)] {
			continue
		}
		if t.queued == nil {
			t.queued = make(map[string]bool, len(keys))
		}
		t.queued[string(key)] = true
		t.queuedKeys = append(t.queuedKeys, key)
	}
	return nil
}

// readManyQuery reads keys into results, in the same order.
func readManyQuery(keys [][]byte, results []fetched) query {
	return query{sql: selectValues, args: []any{keys}, scan: func(rows pgx.Rows) error {
		i := 0
		for rows.Next() {
			if i == len(results) {
				return fmt.Errorf("postgres: %d values for %d keys", i+1, len(results))
			}
			var v []byte
			if err := rows.Scan(&v); err != nil {
				return err
			}
			results[i] = fetched{value: v, found: v != nil}
			i++
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if i != len(results) {
			return fmt.Errorf("postgres: %d values for %d keys", i, len(results))
		}
		return nil
	}}
}

func (t *tx) Set(key, value []byte) error {
	// Never nil: a nil element of the array is NULL, and nil marks a
	// delete here.
	return t.put(key, append(make([]byte, 0, len(value)), value...))
}

func (t *tx) Delete(key []byte) error { return t.put(key, nil) }

func (t *tx) put(key, value []byte) error {
	if len(key) == 0 {
		return storage.ErrEmptyKey
	}
	switch {
	case !t.write:
		return storage.ErrReadOnly
	case t.failed != nil:
		return translate(t.failed)
	case cannotExist(key) && value == nil:
		// Deleting a missing key is not an error.
		return nil
	case cannotExist(key):
		return ErrKeyTooLong
	case t.pendingBytes+len(key)+len(value) > maxPendingBytes:
		return storage.ErrTooBig
	}
	if len(t.queuedPages) > 0 {
		// A range holds the writes made before it was asked for, not
		// this one.
		if err := t.sendQueued(); err != nil {
			return err
		}
	}
	// The write answers the Gets of its key from now on, and a read of
	// it sent later could end up under a range read's flush as what
	// the database held before it.
	delete(t.queued, string(key))
	if t.pending == nil {
		t.pending = map[string][]byte{}
	}
	// A range read sends the pending writes and forgets them; the Gets
	// after it must then read the write, not what was prefetched.
	delete(t.fetched, string(key))
	t.pending[string(key)] = value
	t.pendingBytes += len(key) + len(value)
	return nil
}

var _ storage.SingleGetter = (*Store)(nil)

// GetOne reads key in one statement outside any transaction: a single
// statement sees one snapshot, so it needs neither BEGIN nor ROLLBACK.
func (s *Store) GetOne(ctx context.Context, key []byte) ([]byte, error) {
	if s.closed.Load() {
		return nil, storage.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(key) == 0 {
		return nil, storage.ErrEmptyKey
	}
	if cannotExist(key) {
		return nil, storage.ErrNotFound
	}
	c, parked, err := s.takeReadConn(ctx)
	if err != nil {
		if s.closed.Load() {
			return nil, storage.ErrClosed
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, s.unavailable(err)
	}
	var value []byte
	found := false
	if parked {
		// The ROLLBACK of the View that used the connection last goes in
		// the same round trip.
		var b pgx.Batch
		b.Queue("ROLLBACK").Exec(func(pgconn.CommandTag) error { return nil })
		b.Queue(selectValue, key).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				found = true
				if err := rows.Scan(&value); err != nil {
					return err
				}
			}
			return rows.Err()
		})
		err = c.SendBatch(ctx, &b).Close()
		if err == nil && !found {
			err = pgx.ErrNoRows
		}
	} else {
		err = c.QueryRow(ctx, selectValue, key).Scan(&value)
	}
	s.giveReadConn(c, false)
	if err == nil || errors.Is(err, pgx.ErrNoRows) {
		s.primary.answered()
	}
	switch {
	case err == nil:
		if value == nil {
			value = []byte{}
		}
		return value, nil
	case errors.Is(err, pgx.ErrNoRows):
		return nil, storage.ErrNotFound
	case s.closed.Load():
		return nil, storage.ErrClosed
	case ctx.Err() != nil:
		return nil, fmt.Errorf("%w: %w", ctx.Err(), err)
	case connectionLost(err):
		return nil, s.unavailable(err)
	case statementTimedOut(err):
		return nil, s.readTimedOut(err)
	}
	return nil, translate(err)
}

// queuedDraw is a draw from sequences that waits for the transaction's
// next round trip (DrawLater).
type queuedDraw struct {
	seqs   []*sequence
	values []uint64
	done   bool
	err    error
}

// DrawLater queues the draw in an Update whose sequences have all been
// drawn from before (a statement naming a missing one would abort the
// transaction; Store.NextOfEach creates it).
func (t *tx) DrawLater(names []string) (func() ([]uint64, error), bool) {
	if !t.write || t.failed != nil || len(names) == 0 {
		return nil, false
	}
	d := &queuedDraw{seqs: make([]*sequence, len(names))}
	for i, name := range names {
		q, err := t.s.Sequence(name)
		if err != nil {
			return nil, false
		}
		d.seqs[i] = q.(*sequence)
		if !d.seqs[i].exists.Load() {
			return nil, false
		}
	}
	t.queuedDraws = append(t.queuedDraws, d)
	return func() ([]uint64, error) {
		if !d.done {
			if err := t.sendQueued(); err != nil {
				return nil, err
			}
		}
		if d.err != nil {
			return nil, translate(d.err)
		}
		return d.values, nil
	}, true
}

func (d *queuedDraw) query() query {
	var sql strings.Builder
	sql.WriteString("SELECT ")
	for i, q := range d.seqs {
		if i > 0 {
			sql.WriteString(", ")
		}
		sql.WriteString("nextval('" + q.ident + "')")
	}
	values := make([]int64, len(d.seqs))
	dest := make([]any, len(values))
	for i := range values {
		dest[i] = &values[i]
	}
	return query{sql: sql.String(), scan: func(rows pgx.Rows) error {
		n := 0
		for rows.Next() {
			if err := rows.Scan(dest...); err != nil {
				return err
			}
			n++
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if n != 1 {
			return fmt.Errorf("postgres: a draw returned %d rows", n)
		}
		d.values = make([]uint64, len(values))
		for i, v := range values {
			d.values[i] = uint64(v)
		}
		return nil
	}}
}

func (d *queuedDraw) received(err error) {
	d.done = true
	if err != nil {
		d.values, d.err = nil, err
	}
}
