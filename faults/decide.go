package faults

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
)

// Request describes a request for Decide.
type Request struct {
	Method string
	// Route is the request's route template (spec style).
	Route string
	// Caller returns the request's user and application (0 when unknown).
	// Decide calls it at most once, and only when a rule needs it.
	Caller func() (user, app int64)
	// Query returns the values of a query parameter (url.Values.Get's
	// list); nil matches no rule with query selectors.
	Query func(name string) []string
	// Body returns the request's body. Decide calls it at most once, and
	// only when a rule selects on body fields; nil matches no such rule.
	Body func() []byte
}

// Action is what a fired rule does to a request.
type Action struct {
	RuleID int64
	// Latency is waited before anything else.
	Latency time.Duration
	// Status, when not 0, is answered with Body instead of serving the
	// request.
	Status int
	Body   json.RawMessage
	// Fault, when not "", is done instead of serving the request.
	Fault WireFault
	// BytesPerSecond, when not 0, is the pace of the answer's bytes: the
	// rule's own answer, or the route's when Status and Fault are unset.
	BytesPerSecond int64
}

// Decide returns the action of the first rule, oldest first, that matches
// req and fires: a rate limit fires when its subject is over the limit, any
// other rule when its probability draw says so and it has times left (a
// rule whose last time is used is removed). ok is false when no rule fires.
// Errors: Internal (the store could not be read or written).
func (s *Service) Decide(ctx context.Context, req Request) (act Action, ok bool, err error) {
	snap, err := s.current(ctx)
	if err != nil || len(snap.rules) == 0 {
		return Action{}, false, err
	}
	route := templateKey(req.Route)
	var user, app int64
	known := false
	caller := func() (int64, int64) {
		if !known && req.Caller != nil {
			user, app = req.Caller()
		}
		known = true
		return user, app
	}
	var body any
	bodyOK, bodyRead := false, false
	for i := range snap.rules {
		r := &snap.rules[i]
		if r.Method != nil && *r.Method != req.Method {
			continue
		}
		if r.Route != nil && r.route != route {
			continue
		}
		if len(r.Query) > 0 && !matchQuery(r.Query, req.Query) {
			continue
		}
		if len(r.bodyFields) > 0 {
			if !bodyRead && req.Body != nil {
				body, bodyOK = decodeBody(req.Body())
			}
			bodyRead = true
			if !matchBody(r.bodyFields, body, bodyOK) {
				continue
			}
		}
		if r.UserID != nil || r.ApplicationID != nil || r.RequestsPerMinute != nil {
			u, a := caller()
			if (r.UserID != nil && *r.UserID != u) || (r.ApplicationID != nil && *r.ApplicationID != a) {
				continue
			}
			if r.RequestsPerMinute != nil {
				subject := rateSubject(r, u, a)
				if subject == "" {
					continue
				}
				over, err := s.countRate(ctx, r, subject)
				if err != nil {
					return Action{}, false, err
				}
				if !over {
					continue
				}
				return r.action(), true, nil
			}
		}
		if !s.draw(r) {
			continue
		}
		if r.Times != nil {
			left, err := s.consume(ctx, r.ID)
			if err != nil {
				return Action{}, false, err
			}
			if !left {
				continue
			}
		}
		return r.action(), true, nil
	}
	return Action{}, false, nil
}

func (r *Rule) action() Action {
	a := Action{RuleID: r.ID, Latency: time.Duration(r.LatencyMS) * time.Millisecond, Body: r.Body,
		BytesPerSecond: deref(r.BytesPerSecond), Fault: deref(r.Fault)}
	if r.Status != nil {
		a.Status = *r.Status
	}
	return a
}

// rateSubject names whom a rate limit counts the request against, or ""
// when the request has no such subject (an anonymous request under a
// per-user limit): such requests are not limited.
func rateSubject(r *Rule, user, app int64) string {
	if deref(r.Per) == PerApplication {
		if app == 0 {
			return ""
		}
		return "a" + strconv.FormatInt(app, 10)
	}
	if user == 0 {
		return ""
	}
	return "u" + strconv.FormatInt(user, 10)
}

// draw makes rule r's random draw for one matching request.
func (s *Service) draw(r *Rule) bool {
	if r.Probability >= 1 {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rng := s.rngs[r.ID]
	if rng == nil {
		rng = rand.New(rand.NewPCG(s.seed, uint64(r.ID)))
		s.rngs[r.ID] = rng
	}
	return rng.Float64() < r.Probability
}

// consume takes one of the times rule id has left, in a transaction so that
// servers sharing the store never use more than the rule had. It reports
// false when none was left (another request, maybe on another server, took
// the last).
func (s *Service) consume(ctx context.Context, id int64) (bool, error) {
	var took, removed bool
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		took, removed = false, false
		var r Rule
		if err := kv.GetJSON(tx, ruleKey(id), &r); err != nil {
			if errors.Is(err, storage.ErrNotFound) {
				return nil
			}
			return err
		}
		if r.Times == nil || *r.Times <= 0 {
			return nil
		}
		took = true
		left := *r.Times - 1
		if left == 0 {
			removed = true
			storage.Announce(tx, ChangesTopic)
			return deleteRule(tx, id)
		}
		r.Times = &left
		return kv.SetJSON(tx, ruleKey(id), r)
	})
	if err != nil {
		return false, wrapInternal(err, "count a fault")
	}
	if removed || !took {
		s.cache.Store(nil)
	}
	return took, nil
}
