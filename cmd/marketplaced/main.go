// Command marketplaced serves the marketplace API over HTTP, on a Badger
// folder (the default), in memory, or on a PostgreSQL database that several
// servers may share.
//
// Every flag can also be set by an environment variable MARKETPLACE_<NAME>,
// the flag's name in upper case with dashes as underscores (-operator-token:
// MARKETPLACE_OPERATOR_TOKEN). A flag given on the command line wins.
//
// A wrong command line or environment exits with status 2, as the flag
// package does; a failure to serve exits with status 1.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/faults"
	"github.com/marketplace/marketplace/httpapi"
	"github.com/marketplace/marketplace/internal/buildinfo"
	"github.com/marketplace/marketplace/internal/logbuf"
	"github.com/marketplace/marketplace/internal/reqlog"
	"github.com/marketplace/marketplace/journal"
	"github.com/marketplace/marketplace/metrics"
	"github.com/marketplace/marketplace/notify"
)

func main() {
	args := os.Args[1:]
	var err error
	switch {
	case len(args) > 0 && args[0] == "import":
		err = runImport(context.Background(), args[1:], os.Stdin, os.Stdout, os.Stderr)
	case len(args) > 0 && args[0] == "migrate":
		err = runMigrate(context.Background(), args[1:], os.Stdout, os.Stderr)
	case len(args) > 0 && args[0] == "drift":
		err = runDrift(args[1:], os.Stdout, os.Stderr)
	default:
		err = run(context.Background(), args, os.Stdout, os.Stderr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "marketplaced:", err)
		if errors.As(err, new(usageError)) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// usageError is a mistake in the command line or the environment, which
// scripts and supervisors should tell apart from a failure to serve: a
// restart will not fix it.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// Program is the server: ParseFlags fills Config from the environment and the
// command line, Run opens what Config names and serves until a signal, and
// Close releases what Run opened.
type Program struct {
	Config Config

	stdout, stderr io.Writer

	// What Run opened, which Close releases in the reverse order.
	logOut        *logbuf.Writer
	stopObserving func()
	m             *marketplace.Marketplace
}

// NewProgram returns a server that prints what its operator must see (the
// tokens, the address) to stdout, and its log and usage to stderr.
func NewProgram(stdout, stderr io.Writer) *Program {
	return &Program{stdout: stdout, stderr: stderr}
}

// run is the server's command line: its flags, then Run until a signal.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	p := NewProgram(stdout, stderr)
	if err := p.ParseFlags(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	defer p.Close()
	return p.Run(ctx)
}

// ParseFlags fills p.Config from MARKETPLACE_<NAME> and then args, which
// wins. Its errors are usageErrors, but for flag.ErrHelp: the usage text
// was asked for and printed.
func (p *Program) ParseFlags(args []string) error {
	c, err := parseFlags(args, p.stderr)
	p.Config = c
	return err
}

// Run opens the store and the engine p.Config names and serves the API
// until ctx ends or a signal comes, then drains the requests in flight.
// Close releases what it opened, also when it fails.
func (p *Program) Run(ctx context.Context) error {
	c, stdout := &p.Config, p.stdout
	if c.Version {
		b, _ := json.Marshal(buildinfo.Get())
		fmt.Fprintf(stdout, "%s\n", b)
		return nil
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return usagef("-log-level: %w", err)
	}
	// One write call for the lines that arrive together, instead of one
	// per request under the logger's lock (internal/logbuf).
	p.logOut = logbuf.New(p.stderr)
	logger := slog.New(reqlog.New(p.logOut, &slog.HandlerOptions{Level: level}))

	opts := marketplace.Options{Logger: logger, Notifications: notify.Options{
		AllowPrivateCallbacks: c.AllowPrivateCallbacks,
		Timeout:               c.NotificationTimeout,
	}, Faults: faults.Options{Seed: c.FaultSeed}}
	var met *metrics.Metrics
	if c.Metrics {
		met = metrics.New()
		p.stopObserving = met.ObserveStorage()
		opts.Notifications.OnAttempt = met.NotificationAttempt
	}
	var manual *clock.Manual
	if c.Clock == "manual" {
		manual = clock.NewManual(time.Now())
		opts.Clock = manual
	}
	m, err := openMarketplace(ctx, *c, opts)
	if err != nil {
		return err
	}
	p.m = m

	if c.OperatorToken == "" {
		c.OperatorToken = generateToken()
		fmt.Fprintf(stdout, "operator token: %s\n", c.OperatorToken)
	}
	if c.Demo {
		d, err := m.EnsureDemo(ctx)
		if err != nil {
			return fmt.Errorf("demo accounts: %w", err)
		}
		fmt.Fprintf(stdout, "demo seller: id %d, token %s, stores %s and %s\n", d.Seller.ID, d.SellerToken, d.Stores[0].ID, d.Stores[1].ID)
		fmt.Fprintf(stdout, "demo buyer:  id %d, token %s\n", d.Buyer.ID, d.BuyerToken)
	}
	if c.Fixtures != "" {
		if err := loadFixturesFile(ctx, m, c.Fixtures, stdout); err != nil {
			return err
		}
	}
	if c.Stubs != "" {
		if err := loadStubs(ctx, m, c.Stubs, stdout); err != nil {
			return err
		}
	}

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	jnl := journal.New(c.Journal)
	if c.JournalBodies {
		jnl = journal.NewWithBodies(c.Journal, journal.Bodies{})
	}
	cfg := httpapi.Config{OperatorToken: c.OperatorToken, Logger: logger, Journal: jnl,
		CORSOrigins: c.CORSOrigins, Metrics: met, MetricsOwnAddress: c.MetricsAddr != "",
		ValidateRequests: c.ValidateRequests, RequestTimeout: c.RequestTimeout,
		ConcurrentSearches: c.ConcurrentSearches}
	if err := upstreamConfig(&cfg, *c, stdout); err != nil {
		return err
	}
	if met != nil {
		met.Engine(m)
	}
	srv := httpapi.New(m, cfg)
	if met != nil && c.MetricsAddr != "" {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", met.Handler())
		go serveSide(ctx, logger, "metrics", c.MetricsAddr, mux, stdout)
	}
	if c.Pprof != "" {
		go serveSide(ctx, logger, "pprof", c.Pprof, pprofMux(), stdout)
	}
	bg, cancelBG := context.WithCancel(ctx)
	defer cancelBG()
	go func() {
		if err := m.Start(bg); err != nil && !errors.Is(err, context.Canceled) {
			logger.Error("background work stopped", "err", err)
		}
	}()
	err = httpapi.Run(ctx, c.Addr, srv, c.ShutdownTimeout, func(addr string) {
		fmt.Fprintf(stdout, "listening on http://%s\n", addr)
		logger.Info("listening", "addr", addr, "storage", storageName(*c), "clock", c.Clock)
	})
	logger.Info("stopped")
	return err
}

// Close closes the engine and its store, then flushes the log: the engine
// may log as it stops. It may be called whether or not Run succeeded.
func (p *Program) Close() error {
	var err error
	if p.m != nil {
		err = p.m.Close()
		p.m = nil
	}
	if p.stopObserving != nil {
		p.stopObserving()
		p.stopObserving = nil
	}
	if p.logOut != nil {
		p.logOut.Close()
		p.logOut = nil
	}
	return err
}

func generateToken() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return "OPERATOR-" + hex.EncodeToString(b[:])
}
