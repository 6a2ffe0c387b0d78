package questions

import (
	"context"

	"marketplace/storage"
)

// SearchByScan runs a search without the seller indexes, loading and sorting
// every matching question: the reference the index-backed pages must equal.
func (s *Service) SearchByScan(ctx context.Context, caller int64, q SearchQuery) (SearchResult, error) {
	return s.search(ctx, caller, q, false)
}

// ScheduledRefresh runs one refresh as Run does at a scheduled instant.
func ScheduledRefresh(ctx context.Context, r *ResponseTimes) error { return r.scheduledRefresh(ctx) }

// ErrRefreshElsewhere is what ScheduledRefresh returns while another holder
// of the refresh lease refreshes.
var ErrRefreshElsewhere = errRefreshElsewhere

// TakeRefreshLease takes the refresh lease as r's holder would before it
// refreshes, without refreshing: a holder that dies right after.
func TakeRefreshLease(ctx context.Context, r *ResponseTimes) (bool, error) {
	_, held, err := storage.AcquireLease(ctx, r.store, refreshLease, r.holder, r.wall.Now(), refreshLeaseTTL)
	return held, err
}
