package marketplace

import (
	"context"
	"time"

	"github.com/marketplace/marketplace/clock"
)

// AfterSaleSweepInterval is how often Start writes the timed changes of
// what follows a sale on the wall clock: claims whose due date passed
// (claims.Expire) and attachments never linked to a message
// (messages.Sweep). Reads derive a claim's timed-out state anyway; the
// sweep is what writes it, with its notifications, when nobody touches
// the claim.
const AfterSaleSweepInterval = 30 * time.Second

// sweepBatch bounds the attachments one sweep deletes; the next sweep
// goes on.
const sweepBatch = 1000

// expireOnMoves makes every forward move of a manual clock write the
// claims' timed changes before the move returns, as the response times'
// refresh does: a test that moves the clock past a due date reads the
// dispute and finds its notification at once.
func (m *Marketplace) expireOnMoves(manual *clock.Manual) (stop func()) {
	return manual.OnChange(func(_, _ time.Time) { m.sweepAfterSale(context.Background()) })
}

// runAfterSaleSweeps sweeps every AfterSaleSweepInterval until ctx ends.
// On a manual clock the moves sweep (expireOnMoves), and the clock does
// not move between them.
func (m *Marketplace) runAfterSaleSweeps(ctx context.Context) error {
	if _, manual := m.Clock.(*clock.Manual); manual {
		<-ctx.Done()
		return ctx.Err()
	}
	t := time.NewTicker(AfterSaleSweepInterval)
	defer t.Stop()
	for {
		m.sweepAfterSale(ctx)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// sweepAfterSale runs one sweep; a failure is logged and the next sweep
// tries again.
func (m *Marketplace) sweepAfterSale(ctx context.Context) {
	if _, err := m.Claims.Expire(ctx); err != nil && ctx.Err() == nil {
		m.Logger.Error("claims timeout sweep", "err", err)
	}
	if _, err := m.Messages.Sweep(ctx, sweepBatch); err != nil && ctx.Err() == nil {
		m.Logger.Error("message attachments sweep", "err", err)
	}
}
