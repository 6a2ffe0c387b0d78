// Package questions holds buyers' questions and sellers' answers: asking,
// answering, deleting, hiding, moderation, the sellers' blacklists, search,
// and the seller response-time statistics.
package questions

import (
	"marketplace/accounts"
	"marketplace/clock"
	"marketplace/geo"
	"marketplace/stock"
	"marketplace/storage"
)

// Service manages questions and answers.
type Service struct {
	store    storage.Store
	clock    clock.Clock
	accounts *accounts.Service
	stock    *stock.Service
	geo      *geo.Service
}

// New returns the questions service. It registers a hook on stock so that
// item changes (closing) reach the item's questions in the same transaction.
func New(store storage.Store, clk clock.Clock, acc *accounts.Service, st *stock.Service, g *geo.Service) *Service {
	return &Service{store: store, clock: clk, accounts: acc, stock: st, geo: g}
}
