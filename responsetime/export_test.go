package responsetime

import (
	"context"

	"github.com/marketplace/marketplace/internal/kv"
)

// ScheduledRefresh runs one refresh as Run does at a scheduled instant.
func ScheduledRefresh(ctx context.Context, r *Service) error { return r.scheduledRefresh(ctx) }

// ErrRefreshElsewhere is what ScheduledRefresh returns while another holder
// of the refresh lease refreshes.
var ErrRefreshElsewhere = errRefreshElsewhere

// TakeRefreshLease takes the refresh lease as r's holder would before it
// refreshes, without refreshing: a holder that dies right after.
func TakeRefreshLease(ctx context.Context, r *Service) (bool, error) {
	_, held, err := kv.AcquireLease(ctx, r.store, refreshLease, r.holder, r.wall.Now(), refreshLeaseTTL)
	return held, err
}
