package postgres

import "github.com/marketplace/marketplace/storage"

// WaitingNext returns how many calls of Next on q wait for the draw in
// flight to end before theirs begins, and whether a draw is in flight.
func WaitingNext(q storage.Sequence) (waiting int, drawing bool) {
	s := q.(*sequence)
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.waiting), s.drawing
}

// SequenceIdent returns the SQL name of the sequence called name.
func SequenceIdent(name string) string { return sequenceIdent(name) }

// ListenerPID returns the backend process of st's listening connection, or
// 0 while it has none.
func ListenerPID(st *Store) uint32 { return st.changes.pid.Load() }

// Listens returns how many times st's listener has connected and LISTENed.
func Listens(st *Store) uint64 { return st.changes.listens.Load() }

// SafetyPolls returns how many times st's listener has pinged the server
// after a safetyPeriod of silence.
func SafetyPolls(st *Store) uint64 { return st.changes.pings.Load() }

// BeforeListen makes st's listener call fn before each connection attempt.
func BeforeListen(st *Store, fn func()) { st.changes.beforeConnect.Store(&fn) }
