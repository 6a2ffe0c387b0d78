// Package stubs holds the rules of stub mappings in WireMock's JSON format:
// parsing and checking a mapping, matching a request against a request
// pattern, choosing the stub that answers (priority, then the newest), the
// countdown of "times", and the templating of a response. The HTTP adapter
// asks Answer when no emulated route serves a request, or before the route
// when an override stub exists; the journal's verification matches the
// same patterns.
//
// Mappings are kept in the store (keys.go), so every server on one
// database answers with them. Each process keeps them in memory with the
// generation it read them at: a request that no route serves reads the one
// generation key and, when it changed, the mappings again. Whether an
// override stub exists is known in memory (one atomic load per request),
// refreshed by the writes of this process at once and by Watch for those of
// other servers. The countdown of times is counted in a store transaction,
// so two servers never answer more than times together.
package stubs

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/faults"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
)

// Service keeps the stub mappings and answers requests with them.
type Service struct {
	store storage.Store

	cache    atomic.Pointer[snapshot]
	loadMu   sync.Mutex
	override atomic.Bool
}

type snapshot struct {
	gen      string
	mappings []*Mapping // in the order they are tried
}

// New returns the stub service over store. Until it has read the
// mappings (at the first request that asks, or the first refresh), an
// override is assumed: a store may keep one from before a restart, and it
// must answer from the first request.
func New(store storage.Store) *Service {
	s := &Service{store: store}
	s.override.Store(true)
	return s
}

// stored is a mapping as kept.
type stored struct {
	Seq     uint64          `json:"seq"`
	Mapping json.RawMessage `json:"mapping"`
}

// Create checks the mapping and stores it; a mapping with the id of one
// already kept replaces it, as in WireMock. Errors: Invalid (the field at
// fault named), Internal.
func (s *Service) Create(ctx context.Context, data []byte) (*Mapping, error) {
	m, err := Parse(data)
	if err != nil {
		return nil, err
	}
	return s.create(ctx, m)
}

// create stores m, checked.
func (s *Service) create(ctx context.Context, m *Mapping) (*Mapping, error) {
	seq, err := s.store.Sequence(Sequence)
	if err != nil {
		return nil, wrapInternal(err, "create stub")
	}
	n, err := seq.Next(ctx)
	if err != nil {
		return nil, wrapInternal(err, "create stub")
	}
	m.seq = n
	err = s.store.Update(ctx, func(tx storage.Tx) error {
		if err := kv.SetJSON(tx, mapKey(m.ID), stored{Seq: n, Mapping: m.raw}); err != nil {
			return err
		}
		if m.Extension.Times > 0 {
			if err := tx.Set(leftKey(m.ID), []byte(strconv.FormatInt(m.Extension.Times, 10))); err != nil {
				return err
			}
		} else if err := tx.Delete(leftKey(m.ID)); err != nil {
			return err
		}
		return bump(tx)
	})
	if err != nil {
		return nil, wrapInternal(err, "create stub")
	}
	s.reload(ctx)
	return m, nil
}

// bump gives the mappings a new generation, which the caches of this and
// other servers compare, and tells the other servers.
func bump(tx storage.Tx) error {
	storage.Announce(tx, ChangesTopic)
	return tx.Set(genKey(), []byte(uuid.NewString()))
}

// ChangesTopic is what the stubs announce (storage.Announce) in every
// Update that adds or removes a mapping, so that the servers sharing the
// store read their mappings again (Watch).
const ChangesTopic = "stubs"

// List returns every mapping, in the order they are tried; none is an
// empty list, never nil, so that it is answered as []. Errors: Internal.
func (s *Service) List(ctx context.Context) ([]*Mapping, error) {
	snap, err := s.current(ctx)
	if err != nil {
		return nil, err
	}
	return append(make([]*Mapping, 0, len(snap.mappings)), snap.mappings...), nil
}

// Get returns the mapping with id. Errors: NotFound, Internal.
func (s *Service) Get(ctx context.Context, id string) (*Mapping, error) {
	snap, err := s.current(ctx)
	if err != nil {
		return nil, err
	}
	for _, m := range snap.mappings {
		if m.ID == id {
			return m, nil
		}
	}
	return nil, errNotFound(id)
}

// Delete removes the mapping with id. Errors: NotFound, Internal.
func (s *Service) Delete(ctx context.Context, id string) error {
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		if _, err := tx.Get(mapKey(id)); err != nil {
			return err
		}
		if err := tx.Delete(mapKey(id)); err != nil {
			return err
		}
		if err := tx.Delete(leftKey(id)); err != nil {
			return err
		}
		return bump(tx)
	})
	if errors.Is(err, storage.ErrNotFound) {
		return errNotFound(id)
	}
	if err != nil {
		return wrapInternal(err, "delete stub")
	}
	s.reload(ctx)
	return nil
}

// DeleteAll removes every mapping and returns how many there were. Errors:
// Internal.
func (s *Service) DeleteAll(ctx context.Context) (int, error) {
	n := 0
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		var keys [][]byte
		it := tx.Iterate(storage.Prefix(mapPrefix()))
		for ; it.Valid(); it.Next() {
			keys = append(keys, append([]byte(nil), it.Key()...))
		}
		it.Close()
		it = tx.Iterate(storage.Prefix(leftPrefix()))
		n = len(keys)
		for ; it.Valid(); it.Next() {
			keys = append(keys, append([]byte(nil), it.Key()...))
		}
		it.Close()
		for _, k := range keys {
			if err := tx.Delete(k); err != nil {
				return err
			}
		}
		return bump(tx)
	})
	if err != nil {
		return 0, wrapInternal(err, "delete stubs")
	}
	s.reload(ctx)
	return n, nil
}

// HasOverride reports whether an override stub may exist: false means
// Answer would take no request that an emulated route serves. It costs one
// atomic load.
func (s *Service) HasOverride() bool { return s.override.Load() }

// Invalidate drops the mappings kept in memory; a reset or a restore of
// the store calls it. Until the next read (the next request that asks),
// an override is assumed, so none is missed.
func (s *Service) Invalidate() {
	s.cache.Store(nil)
	s.override.Store(true)
}

// reload reads the mappings after a change of this process, so that
// HasOverride says at once whether one exists; a failure is left to the
// next read, an override assumed until then.
func (s *Service) reload(ctx context.Context) {
	s.Invalidate()
	_, _ = s.load(ctx)
}

// Refresh reads the mappings again if another server changed them.
// Errors: Internal.
func (s *Service) Refresh(ctx context.Context) error {
	_, err := s.fresh(ctx)
	return err
}

// Watch keeps the mappings kept in memory up to date with those made or
// removed through other servers sharing the store, until ctx ends, so that
// an override stub made through another server takes its requests: where
// the store tells of changes (storage.Changes), after each announcement of
// ChangesTopic; elsewhere every interval (real time).
func (s *Service) Watch(ctx context.Context, every time.Duration) error {
	return storage.Follow(ctx, s.store, ChangesTopic, every, func() { _ = s.Refresh(ctx) })
}

func (s *Service) current(ctx context.Context) (*snapshot, error) {
	if snap := s.cache.Load(); snap != nil {
		return snap, nil
	}
	return s.load(ctx)
}

// fresh returns the mappings as the store has them now: one read of the
// generation when they did not change.
func (s *Service) fresh(ctx context.Context) (*snapshot, error) {
	snap := s.cache.Load()
	if snap == nil {
		return s.load(ctx)
	}
	var gen string
	err := s.store.View(ctx, func(tx storage.Tx) error {
		v, err := tx.Get(genKey())
		if errors.Is(err, storage.ErrNotFound) {
			return nil
		}
		gen = string(v)
		return err
	})
	if err != nil {
		return nil, wrapInternal(err, "read stubs")
	}
	if gen == snap.gen {
		return snap, nil
	}
	return s.load(ctx)
}

func (s *Service) load(ctx context.Context) (*snapshot, error) {
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	snap := &snapshot{}
	err := s.store.View(ctx, func(tx storage.Tx) error {
		snap.mappings = snap.mappings[:0]
		v, err := tx.Get(genKey())
		switch {
		case errors.Is(err, storage.ErrNotFound):
			snap.gen = ""
		case err != nil:
			return err
		default:
			snap.gen = string(v)
		}
		it := tx.Iterate(storage.Prefix(mapPrefix()))
		defer it.Close()
		for ; it.Valid(); it.Next() {
			v, err := it.Value()
			if err != nil {
				return err
			}
			var st stored
			if err := json.Unmarshal(v, &st); err != nil {
				continue // a record that cannot be read answers nothing
			}
			m, err := parse(st.Mapping, false)
			if err != nil {
				continue
			}
			m.seq = st.Seq
			snap.mappings = append(snap.mappings, m)
		}
		return nil
	})
	if err != nil {
		return nil, wrapInternal(err, "read stubs")
	}
	// WireMock's order: the highest priority (lowest number) first, then
	// the newest.
	slices.SortFunc(snap.mappings, func(a, b *Mapping) int {
		if c := cmp.Compare(a.Priority, b.Priority); c != 0 {
			return c
		}
		return cmp.Compare(b.seq, a.seq)
	})
	s.cache.Store(snap)
	s.override.Store(slices.ContainsFunc(snap.mappings, func(m *Mapping) bool { return m.Extension.Override }))
	return snap, nil
}

// Answer is what a stub answers to a request.
type Answer struct {
	// Mapping is the stub that answers.
	Mapping *Mapping
	Status  int
	// Header holds the response's headers in their order, shared by every
	// answer of the stub: read it, never change it.
	Header [][2]string
	Body   []byte
	// Delay is how long to wait before answering.
	Delay time.Duration
	// Fault, when set, is the wire fault to answer with instead.
	Fault faults.WireFault
}

// Answer finds the stub that answers r: the first, in priority order,
// whose pattern matches and that is not spent; with onlyOverride, only an
// override stub. No stub answers a reserved path (Reserve), whatever the
// store holds.
//
// A stub that is not public matches only a caller that admit lets in:
// admit is asked, once, when the method and URL of such a stub match, and
// before its query, headers and body are read, so that a caller who is
// refused costs the stubs nothing more (nor a stub with times an answer).
// The matching of r is bounded (bounds.go): past the bound, no further stub
// matches. ctx is checked as the stubs are tried: a caller gone stops
// them. It reports false when no stub answers. Errors: admit's, ctx's,
// Internal.
func (s *Service) Answer(ctx context.Context, r *Request, onlyOverride bool, admit func(*Mapping) error) (*Answer, bool, error) {
	// The mappings are read first even for a reserved path: the read also
	// settles HasOverride, assumed true until then.
	snap, err := s.fresh(ctx)
	if err != nil || reservedPath(r.Path) {
		return nil, false, err
	}
	admitted := admit == nil
	for i, m := range snap.mappings {
		if onlyOverride && !m.Extension.Override {
			continue
		}
		if i%32 == 31 {
			if err := ctx.Err(); err != nil {
				return nil, false, err
			}
		}
		if r.spent {
			break // the request's bound is spent: no further stub is tried
		}
		if !m.request.matchesURL(r) {
			continue
		}
		if !m.Extension.Public && !admitted {
			if err := admit(m); err != nil {
				return nil, false, err
			}
			admitted = true
		}
		if !m.request.matchesRest(r) {
			continue
		}
		if m.Extension.Times > 0 {
			ok, err := s.take(ctx, m.ID)
			if err != nil {
				return nil, false, err
			}
			if !ok {
				continue
			}
		}
		return m.answer(r), true, nil
	}
	return nil, false, nil
}

// take counts one answer of the stub id against its times; false: spent.
func (s *Service) take(ctx context.Context, id string) (bool, error) {
	ok := false
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		ok = false
		v, err := tx.Get(leftKey(id))
		if errors.Is(err, storage.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		n, _ := strconv.ParseInt(string(v), 10, 64)
		if n <= 0 {
			return nil
		}
		ok = true
		return tx.Set(leftKey(id), []byte(strconv.FormatInt(n-1, 10)))
	})
	if err != nil {
		return false, wrapInternal(err, "count stub answer")
	}
	return ok, nil
}

func (m *Mapping) answer(r *Request) *Answer {
	a := &Answer{Mapping: m, Status: m.resp.status, Header: m.resp.headers, Body: m.resp.body,
		Delay: m.resp.delay, Fault: m.resp.fault}
	if m.resp.templated {
		// The templates have a bound of their own: a request that spent
		// most of its bound finding the stub still gets its answer whole.
		r.work, r.spent = 0, false
		if m.resp.json != nil {
			a.Body = renderJSON(m.resp.json, r, &m.request.url)
		} else {
			a.Body = renderText(m.resp.text, r, &m.request.url)
		}
	}
	return a
}

func errNotFound(id string) error {
	return errs.NotFoundf("Stub mapping %s not found", id)
}

func wrapInternal(err error, what string) error {
	if err == nil {
		return nil
	}
	if errs.As(err) != nil {
		return err
	}
	return errs.Internalf(err, "%s", what)
}

// Load stores the mappings of a file: one mapping, or WireMock's
// {"mappings": [...]}. Every mapping is checked before any is stored, so
// that a file with one bad mapping stores none. It returns how many it
// stored. Errors: Invalid (naming the mapping and its field), Internal.
func (s *Service) Load(ctx context.Context, data []byte) (int, error) {
	var doc struct {
		Mappings []json.RawMessage `json:"mappings"`
	}
	list := []json.RawMessage{data}
	var probe map[string]json.RawMessage
	if json.Unmarshal(data, &probe) == nil && probe["mappings"] != nil {
		if err := json.Unmarshal(data, &doc); err != nil {
			return 0, invalid("mappings", "it must be a list of mappings")
		}
		list = doc.Mappings
	}
	for i, raw := range list {
		if _, err := Parse(raw); err != nil {
			return 0, errs.Invalidf("Mapping %d of %d: %s", i+1, len(list), errs.As(err).Message)
		}
	}
	for _, raw := range list {
		if _, err := s.Create(ctx, raw); err != nil {
			return 0, err
		}
	}
	return len(list), nil
}
