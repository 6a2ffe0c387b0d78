// Package marketplace is the engine of a seller marketplace API, for Go
// programs that embed it: multi-origin stock, questions and answers with
// response-time statistics, listing fees, catalog, locations and currencies,
// and webhook notifications.
//
// Open starts the engine on the store a storage.Opener opens (a Badger
// folder, badger.Dir, or a PostgreSQL database that several engines may
// share, postgres.URL); New starts it on any storage.Store (storage/memory
// for tests). Each field is a domain service with every rule of its domain;
// the bundled HTTP server (httpapi, cmd/marketplaced) is a thin adapter over
// the same services.
package marketplace

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/catalog"
	"github.com/marketplace/marketplace/claims"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/faults"
	"github.com/marketplace/marketplace/feedback"
	"github.com/marketplace/marketplace/fees"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/idempotency"
	"github.com/marketplace/marketplace/internal/retrylog"
	"github.com/marketplace/marketplace/messages"
	"github.com/marketplace/marketplace/notes"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/oauth"
	"github.com/marketplace/marketplace/questions"
	"github.com/marketplace/marketplace/responsetime"
	"github.com/marketplace/marketplace/sales"
	"github.com/marketplace/marketplace/stock"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/stubs"
)

// Error is a domain error; Kind classifies it.
type (
	Error = errs.Error
	Kind  = errs.Kind
)

// Error kinds, re-exported for embedders.
const (
	KindInternal     = errs.Internal
	KindInvalid      = errs.Invalid
	KindUnauthorized = errs.Unauthorized
	KindForbidden    = errs.Forbidden
	KindNotFound     = errs.NotFound
	KindConflict     = errs.Conflict
	// KindInsufficientStorage: a change refused because the store's disk
	// is short of space (storage.ErrNoSpace); reads go on.
	KindInsufficientStorage = errs.InsufficientStorage
	// KindUnavailable: the store cannot be reached right now
	// (storage.ErrUnavailable, a database server that is down); the same
	// call may succeed later.
	KindUnavailable = errs.Unavailable
)

// Options configure the engine. The zero value runs on the wall clock.
type Options struct {
	// Clock is the engine's time; nil means the wall clock. Pass a
	// *clock.Manual to move time by hand.
	Clock clock.Clock
	// Logger receives the engine's logs; nil discards them.
	Logger *slog.Logger
	// Notifications configure the delivery of notifications (callback
	// address policy, POST timeout, concurrency).
	Notifications notify.Options
	// Faults configure fault injection (the seed of probability draws).
	Faults faults.Options
}

// Marketplace is the engine: one service per domain over one store.
//
// The services reach the store through the engine's gate: while Reset,
// RestoreSnapshot, CreateSnapshot or LoadFixtures replaces or copies the
// state, a service called from any goroutine waits for it to end, and each
// transaction a service call opens sees the state before or the state
// after, never a mix. A call that opens several transactions (an ask draws
// its id, then writes) may see the replacement fall between two of them;
// Enter holds the state still over any run of calls.
type Marketplace struct {
	Geo       *geo.Service
	Accounts  *accounts.Service
	Stock     *stock.Service
	Questions *questions.Service
	// Sales holds orders, their packs and payments, and shipments.
	Sales *sales.Service
	// Claims holds the claims buyers open on orders and the returns they
	// lead to.
	Claims *claims.Service
	// Messages holds the post-sale conversations between sellers and
	// buyers.
	Messages *messages.Service
	// Feedback holds the ratings the parties of a sale give each other.
	Feedback *feedback.Service
	// Notes holds the sellers' private notes on their orders and packs.
	Notes   *notes.Service
	Fees    *fees.Service
	Catalog *catalog.Service
	Notify  *notify.Service
	// Faults holds the fault rules that the HTTP server applies before a
	// request reaches any other service.
	Faults *faults.Service
	// Stubs holds the stub mappings (WireMock's format) that the HTTP
	// server answers with where no emulated route serves a request, or
	// before the route for an override stub.
	Stubs *stubs.Service
	// OAuth answers the authorization page and the token endpoint: the
	// applications are the clients, the grants are the users'.
	OAuth *oauth.Service

	// ResponseTimes keeps the sellers' response times, refreshed daily.
	ResponseTimes *responsetime.Service

	// Idempotency keeps the keys of requests that are safe to retry: a
	// request under a Claim (idempotency.WithClaim) writes its key's record
	// in the transaction of its first write, through the engine's gate.
	Idempotency *idempotency.Service

	Clock  clock.Clock
	Logger *slog.Logger

	store     storage.Store
	ownsStore bool
	// stopFollow stops the refreshes and the claims' timeouts that follow
	// a manual clock.
	stopFollow func()
	// manual is the engine's clock when it is manual, shared with the other
	// engines on the store (sharedclock.go); stopSharing stops that.
	manual      *clock.Manual
	clockShare  clockShare
	stopSharing func()

	// gate holds requests (Enter) and the services' transactions out while
	// the state is replaced (gate.go).
	gate          gate
	hookMu        sync.Mutex
	replacedHooks []func(context.Context)
	// bg pauses the delivery of notifications run by Start (background.go).
	bg background
}

// Open starts the engine on the store that opener opens, and Close closes
// that store:
//
//	m, err := marketplace.Open(ctx, badger.Dir("./data"), opts)
//	m, err := marketplace.Open(ctx, postgres.URL("postgres://..."), opts)
//
// The backend is a value the caller names, so a program links only the
// backends it uses: one that runs on memory alone (New(memory.New(), opts))
// links neither Badger nor pgx. ctx bounds the opening: reaching a
// database, the schema migrations and the loading of the built-in reference
// data (see NewContext).
//
// Several engines may open one PostgreSQL database at once: the schema
// migrations, the built-in reference data and EnsureDemo are each applied
// once.
func Open(ctx context.Context, opener storage.Opener, opts Options) (*Marketplace, error) {
	if opener == nil {
		return nil, fmt.Errorf("marketplace: nil storage opener")
	}
	st, err := opener.Open(ctx)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return nil, fmt.Errorf("marketplace: the storage opener returned no store")
	}
	m, err := NewContext(ctx, st, opts)
	if err != nil {
		return nil, errors.Join(err, st.Close())
	}
	m.ownsStore = true
	return m, nil
}

// SharedPollInterval is how often, by default, the delivery of
// notifications looks for events and due retries on a store that other
// servers write too (storage.Shared; notify.Options.PollInterval; 5 ms on
// the stores of one process) and that does not tell of their changes.
const SharedPollInterval = 50 * time.Millisecond

// ChangesPollInterval is notify.Options.PollInterval's default on a store
// that other servers write too and that tells each of their changes
// (storage.Changes, such as PostgreSQL): their events wake the delivery
// when they commit, so the poll only finds retries come due and sweeps
// the outbox.
const ChangesPollInterval = time.Second

// FaultPollInterval is how often, on a store that other servers write too
// (storage.Shared) and that does not tell of their changes
// (storage.Changes), an engine reads the fault rules and the stubs again to
// see those made through another server.
const FaultPollInterval = 100 * time.Millisecond

// New starts the engine on store. The caller keeps ownership of the store:
// Close does not close it. New first brings the store to this binary's
// schema version (see Migrate); a store written by a newer binary is
// refused with an error that names both versions. New is NewContext with a
// context that never ends: an opening that a migration may make long is
// better bounded with NewContext.
func New(store storage.Store, opts Options) (*Marketplace, error) {
	return NewContext(context.Background(), store, opts)
}

// NewContext is New bounded by ctx: when ctx ends during the schema
// migrations or the loading of the built-in reference data, NewContext
// stops after the storage transaction under way and returns ctx's error.
// What was committed stays and is consistent (each migration's chunk and
// each package's reference dataset is one transaction), so a later New,
// NewContext or Open on the store goes on from there and ends as an
// uninterrupted one would.
func NewContext(ctx context.Context, store storage.Store, opts Options) (*Marketplace, error) {
	if store == nil {
		return nil, fmt.Errorf("marketplace: nil store")
	}
	if opts.Clock == nil {
		opts.Clock = clock.Wall{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	// The store's data must be in this binary's layout before any service
	// reads it, the built-in reference data included.
	if _, err := Migrate(ctx, store, MigrateOptions{Logger: opts.Logger}); err != nil {
		return nil, err
	}
	m := &Marketplace{Clock: opts.Clock, Logger: opts.Logger, store: store}
	store = m.gateServices(store)
	m.Geo = geo.New(store, opts.Clock)
	m.Accounts = accounts.New(store, opts.Clock, m.Geo)
	if storage.IsShared(store) && opts.Notifications.PollInterval == 0 {
		// Every poll is a transaction on the database, from every server;
		// the events of this process wake its delivery at once anyway, so
		// only events written through another server wait for a poll, or
		// for the store to tell of them.
		opts.Notifications.PollInterval = SharedPollInterval
		if _, ok := m.store.(storage.Changes); ok {
			opts.Notifications.PollInterval = ChangesPollInterval
		}
	}
	// Leases, sweeps and a POST's req_time are real time, whatever the
	// engine's clock says.
	m.Notify = notify.New(store, opts.Clock, clock.Wall{}, opts.Notifications)
	m.Faults = faults.New(store, opts.Clock, opts.Faults)
	// A reset or restore replaces the stored rules; the cache of them goes.
	m.OnStateReplaced(func(context.Context) { m.Faults.Invalidate() })
	m.Stubs = stubs.New(store)
	m.OnStateReplaced(func(context.Context) { m.Stubs.Invalidate() })
	m.OnStateReplaced(func(context.Context) { m.Accounts.ForgetTokens() })
	m.OnStateReplaced(m.announceStateReplaced)
	m.OAuth = oauth.New(m.Accounts, m.Notify)
	m.Fees = fees.New(store, opts.Clock, m.Geo)
	m.Catalog = catalog.New(store, opts.Clock, m.Geo)
	m.Stock = stock.New(store, opts.Clock, m.Geo)
	m.Questions = questions.New(store, opts.Clock, m.Accounts, m.Stock)
	m.Sales = sales.New(store, opts.Clock, m.Stock, m.Fees)
	m.Claims = claims.New(store, opts.Clock, m.Sales)
	m.Messages = messages.New(store, opts.Clock, m.Sales, m.Accounts, m.Claims)
	m.Feedback = feedback.New(store, opts.Clock, m.Sales)
	m.Notes = notes.New(store, opts.Clock, m.Sales)
	m.ResponseTimes = responsetime.New(store, opts.Clock, m.Geo, m.Questions)
	m.Idempotency = idempotency.New(store, opts.Clock)
	// Several servers may share the store (PostgreSQL): the scheduled
	// refresh and the delivery of notifications run in the one that holds
	// their lease. Leases expire in real time, whatever the engine's clock.
	instance := "marketplace-" + uuid.NewString()
	m.ResponseTimes.ShareStore(instance, clock.Wall{})
	m.ResponseTimes.HoldStateWith(m.Enter)
	m.Notify.ShareStore(instance)
	m.Idempotency.ShareStore(instance, clock.Wall{})
	if manual, ok := opts.Clock.(*clock.Manual); ok {
		// A manual clock moves only by hand, and whoever moves it across the
		// refresh hour expects the refresh done when the move returns,
		// whether or not Start runs.
		stopRefresh := m.ResponseTimes.FollowManual(manual, func(err error) {
			m.Logger.Error("response time refresh", "err", err)
		})
		// A claim whose seller let its due date pass goes to dispute,
		// with its notification, when the move crosses the date.
		stopClaims := m.expireOnMoves(manual)
		m.stopFollow = func() { stopRefresh(); stopClaims() }
		stop, err := m.shareManualClock(ctx, manual)
		if err != nil {
			m.stopFollow()
			return nil, fmt.Errorf("marketplace: share the manual clock: %w", err)
		}
		m.stopSharing = stop
	}
	if err := m.loadBuiltinReference(ctx); err != nil {
		// The engine was never handed out: its clock watchers go with it.
		return nil, errors.Join(err, m.Close())
	}
	return m, nil
}

// Store returns the storage the engine runs on.
func (m *Marketplace) Store() storage.Store { return m.store }

// Close stops the engine's background work and, for an engine started with
// Open, closes its store.
func (m *Marketplace) Close() error {
	if m.stopFollow != nil {
		m.stopFollow()
	}
	if m.stopSharing != nil {
		m.stopSharing()
	}
	// Deliveries in flight end before the store closes; what they did not
	// record is sent again after the next Start.
	m.bg.close()
	m.Notify.Stop()
	if m.ownsStore {
		return m.store.Close()
	}
	return nil
}

// Start runs the engine's background work (scheduled refreshes, notification
// delivery, undoing reference imports that a crash cut short, the sweep of
// expired idempotency keys) until ctx ends. Embedders that want the work
// done on their own schedule call the services' methods instead.
//
// The response times are refreshed at once when the latest daily refresh is
// missing, then daily at responsetime.RefreshHour in Buenos Aires.
func (m *Marketplace) Start(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	loops := []func(context.Context) error{
		func(ctx context.Context) error {
			return m.ResponseTimes.Run(ctx, retrylog.New(m.Logger, "response time refresh", time.Now).Report)
		},
		m.runNotify,
		m.watchImports,
		m.runAfterSaleSweeps,
		func(ctx context.Context) error {
			return m.Idempotency.Run(ctx, func(err error) {
				m.Logger.Error("idempotency key sweep", "err", err)
			})
		},
	}
	if _, ok := m.store.(storage.Changes); ok {
		loops = append(loops, m.followStateReplaced)
	}
	if storage.IsShared(m.store) {
		// Rules made through another server reach this one's cache when
		// the store tells of them, or by this poll; a store of one
		// process sees its own at once.
		loops = append(loops, func(ctx context.Context) error { return m.Faults.Watch(ctx, FaultPollInterval) })
		// A miss reads the stubs' generation itself; only whether an
		// override exists waits for the store's word or this poll.
		loops = append(loops, func(ctx context.Context) error { return m.Stubs.Watch(ctx, FaultPollInterval) })
	}
	errc := make(chan error, len(loops))
	for _, loop := range loops {
		go func() { errc <- loop(ctx) }()
	}
	// The engine's background work is one unit: when any loop stops (ctx
	// ended, or Close stopped the deliveries), the others stop too.
	first := <-errc
	cancel()
	for range len(loops) - 1 {
		<-errc
	}
	return first
}

// stateTopic is announced (storage.Announce) when an engine has replaced
// the state (a Reset, the restore of a snapshot, fixtures loaded), so that
// the other engines on the store drop what they keep of the old one.
const stateTopic = "marketplace/state"

// replacedElsewhere marks the context of the hooks run for a replacement
// made by another engine, which must not be announced again.
type replacedElsewhere struct{}

// announceStateReplaced tells the other engines on a store that tells of
// changes (storage.Changes) that this one replaced the state.
func (m *Marketplace) announceStateReplaced(ctx context.Context) {
	if _, ok := m.store.(storage.Changes); !ok || ctx.Value(replacedElsewhere{}) != nil {
		return
	}
	err := m.store.Update(ctx, func(tx storage.Tx) error {
		storage.Announce(tx, stateTopic)
		// The rules and the stubs were replaced with the rest.
		storage.Announce(tx, faults.ChangesTopic)
		storage.Announce(tx, stubs.ChangesTopic)
		return nil
	})
	if err != nil {
		// The others' caches of rules and stubs still see the change
		// of those when the store tells of them.
		m.Logger.Error("announce the replaced state", "err", err)
	}
}

// followStateReplaced runs the hooks of OnStateReplaced whenever another
// engine on the store has replaced the state, until ctx ends. It runs them
// also whenever the store may have missed a word (see storage.Changes),
// which costs the caches a read.
func (m *Marketplace) followStateReplaced(ctx context.Context) error {
	hookCtx := context.WithValue(ctx, replacedElsewhere{}, true)
	started := false
	return storage.Follow(ctx, m.store, stateTopic, 0, func() {
		if !started {
			// The caches were filled from the state as it is.
			started = true
			return
		}
		m.hookMu.Lock()
		hooks := slices.Clone(m.replacedHooks)
		m.hookMu.Unlock()
		for _, h := range hooks {
			h(hookCtx)
		}
	})
}
