package claims

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/money"
	"github.com/marketplace/marketplace/sales"
	"github.com/marketplace/marketplace/storage"
)

// Claim returns claim id to one of its players (or the Operator), as it
// stands now. Errors: NotFound ("Resource not found"), Forbidden.
func (s *Service) Claim(ctx context.Context, caller, id int64) (Claim, error) {
	var out Claim
	err := s.read(ctx, caller, id, func(tx storage.Tx, r *record, _ []actionRecord) error {
		out = s.view(tx, r)
		return nil
	})
	return out, err
}

// Detail returns the readable summary of claim id: its earliest mandatory
// due date and the player who must act by then (the seller while the claim
// is in its claim stage, the mediator in dispute, nobody once closed), a
// title and a problem by its reason, and what to do. Errors: NotFound,
// Forbidden.
func (s *Service) Detail(ctx context.Context, caller, id int64) (Detail, error) {
	var out Detail
	err := s.read(ctx, caller, id, func(tx storage.Tx, r *record, _ []actionRecord) error {
		i, _ := findReason(r.ReasonID)
		out = Detail{Title: catalogue[i].text.title, Problem: catalogue[i].text.problem}
		var due int64
		responsible := ""
		for _, p := range []struct{ role, typ string }{{RoleComplainant, "buyer"}, {RoleRespondent, "seller"}, {RoleMediator, "mediator"}} {
			for _, a := range r.available(p.role) {
				if a.mandatory && a.dueMs != 0 && (due == 0 || a.dueMs < due) {
					due, responsible = a.dueMs, p.typ
				}
			}
		}
		switch {
		case due != 0:
			d := s.stamp(tx, r, due)
			out.DueDate = &d
			t, _ := time.Parse(sales.TimeLayout, d)
			out.Description = fmt.Sprintf("Respondé antes del %s %d de %s para resolverlo.", weekdays[t.Weekday()], t.Day(), months[t.Month()-1])
		case !r.opened():
			out.Description = "El reclamo está cerrado."
		case r.Stage == StageDispute:
			responsible = "mediator"
			out.Description = "Mercado Libre está revisando el reclamo para darle una solución."
		default:
			responsible = "seller"
			out.Description = "Ofrecé una solución para resolver el reclamo."
		}
		if responsible != "" {
			out.ActionResponsible = &responsible
		}
		return nil
	})
	return out, err
}

var weekdays = [...]string{"domingo", "lunes", "martes", "miércoles", "jueves", "viernes", "sábado"}

var months = [...]string{"enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto",
	"septiembre", "octubre", "noviembre", "diciembre"}

// ExpectedResolutions lists what the players of claim id want it to end
// with, oldest first. Errors: NotFound, Forbidden.
func (s *Service) ExpectedResolutions(ctx context.Context, caller, id int64) ([]ExpectedResolution, error) {
	var out []ExpectedResolution
	err := s.read(ctx, caller, id, func(tx storage.Tx, r *record, _ []actionRecord) error {
		out = s.expectedView(tx, r)
		return nil
	})
	return out, err
}

func (s *Service) expectedView(tx storage.Tx, r *record) []ExpectedResolution {
	out := make([]ExpectedResolution, 0, len(r.Expected))
	for _, e := range r.Expected {
		user := r.BuyerID
		if e.Role == RoleRespondent {
			user = r.SellerID
		}
		details := slices.Clone(e.Details)
		if details == nil {
			details = []KeyValue{}
		}
		out = append(out, ExpectedResolution{PlayerRole: e.Role, UserID: user, ExpectedResolution: e.Kind, Details: details,
			DateCreated: s.stamp(tx, r, e.CreatedMs), LastUpdated: s.stamp(tx, r, e.UpdatedMs), Status: e.Status})
	}
	return out
}

// ActionsHistory lists the actions taken on claim id, newest first: the
// players', and those the engine took for them (open_claim, a timeout).
// Errors: NotFound, Forbidden.
func (s *Service) ActionsHistory(ctx context.Context, caller, id int64) ([]ActionEntry, error) {
	var out []ActionEntry
	err := s.read(ctx, caller, id, func(tx storage.Tx, r *record, pending []actionRecord) error {
		out = []ActionEntry{}
		for i := len(pending) - 1; i >= 0; i-- {
			out = append(out, s.actionView(tx, r, pending[i]))
		}
		it := tx.Iterate(storage.Range{Start: actionKey(r.ID, 1), End: actionKey(r.ID, r.Actions+1), Reverse: true})
		defer it.Close()
		for ; it.Valid(); it.Next() {
			v, err := it.Value()
			if err != nil {
				return err
			}
			var a actionRecord
			if err := json.Unmarshal(v, &a); err != nil {
				return errs.Internalf(err, "claim %d actions history", r.ID)
			}
			out = append(out, s.actionView(tx, r, a))
		}
		return nil
	})
	return out, err
}

func (s *Service) actionView(tx storage.Tx, r *record, a actionRecord) ActionEntry {
	return ActionEntry{ActionName: a.Name, PlayerRole: a.Role, ActionReasonID: a.Reason, ClaimStage: a.Stage,
		ClaimStatus: a.Status, DateCreated: s.stamp(tx, r, a.AtMs)}
}

// StatusHistory lists the stages and statuses claim id went through,
// newest first, with the role whose action (or whose timeout) moved it.
// Errors: NotFound, Forbidden.
func (s *Service) StatusHistory(ctx context.Context, caller, id int64) ([]StatusEntry, error) {
	var out []StatusEntry
	err := s.read(ctx, caller, id, func(tx storage.Tx, r *record, _ []actionRecord) error {
		out = make([]StatusEntry, 0, len(r.Statuses))
		for i := len(r.Statuses) - 1; i >= 0; i-- {
			st := r.Statuses[i]
			out = append(out, StatusEntry{Stage: st.Stage, Status: st.Status, Date: s.stamp(tx, r, st.AtMs), ChangeBy: st.By})
		}
		return nil
	})
	return out, err
}

// AffectsReputation says whether claim id weighs on the seller's
// reputation: it does once the seller let its mandatory message pass, or
// once the mediator decided for the buyer alone; has_incentive holds while
// the seller can still answer in time (by due_date). Errors: NotFound,
// Forbidden.
func (s *Service) AffectsReputation(ctx context.Context, caller, id int64) (Reputation, error) {
	var out Reputation
	now := s.clock.Now().UnixMilli()
	err := s.read(ctx, caller, id, func(tx storage.Tx, r *record, _ []actionRecord) error {
		out = Reputation{AffectsReputation: "not_affected", DueDate: s.stamp(tx, r, r.answerDue()),
			HasIncentive: r.opened() && !r.Answered && now < r.answerDue()}
		if r.TimedOut || (r.Resolution != nil && r.Resolution.ClosedBy == RoleMediator &&
			slices.Equal(r.Resolution.Benefited, []string{RoleComplainant}) && r.Resolution.Reason != "item_returned") {
			out.AffectsReputation = "affected"
		}
		return nil
	})
	return out, err
}

// Changes answers the product change of claim id: the engine makes none,
// so every claim answers NotFound once its caller may see it. Errors:
// NotFound, Forbidden.
func (s *Service) Changes(ctx context.Context, caller, id int64) error {
	err := s.read(ctx, caller, id, func(storage.Tx, *record, []actionRecord) error { return nil })
	if err != nil {
		return err
	}
	return errNotFound()
}

// ReturnCost says what the return of claim id costs the seller: the
// sale's shipping cost once a return exists, 0 before; with usd, its
// amount in US dollars too, at the site's conversion rate (3 decimals).
// Errors (variant C): NotFound ("claim id: {id} not found"), Invalid (the
// caller is not a player).
func (s *Service) ReturnCost(ctx context.Context, caller, id int64, usd bool) (ReturnCost, error) {
	var out ReturnCost
	err := s.readReturnSide(ctx, caller, id, func(tx storage.Tx, r *record) error {
		amount := money.FromInt(0)
		if r.Return != nil {
			amount = money.MustParse(r.ShippingCost)
		}
		cur, err := geo.GetCurrency(tx, r.CurrencyID)
		if err != nil {
			return err
		}
		out = ReturnCost{CurrencyID: r.CurrencyID, Amount: fixed(amount, int32(cur.DecimalPlaces))}
		if usd {
			conv, err := geo.GetConversion(tx, r.CurrencyID, "USD")
			if err != nil {
				return errs.WithCode(errs.NotFound, "not_found_error", "No conversion from "+r.CurrencyID+" to USD")
			}
			v := fixed(amount.Mul(conv.Rate).Round(3), 0)
			out.AmountUSD = &v
		}
		return nil
	})
	return out, err
}

// readReturnSide is read for the routes of returns, which answer their
// errors in their own words (variant C of the spec).
func (s *Service) readReturnSide(ctx context.Context, caller, id int64, fn func(tx storage.Tx, r *record) error) error {
	now := s.clock.Now()
	return s.store.View(ctx, func(tx storage.Tx) error {
		r, err := getRecord(tx, id)
		if errs.Is(err, errs.NotFound) {
			return errClaimNotFoundC(id)
		}
		if err != nil {
			return err
		}
		if caller != Operator && r.roleOf(caller) == "" {
			return errRoleC(caller, id)
		}
		var out outcome
		r.settle(now.UnixMilli(), &out)
		return fn(tx, &r)
	})
}

// errClaimNotFoundC answers, on the routes of returns, a claim that does
// not exist.
func errClaimNotFoundC(id int64) error {
	return errs.WithCode(errs.NotFound, "not_found_error", fmt.Sprintf("claim id: %d not found", id))
}

// errRoleC answers, on the routes of returns, a caller who is not a player
// of the claim.
func errRoleC(caller, id int64) error {
	return errs.WithCode(errs.Invalid, "bad_request_error", fmt.Sprintf("Invalid roleId :%d in claim :%d", caller, id))
}

// fixed writes d with at least places decimals, as a JSON number.
func fixed(d money.Dec, places int32) json.Number {
	s := d.String()
	if places <= 0 {
		return json.Number(s)
	}
	have := d.Places()
	if have >= places {
		return json.Number(s)
	}
	if have == 0 {
		s += "."
	}
	for ; have < places; have++ {
		s += "0"
	}
	return json.Number(s)
}
