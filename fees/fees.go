// Package fees computes listing fees: for a site, a listing type, a price, a
// category and a currency, what publishing and selling will cost. Money is
// exact decimal arithmetic, rounded by the currency's decimal places.
package fees

import (
	"marketplace/geo"
	"marketplace/storage"
)

// Service answers listing-fee lookups.
type Service struct {
	store storage.Store
	geo   *geo.Service
}

// New returns the fees service.
func New(store storage.Store, g *geo.Service) *Service {
	return &Service{store: store, geo: g}
}
