package responsetime

import (
	"context"
	"errors"
	"time"

	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/kv"
)

// refreshLease is the lease of the scheduled refresh in a store that several
// processes share: the one that holds it refreshes, the others find the
// refresh done. Its duration bounds how late the refresh can be when its
// holder dies in the middle (another takes over after it); a refresh run
// twice writes the same figures twice, so a slow holder costs work, never
// a wrong figure.
const (
	refreshLease    = "questions/response-time-refresh"
	refreshLeaseTTL = 15 * time.Minute
)

// ShareStore makes the scheduled refresh of Run happen once among the
// processes that share the store: each takes the store's refresh lease as
// holder (a name of its own) before it refreshes. wall is real time, in
// which the lease expires, whatever clock the refresh itself reads.
func (r *Service) ShareStore(holder string, wall clock.Clock) {
	r.holder, r.wall = holder, wall
}

// HoldStateWith makes Run enter with enter before it reads the clock for a
// scheduled refresh, and leave once the refresh is stored: the engine's
// state gate, so that a reset of the state and the clock cannot come between
// the time read and the refresh record written. Without it, a refresh that
// read the clock before a reset to an earlier instant would store a refresh
// record ahead of the new clock, and the refreshes it then crosses would
// find themselves done.
func (r *Service) HoldStateWith(enter func() (leave func())) {
	r.enter = enter
}

// errRefreshElsewhere says that another process holds the refresh lease.
var errRefreshElsewhere = errors.New("the refresh is running in another process")

// scheduledRefresh is RefreshIfDue at the clock's time, under the refresh
// lease when the store is shared.
func (r *Service) scheduledRefresh(ctx context.Context) error {
	if r.enter != nil {
		defer r.enter()()
	}
	now := r.clock.Now()
	if r.holder == "" {
		_, err := r.RefreshIfDue(ctx, now)
		return err
	}
	last, ok, err := r.LastRefresh(ctx)
	if err != nil {
		return err
	}
	if ok && !last.Before(LatestScheduledRefresh(now)) {
		return nil // done, here or elsewhere: no lease to take
	}
	l, held, err := kv.AcquireLease(ctx, r.store, refreshLease, r.holder, r.wall.Now(), refreshLeaseTTL)
	if err != nil {
		return errs.Internalf(err, "take the refresh lease")
	}
	if !held {
		return errRefreshElsewhere
	}
	defer func() { _ = l.Release(context.WithoutCancel(ctx), r.store, r.wall.Now()) }()
	_, err = r.RefreshIfDue(ctx, now)
	return err
}

// FollowManual makes every forward move of m that crosses a scheduled
// refresh instant run the refresh before the move returns; failures go to
// onErr. The returned function stops following.
func (r *Service) FollowManual(m *clock.Manual, onErr func(error)) (stop func()) {
	return m.OnChange(func(from, to time.Time) {
		if !LatestScheduledRefresh(to).After(from) {
			return
		}
		if _, err := r.RefreshIfDue(context.Background(), to); err != nil && onErr != nil {
			onErr(err)
		}
	})
}

// Run runs the scheduled refreshes until ctx ends: one at once when the
// latest scheduled instant has not been refreshed yet (so that a server
// answers from its start), then, on a clock that is not manual, one at each
// scheduled instant, with a timer. A manual clock is followed with
// FollowManual instead. Failures go to report and are retried a minute
// later; report is also told of each success (nil), so that it can tell
// when an outage has ended.
// On a store shared with other processes (ShareStore), the process that
// takes the refresh lease refreshes; the others look again a minute later
// and find the refresh done.
func (r *Service) Run(ctx context.Context, report func(error)) error {
	tell := func(err error) {
		if !errors.Is(err, errRefreshElsewhere) && report != nil && ctx.Err() == nil {
			report(err)
		}
	}
	err := r.scheduledRefresh(ctx)
	tell(err)
	if _, manual := r.clock.(*clock.Manual); manual {
		<-ctx.Done()
		return ctx.Err()
	}
	for {
		// After a failure, or while another process refreshes, look again
		// in a minute: by then the refresh is done or can be retried.
		wait := time.Minute
		if err == nil {
			wait = NextScheduledRefresh(r.clock.Now()).Sub(r.clock.Now())
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		err = r.scheduledRefresh(ctx)
		tell(err)
	}
}
