package notify

import (
	"context"
	"errors"
	"time"

	"github.com/marketplace/marketplace/storage"
)

// sweepEvery is how often, in real time, the loop reads the outbox and every
// due index from their start rather than from its cursors: the cursors skip
// what this process has handled, and a sweep finds what another process
// wrote behind them (or an event whose transaction committed long after a
// later-numbered one).
const sweepEvery = time.Second

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

// deliver is the delivery loop: the fan-out, the claims and POSTs, the
// pruning. fence, when not nil, is checked inside every Update that records
// an outcome.
func (s *Service) deliver(ctx context.Context, fence func(storage.Tx) error) error {
	ctx, cancel := context.WithCancel(ctx)
	s.fence.Store(&fence)
	s.resetCursors()
	rec := s.startRecorder()
	unwatch := watchAppends(s.store, s)
	// Events appended through other processes: told by the store where it
	// can, else found at the polls.
	appended, unsubscribe, _ := storage.Subscribe(s.store, OutboxTopic)
	fanned := make(chan struct{})
	go func() {
		defer close(fanned)
		s.runFanOut(ctx, appended)
	}()
	defer func() {
		unsubscribe()
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
// this process wakes it (outboxWake), when the store tells of one in
// another (appended), at every poll, and at once after a full batch.
func (s *Service) runFanOut(ctx context.Context, appended <-chan struct{}) {
	tick := time.NewTicker(s.opts.PollInterval)
	defer tick.Stop()
	// An Append wakes the fan-out from inside its transaction, before the
	// commit, so the read it prompts may come too early: the outbox is read
	// again after 1 ms, 2 ms, 4 ms... while those reads find nothing, up to
	// recheckMax, before the event is left to the next poll.
	recheck := time.NewTimer(time.Hour)
	recheck.Stop()
	defer recheck.Stop()
	gather := time.NewTimer(time.Hour)
	gather.Stop()
	defer gather.Stop()
	var recheckIn time.Duration
	for {
		// A storage failure is retried at the next poll: the outbox keeps
		// every event not yet fanned out.
		r, _ := s.fanOutStage(ctx, false)
		if r.found > 0 {
			// Wake the claims for the deliveries just written.
			s.Wake()
		}
		if r.found > 0 && !r.more {
			// Under a stream of appends every read finds the events of a
			// commit or two: waiting for more lets one read, one
			// transaction and one sync move those of many commits, where
			// each would cost as much as the whole batch.
			gather.Reset(gatherDelay)
			select {
			case <-ctx.Done():
				return
			case <-gather.C:
			}
			s.appended.Store(true)
			recheckIn = time.Millisecond
			continue
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
		case <-appended:
			// Committed already: no rechecks needed.
			s.appended.Store(true)
		case <-tick.C:
			s.appended.Store(true)
		case <-recheck.C:
			s.appended.Store(true)
		}
	}
}

// recheckMax bounds the delay of the reads that follow an Append's wake.
const recheckMax = 512 * time.Millisecond

// gatherDelay is how long the fan-out waits, after a read that found events
// and left none behind, before it reads again: what a notification's POST
// may wait beyond its commit under a stream of appends (the events found
// are POSTed at once).
const gatherDelay = 4 * time.Millisecond

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
	// The request is taken before the clock is read: a clock move wakes the
	// loop after moving, so a move whose request this stage takes is seen by
	// its claim, and one that comes later leaves its request for the next
	// stage. Read the other way round, a move between the two would be
	// taken here and claimed at the time before it: its due retries would
	// wait for the next poll.
	refill = s.refill.Swap(false) || refill
	now := s.clock.Now()
	if now.Sub(s.lastPrune) >= time.Minute {
		if err := s.Prune(ctx); err != nil {
			if refill {
				s.refill.Store(true)
			}
			return 0, err
		}
		s.lastPrune = now
	}
	if refill {
		if err := s.claim(ctx, now); err != nil {
			s.refill.Store(true)
			return 0, err
		}
	}
	return s.start(ctx, rec), nil
}
