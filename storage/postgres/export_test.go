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
