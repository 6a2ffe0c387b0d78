package notify

import (
	"context"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/storage"
)

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
