package notify

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
)

// Delivery policy. Only a 200 acknowledges (spec, Events rule 4). Retries
// back off exponentially from retryBase with ±25% jitter, so that the 8
// attempts of a notification fit in well under the hour (the sum of the
// delays is at most about 40 minutes); retryWindow still bounds them when the
// clock jumps.
const (
	// MaxAttempts is how many POSTs a notification gets before it is missed.
	MaxAttempts = 8
	retryBase   = 15 * time.Second
	retryWindow = time.Hour
	retention   = 48 * time.Hour
	// DefaultTimeout bounds a POST when Options.Timeout is not set.
	DefaultTimeout = 500 * time.Millisecond
	// UserAgent is sent with every notification POST.
	UserAgent = "marketplace-notifications/1.0"
	// SignatureHeader carries "sha256=" and the hex HMAC-SHA256 of the body,
	// keyed with the application's secret.
	SignatureHeader = "X-Signature"
	// TimeLayout is how received and sent are written: ISO 8601 in UTC with
	// milliseconds, as the public API's notifications show them.
	TimeLayout = "2006-01-02T15:04:05.000Z"
)

// Options configure delivery. The zero value is the server's default.
type Options struct {
	// AllowPrivateCallbacks lets callbacks reach loopback and private
	// addresses (a local emulator's receivers). Link-local and cloud metadata
	// addresses are refused regardless.
	AllowPrivateCallbacks bool
	// Timeout bounds each POST, from dialing to the end of the response
	// (default 500 ms, what the public API asks of its receivers).
	Timeout time.Duration
	// Concurrency bounds the POSTs in flight (default 32).
	Concurrency int
	// PerApplication bounds the POSTs in flight to one application (default
	// 8), so that a slow receiver cannot take every slot.
	PerApplication int
	// PollInterval is how often, in real time, Run looks for events written
	// by other processes and for due retries (default 5 ms). An Append in this
	// process and a manual clock's move wake it at once.
	PollInterval time.Duration
	// Lease is how long the delivery lease lasts on a shared store (see
	// ShareStore; default 10 s): how long notifications wait when the
	// process delivering them dies.
	Lease time.Duration
	// OnAttempt, when set, is told the result of every POST: AttemptAcked
	// (the receiver answered 200), AttemptRefused (another status) or
	// AttemptFailed (no answer). It is the metrics' hook and must be cheap.
	OnAttempt func(result string)
}

// Results of a POST, as OnAttempt is told them.
const (
	AttemptAcked   = "acknowledged"
	AttemptRefused = "refused"
	AttemptFailed  = "failed"
)

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 32
	}
	if o.PerApplication <= 0 {
		o.PerApplication = 8
	}
	if o.PerApplication > o.Concurrency {
		o.PerApplication = o.Concurrency
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 5 * time.Millisecond
	}
	if o.Lease <= 0 {
		o.Lease = 10 * time.Second
	}
	return o
}

// Service manages applications and delivers notifications: it fans the
// outbox out into one delivery per subscribed application and POSTs each
// until a 200, the attempts run out, or the retry window closes.
//
// The delivery pipeline (see docs/notifications.md): a fan-out goroutine
// reads the outbox from a cursor and fans new events out in one Update per
// batch, queuing their first POSTs while it commits; the claim loop refills
// each application's ready queue from its due index, again from a cursor,
// and starts POSTs from the queues within the bounds, each in its own
// goroutine; one recorder writes the outcomes, several in one Update. A
// delivery stays claimed from its claim until its outcome is recorded (or
// its POST is abandoned), so it is never POSTed twice at once.
type Service struct {
	store  storage.Store
	clock  clock.Clock
	opts   Options
	client *http.Client
	// jitter returns a number in [0, 1); tests replace it to make the
	// schedule predictable.
	jitter func() float64

	mu sync.Mutex
	// claimed holds the deliveries taken by the loop: being POSTed or
	// waiting for their outcome to be recorded.
	claimed map[uint64]bool
	// posting counts the POSTs in flight.
	posting int
	// apps holds each application's due cursor, ready queue and POSTs in
	// flight.
	apps map[int64]*appState
	// lowered counts the moves of a cursor back to a key written below it.
	lowered    uint64
	processing bool
	workers    sync.WaitGroup
	stop       context.CancelFunc
	stopped    chan struct{}

	// wake wakes the claims; outboxWake the fan-out.
	wake       chan struct{}
	outboxWake chan struct{}
	// appended says that the outbox may hold events the loop has not read:
	// set by an Append in this process, by every poll and after a full
	// batch.
	appended atomic.Bool
	// hinted says that an Append in this process woke the loop.
	hinted atomic.Bool

	// wall is real time (New): what the loop's sweeps, a POST's req_time
	// and the delivery lease are measured in, whatever clock the
	// deliveries follow.
	wall clock.Clock
	// holder, when set (ShareStore), makes Run deliver only while it holds
	// the store's delivery lease; fence checks it where outcomes are
	// recorded.
	holder string
	fence  atomic.Pointer[func(storage.Tx) error]
	// refill says that the due index may hold deliveries to claim: set by
	// a fan-out, a record, a clock move, and a ready queue running low.
	refill atomic.Bool

	// The fan-out's own state (Run's fan-out goroutine, or Process).
	outbox outboxCursor
	// The claims' own state (Run's goroutine, or Process): the real time of
	// the last full scan of the due index, and the clock time of the last
	// pruning pass.
	sweptAt   time.Time
	lastPrune time.Time
}

// sweepEvery is how often, in real time, the loop reads the outbox and every
// due index from their start rather than from its cursors: the cursors skip
// what this process has handled, and a sweep finds what another process
// wrote behind them (or an event whose transaction committed long after a
// later-numbered one).
const sweepEvery = time.Second

// New returns the notification service. clk is the time the deliveries
// follow (received and sent dates, retries, the retry window); a clock with
// an OnChange method (a clock.Manual) wakes the delivery loop when it
// moves. wall is real time (clock.Wall outside tests), in which a POST's
// req_time, the loop's sweeps and the delivery lease are measured: a manual
// clock that stands still must not stop them.
func New(store storage.Store, clk, wall clock.Clock, opts Options) *Service {
	opts = opts.withDefaults()
	s := &Service{
		store:      store,
		clock:      clk,
		wall:       wall,
		opts:       opts,
		jitter:     rand.Float64,
		claimed:    map[uint64]bool{},
		apps:       map[int64]*appState{},
		wake:       make(chan struct{}, 1),
		outboxWake: make(chan struct{}, 1),
	}
	dialer := &net.Dialer{Timeout: opts.Timeout, Control: dialControl(opts.AllowPrivateCallbacks)}
	s.client = &http.Client{
		Timeout: opts.Timeout,
		Transport: &http.Transport{
			// No proxy from the environment: the dial check must see the
			// receiver's own address.
			Proxy:               nil,
			DialContext:         dialer.DialContext,
			MaxIdleConns:        256,
			MaxIdleConnsPerHost: opts.PerApplication,
			IdleConnTimeout:     90 * time.Second,
			TLSHandshakeTimeout: opts.Timeout,
		},
		// A redirect is not an acknowledgement, and following it would
		// bypass the registration check of the URL.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	if w, ok := clk.(interface {
		OnChange(func(from, to time.Time)) (cancel func())
	}); ok {
		// Waking an idle loop is harmless, so the watcher lives as long as
		// the clock.
		w.OnChange(func(_, _ time.Time) { s.Wake() })
	}
	return s
}

// Wake asks the delivery loop to look for due deliveries now rather than at
// its next poll. Append wakes the loops of its store in this process to read
// the outbox already.
func (s *Service) Wake() {
	s.refill.Store(true)
	s.wakeStart()
}

// wakeStart wakes the loop to start POSTs from the ready queues.
func (s *Service) wakeStart() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// wakeForOutbox wakes the fan-out to read the outbox.
func (s *Service) wakeForOutbox() {
	s.hinted.Store(true)
	s.appended.Store(true)
	select {
	case s.outboxWake <- struct{}{}:
	default:
	}
}

// Run delivers notifications until ctx ends or Stop is called: it fans out
// new events, sends due deliveries with bounded concurrency and prunes old
// feeds. It returns after the POSTs in flight have ended and their outcomes
// are recorded; a POST cut short is not recorded and will be sent again, so
// delivery is at least once. Errors: the context's, or ErrRunning when a loop
// (Run or Process) already runs.
//
// The fan-out runs in a goroutine of its own, so that claiming and POSTing
// never wait for the commit of a fan-out (on Badger, a sync), nor the other
// way round.
func (s *Service) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	s.mu.Lock()
	if s.stop != nil || s.processing {
		s.mu.Unlock()
		cancel()
		return ErrRunning
	}
	s.stop, s.stopped = cancel, done
	s.mu.Unlock()
	defer func() {
		cancel()
		s.mu.Lock()
		s.stop, s.stopped = nil, nil
		s.mu.Unlock()
		close(done)
	}()
	if s.holder == "" {
		return s.deliver(ctx, nil)
	}
	return s.deliverUnderLease(ctx)
}

// ShareStore makes Run deliver only while this process holds the store's
// delivery lease, as holder (a name of its own), so that processes sharing
// the store POST each delivery once. The lease expires in the real time
// New was given, whatever clock the deliveries follow.
func (s *Service) ShareStore(holder string) {
	s.holder = holder
}

// The delivery lease: of the processes that share a store (ShareStore), the
// one that holds it fans the outbox out, POSTs and prunes; the others stand
// by and take over when it expires, so a delivery is POSTed by one process
// at a time. Its holder renews it every third of its duration and stops
// delivering when a renewal fails; every outcome it records is checked
// against it (fencing), so a holder that paused past its expiry records
// nothing, and the next holder POSTs again: at least once.
const deliveryLease = "notify/delivery"

// deliverUnderLease delivers while this process holds the delivery lease,
// and waits for it while another does, until ctx ends.
func (s *Service) deliverUnderLease(ctx context.Context) error {
	ttl := s.opts.Lease
	for {
		l, held, err := kv.AcquireLease(ctx, s.store, deliveryLease, s.holder, s.wall.Now(), ttl)
		if err == nil && held {
			// Losing the lease or the store ends this turn; either way the
			// answer is the same: look again a little later.
			_ = s.deliverHolding(ctx, l)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// Not held, lost, or the store failed: look again a little later
		// (a held lease cannot be taken before it expires anyway).
		t := time.NewTimer(ttl / 3)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// deliverHolding delivers until ctx ends or the lease l is lost, renewing
// it; it releases the lease when ctx ends.
func (s *Service) deliverHolding(ctx context.Context, l kv.Lease) error {
	ttl := s.opts.Lease
	held, lost := context.WithCancel(ctx)
	defer lost()
	var current atomic.Pointer[kv.Lease]
	current.Store(&l)
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		defer lost()
		t := time.NewTicker(ttl / 3)
		defer t.Stop()
		for {
			select {
			case <-held.Done():
				return
			case <-t.C:
			}
			next, err := current.Load().Renew(held, s.store, s.wall.Now(), ttl)
			if err != nil {
				return
			}
			current.Store(&next)
		}
	}()
	err := s.deliver(held, func(tx storage.Tx) error { return current.Load().Check(tx, s.wall.Now()) })
	lost()
	<-renewed
	if ctx.Err() != nil {
		// Stopped, not lost: let another process take over at once.
		_ = current.Load().Release(context.WithoutCancel(ctx), s.store, s.wall.Now())
	}
	return err
}

// deliver is the delivery loop: the fan-out, the claims and POSTs, the
// pruning. fence, when not nil, is checked inside every Update that records
// an outcome.
func (s *Service) deliver(ctx context.Context, fence func(storage.Tx) error) error {
	ctx, cancel := context.WithCancel(ctx)
	s.fence.Store(&fence)
	s.resetCursors()
	rec := s.startRecorder()
	unwatch := watchAppends(s.store, s)
	fanned := make(chan struct{})
	go func() {
		defer close(fanned)
		s.runFanOut(ctx)
	}()
	defer func() {
		unwatch()
		cancel()
		<-fanned
		s.workers.Wait()
		rec.close()
		s.dropReady()
		s.fence.Store(nil)
	}()
	tick := time.NewTicker(s.opts.PollInterval)
	defer tick.Stop()
	polled := true
	for {
		// A storage failure is retried at the next poll: the due index keeps
		// everything that is not yet done.
		_, _ = s.claimStage(ctx, rec, polled)
		polled = false
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.wake:
		case <-tick.C:
			// Retries come due by the clock, and another process may have
			// written deliveries.
			polled = true
		}
	}
}

// runFanOut fans the outbox out until ctx ends, reading it when an Append in
// this process wakes it (outboxWake), at every poll, and at once after a full
// batch.
func (s *Service) runFanOut(ctx context.Context) {
	tick := time.NewTicker(s.opts.PollInterval)
	defer tick.Stop()
	// An Append wakes the fan-out from inside its transaction, before the
	// commit, so the read it prompts may come too early: the outbox is read
	// again after 1 ms, 2 ms, 4 ms... while those reads find nothing, up to
	// recheckMax, before the event is left to the next poll.
	recheck := time.NewTimer(time.Hour)
	recheck.Stop()
	defer recheck.Stop()
	var recheckIn time.Duration
	for {
		// A storage failure is retried at the next poll: the outbox keeps
		// every event not yet fanned out.
		r, _ := s.fanOutStage(ctx, false)
		if r.found > 0 {
			// Wake the claims for the deliveries just written.
			s.Wake()
		}
		switch {
		case r.hinted || (recheckIn > 0 && r.found > 0):
			recheckIn = time.Millisecond
			recheck.Reset(recheckIn)
		case recheckIn > 0 && r.read:
			if recheckIn *= 2; recheckIn <= recheckMax {
				recheck.Reset(recheckIn)
			} else {
				recheckIn = 0
			}
		}
		if r.more {
			if ctx.Err() != nil {
				return
			}
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-s.outboxWake:
		case <-tick.C:
			s.appended.Store(true)
		case <-recheck.C:
			s.appended.Store(true)
		}
	}
}

// recheckMax bounds the delay of the reads that follow an Append's wake.
const recheckMax = 512 * time.Millisecond

// ErrRunning is returned by Run and Process when a delivery loop already
// runs.
var ErrRunning = errors.New("notify: delivery loop already running")

// Stop ends a running delivery loop and waits for it; without one it does
// nothing.
func (s *Service) Stop() {
	s.mu.Lock()
	stop, stopped := s.stop, s.stopped
	s.mu.Unlock()
	if stop == nil {
		return
	}
	stop()
	<-stopped
}

// Process does, once and in the caller's goroutine, what Run does forever:
// it fans out the outbox and sends every delivery due by the clock, waiting
// for each POST and the record of its outcome, until nothing is due. For
// embedders that deliver on their own schedule and for tests on a manual
// clock. It returns the number of POSTs made. Errors: ErrRunning while Run or
// another Process runs (the two would claim the same deliveries), storage
// failures, the context's.
func (s *Service) Process(ctx context.Context) (int, error) {
	s.mu.Lock()
	if s.stop != nil || s.processing {
		s.mu.Unlock()
		return 0, ErrRunning
	}
	s.processing = true
	s.mu.Unlock()
	rec := s.startRecorder()
	defer func() {
		s.workers.Wait()
		rec.close()
		s.dropReady()
		s.mu.Lock()
		s.processing = false
		s.mu.Unlock()
	}()
	s.resetCursors()
	total := 0
	for {
		r, err := s.fanOutStage(ctx, true)
		if err != nil {
			return total, err
		}
		n, err := s.claimStage(ctx, rec, true)
		total += n
		if err == nil {
			err = rec.takeErr()
		}
		if err != nil {
			return total, err
		}
		if r.more {
			continue
		}
		if n == 0 && s.claimedCount() == 0 {
			// Nothing due is left unclaimed, and every claim has ended.
			return total, rec.takeErr()
		}
		select {
		case <-ctx.Done():
			return total, ctx.Err()
		case <-s.wake:
		}
	}
}

func (s *Service) claimedCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.claimed)
}

// fanOutResult says what a fan-out stage did.
type fanOutResult struct {
	read   bool // it read the outbox
	hinted bool // after an Append's wake
	found  int  // events found in the outbox
	more   bool // the outbox may hold more events at once
}

// fanOutStage fans out a batch of the outbox, when it may hold new events
// (or always, reading from its start, when all is set).
func (s *Service) fanOutStage(ctx context.Context, all bool) (fanOutResult, error) {
	var r fanOutResult
	real := s.wall.Now()
	if real.Sub(s.outbox.sweptAt) >= sweepEvery {
		s.outbox.sweptAt = real
		s.outbox.sweep = true
		s.appended.Store(true)
	}
	r.hinted = s.hinted.Swap(false)
	if !all && !s.appended.Swap(false) {
		return r, nil
	}
	r.read = true
	from := uint64(0)
	if !all {
		var drawn uint64
		if s.outbox.sweep {
			// Every event numbered from here on was drawn after now: the
			// mark that sweeps sweepLag later start at, even when no event
			// is fanned out meanwhile. (The number itself is a gap.)
			if q, err := s.store.Sequence(OutboxSequence); err == nil {
				drawn, _ = q.Next(ctx)
			}
		}
		from = s.outbox.start(real, drawn)
	}
	found, hi, _, err := s.dispatchFrom(ctx, from)
	if err != nil {
		s.appended.Store(true)
		return r, err
	}
	r.found = found
	if found > 0 {
		s.outbox.saw(hi)
	}
	if r.more = found == dispatchBatch; r.more {
		s.outbox.resume = hi + 1
		s.appended.Store(true)
	}
	return r, nil
}

// claimStage prunes when the clock has moved enough, claims due deliveries
// for the applications whose ready queue runs low (when refill is set, or
// something asked for it), and starts the POSTs that have a free slot. It
// returns the number of POSTs started.
func (s *Service) claimStage(ctx context.Context, rec *recorder, refill bool) (int, error) {
	if real := s.wall.Now(); real.Sub(s.sweptAt) >= sweepEvery {
		s.sweptAt = real
		s.resetDueCursors()
		refill = true
	}
	now := s.clock.Now()
	if now.Sub(s.lastPrune) >= time.Minute {
		if err := s.Prune(ctx); err != nil {
			return 0, err
		}
		s.lastPrune = now
	}
	if s.refill.Swap(false) || refill {
		if err := s.claim(ctx, now); err != nil {
			s.refill.Store(true)
			return 0, err
		}
	}
	return s.start(ctx, rec), nil
}

// outboxCursor is where the loop reads the outbox from. Event numbers are
// drawn inside the change's transaction, so an event may commit a little
// after a later-numbered one: the cursor (floor) trails the highest number
// fanned out by outboxGrace, and a sweep reads from the start every
// sweepEvery. Reading from the start every time would walk over every event
// already fanned out and deleted but not yet compacted away (Badger keeps
// their tombstones), which cost more than the delivery itself.
type outboxCursor struct {
	floor       uint64    // reads start at this number
	seen        uint64    // the highest number fanned out
	candidate   uint64    // the next floor, once candidateAt is outboxGrace old
	candidateAt time.Time // real time
	resume      uint64    // after a full batch, the next read starts here
	sweep       bool      // the next read is a sweep
	sweptAt     time.Time // real time of the last sweep
	fullAt      time.Time // real time of the last sweep from the outbox's start
	// marks are the numbers seen at past sweeps (each the first number not
	// yet fanned out then), oldest first: a sweep starts at the newest one
	// at least sweepLag old.
	marks []outboxMark
}

type outboxMark struct {
	at   time.Time
	next uint64
}

// A sweep reads the outbox from the first number not yet fanned out
// sweepLag ago, not from its start: fanned-out events are deleted, and on
// Badger a deleted key stays until compaction while a read walks through
// every one of them, so a read from the start costs as much as the history
// of the outbox (a million events: most of a core). An event whose
// transaction commits more than sweepLag after a later-numbered one was
// fanned out is found by the sweep from the start, every fullSweepEvery.
const (
	sweepLag       = 10 * time.Second
	fullSweepEvery = 5 * time.Minute
)

// outboxGrace is how long, in real time, an event may take to commit after a
// later-numbered one was fanned out and still be read from the cursor; one
// that takes longer waits for the next sweep.
const outboxGrace = 100 * time.Millisecond

// start returns the number the next read of the outbox starts at. drawn,
// for a sweep, is a number just drawn from the outbox sequence (0 if none
// could be).
func (c *outboxCursor) start(real time.Time, drawn uint64) uint64 {
	if c.sweep {
		c.sweep, c.resume = false, 0
		return c.sweepStart(real, drawn)
	}
	if c.resume > 0 {
		from := c.resume
		c.resume = 0
		return from
	}
	if real.Sub(c.candidateAt) >= outboxGrace {
		c.floor, c.candidate, c.candidateAt = c.candidate, c.seen+1, real
	}
	return c.floor
}

// sweepStart returns where a sweep starts, and notes where the sweeps
// sweepLag later may start: the first number not yet fanned out, or drawn
// if that is higher (every event numbered below drawn was drawn before
// now). An event that commits within sweepLag of the fan-out of a
// later-numbered one, or of its number's drawing, is at or above the mark
// noted then.
func (c *outboxCursor) sweepStart(real time.Time, drawn uint64) uint64 {
	from := uint64(0)
	// The newest mark at least sweepLag old; the oldest one while none is.
	for len(c.marks) > 1 && real.Sub(c.marks[1].at) >= sweepLag {
		c.marks = c.marks[1:]
	}
	if len(c.marks) > 0 {
		from = c.marks[0].next
	}
	c.marks = append(c.marks, outboxMark{at: real, next: max(c.seen+1, drawn)})
	if drawn > 0 {
		// The reads between sweeps need not go below it either (a read from
		// number 1 of a store that fanned out a million events before this
		// process began walks all their tombstones): what commits below it
		// later is the sweeps' to find, as any late event.
		c.seen = max(c.seen, drawn-1)
	}
	if c.fullAt.IsZero() || real.Sub(c.fullAt) >= fullSweepEvery {
		c.fullAt = real
		return 0
	}
	return from
}

// saw notes that events up to number hi were fanned out.
func (c *outboxCursor) saw(hi uint64) { c.seen = max(c.seen, hi) }
