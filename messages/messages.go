// Package messages holds the post-sale conversation of a pack (or of an
// order without a pack) between its seller and its buyer: messages, their
// moderation and reading, attachments, the action guide the seller starts
// a conversation with, and the rules that block a conversation
// (docs/post-sale.md).
package messages

import (
	"time"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/sales"
	"github.com/marketplace/marketplace/storage"
)

// ClaimState is what a conversation needs to know of its order's claims.
type ClaimState struct {
	// ClaimID is the order's latest claim, 0 when it has none.
	ClaimID int64
	// Mediation: a claim of the order is in dispute, since MediationSince.
	Mediation      bool
	MediationSince time.Time
	// Refunded: a claim refunded the order (in full or in part), at
	// RefundedAt.
	Refunded   bool
	RefundedAt time.Time
}

// Claims tells a conversation about its order's claims, inside the
// conversation's transaction. The claims package answers it; the engine
// wires the two (claims sit above messages' concerns, not below them).
type Claims interface {
	OrderClaims(tx storage.Tx, orderID int64) (ClaimState, error)
}

// Service holds the conversations.
type Service struct {
	store    storage.Store
	clock    clock.Clock
	sales    *sales.Service
	accounts *accounts.Service
	claims   Claims
}

// New returns the conversations over store; claims may be nil (no order
// has a claim).
func New(store storage.Store, clk clock.Clock, s *sales.Service, a *accounts.Service, claims Claims) *Service {
	return &Service{store: store, clock: clk, sales: s, accounts: a, claims: claims}
}
