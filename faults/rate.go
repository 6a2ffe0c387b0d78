package faults

import (
	"context"
	"errors"
	"time"

	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
)

// window is a rate limit's current minute for one subject.
type window struct {
	Start time.Time `json:"start"`
	Count int64     `json:"count"`
}

// countRate counts one request of subject against rate limit r and reports
// whether it is over the limit. A window opens with the first request
// counted and lasts Window by the engine's clock; a refused request is not
// counted.
func (s *Service) countRate(ctx context.Context, r *Rule, subject string) (bool, error) {
	now := s.clock.Now()
	var over bool
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		over = false
		if _, err := tx.Get(ruleKey(r.ID)); err != nil {
			if errors.Is(err, storage.ErrNotFound) {
				return nil
			}
			return err
		}
		k := rateKey(r.ID, subject)
		var w window
		err := kv.GetJSON(tx, k, &w)
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		if err != nil || !now.Before(w.Start.Add(Window)) {
			w = window{Start: now}
		}
		if w.Count >= *r.RequestsPerMinute {
			over = true
			return nil
		}
		w.Count++
		return kv.SetJSON(tx, k, w)
	})
	if err != nil {
		return false, wrapInternal(err, "count a rate limit")
	}
	return over, nil
}
