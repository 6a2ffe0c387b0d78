// Package faults holds the rules of fault injection: which requests a rule
// matches, when it fires (probability, a countdown of times, a rate limit on
// the engine's clock) and what the answer is. The HTTP adapter asks Decide
// before a request reaches any other service, so a faulted request changes
// nothing.
//
// Rules are kept in the store (keys.go), so every server on one database
// sees them; each process keeps them in memory too, so that a request pays
// one atomic load when there are no rules. The countdown of times and the
// rate-limit windows are counted in store transactions, so they are exact
// across servers; the random draws of probability are made by each process,
// from a source seeded with Options.Seed and the rule's id.
package faults

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
)

// Bounds of the rules' numbers.
const (
	// MaxLatency bounds latency_ms: the server's write timeout is a minute,
	// and a slower answer would never arrive.
	MaxLatency = 30 * time.Second
	// Window is the length of a rate limit's window.
	Window = time.Minute
)

// Rate-limit subjects.
const (
	PerUser        = "user"
	PerApplication = "application"
)

// NewRule is the input of Create. Every field is optional, but a rule must
// do something: answer a status, add latency or limit a rate.
type NewRule struct {
	// Method, Route, UserID and ApplicationID select the requests; an
	// absent one matches every request. Route is a route template as the
	// spec writes it (/questions/{question_id}); parameter names do not
	// matter.
	Method        *string `json:"method"`
	Route         *string `json:"route"`
	UserID        *int64  `json:"user_id"`
	ApplicationID *int64  `json:"application_id"`
	// Status and Body are the answer; Body defaults to the public API's body
	// for Status (DefaultBody).
	Status *int            `json:"status"`
	Body   json.RawMessage `json:"body"`
	// LatencyMS is added before the answer (or before the request is served
	// normally, when there is no Status).
	LatencyMS *int64 `json:"latency_ms"`
	// Probability is the chance that a matching request is faulted (default
	// 1); Times, when given, is how many requests the rule faults before it
	// is removed.
	Probability *float64 `json:"probability"`
	Times       *int64   `json:"times"`
	// RequestsPerMinute makes the rule a rate limit: each user (Per "user",
	// the default) or application (Per "application") may make that many
	// matching requests in a minute of the engine's clock; the next get 429.
	RequestsPerMinute *int64  `json:"requests_per_minute"`
	Per               *string `json:"per"`
}

// Rule is a stored fault rule. Unset selectors are null.
type Rule struct {
	ID                int64           `json:"id"`
	Method            *string         `json:"method"`
	Route             *string         `json:"route"`
	UserID            *int64          `json:"user_id"`
	ApplicationID     *int64          `json:"application_id"`
	Status            *int            `json:"status"`
	Body              json.RawMessage `json:"body"`
	LatencyMS         int64           `json:"latency_ms"`
	Probability       float64         `json:"probability"`
	Times             *int64          `json:"times"`
	RequestsPerMinute *int64          `json:"requests_per_minute"`
	Per               *string         `json:"per"`
	Created           time.Time       `json:"created"`

	// route is Route with its parameter names dropped, for matching.
	route string
}

// Request describes a request for Decide.
type Request struct {
	Method string
	// Route is the request's route template (spec style).
	Route string
	// Caller returns the request's user and application (0 when unknown).
	// Decide calls it at most once, and only when a rule needs it.
	Caller func() (user, app int64)
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
}

// Options configure the service.
type Options struct {
	// Seed seeds the random draws of rules with a probability: with the
	// same seed, the n-th request matching rule id is drawn the same way.
	Seed uint64
}

// Service manages fault rules and decides which requests they fault.
type Service struct {
	store storage.Store
	clock clock.Clock
	seed  uint64

	// cache holds the rules as last read; nil means they must be read again.
	cache atomic.Pointer[snapshot]
	// loadMu makes one reload at a time.
	loadMu sync.Mutex

	mu   sync.Mutex
	rngs map[int64]*rand.Rand
}

type snapshot struct {
	rules []Rule
}

// New returns the fault service.
func New(store storage.Store, clk clock.Clock, opts Options) *Service {
	return &Service{store: store, clock: clk, seed: opts.Seed, rngs: map[int64]*rand.Rand{}}
}

// Active reports whether there may be rules: false means Decide would fault
// nothing. It costs one atomic load.
func (s *Service) Active() bool {
	snap := s.cache.Load()
	return snap == nil || len(snap.rules) > 0
}

// Invalidate drops the rules kept in memory and the state of their random
// draws: the next request reads them from the store again. A reset or a
// restore of the store calls it.
func (s *Service) Invalidate() {
	s.mu.Lock()
	clear(s.rngs)
	s.mu.Unlock()
	s.cache.Store(nil)
}

// Refresh reads the rules from the store again, to see those another server
// made or removed. Errors: storage failures (Internal).
func (s *Service) Refresh(ctx context.Context) error {
	_, err := s.load(ctx)
	return err
}

// Watch refreshes the rules every interval (real time) until ctx ends; a
// server that shares its store with others runs it so that their rules
// reach it within an interval. Failures are left to the next refresh.
func (s *Service) Watch(ctx context.Context, every time.Duration) error {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			_ = s.Refresh(ctx)
		}
	}
}

func (s *Service) current(ctx context.Context) (*snapshot, error) {
	if snap := s.cache.Load(); snap != nil {
		return snap, nil
	}
	return s.load(ctx)
}

func (s *Service) load(ctx context.Context) (*snapshot, error) {
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	rules, err := s.read(ctx)
	if err != nil {
		return nil, wrapInternal(err, "read fault rules")
	}
	snap := &snapshot{rules: rules}
	s.mu.Lock()
	for id := range s.rngs {
		if !slices.ContainsFunc(rules, func(r Rule) bool { return r.ID == id }) {
			delete(s.rngs, id)
		}
	}
	s.mu.Unlock()
	s.cache.Store(snap)
	return snap, nil
}

func (s *Service) read(ctx context.Context) ([]Rule, error) {
	rules := []Rule{}
	err := s.store.View(ctx, func(tx storage.Tx) error {
		rules = rules[:0]
		p := rulePrefix()
		it := tx.Iterate(storage.Prefix(p))
		defer it.Close()
		for ; it.Valid(); it.Next() {
			v, err := it.Value()
			if err != nil {
				return err
			}
			var r Rule
			if err := json.Unmarshal(v, &r); err != nil {
				// A record that cannot be read faults nothing.
				continue
			}
			r.route = templateKey(deref(r.Route))
			rules = append(rules, r)
		}
		return nil
	})
	return rules, err
}

// Create validates in and stores it as a new rule, first among none: rules
// are tried oldest first. Errors: Invalid (the field at fault is named),
// Internal.
func (s *Service) Create(ctx context.Context, in NewRule) (Rule, error) {
	r, err := validate(in)
	if err != nil {
		return Rule{}, err
	}
	seq, err := s.store.Sequence(RuleSequence)
	if err != nil {
		return Rule{}, wrapInternal(err, "create fault rule")
	}
	id, err := seq.Next(ctx)
	if err != nil {
		return Rule{}, wrapInternal(err, "create fault rule")
	}
	r.ID = int64(id)
	r.Created = s.clock.Now().UTC()
	if err := s.store.Update(ctx, func(tx storage.Tx) error {
		return kv.SetJSON(tx, ruleKey(r.ID), r)
	}); err != nil {
		return Rule{}, wrapInternal(err, "create fault rule")
	}
	s.cache.Store(nil)
	return r, nil
}

// List returns the rules in the order they are tried, with the times each
// has left. Errors: Internal.
func (s *Service) List(ctx context.Context) ([]Rule, error) {
	rules, err := s.read(ctx)
	if err != nil {
		return nil, wrapInternal(err, "list fault rules")
	}
	return rules, nil
}

// Rule returns the rule with id. Errors: NotFound, Internal.
func (s *Service) Rule(ctx context.Context, id int64) (Rule, error) {
	var r Rule
	err := s.store.View(ctx, func(tx storage.Tx) error { return kv.GetJSON(tx, ruleKey(id), &r) })
	if errors.Is(err, storage.ErrNotFound) {
		return Rule{}, errNotFound(id)
	}
	if err != nil {
		return Rule{}, wrapInternal(err, "read fault rule")
	}
	return r, nil
}

// Delete removes the rule with id and its rate windows. Errors: NotFound,
// Internal.
func (s *Service) Delete(ctx context.Context, id int64) error {
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		if _, err := tx.Get(ruleKey(id)); err != nil {
			return err
		}
		return deleteRule(tx, id)
	})
	if errors.Is(err, storage.ErrNotFound) {
		return errNotFound(id)
	}
	if err != nil {
		return wrapInternal(err, "delete fault rule")
	}
	s.cache.Store(nil)
	return nil
}

// DeleteAll removes every rule and returns how many there were. Errors:
// Internal.
func (s *Service) DeleteAll(ctx context.Context) (int, error) {
	rules, err := s.read(ctx)
	if err != nil {
		return 0, wrapInternal(err, "delete fault rules")
	}
	err = s.store.Update(ctx, func(tx storage.Tx) error {
		for _, r := range rules {
			if err := deleteRule(tx, r.ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, wrapInternal(err, "delete fault rules")
	}
	s.cache.Store(nil)
	return len(rules), nil
}

func deleteRule(tx storage.Tx, id int64) error {
	if err := tx.Delete(ruleKey(id)); err != nil {
		return err
	}
	var windows [][]byte
	it := tx.Iterate(storage.Prefix(ratePrefix(id)))
	for ; it.Valid(); it.Next() {
		windows = append(windows, append([]byte(nil), it.Key()...))
	}
	it.Close()
	for _, k := range windows {
		if err := tx.Delete(k); err != nil {
			return err
		}
	}
	return nil
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
	for i := range snap.rules {
		r := &snap.rules[i]
		if r.Method != nil && *r.Method != req.Method {
			continue
		}
		if r.Route != nil && r.route != route {
			continue
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
	a := Action{RuleID: r.ID, Latency: time.Duration(r.LatencyMS) * time.Millisecond, Body: r.Body}
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

// window is a rate limit's current minute for one subject.
type window struct {
	Start time.Time `json:"start"`
	Count int64     `json:"count"`
}

// countRate counts one request of subject against rate limit r and reports
// whether it is over the limit. A window opens with the first request
// counted and lasts Window by the engine's clock; a refused request is not
// counted.
func (s *Service) countRate(ctx context.Context, r *Rule, subject string) (bool, error) {
	now := s.clock.Now()
	var over bool
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		over = false
		if _, err := tx.Get(ruleKey(r.ID)); err != nil {
			if errors.Is(err, storage.ErrNotFound) {
				return nil
			}
			return err
		}
		k := rateKey(r.ID, subject)
		var w window
		err := kv.GetJSON(tx, k, &w)
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		if err != nil || !now.Before(w.Start.Add(Window)) {
			w = window{Start: now}
		}
		if w.Count >= *r.RequestsPerMinute {
			over = true
			return nil
		}
		w.Count++
		return kv.SetJSON(tx, k, w)
	})
	if err != nil {
		return false, wrapInternal(err, "count a rate limit")
	}
	return over, nil
}

// methods are the methods a rule may name.
var methods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete,
	http.MethodPatch, http.MethodHead, http.MethodOptions}

// validate checks in field by field, in a fixed order, and returns the rule
// it describes with its defaults.
func validate(in NewRule) (Rule, error) {
	r := Rule{UserID: in.UserID, ApplicationID: in.ApplicationID, Probability: 1, Times: in.Times,
		RequestsPerMinute: in.RequestsPerMinute}
	if in.Method != nil {
		m := strings.ToUpper(strings.TrimSpace(*in.Method))
		if !slices.Contains(methods, m) {
			return Rule{}, errs.Invalidf("Invalid method: %s. It must be one of %s", *in.Method, strings.Join(methods, ", "))
		}
		r.Method = &m
	}
	if in.Route != nil {
		route := strings.TrimSpace(*in.Route)
		if err := CheckRoute(route); err != nil {
			return Rule{}, err
		}
		r.Route = &route
	}
	if in.UserID != nil && *in.UserID <= 0 {
		return Rule{}, errs.Invalidf("Invalid user_id: %d. It must be a positive integer", *in.UserID)
	}
	if in.ApplicationID != nil && *in.ApplicationID <= 0 {
		return Rule{}, errs.Invalidf("Invalid application_id: %d. It must be a positive integer", *in.ApplicationID)
	}
	if in.Status == nil && in.LatencyMS == nil && in.RequestsPerMinute == nil {
		return Rule{}, errs.Invalidf("The fields [status, latency_ms or requests_per_minute] are required for requested call: a rule must answer a status, add latency or limit a rate")
	}
	if in.Status != nil {
		if *in.Status < 400 || *in.Status > 599 {
			return Rule{}, errs.Invalidf("Invalid status: %d. It must be an error status, from 400 to 599", *in.Status)
		}
		st := *in.Status
		r.Status = &st
	}
	if len(in.Body) > 0 && string(in.Body) != "null" {
		if in.Status == nil && in.RequestsPerMinute == nil {
			return Rule{}, errs.Invalidf("Invalid body: a body needs a status to be answered with")
		}
		if !json.Valid(in.Body) {
			return Rule{}, errs.Invalidf("Invalid body: it must be a JSON value")
		}
		r.Body = append(json.RawMessage(nil), in.Body...)
	}
	if in.LatencyMS != nil {
		if *in.LatencyMS < 0 || *in.LatencyMS > MaxLatency.Milliseconds() {
			return Rule{}, errs.Invalidf("Invalid latency_ms: %d. It must be from 0 to %d", *in.LatencyMS, MaxLatency.Milliseconds())
		}
		r.LatencyMS = *in.LatencyMS
	}
	if in.Probability != nil {
		if !(*in.Probability > 0 && *in.Probability <= 1) {
			return Rule{}, errs.Invalidf("Invalid probability: %v. It must be more than 0 and at most 1", *in.Probability)
		}
		r.Probability = *in.Probability
	}
	if in.Times != nil && *in.Times <= 0 {
		return Rule{}, errs.Invalidf("Invalid times: %d. It must be a positive integer", *in.Times)
	}
	if in.RequestsPerMinute != nil {
		if *in.RequestsPerMinute <= 0 {
			return Rule{}, errs.Invalidf("Invalid requests_per_minute: %d. It must be a positive integer", *in.RequestsPerMinute)
		}
		if in.Probability != nil || in.Times != nil {
			return Rule{}, errs.Invalidf("Invalid requests_per_minute: a rate limit takes neither probability nor times")
		}
		per := PerUser
		if in.Per != nil {
			per = *in.Per
		}
		if per != PerUser && per != PerApplication {
			return Rule{}, errs.Invalidf("Invalid per: %s. It must be user or application", per)
		}
		r.Per = &per
		if r.Status == nil {
			st := http.StatusTooManyRequests
			r.Status = &st
		}
	} else if in.Per != nil {
		return Rule{}, errs.Invalidf("Invalid per: it applies only to a rule with requests_per_minute")
	}
	if r.Status != nil && r.Body == nil {
		r.Body = DefaultBody(*r.Status)
	}
	r.route = templateKey(deref(r.Route))
	return r, nil
}

// CheckRoute checks that route is a route template that rules may name:
// a path starting with "/", without a query, outside /operator (the
// operator's routes are never faulted, so that a test can always remove
// its faults). Errors: Invalid.
func CheckRoute(route string) error {
	switch {
	case !strings.HasPrefix(route, "/"):
		return errs.Invalidf("Invalid route: %s. It must be a route template such as /questions/{question_id}", route)
	case strings.ContainsAny(route, "?#"):
		return errs.Invalidf("Invalid route: %s. It must be a route template, without a query", route)
	case route == "/operator" || strings.HasPrefix(route, "/operator/"):
		return errs.Invalidf("Invalid route: %s. Operator routes are never faulted", route)
	}
	return nil
}

// TemplateKey returns route with the names of its parameters dropped
// ({question_id} and {id} both become {}), so that a template names a route
// whatever it calls its parameters (the spec's {seller_id} is the server's
// {user_id}).
func TemplateKey(route string) string { return templateKey(route) }

func templateKey(route string) string {
	if !strings.Contains(route, "{") {
		return route
	}
	var b strings.Builder
	for i := 0; i < len(route); i++ {
		c := route[i]
		if c == '{' {
			if j := strings.IndexByte(route[i:], '}'); j > 0 {
				b.WriteString("{}")
				i += j
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// DefaultBody is the body the public API answers with status: its own for
// 429, 500, 502, 503 and 504, and for any other status the error shape with
// the status's text.
func DefaultBody(status int) json.RawMessage {
	message, code := http.StatusText(status), ""
	switch status {
	case http.StatusTooManyRequests:
		message, code = "local_rate_limited", "local_rate_limited"
	case http.StatusInternalServerError:
		message, code = "Internal Server Error", "internal_server_error"
	case http.StatusBadGateway:
		message, code = "Bad Gateway", "bad_gateway"
	case http.StatusServiceUnavailable:
		message, code = "Service not available", "service_not_available"
	case http.StatusGatewayTimeout:
		message, code = "Gateway Timeout", "gateway_timeout"
	default:
		if message == "" {
			message = "Error " + strconv.Itoa(status)
		}
		code = strings.ReplaceAll(strings.ToLower(message), " ", "_")
	}
	b, _ := json.Marshal(struct {
		Message string `json:"message"`
		Error   string `json:"error"`
		Status  int    `json:"status"`
		Cause   []any  `json:"cause"`
	}{message, code, status, []any{}})
	return b
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func errNotFound(id int64) error {
	return errs.NotFoundf("Fault rule %d not found", id)
}

// wrapInternal keeps the storage failures that callers act on (no space,
// unavailable) visible through the Internal error.
func wrapInternal(err error, what string) error {
	if err == nil {
		return nil
	}
	if errs.As(err) != nil {
		return err
	}
	return errs.Internalf(err, "%s", what)
}
