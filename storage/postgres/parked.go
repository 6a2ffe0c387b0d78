package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// A View ends with a ROLLBACK that nothing waits for but the connection:
// one round trip per View, on every read route. Rather than send it, a
// View leaves its connection parked in its read-only transaction, and the
// next View or GetOne that takes the connection sends the ROLLBACK in the
// same round trip as its own first statements. A connection parked longer
// than Options.ViewLinger (the server has gone quiet) is rolled back and
// given back to the pool, so that no snapshot is held open for long.
//
// Parked connections stay acquired from the read pool, so the reads take
// a slot of readSlots before a connection: a read asks the pool for a
// connection only when none is parked, and then at most readSlots-1 others
// hold one, so the pool always has one to give and no read waits on a
// parked connection.

// parkedConn is a connection left in the read-only transaction of the
// View that used it last.
type parkedConn struct {
	conn  *pgxpool.Conn
	since time.Time
}

// takeReadConn returns a connection of the read pool for a View or a
// GetOne, and whether it is parked in a transaction (its ROLLBACK is then
// to be sent first). giveReadConn must be called with it.
func (s *Store) takeReadConn(ctx context.Context) (*pgxpool.Conn, bool, error) {
	select {
	case s.readSlots <- struct{}{}:
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
	s.parkMu.Lock()
	if n := len(s.parked); n > 0 {
		c := s.parked[n-1].conn
		s.parked = s.parked[:n-1]
		s.parkMu.Unlock()
		return c, true, nil
	}
	s.parkMu.Unlock()
	c, err := s.readPool.Acquire(ctx)
	if err != nil {
		<-s.readSlots
		return nil, false, err
	}
	return c, false, nil
}

// giveReadConn ends a read's use of c: it parks c when its transaction is
// open and healthy (inTx), and gives it back to the pool otherwise.
func (s *Store) giveReadConn(c *pgxpool.Conn, inTx bool) {
	defer func() { <-s.readSlots }()
	if inTx && !s.closed.Load() {
		s.parkMu.Lock()
		if !s.closed.Load() {
			s.parked = append(s.parked, parkedConn{conn: c, since: time.Now()})
			if s.parkTimer == nil {
				s.parkTimer = time.AfterFunc(s.viewLinger, s.unparkIdle)
			}
			s.parkMu.Unlock()
			return
		}
		s.parkMu.Unlock()
	}
	if inTx {
		rollBackAndRelease(c)
		return
	}
	c.Release()
}

// unparkIdle rolls back the connections parked for viewLinger or longer, and
// comes back for the others.
func (s *Store) unparkIdle() {
	s.parkMu.Lock()
	s.parkTimer = nil
	now := time.Now()
	var idle []*pgxpool.Conn
	kept := s.parked[:0]
	next := time.Duration(0)
	for _, p := range s.parked {
		if age := now.Sub(p.since); age >= s.viewLinger || s.closed.Load() {
			idle = append(idle, p.conn)
		} else {
			kept = append(kept, p)
			if left := s.viewLinger - age; next == 0 || left < next {
				next = left
			}
		}
	}
	clear(s.parked[len(kept):])
	s.parked = kept
	if len(kept) > 0 && !s.closed.Load() {
		s.parkTimer = time.AfterFunc(next, s.unparkIdle)
	}
	s.parkMu.Unlock()
	for _, c := range idle {
		rollBackAndRelease(c)
	}
}

// unparkAll rolls back every parked connection, for Close: the pool's
// Close waits for its connections to come back.
func (s *Store) unparkAll() {
	s.parkMu.Lock()
	if s.parkTimer != nil {
		s.parkTimer.Stop()
		s.parkTimer = nil
	}
	parked := s.parked
	s.parked = nil
	s.parkMu.Unlock()
	for _, p := range parked {
		rollBackAndRelease(p.conn)
	}
}

// rollBackAndRelease ends c's transaction and gives c back to its pool,
// which drops it when the ROLLBACK failed (the server then rolls back).
func rollBackAndRelease(c *pgxpool.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), rollbackTimeout)
	_, _ = c.Exec(ctx, "ROLLBACK")
	cancel()
	c.Release()
}
