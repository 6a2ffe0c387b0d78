package metrics

import (
	"context"
	"time"

	"github.com/marketplace/marketplace"
)

// scrapeTimeout bounds the storage reads of one scrape's gauges.
const scrapeTimeout = 2 * time.Second

// Engine adds the metrics of the engine e: the notifications waiting (the
// outbox depth) and the age of the oldest, the fault rules, and the
// duration of the response-time refreshes. The delivery attempts are
// counted through notify.Options.OnAttempt (NotificationAttempt), which
// must be set before the engine is opened, and the storage through
// ObserveStorage. On PostgreSQL it adds the failovers that the engine's
// connections saw and the seconds they found no primary.
func (m *Metrics) Engine(e *marketplace.Marketplace) {
	m.primary(e.Store())
	m.Gauge("marketplace_notifications_pending", "Notifications neither acknowledged nor missed: outbox events and deliveries waiting.",
		func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
			defer cancel()
			n, err := e.Notify.Pending(ctx)
			if err != nil {
				return -1
			}
			return float64(n)
		})
	m.Gauge("marketplace_notifications_oldest_pending_age_seconds", "Age, by the engine's clock, of the oldest notification neither acknowledged nor missed (0 when none).",
		func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
			defer cancel()
			at, ok, err := e.Notify.Oldest(ctx)
			if err != nil {
				return -1
			}
			if !ok {
				return 0
			}
			return max(0, e.Clock.Now().Sub(at).Seconds())
		})
	m.Gauge("marketplace_fault_rules", "Fault rules in force.",
		func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
			defer cancel()
			rules, err := e.Faults.List(ctx)
			if err != nil {
				return -1
			}
			return float64(len(rules))
		})
	e.ResponseTimes.ObserveRefresh(m.RefreshStarted)
}
