// Package claims holds the claims (mediations) a buyer opens on an order
// and the returns they lead to: the players and what each may do, the
// stages and statuses they move through by the players' actions and by the
// clock, their messages, files, evidences and histories, and what they do
// to the order (tags, mediations, refunds, units back in stock). Every
// change writes its post_purchase notifications, and through the order its
// orders_v2 one, in its own transaction (docs/claims.md).
//
// A claim is opened by the operator (the buyer opens it on the website;
// the public API has no route for it), and the complainant's and the
// mediator's actions are the operator's too (Act); the seller acts
// through the public routes.
//
// Timed changes (a respondent who lets its mandatory message pass, a
// return left unreviewed) are derived whenever a claim is read or written,
// so that what a claim says never waits for a sweep; Expire writes them
// (and their notifications) for the claims due, and should run whenever a
// manual clock moves and periodically on the wall clock.
package claims

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/messages"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/sales"
	"github.com/marketplace/marketplace/storage"
)

// TopicPostPurchase is the notification topic of claims and returns.
const TopicPostPurchase = notify.TopicPostPurchase

// The actions of post_purchase notifications.
const (
	// NotifyClaims: a claim was opened, or its stage or status changed.
	NotifyClaims = "claims"
	// NotifyActions: an action ran on a claim, or its return changed.
	NotifyActions = "claims_actions"
)

// Operator is the caller of the operator's reads and changes, which see
// every claim.
const Operator int64 = sales.Operator

// Service holds claims and returns.
type Service struct {
	store storage.Store
	clock clock.Clock
	sales *sales.Service
}

// New returns the claims service over the sales whose orders are claimed.
func New(store storage.Store, clk clock.Clock, s *sales.Service) *Service {
	return &Service{store: store, clock: clk, sales: s}
}

// errNotFound answers a claim (or a reason) that does not exist.
func errNotFound() error {
	return errs.WithCode(errs.NotFound, "business_logic_error", "Resource not found")
}

// errForbidden answers a caller who is not a player of the claim.
func errForbidden() error {
	return errs.WithCode(errs.Forbidden, "forbidden_error", "You don't have permission to access the resource")
}

// errNotAvailable answers an action the caller's player does not have now.
func errNotAvailable(action string) error {
	return errs.WithCode(errs.Invalid, "bad_request_error", "Action "+action+" not available for player")
}

// getRecord reads claim id in tx. Errors: NotFound.
func getRecord(tx storage.Tx, id int64) (record, error) {
	var r record
	err := kv.GetJSON(tx, claimKey(id), &r)
	if errors.Is(err, storage.ErrNotFound) {
		return r, errNotFound()
	}
	if err != nil {
		return r, errs.Internalf(err, "read claim %d", id)
	}
	return r, nil
}

// stamp writes ms as claims write dates: in the site's time zone, with
// milliseconds and its offset.
func (s *Service) stamp(tx storage.Tx, r *record, ms int64) string {
	return s.sales.SiteTime(tx, r.SiteID, time.UnixMilli(ms))
}

// read runs fn on claim id as caller sees it now, timed changes applied;
// pending are the entries of the actions history those changes make,
// which Expire or the next change will write. The Operator sees every
// claim. Errors: NotFound, Forbidden.
func (s *Service) read(ctx context.Context, caller, id int64, fn func(tx storage.Tx, r *record, pending []actionRecord) error) error {
	return s.readWith(ctx, caller, id, nil, fn)
}

// readWith is read that also reads keys with the claim, in one round trip
// on a backend at network distance (storage.Prefetch): the keys fn is
// about to read.
func (s *Service) readWith(ctx context.Context, caller, id int64, keys [][]byte, fn func(tx storage.Tx, r *record, pending []actionRecord) error) error {
	now := s.clock.Now()
	return s.store.View(ctx, func(tx storage.Tx) error {
		if len(keys) > 0 {
			if err := storage.Prefetch(tx, append([][]byte{claimKey(id)}, keys...)...); err != nil {
				return err
			}
		}
		r, err := getRecord(tx, id)
		if err != nil {
			return err
		}
		if caller != Operator && r.roleOf(caller) == "" {
			return errForbidden()
		}
		var out outcome
		r.settle(now.UnixMilli(), &out)
		return fn(tx, &r, out.actions)
	})
}

// change is one change of a claim, run by write.
type change func(tx storage.Tx, r *record, out *outcome, nowMs int64) error

// write runs fn on claim id for caller (the Operator for any claim) in an
// Update, after the timed changes due, and saves the claim with what fn
// and those changes did. Errors: NotFound, Forbidden, fn's.
func (s *Service) write(ctx context.Context, caller, id int64, fn change) error {
	now := s.clock.Now()
	return s.store.Update(ctx, func(tx storage.Tx) error {
		r, err := getRecord(tx, id)
		if err != nil {
			return err
		}
		if caller != Operator && r.roleOf(caller) == "" {
			return errForbidden()
		}
		return s.apply(ctx, tx, &r, now, fn)
	})
}

// apply settles r at now, runs fn and saves r.
func (s *Service) apply(ctx context.Context, tx storage.Tx, r *record, now time.Time, fn change) error {
	// At network distance, the numbers of the events a change may write
	// (its actions', its claim's and its order's) and its order are asked
	// for with the change's next round trip rather than each with its
	// own. A number left unused is a gap, as after a retried transaction.
	ctx = notify.DrawEventNumbers(ctx, tx, 3)
	if err := storage.Prefetch(tx, sales.OrderKeys(r.OrderID)...); err != nil {
		return err
	}
	prev := r.Status
	var out outcome
	nowMs := now.UnixMilli()
	r.settle(nowMs, &out)
	if fn != nil {
		if err := fn(tx, r, &out, nowMs); err != nil {
			return err
		}
	}
	return s.save(ctx, tx, prev, r, &out, now)
}

// parties are a claim's players in its lists: the buyer as complainant,
// the seller as respondent.
func (r *record) parties() [2]struct {
	id   int64
	role string
} {
	return [2]struct {
		id   int64
		role string
	}{{r.BuyerID, RoleComplainant}, {r.SellerID, RoleRespondent}}
}

// save writes claim r, whose status was prev before the change ("" for a
// new claim), with what out says the change did: the lists and counts of
// its players, its due entry, its actions history, its notifications and
// the change of its order.
func (s *Service) save(ctx context.Context, tx storage.Tx, prev string, r *record, out *outcome, now time.Time) error {
	if prev != r.Status {
		if err := s.index(tx, prev, r); err != nil {
			return err
		}
	}
	if next := r.nextDue(); next != r.DueMs {
		if r.DueMs != 0 {
			if err := tx.Delete(dueKey(r.DueMs, r.ID)); err != nil {
				return err
			}
		}
		if next != 0 {
			if err := tx.Set(dueKey(next, r.ID), nil); err != nil {
				return err
			}
		}
		r.DueMs = next
	}
	for _, a := range out.actions {
		r.Actions++
		if err := kv.SetJSON(tx, actionKey(r.ID, r.Actions), a); err != nil {
			return err
		}
	}
	if err := kv.SetJSON(tx, claimKey(r.ID), r); err != nil {
		return err
	}
	resource := Resource(r.ID)
	if out.acted {
		if err := s.announce(ctx, tx, r.SellerID, resource, NotifyActions, now); err != nil {
			return err
		}
	}
	if out.changed {
		if err := s.announce(ctx, tx, r.SellerID, resource, NotifyClaims, now); err != nil {
			return err
		}
	}
	if o := out.order; o.touched {
		change := sales.OrderChange{AddTags: o.addTags, RemoveTags: o.rmTags, Mediation: r.ID, MediationStatus: r.mediationStatus(),
			Refund: o.refund, RestockUnits: o.restock}
		if _, err := s.sales.ChangeOrder(ctx, tx, r.OrderID, change, o.action, now); err != nil {
			return err
		}
	}
	return nil
}

// Resource is the path of claim id, the resource of its notifications.
func Resource(id int64) string { return "/post-purchase/v1/claims/" + itoa(id) }

func (s *Service) announce(ctx context.Context, tx storage.Tx, sellerID int64, resource, action string, now time.Time) error {
	_, err := notify.Append(ctx, s.store, tx, notify.Event{Topic: TopicPostPurchase, UserID: sellerID, Resource: resource, Action: action, Received: now})
	return err
}

// index moves the claim's entries in its players' lists from status prev
// ("" for a new claim: every list) to its status, with their counts.
func (s *Service) index(tx storage.Tx, prev string, r *record) error {
	type delta struct {
		counter kv.Counter
		n       int64
	}
	var deltas []delta
	for _, p := range r.parties() {
		for _, role := range []string{"", p.role} {
			if prev == "" {
				if err := tx.Set(listKey(p.id, role, "", r.CreatedMs, r.ID), nil); err != nil {
					return err
				}
				deltas = append(deltas, delta{listCounter(p.id, role, ""), 1})
			} else {
				if err := tx.Delete(listKey(p.id, role, prev, r.CreatedMs, r.ID)); err != nil {
					return err
				}
				deltas = append(deltas, delta{listCounter(p.id, role, prev), -1})
			}
			if err := tx.Set(listKey(p.id, role, r.Status, r.CreatedMs, r.ID), nil); err != nil {
				return err
			}
			deltas = append(deltas, delta{listCounter(p.id, role, r.Status), 1})
		}
	}
	// The shards the claim's id picks are known at once and read together:
	// one round trip on a backend at network distance.
	spread := uint64(r.ID)
	if _, ok := tx.(storage.Prefetcher); ok {
		keys := make([][]byte, len(deltas))
		for i, d := range deltas {
			keys[i] = d.counter.ShardKey(spread)
		}
		if err := storage.Prefetch(tx, keys...); err != nil {
			return err
		}
	}
	for _, d := range deltas {
		if err := d.counter.AddAt(tx, d.n, spread); err != nil {
			return err
		}
	}
	return nil
}

// view is the claim in the public API's shape.
func (s *Service) view(tx storage.Tx, r *record) Claim {
	c := Claim{ID: r.ID, ResourceID: r.OrderID, Status: r.Status, Type: TypeMediations, Stage: r.Stage,
		Resource: "order", ReasonID: r.ReasonID, Fulfilled: r.Fulfilled, QuantityType: "total",
		ClaimedQuantity: r.Quantity, ClaimVersion: "2.0", SiteID: r.SiteID,
		DateCreated: s.stamp(tx, r, r.CreatedMs), LastUpdated: s.stamp(tx, r, r.UpdatedMs), RelatedEntities: []string{}}
	if r.Quantity < r.OrderQuantity {
		c.QuantityType = "partial"
	}
	if r.Return != nil {
		c.RelatedEntities = append(c.RelatedEntities, "return")
	}
	if r.Change {
		c.RelatedEntities = append(c.RelatedEntities, "change")
	}
	players := []Player{{Role: RoleComplainant, Type: "buyer", UserID: r.BuyerID},
		{Role: RoleRespondent, Type: "seller", UserID: r.SellerID}}
	if r.Mediator {
		players = append(players, Player{Role: RoleMediator, Type: "internal", UserID: MediatorID})
	}
	for i := range players {
		players[i].AvailableActions = []Action{}
		for _, a := range r.available(players[i].Role) {
			act := Action{Action: a.name, Mandatory: a.mandatory}
			if a.dueMs != 0 {
				due := s.stamp(tx, r, a.dueMs)
				act.DueDate = &due
			}
			players[i].AvailableActions = append(players[i].AvailableActions, act)
		}
	}
	c.Players = players
	if res := r.Resolution; res != nil {
		c.Resolution = &Resolution{Reason: res.Reason, DateCreated: s.stamp(tx, r, res.AtMs),
			Benefited: slices.Clone(res.Benefited), ClosedBy: res.ClosedBy, AppliedCoverage: r.Coverage}
	}
	return c
}

// OrderClaims tells a conversation about the claims of order orderID,
// claimIDs (the order's mediations: every claim opened on it), as they
// stand now (messages.Claims): its latest claim, whether one is in dispute
// and since when, whether one refunded the buyer and when. The claims are
// read together, in one round trip at network distance.
func (s *Service) OrderClaims(tx storage.Tx, orderID int64, claimIDs []int64) (messages.ClaimState, error) {
	nowMs := s.clock.Now().UnixMilli()
	var out messages.ClaimState
	if err := prefetchClaims(tx, claimIDs); err != nil {
		return out, err
	}
	for _, id := range claimIDs {
		r, err := getRecord(tx, id)
		if err != nil {
			return out, errs.Internalf(err, "order %d names claim %d", orderID, id)
		}
		var o outcome
		r.settle(nowMs, &o)
		out.ClaimID = max(out.ClaimID, r.ID)
		if r.opened() && r.Stage == StageDispute {
			since := time.UnixMilli(r.DisputeMs)
			if !out.Mediation || since.Before(out.MediationSince) {
				out.Mediation, out.MediationSince = true, since
			}
		}
		if r.RefundedMs != 0 {
			at := time.UnixMilli(r.RefundedMs)
			if !out.Refunded || at.After(out.RefundedAt) {
				out.Refunded, out.RefundedAt = true, at
			}
		}
	}
	return out, nil
}

// claimAmount is the claimed units' price.
func claimAmount(unitPrice string, quantity int64) (money.Dec, error) {
	p, err := money.Parse(unitPrice)
	if err != nil {
		return money.Dec{}, err
	}
	return p.Mul(money.FromInt(quantity)), nil
}
