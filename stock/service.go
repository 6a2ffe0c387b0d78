// Package stock holds items and their multi-origin stock: publication (plain
// or across a seller's warehouses), the user products that group items and
// carry the quantity per store, the optimistic version that guards every
// stock replacement, and the word index behind site search.
package stock

import (
	"context"

	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
)

// ItemHook is called inside the transaction that changes an item, with the
// item before (zero for a new item) and after. Higher packages register hooks
// so that their rules follow item changes atomically (questions closes the
// unanswered questions of a closed item). A hook's error aborts the change.
type ItemHook func(ctx context.Context, tx storage.Tx, before, after Item) error

// Service publishes items and manages their stock.
type Service struct {
	store storage.Store
	clock clock.Clock
	geo   *geo.Service
	hooks []ItemHook
}

// New returns the stock service.
func New(store storage.Store, clk clock.Clock, g *geo.Service) *Service {
	return &Service{store: store, clock: clk, geo: g}
}

// OnItemChange registers a hook. Register hooks before serving requests.
func (s *Service) OnItemChange(h ItemHook) { s.hooks = append(s.hooks, h) }

// itemChanged keeps the search index and the seller's lists in step with
// the item, runs the hooks and announces the change on the items topic, in
// the transaction of the change. Every write of an item's status goes
// through it.
func (s *Service) itemChanged(ctx context.Context, tx storage.Tx, before, after Item) error {
	// The counts that both indexes change are read together.
	var counts kv.Changes
	if err := indexSeller(tx, before, after, &counts); err != nil {
		return err
	}
	if err := reindex(tx, before, after, &counts); err != nil {
		return err
	}
	if err := counts.Apply(tx); err != nil {
		return err
	}
	for _, h := range s.hooks {
		if err := h(ctx, tx, before, after); err != nil {
			return err
		}
	}
	return s.announceItem(ctx, tx, before, after)
}
