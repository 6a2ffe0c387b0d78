package questions

import "context"

// SearchByScan runs a search without the seller indexes, loading and sorting
// every matching question: the reference the index-backed pages must equal.
func (s *Service) SearchByScan(ctx context.Context, caller int64, q SearchQuery) (SearchResult, error) {
	return s.search(ctx, caller, q, false)
}
