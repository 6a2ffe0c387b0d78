// Package accounts holds users, their stores (warehouses) and their access
// tokens, with the rules about them: who may see which part of a user record,
// which stores are stock locations, and how tokens are issued, checked and
// revoked.
package accounts

import (
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/storage"
)

// Tags with a meaning to the rules.
const (
	// TagWarehouseManagement marks a seller with multi-origin stock.
	TagWarehouseManagement = "warehouse_management"
	// TagStockLocation marks a store usable as a stock location.
	TagStockLocation = "stock_location"
)

// Service manages users, stores and tokens.
type Service struct {
	store storage.Store
	clock clock.Clock
	geo   *geo.Service
	// tokens remembers the tokens found, on a store shared at network
	// distance; nil elsewhere.
	tokens *tokenCache
}

// New returns the accounts service.
func New(store storage.Store, clk clock.Clock, g *geo.Service) *Service {
	return &Service{store: store, clock: clk, geo: g, tokens: newTokenCache(store)}
}

// ForgetTokens empties the server's memory of the tokens it has found, for
// a state replaced as a whole (a reset, a restore): the next request reads
// its token from the store. Revocations need no call.
func (s *Service) ForgetTokens() { s.tokens.forget() }

// wrapInternal gives a storage failure the Internal kind and context, and
// passes domain errors through.
func wrapInternal(err error, what string) error {
	if err == nil || errs.As(err) != nil {
		return err
	}
	return errs.Internalf(err, "%s", what)
}
