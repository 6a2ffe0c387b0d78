package marketplace

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/marketplace/marketplace/idempotency"
	"github.com/marketplace/marketplace/storage"
)

// gate keeps the state still while it is replaced (Reset, a restore, the
// copy of a snapshot, the loading of fixtures): the replacement takes it
// exclusively, and waits for everything inside to leave. Two kinds enter on
// the shared side:
//
//   - holders (Enter): an HTTP request, or an embedder's run of calls that
//     must see one state. A holder arriving while a replacement waits or runs
//     waits for it to end, so that a stream of requests cannot starve it.
//   - transactions: every View, Update and id drawn by a service (gatedStore).
//     A transaction arriving while a replacement waits gets in as long as a
//     holder is inside, since it may be that holder's own (waiting would wait
//     for the holder, which waits for the transaction); once no holder is
//     left, it waits too. The replacement's own transactions carry its
//     context (exclusiveKey) and pass, uncounted, while it holds the gate.
//
// Entering costs a compare-and-swap on one word, leaving an atomic add;
// only an entry that meets a replacement takes a lock.
type gate struct {
	// state counts what is inside: transactions in the low 32 bits, holders
	// (which count in both fields) above; minus exclusiveBias while a
	// replacement waits or runs.
	state atomic.Int64

	// leaveFn is leaveHolder, for Enter (leaveHolderFunc).
	leaveFn atomic.Pointer[func()]

	// exclusive lets one replacement in at a time.
	exclusive sync.Mutex

	mu sync.Mutex // guards the two channels
	// open is closed when the current replacement ends.
	open chan struct{}
	// drained is closed by whatever leaves the gate empty while a
	// replacement waits for it.
	drained chan struct{}
}

const (
	exclusiveBias = 1 << 60
	txUnit        = 1
	holderUnit    = 1<<32 | 1
)

// exclusiveKey marks the context of a replacement's own work, whose value
// is the gate it holds.
type exclusiveKey struct{}

// holders returns the holders counted in v, a state read while a
// replacement waits (v < 0).
func holders(v int64) int64 { return (v + exclusiveBias) >> 32 }

// enterHolder enters for a holder, waiting for a replacement to end.
func (g *gate) enterHolder() {
	for {
		v := g.state.Load()
		if v >= 0 {
			if g.state.CompareAndSwap(v, v+holderUnit) {
				return
			}
			continue
		}
		<-g.openChan()
	}
}

// enterTx enters for one transaction of ctx, and reports whether it
// counted itself in (a replacement's own transaction is not counted). It
// fails only when ctx ends while it waits.
func (g *gate) enterTx(ctx context.Context) (counted bool, err error) {
	return g.enter(ctx, false)
}

// enterDraw enters for one id drawn from a sequence of ctx, as enterTx. A
// draw may be made inside a transaction (kv.OnceID): while a
// replacement waits, it gets in as long as anything is inside, which
// holds out no draw for long, since the next transaction of its caller
// waits.
func (g *gate) enterDraw(ctx context.Context) (counted bool, err error) {
	return g.enter(ctx, true)
}

// enter counts one transaction (or draw) in, or waits. Entries never count
// themselves in only to look, so that a state of -exclusiveBias means that
// the replacement is alone.
func (g *gate) enter(ctx context.Context, draw bool) (bool, error) {
	for {
		v := g.state.Load()
		if v >= 0 || holders(v) > 0 || (draw && v > -exclusiveBias) {
			if g.state.CompareAndSwap(v, v+txUnit) {
				return true, nil
			}
			continue
		}
		if ctx.Value(exclusiveKey{}) == g {
			return false, nil
		}
		select {
		case <-g.openChan():
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

func (g *gate) openChan() chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.open
}

// leave takes unit (txUnit, holderUnit) out, and wakes a replacement that
// waits for the gate to be empty.
func (g *gate) leave(unit int64) {
	if g.state.Add(-unit) == -exclusiveBias {
		g.mu.Lock()
		if g.drained != nil {
			close(g.drained)
			g.drained = nil
		}
		g.mu.Unlock()
	}
}

func (g *gate) leaveHolder() { g.leave(holderUnit) }

// lock waits for every holder and transaction inside to leave, holding new
// ones out, and returns ctx marked so that the replacement's own calls of
// the services pass.
func (g *gate) lock(ctx context.Context) context.Context {
	g.exclusive.Lock()
	g.mu.Lock()
	g.open = make(chan struct{})
	g.mu.Unlock()
	g.state.Add(-exclusiveBias)
	for {
		g.mu.Lock()
		if g.state.Load() == -exclusiveBias {
			g.drained = nil
			g.mu.Unlock()
			break
		}
		drained := make(chan struct{})
		g.drained = drained
		g.mu.Unlock()
		<-drained
	}
	return context.WithValue(ctx, exclusiveKey{}, g)
}

// unlock lets the holders and transactions that wait in.
func (g *gate) unlock() {
	g.mu.Lock()
	open := g.open
	g.mu.Unlock()
	g.state.Add(exclusiveBias)
	close(open)
	g.exclusive.Unlock()
}

// gatedStore is the store as the services see it: every View, Update,
// single read and id drawn enters the gate, so that a call of a service
// made while the state is replaced waits for the replacement, and each of
// its transactions sees the state before or after it, never a mix.
type gatedStore struct {
	storage.Store
	g    *gate
	seqs sync.Map // name -> *gatedSequence
}

var (
	_ storage.Store        = (*gatedStore)(nil)
	_ storage.SingleGetter = (*gatedStore)(nil)
	_ storage.Shared       = (*gatedStore)(nil)
)

func (s *gatedStore) View(ctx context.Context, fn func(storage.Tx) error) error {
	counted, err := s.g.enterTx(ctx)
	if err != nil {
		return err
	}
	if counted {
		defer s.g.leave(txUnit)
	}
	return s.Store.View(ctx, fn)
}

func (s *gatedStore) Update(ctx context.Context, fn func(storage.Tx) error) error {
	counted, err := s.g.enterTx(ctx)
	if err != nil {
		return err
	}
	if counted {
		defer s.g.leave(txUnit)
	}
	// A request that carries an idempotency key writes the key's record in
	// the transaction of its first write, so both commit or neither does.
	return s.Store.Update(ctx, idempotency.Guard(ctx, fn))
}

// GetOne keeps the backend's single read (storage.GetOne) behind the gate.
func (s *gatedStore) GetOne(ctx context.Context, key []byte) ([]byte, error) {
	counted, err := s.g.enterTx(ctx)
	if err != nil {
		return nil, err
	}
	if counted {
		defer s.g.leave(txUnit)
	}
	return storage.GetOne(ctx, s.Store, key)
}

// Unwrap returns the store beneath, for what keeps stores by identity
// (notify's wake-ups of its delivery loops).
func (s *gatedStore) Unwrap() storage.Store { return s.Store }

// SharedByProcesses answers for the store beneath.
func (s *gatedStore) SharedByProcesses() bool { return storage.IsShared(s.Store) }

// Sequence returns the sequence beneath, its draws behind the gate: a
// restore rewinds the sequences with the state.
func (s *gatedStore) Sequence(name string) (storage.Sequence, error) {
	if q, ok := s.seqs.Load(name); ok {
		return q.(*gatedSequence), nil
	}
	q, err := s.Store.Sequence(name)
	if err != nil {
		return nil, err
	}
	actual, _ := s.seqs.LoadOrStore(name, &gatedSequence{q: q, g: s.g})
	return actual.(*gatedSequence), nil
}

// NextOfEach draws from several sequences behind the gate, together where
// the store beneath can (storage.SequenceGroup).
func (s *gatedStore) NextOfEach(ctx context.Context, names []string) ([]uint64, error) {
	counted, err := s.g.enterDraw(ctx)
	if err != nil {
		return nil, err
	}
	if counted {
		defer s.g.leave(txUnit)
	}
	return storage.NextOfEach(ctx, s.Store, names)
}

type gatedSequence struct {
	q storage.Sequence
	g *gate
}

func (q *gatedSequence) Next(ctx context.Context) (uint64, error) {
	counted, err := q.g.enterDraw(ctx)
	if err != nil {
		return 0, err
	}
	if counted {
		defer q.g.leave(txUnit)
	}
	return q.q.Next(ctx)
}

func (q *gatedSequence) Advance(ctx context.Context, n uint64) error {
	counted, err := q.g.enterDraw(ctx)
	if err != nil {
		return err
	}
	if counted {
		defer q.g.leave(txUnit)
	}
	return q.q.Advance(ctx, n)
}

// gateServices returns store as the services are to reach it: behind the
// engine's gate.
func (m *Marketplace) gateServices(store storage.Store) storage.Store {
	return &gatedStore{Store: store, g: &m.gate}
}

// leaveHolderFunc returns leaveHolder as a func value made once, so that
// Enter allocates nothing.
func (g *gate) leaveHolderFunc() func() {
	if f := g.leaveFn.Load(); f != nil {
		return *f
	}
	f := g.leaveHolder
	g.leaveFn.CompareAndSwap(nil, &f)
	return *g.leaveFn.Load()
}
