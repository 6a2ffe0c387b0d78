package responsetime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/questions"
	"github.com/marketplace/marketplace/storage"
)

// The daily refresh runs at 03:00 in Buenos Aires (06:00 UTC; Argentina keeps
// no daylight saving time), which is between 00:00 and 03:00 in every site's
// zone: the quietest hours of all the sites, and one instant for all of them,
// so that every seller's figures come from the same calculation time.
const (
	RefreshHour = 3
	refreshZone = "America/Argentina/Buenos_Aires"
)

// refreshBatch is how many sellers one write transaction stores, so that a
// refresh of many sellers stays within a backend's transaction size.
const refreshBatch = 256

var refreshLoc = mustLoadLocation(refreshZone)

func mustLoadLocation(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(fmt.Sprintf("load %s: %v", name, err))
	}
	return loc
}

// LatestScheduledRefresh returns the latest scheduled refresh instant at or
// before t.
func LatestScheduledRefresh(t time.Time) time.Time {
	l := t.In(refreshLoc)
	s := time.Date(l.Year(), l.Month(), l.Day(), RefreshHour, 0, 0, 0, refreshLoc)
	if s.After(t) {
		s = time.Date(l.Year(), l.Month(), l.Day()-1, RefreshHour, 0, 0, 0, refreshLoc)
	}
	return s.UTC()
}

// NextScheduledRefresh returns the first scheduled refresh instant after t.
func NextScheduledRefresh(t time.Time) time.Time {
	s := LatestScheduledRefresh(t).In(refreshLoc)
	return time.Date(s.Year(), s.Month(), s.Day()+1, RefreshHour, 0, 0, 0, refreshLoc).UTC()
}

// SampleSource is where the refresh reads questions from. The questions
// Service implements it over its indexes.
type SampleSource interface {
	// SellersWithQuestionsSince returns, in increasing order, the sellers that
	// received at least one question asked at or after since.
	SellersWithQuestionsSince(ctx context.Context, since time.Time) ([]int64, error)
	// SellerSamplesSince returns the seller's questions asked at or after
	// since, oldest first.
	SellerSamplesSince(ctx context.Context, sellerID int64, since time.Time) ([]questions.Sample, error)
}

var _ SampleSource = (*questions.Service)(nil)

// refreshRecord is stored under qrt/last.
type refreshRecord struct {
	// At is the calculation time of the latest refresh.
	At time.Time `json:"at"`
	// Sellers is how many sellers got figures.
	Sellers int `json:"sellers"`
}

// Service keeps the sellers' response times: a refresh computes them
// from a SampleSource and stores them; a read is a key lookup. It is safe for
// concurrent use; refreshes run one at a time.
type Service struct {
	store storage.Store
	clock clock.Clock
	geo   *geo.Service
	src   SampleSource

	mu    sync.Mutex // serializes refreshes
	zones sync.Map   // zone name -> *time.Location

	// holder and wall, when set (ShareStore), make Run take the refresh
	// lease before it refreshes.
	holder string
	wall   clock.Clock

	// observe, when set (ObserveRefresh), times every refresh.
	observe atomic.Pointer[func() func()]
}

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

// errRefreshElsewhere says that another process holds the refresh lease.
var errRefreshElsewhere = errors.New("the refresh is running in another process")

// scheduledRefresh is RefreshIfDue at the clock's time, under the refresh
// lease when the store is shared.
func (r *Service) scheduledRefresh(ctx context.Context) error {
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

// New returns the response times kept in store, computed from
// src. The sellers' site time zones come from their user records (accounts)
// and the sites (g).
func New(store storage.Store, clk clock.Clock, g *geo.Service, src SampleSource) *Service {
	return &Service{store: store, clock: clk, geo: g, src: src}
}

// Get returns sellerID's figures of the latest refresh to caller, a signed-in
// user (CheckReader). Errors: Invalid (sellerID not positive), Forbidden
// (caller not a user), NotFound (the seller had no counted question at
// that refresh, or there was none yet), Internal.
func (r *Service) Get(ctx context.Context, caller, sellerID int64) (ResponseTime, error) {
	if err := CheckReader(caller, sellerID); err != nil {
		return ResponseTime{}, err
	}
	var rt ResponseTime
	err := r.store.View(ctx, func(tx storage.Tx) error {
		return kv.GetJSON(tx, responseTimeKey(sellerID), &rt)
	})
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return ResponseTime{}, errs.WithCode(errs.NotFound, "not_found",
			fmt.Sprintf("Response time not found for user id: %d", sellerID))
	case err != nil:
		return ResponseTime{}, errs.Internalf(err, "read response time of %d", sellerID)
	}
	return rt, nil
}

// CheckReader is the rule of who may read a response time: any signed-in
// user may read any seller's figures, the seller's own token being only the
// usual case. The figures describe how the seller answers its buyers, which
// its public questions show to anyone anyway, and apps that compare sellers
// read them with their own user's token. A seller id that is not positive is
// Invalid, and a caller that is not a user (no id) is Forbidden.
func CheckReader(caller, sellerID int64) error {
	if sellerID <= 0 {
		return errs.Invalidf("Invalid user_id: %d. It must be a positive integer", sellerID)
	}
	if caller <= 0 {
		return errs.Forbiddenf("A response time is read with a user's access token")
	}
	return nil
}

// LastRefresh returns the calculation time of the latest refresh, and false
// when none has run. Errors: Internal.
func (r *Service) LastRefresh(ctx context.Context) (time.Time, bool, error) {
	var rec refreshRecord
	err := r.store.View(ctx, func(tx storage.Tx) error {
		return kv.GetJSON(tx, responseTimeLastKey(), &rec)
	})
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return time.Time{}, false, nil
	case err != nil:
		return time.Time{}, false, errs.Internalf(err, "read last response time refresh")
	}
	return rec.At, true, nil
}

// Refresh computes every seller's figures at the clock's current time and
// replaces the stored ones. Errors: Internal.
func (r *Service) Refresh(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.refreshAt(ctx, r.clock.Now())
}

// RefreshAt is Refresh with the calculation time at: the figures are what a
// refresh at that instant would have computed (questions asked later are left
// out; answers given later count as missing at that time). Errors: Internal.
func (r *Service) RefreshAt(ctx context.Context, at time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.refreshAt(ctx, at)
}

// RefreshIfDue runs the scheduled refresh when the latest scheduled instant at
// or before now has not been refreshed yet; the calculation time is that
// instant. It reports whether it ran. Errors: Internal.
func (r *Service) RefreshIfDue(ctx context.Context, now time.Time) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	due := LatestScheduledRefresh(now)
	last, ok, err := r.LastRefresh(ctx)
	if err != nil {
		return false, err
	}
	if ok && !last.Before(due) {
		return false, nil
	}
	return true, r.refreshAt(ctx, due)
}

// ObserveRefresh has start called when a refresh begins and the function
// it returns when the refresh ends: the metrics' hook, which keeps the
// timing (and so the wall clock) out of this package.
func (r *Service) ObserveRefresh(start func() (done func())) {
	r.observe.Store(&start)
}

func (r *Service) refreshAt(ctx context.Context, at time.Time) error {
	if start := r.observe.Load(); start != nil {
		defer (*start)()()
	}
	at = at.UTC()
	since := at.Add(-ResponseTimeWindow)
	sellers, err := r.src.SellersWithQuestionsSince(ctx, since)
	if err != nil {
		return errs.Internalf(err, "list sellers with questions")
	}
	kept := make([]int64, 0, len(sellers))
	for start := 0; start < len(sellers); start += refreshBatch {
		batch := sellers[start:min(start+refreshBatch, len(sellers))]
		locs, err := r.sellerLocations(ctx, batch)
		if err != nil {
			return err
		}
		figures := make([]ResponseTime, 0, len(batch))
		for i, id := range batch {
			samples, err := r.src.SellerSamplesSince(ctx, id, since)
			if err != nil {
				return errs.Internalf(err, "read questions of seller %d", id)
			}
			if rt, ok := Compute(id, samples, at, locs[i]); ok {
				figures = append(figures, rt)
			}
		}
		err = r.store.Update(ctx, func(tx storage.Tx) error {
			for i := range figures {
				if err := kv.SetJSON(tx, responseTimeKey(figures[i].UserID), &figures[i]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return errs.Internalf(err, "store response times")
		}
		for _, rt := range figures {
			kept = append(kept, rt.UserID)
		}
	}
	slices.Sort(kept)
	if err := r.clearStale(ctx, kept); err != nil {
		return err
	}
	err = r.store.Update(ctx, func(tx storage.Tx) error {
		return kv.SetJSON(tx, responseTimeLastKey(), refreshRecord{At: at, Sellers: len(kept)})
	})
	if err != nil {
		return errs.Internalf(err, "store response time refresh")
	}
	return nil
}

// clearStale deletes the figures of every seller not in kept (sorted), so that
// a seller whose questions left the window answers 404 again.
func (r *Service) clearStale(ctx context.Context, kept []int64) error {
	for {
		var stale [][]byte
		err := r.store.View(ctx, func(tx storage.Tx) error {
			it := tx.Iterate(storage.Prefix(responseTimePrefix()))
			defer it.Close()
			for ; it.Valid() && len(stale) < refreshBatch; it.Next() {
				id, err := responseTimeSeller(it.Key())
				if err != nil {
					return err
				}
				if _, found := slices.BinarySearch(kept, id); !found {
					stale = append(stale, append([]byte(nil), it.Key()...))
				}
			}
			return nil
		})
		if err != nil {
			return errs.Internalf(err, "list response times")
		}
		if len(stale) == 0 {
			return nil
		}
		err = r.store.Update(ctx, func(tx storage.Tx) error {
			for _, k := range stale {
				if err := tx.Delete(k); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return errs.Internalf(err, "clear stale response times")
		}
	}
}

// sellerLocations returns the site time zone of each seller. A seller without
// a user record or on an unknown site is read in UTC: its questions still
// count, only the periods may shift.
func (r *Service) sellerLocations(ctx context.Context, sellers []int64) ([]*time.Location, error) {
	sites := make([]string, len(sellers))
	err := r.store.View(ctx, func(tx storage.Tx) error {
		for i, id := range sellers {
			u, err := accounts.GetUser(tx, id)
			if errs.Is(err, errs.NotFound) {
				continue
			}
			if err != nil {
				return err
			}
			sites[i] = u.SiteID
		}
		return nil
	})
	if err != nil {
		return nil, errs.Internalf(err, "read sellers")
	}
	locs := make([]*time.Location, len(sellers))
	for i, site := range sites {
		locs[i] = r.siteLocation(ctx, site)
	}
	return locs, nil
}

func (r *Service) siteLocation(ctx context.Context, siteID string) *time.Location {
	if siteID == "" || r.geo == nil {
		return time.UTC
	}
	site, err := r.geo.Site(ctx, siteID)
	if err != nil || site.TimeZone == "" {
		return time.UTC
	}
	if loc, ok := r.zones.Load(site.TimeZone); ok {
		return loc.(*time.Location)
	}
	loc, err := time.LoadLocation(site.TimeZone)
	if err != nil {
		return time.UTC
	}
	r.zones.Store(site.TimeZone, loc)
	return loc
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
// FollowManual instead. Failures go to onErr and are retried a minute later.
// On a store shared with other processes (ShareStore), the process that
// takes the refresh lease refreshes; the others look again a minute later
// and find the refresh done.
func (r *Service) Run(ctx context.Context, onErr func(error)) error {
	report := func(err error) {
		if err != nil && !errors.Is(err, errRefreshElsewhere) && onErr != nil && ctx.Err() == nil {
			onErr(err)
		}
	}
	err := r.scheduledRefresh(ctx)
	report(err)
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
		report(err)
	}
}
