package notify

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"time"

	"marketplace/clock"
	"marketplace/storage"
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
	// PollInterval is how often, in real time, Run looks for new events and
	// due retries (default 5 ms). A manual clock's moves wake it at once.
	PollInterval time.Duration
}

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
	return o
}

// Service manages applications and delivers notifications: it fans the
// outbox out into one delivery per subscribed application and POSTs each
// until a 200, the attempts run out, or the retry window closes.
type Service struct {
	store  storage.Store
	clock  clock.Clock
	opts   Options
	client *http.Client
	// jitter returns a number in [0, 1); tests replace it to make the
	// schedule predictable.
	jitter func() float64

	mu       sync.Mutex
	inflight map[uint64]bool
	perApp   map[int64]int
	workers  sync.WaitGroup
	stop     context.CancelFunc
	stopped  chan struct{}

	wake chan struct{}
	// lastPrune is the clock time of the last pruning pass.
	lastPrune time.Time
}

// New returns the notification service. A clock with an OnChange method (a
// clock.Manual) wakes the delivery loop when it moves.
func New(store storage.Store, clk clock.Clock, opts Options) *Service {
	opts = opts.withDefaults()
	s := &Service{
		store:    store,
		clock:    clk,
		opts:     opts,
		jitter:   rand.Float64,
		inflight: map[uint64]bool{},
		perApp:   map[int64]int{},
		wake:     make(chan struct{}, 1),
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

// Wake asks the delivery loop to look for work now rather than at its next
// poll. Callers that just appended events may use it to cut latency.
func (s *Service) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Run delivers notifications until ctx ends or Stop is called: it fans out
// new events, sends due deliveries with bounded concurrency and prunes old
// feeds. It returns after the POSTs in flight have ended; a POST cut short
// is not recorded and will be sent again, so delivery is at least once.
// Errors: the context's, or ErrRunning when a loop already runs.
func (s *Service) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	if s.stop != nil {
		s.mu.Unlock()
		cancel()
		return ErrRunning
	}
	done := make(chan struct{})
	s.stop, s.stopped = cancel, done
	s.mu.Unlock()
	defer func() {
		cancel()
		s.workers.Wait()
		s.mu.Lock()
		s.stop, s.stopped = nil, nil
		s.mu.Unlock()
		close(done)
	}()
	tick := time.NewTicker(s.opts.PollInterval)
	defer tick.Stop()
	for {
		// A storage failure is retried at the next poll: the outbox and the
		// due index keep everything that is not yet done.
		_, _ = s.step(ctx)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.wake:
		case <-tick.C:
		}
	}
}

// ErrRunning is returned by Run when the delivery loop already runs.
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
// for each POST, until nothing is due. For embedders that deliver on their
// own schedule and for tests on a manual clock. It returns the number of
// POSTs made. Errors: ErrRunning while Run runs (the two would claim the same
// deliveries), storage failures, the context's.
func (s *Service) Process(ctx context.Context) (int, error) {
	s.mu.Lock()
	running := s.stop != nil
	s.mu.Unlock()
	if running {
		return 0, ErrRunning
	}
	total := 0
	for {
		n, err := s.step(ctx)
		total += n
		if err != nil {
			s.workers.Wait()
			return total, err
		}
		if n == 0 && s.inflightCount() == 0 {
			return total, nil
		}
		select {
		case <-ctx.Done():
			s.workers.Wait()
			return total, ctx.Err()
		case <-s.wake:
		}
	}
}

func (s *Service) inflightCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.inflight)
}

// step fans out the outbox, prunes when the clock has moved enough, and
// starts the POSTs of due deliveries that have a free slot. It returns the
// number of POSTs started.
func (s *Service) step(ctx context.Context) (int, error) {
	for {
		n, err := s.Dispatch(ctx)
		if err != nil {
			return 0, err
		}
		if n < dispatchBatch {
			break
		}
	}
	now := s.clock.Now()
	if now.Sub(s.lastPrune) >= time.Minute {
		if err := s.Prune(ctx); err != nil {
			return 0, err
		}
		s.lastPrune = now
	}
	due, err := s.due(ctx, now)
	if err != nil {
		return 0, err
	}
	for _, d := range due {
		s.workers.Add(1)
		go func() {
			defer s.workers.Done()
			defer s.finish(d)
			_ = s.attempt(ctx, d.id)
		}()
	}
	return len(due), nil
}

type dueEntry struct {
	id  uint64
	app int64
}

// due claims the deliveries due at now that have a free slot: not in flight,
// within the global and the per-application bounds. Each application's due
// deliveries are read from its own range, so that a busy application never
// hides the others' and a pass costs no more than the slots it fills.
func (s *Service) due(ctx context.Context, now time.Time) ([]dueEntry, error) {
	s.mu.Lock()
	free := s.opts.Concurrency - len(s.inflight)
	s.mu.Unlock()
	if free <= 0 {
		return nil, nil
	}
	var out []dueEntry
	err := s.store.View(ctx, func(tx storage.Tx) error {
		out = out[:0]
		var apps []int64
		it := tx.Iterate(storage.Prefix(appPrefix()))
		for ; it.Valid(); it.Next() {
			apps = append(apps, storage.ReadKey(it.Key()[len(appPrefix()):]).Int())
		}
		it.Close()
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, app := range apps {
			room := min(s.opts.PerApplication-s.perApp[app], s.opts.Concurrency-len(s.inflight))
			if room <= 0 {
				continue
			}
			p := appDuePrefix(app)
			it := tx.Iterate(storage.Range{Start: p, End: storage.Key(p).Int(now.UnixNano() + 1)})
			// In-flight deliveries keep their key until recorded, and they
			// sit at the head of the range: skip past them.
			for visited := 0; it.Valid() && room > 0 && visited < room+s.opts.PerApplication; it.Next() {
				visited++
				kr := storage.ReadKey(it.Key()[len(p):])
				kr.Int()
				id := kr.Uint()
				if kr.Err() != nil || s.inflight[id] {
					continue
				}
				s.inflight[id] = true
				s.perApp[app]++
				room--
				out = append(out, dueEntry{id: id, app: app})
			}
			it.Close()
		}
		return nil
	})
	if err != nil {
		// Release what this pass claimed: nothing was started.
		s.mu.Lock()
		for _, d := range out {
			delete(s.inflight, d.id)
			s.perApp[d.app]--
		}
		s.mu.Unlock()
		return nil, err
	}
	return out, nil
}

func (s *Service) finish(d dueEntry) {
	s.mu.Lock()
	delete(s.inflight, d.id)
	if s.perApp[d.app]--; s.perApp[d.app] <= 0 {
		delete(s.perApp, d.app)
	}
	s.mu.Unlock()
	s.Wake()
}
