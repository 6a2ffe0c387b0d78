package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/marketplace/marketplace/storage"
)

var _ storage.Sequence = (*sequence)(nil)

// sequence is the PostgreSQL sequence behind one name.
type sequence struct {
	s    *Store
	name string
	// ident is the sequence's SQL name: a hash of the name, since a name
	// may hold any byte and identifiers are short.
	ident string

	// Calls of Next that overlap share one round trip: waiting holds the
	// calls that arrived since the draw in flight began, in order, and
	// drawing says that a draw is in flight.
	mu      sync.Mutex
	waiting []chan<- drawn
	drawing bool
	// exists says that the database sequence is known to exist, so that
	// NextOfEach may name it in a statement that draws from several.
	exists atomic.Bool
}

// drawn is one id drawn for a call of Next, or the draw's error.
type drawn struct {
	id  uint64
	err error
}

// drawTimeout bounds one draw: it runs for every call waiting on it, so no
// caller's context ends it, and a connection that stops answering must not
// hold the sequence for ever.
const drawTimeout = 30 * time.Second

// sequenceIdent returns the SQL name of the sequence called name.
func sequenceIdent(name string) string {
	sum := sha256.Sum256([]byte(name))
	return "kv_seq_" + hex.EncodeToString(sum[:12])
}

// Sequence returns the sequence called name; the database sequence is
// created by the first Next or Advance.
func (s *Store) Sequence(name string) (storage.Sequence, error) {
	if s.closed.Load() {
		return nil, storage.ErrClosed
	}
	s.seqMu.Lock()
	defer s.seqMu.Unlock()
	q, ok := s.seqs[name]
	if !ok {
		q = &sequence{s: s, name: name, ident: sequenceIdent(name)}
		s.seqs[name] = q
	}
	return q, nil
}

// Next returns nextval of the sequence, creating it on first use. Calls
// that arrive while a draw is in flight wait for it to end and are then
// served together, in the order they arrived, by one statement that draws
// as many values: under load, a server draws the ids of several requests
// in one round trip, and no id is drawn before it is asked for, so an
// Advance through another server holds for every Next that begins after it.
func (q *sequence) Next(ctx context.Context) (uint64, error) {
	if q.s.closed.Load() {
		return 0, storage.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	ch := make(chan drawn, 1)
	q.mu.Lock()
	q.waiting = append(q.waiting, ch)
	if !q.drawing {
		q.drawing = true
		go q.drawLoop()
	}
	q.mu.Unlock()
	select {
	case d := <-ch:
		if d.err != nil {
			return 0, q.s.seqError(ctx, fmt.Errorf("sequence %q: %w", q.name, d.err))
		}
		return d.id, nil
	case <-ctx.Done():
		// The id drawn for this call, if any, is a gap.
		return 0, ctx.Err()
	}
}

// drawLoop serves the waiting calls, one draw for all those that arrived
// during the previous one, until none is left.
func (q *sequence) drawLoop() {
	for {
		q.mu.Lock()
		batch := q.waiting
		q.waiting = nil
		if len(batch) == 0 {
			q.drawing = false
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
		ids, err := q.draw(len(batch))
		for i, ch := range batch {
			if err != nil {
				ch <- drawn{err: err}
			} else {
				ch <- drawn{id: ids[i]}
			}
		}
	}
}

// draw returns n new values of the sequence, in increasing order.
func (q *sequence) draw(n int) ([]uint64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), drawTimeout)
	defer cancel()
	ids := make([]uint64, 0, n)
	err := q.withSequence(ctx, func() error {
		ids = ids[:0]
		if n == 1 {
			var id int64
			if err := q.s.seqPool.QueryRow(ctx, "SELECT nextval('"+q.ident+"')").Scan(&id); err != nil {
				return err
			}
			ids = append(ids, uint64(id))
			return nil
		}
		rows, err := q.s.seqPool.Query(ctx, "SELECT nextval('"+q.ident+"') FROM generate_series(1, $1)", n)
		if err != nil {
			return err
		}
		var id int64
		_, err = pgx.ForEachRow(rows, []any{&id}, func() error {
			ids = append(ids, uint64(id))
			return nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(ids) != n {
		return nil, fmt.Errorf("drew %d values, want %d", len(ids), n)
	}
	q.exists.Store(true)
	q.s.primary.answered()
	// nextval runs once per row in the order of the rows; sorted, the
	// calls that arrived first get the smaller ids whatever the plan.
	slices.Sort(ids)
	return ids, nil
}

var _ storage.SequenceGroup = (*Store)(nil)

// NextOfEach draws the next value of each sequence of names in one
// statement. A sequence not yet known to exist is drawn on its own first,
// which creates it: a statement that names a missing sequence fails before
// it draws anything, but a draw must not wait on a failure to learn that.
func (s *Store) NextOfEach(ctx context.Context, names []string) ([]uint64, error) {
	if s.closed.Load() {
		return nil, storage.ErrClosed
	}
	seqs := make([]*sequence, len(names))
	together := len(names) > 1
	for i, name := range names {
		q, err := s.Sequence(name)
		if err != nil {
			return nil, err
		}
		seqs[i] = q.(*sequence)
		together = together && seqs[i].exists.Load()
	}
	if !together {
		ids := make([]uint64, len(seqs))
		for i, q := range seqs {
			id, err := q.Next(ctx)
			if err != nil {
				return nil, err
			}
			ids[i] = id
		}
		return ids, nil
	}
	var sql strings.Builder
	sql.WriteString("SELECT ")
	for i, q := range seqs {
		if i > 0 {
			sql.WriteString(", ")
		}
		sql.WriteString("nextval('" + q.ident + "')")
	}
	values := make([]int64, len(seqs))
	dest := make([]any, len(seqs))
	for i := range values {
		dest[i] = &values[i]
	}
	dctx, cancel := context.WithTimeout(ctx, drawTimeout)
	defer cancel()
	if err := s.seqPool.QueryRow(dctx, sql.String()).Scan(dest...); err != nil {
		return nil, s.seqError(ctx, fmt.Errorf("sequences %q: %w", names, err))
	}
	ids := make([]uint64, len(values))
	for i, v := range values {
		ids[i] = uint64(v)
	}
	s.primary.answered()
	return ids, nil
}

// Advance makes every later Next return more than n. It holds ALTER
// SEQUENCE's lock, which blocks nextval, between reading the sequence and
// moving it: a nextval in between could otherwise pass n and then be
// repeated.
func (q *sequence) Advance(ctx context.Context, n uint64) error {
	if n >= math.MaxInt64 {
		return fmt.Errorf("sequence %q: cannot advance past %d", q.name, n)
	}
	err := q.withSequence(ctx, func() error {
		return pgx.BeginFunc(ctx, q.s.seqPool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "ALTER SEQUENCE "+q.ident+" OWNED BY NONE"); err != nil {
				return err
			}
			var next int64
			if err := tx.QueryRow(ctx, "SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END FROM "+q.ident).Scan(&next); err != nil {
				return err
			}
			if uint64(next) > n {
				return nil
			}
			_, err := tx.Exec(ctx, "SELECT setval('"+q.ident+"', $1, true)", int64(n))
			return err
		})
	})
	if err != nil {
		return q.s.seqError(ctx, fmt.Errorf("sequence %q: advance to %d: %w", q.name, n, err))
	}
	return nil
}

// withSequence runs fn, creating the sequence and running fn again if it
// does not exist yet.
func (q *sequence) withSequence(ctx context.Context, fn func() error) error {
	if q.s.closed.Load() {
		return storage.ErrClosed
	}
	err := fn()
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != undefinedTable {
		return err
	}
	if err := q.create(ctx); err != nil {
		return err
	}
	return fn()
}

func (q *sequence) create(ctx context.Context) error {
	return pgx.BeginFunc(ctx, q.s.seqPool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", layoutLock); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "CREATE SEQUENCE IF NOT EXISTS "+q.ident+" AS bigint MINVALUE 1 START 1 CACHE 1 NO CYCLE"); err != nil {
			return err
		}
		// The comment tells an operator which name the hash stands for.
		// COMMENT takes no parameters: format quotes the name.
		if !utf8.ValidString(q.name) || strings.ContainsRune(q.name, 0) {
			return nil
		}
		var comment string
		if err := tx.QueryRow(ctx, "SELECT format('COMMENT ON SEQUENCE %I IS %L', $1::text, $2::text)", q.ident, q.name).Scan(&comment); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, comment)
		return err
	})
}

// seqError translates a sequence's error; after Close it is ErrClosed.
func (s *Store) seqError(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, storage.ErrClosed) || s.closed.Load():
		return storage.ErrClosed
	case ctx.Err() != nil:
		return fmt.Errorf("%w: %w", ctx.Err(), err)
	case connectionLost(err):
		s.primary.lost()
	}
	return translate(err)
}

var _ storage.SequenceRewinder = (*Store)(nil)

// SequenceStates returns the next id of every sequence, by the name kept in
// the sequence's comment.
func (s *Store) SequenceStates(ctx context.Context) (map[string]uint64, error) {
	if s.closed.Load() {
		return nil, storage.ErrClosed
	}
	rows, err := s.seqPool.Query(ctx, `SELECT coalesce(obj_description(format('%I.%I', schemaname, sequencename)::regclass, 'pg_class'), ''), sequencename
		FROM pg_sequences WHERE schemaname = current_schema() AND sequencename LIKE 'kv\_seq\_%'`)
	if err != nil {
		return nil, s.seqError(ctx, fmt.Errorf("read sequences: %w", err))
	}
	idents := map[string]string{}
	for rows.Next() {
		var name, ident string
		if err := rows.Scan(&name, &ident); err != nil {
			rows.Close()
			return nil, s.seqError(ctx, fmt.Errorf("read sequences: %w", err))
		}
		if name != "" && ident == sequenceIdent(name) {
			idents[name] = ident
		}
	}
	if err := rows.Err(); err != nil {
		return nil, s.seqError(ctx, fmt.Errorf("read sequences: %w", err))
	}
	out := map[string]uint64{}
	for name, ident := range idents {
		// pg_sequences hides the value set by setval(..., false): read the
		// sequence itself.
		var next int64
		err := s.seqPool.QueryRow(ctx, "SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END FROM "+ident).Scan(&next)
		if err != nil {
			return nil, s.seqError(ctx, fmt.Errorf("read sequence %q: %w", name, err))
		}
		if next > 1 {
			out[name] = uint64(next)
		}
	}
	return out, nil
}

// RewindSequences sets every sequence back to next, or to 1 when not named,
// in one transaction.
func (s *Store) RewindSequences(ctx context.Context, next map[string]uint64) error {
	if s.closed.Load() {
		return storage.ErrClosed
	}
	for name := range next {
		q, err := s.Sequence(name)
		if err != nil {
			return err
		}
		// Create it if needed: Advance to 0 moves nothing.
		if err := q.Advance(ctx, 0); err != nil {
			return err
		}
	}
	err := pgx.BeginFunc(ctx, s.seqPool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT setval(format('%I.%I', schemaname, sequencename)::regclass, 1, false)
			FROM pg_sequences WHERE schemaname = current_schema() AND sequencename LIKE 'kv\_seq\_%'`); err != nil {
			return err
		}
		for name, n := range next {
			if n >= math.MaxInt64 {
				return fmt.Errorf("sequence %q: cannot rewind to %d", name, n)
			}
			if _, err := tx.Exec(ctx, "SELECT setval('"+sequenceIdent(name)+"', $1, false)", int64(n)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return s.seqError(ctx, fmt.Errorf("rewind sequences: %w", err))
	}
	return nil
}
