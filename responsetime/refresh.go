package responsetime

import (
	"context"
	"slices"
	"time"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
)

// refreshBatch is how many sellers one write transaction stores, so that a
// refresh of many sellers stays within a backend's transaction size.
const refreshBatch = 256

// refreshRecord is stored under qrt/last.
type refreshRecord struct {
	// At is the calculation time of the latest refresh.
	At time.Time `json:"at"`
	// Sellers is how many sellers got figures.
	Sellers int `json:"sellers"`
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
