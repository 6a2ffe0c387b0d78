// Package messages holds the post-sale conversation of a pack (or of an
// order without a pack) between its seller and its buyer: messages, their
// moderation and reading, attachments, the action guide the seller starts
// a conversation with, and the rules that block a conversation
// (docs/messages.md).
//
// A conversation's status is derived on every read and write from the
// state of its order, its shipment, its claims and its messages (derive,
// in status.go); nothing stores it, so a payment, a cancellation, a
// delivery or the clock's move is seen at once.
package messages

import (
	"context"
	"net/url"
	"strconv"
	"time"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/notify"
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
	// OrderClaims is given the claims the order names in its mediations,
	// so that it reads them, and nothing else, in one round trip.
	OrderClaims(tx storage.Tx, orderID int64, claimIDs []int64) (ClaimState, error)
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

// Tag is the value of the tag query parameter every messages route needs.
const Tag = "post_sale"

// CheckTag refuses a request to a messages route without tag=post_sale.
// Errors: NotFound.
func CheckTag(v url.Values) error {
	if v.Get("tag") != Tag {
		return errTagRequired()
	}
	return nil
}

// ParsePackID reads a pack id (or the id of an order without a pack) of a
// path. Errors: Invalid.
func ParsePackID(raw string) (int64, error) { return parseID("pack_id", raw) }

// ParseSellerID reads a seller id of a path. Errors: Invalid.
func ParseSellerID(raw string) (int64, error) { return parseID("seller_id", raw) }

func parseID(name, raw string) (int64, error) {
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n <= 0 {
		return 0, errs.Invalidf("Invalid %s: %s. It must be a positive integer", name, raw)
	}
	return n, nil
}

// pack is a conversation with everything its rules read: the sale, the
// claims and the stored conversation.
type pack struct {
	sale  saleFacts
	claim ClaimState
	conv  conversation
}

// roleOf is the role of user in the conversation, "" for a stranger.
func (p pack) roleOf(user int64) string {
	switch user {
	case p.sale.sellerID:
		return roleSeller
	case p.sale.buyerID:
		return roleBuyer
	}
	return ""
}

// counterpart is the other party of role.
func (p pack) counterpart(role string) int64 {
	if role == roleSeller {
		return p.sale.buyerID
	}
	return p.sale.sellerID
}

func (p pack) state(now time.Time) state { return derive(now, p.sale, p.claim, p.conv) }

// readPack reads the conversation of id, a pack's id or an order's, and
// what its rules need; extra are keys the caller reads next, fetched in
// the same round trip where the store can. Errors: NotFound.
func (s *Service) readPack(tx storage.Tx, id int64, extra func(orderID, packID int64) [][]byte) (pack, error) {
	if err := storage.Prefetch(tx, append(sales.PackKeys(id), convKey(id))...); err != nil {
		return pack{}, err
	}
	orderID, err := s.sales.PackOrder(tx, id)
	if errs.Is(err, errs.NotFound) {
		isOrder, err := sales.IsOrder(tx, id)
		if err != nil {
			return pack{}, err
		}
		if !isOrder {
			return pack{}, errPackNotFound(itoa(id))
		}
		orderID = id
	} else if err != nil {
		return pack{}, err
	}
	c, err := getConversation(tx, id)
	if err != nil {
		return pack{}, err
	}
	if c.exists() && c.OrderID == orderID {
		keys := sales.SaleKeys(orderID, c.ShipmentID)
		if extra != nil {
			keys = append(keys, extra(orderID, c.PackID)...)
		}
		if err := storage.Prefetch(tx, keys...); err != nil {
			return pack{}, err
		}
	}
	sale, err := s.sales.SaleOfRead(tx, orderID)
	if err != nil {
		return pack{}, err
	}
	p := pack{sale: saleFactsOf(sale)}
	if p.sale.packID != id || !c.exists() {
		// An order's id names its pack's conversation.
		if p.sale.packID != id {
			if c, err = getConversation(tx, p.sale.packID); err != nil {
				return pack{}, err
			}
		}
		if extra != nil {
			if err := storage.Prefetch(tx, extra(orderID, p.sale.packID)...); err != nil {
				return pack{}, err
			}
		}
	}
	c.PackID = p.sale.packID
	p.conv = c
	if s.claims != nil {
		ids := make([]int64, len(sale.Order.Mediations))
		for i, m := range sale.Order.Mediations {
			ids[i] = m.ID
		}
		if p.claim, err = s.claims.OrderClaims(tx, orderID, ids); err != nil {
			return pack{}, err
		}
	}
	return p, nil
}

// announce writes a messages notification for user.
func (s *Service) announce(ctx context.Context, tx storage.Tx, seq uint64, user int64, messageID, action string, now time.Time) error {
	_, err := notify.Append(ctx, s.store, tx, notify.Event{Seq: seq, Topic: notify.TopicMessages, UserID: user,
		Resource: messageID, Action: action, Received: now})
	return err
}
