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
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
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

// ChangesTopic is what the fault service announces (storage.Announce) in
// every Update that adds or removes a rule, so that the servers sharing
// the store read their rules again (Watch).
const ChangesTopic = "faults"

// Watch keeps the rules kept in memory up to date with those made or
// removed through other servers sharing the store, until ctx ends: where
// the store tells of changes (storage.Changes), it reads them again after
// each announcement of ChangesTopic; elsewhere every interval (real time).
// Failures are left to the next refresh.
func (s *Service) Watch(ctx context.Context, every time.Duration) error {
	return storage.Follow(ctx, s.store, ChangesTopic, every, func() { _ = s.Refresh(ctx) })
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
			if r.prepare() != nil {
				continue
			}
			rules = append(rules, r)
		}
		return nil
	})
	return rules, err
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
