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
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/faults"
	"github.com/marketplace/marketplace/httpapi"
	"github.com/marketplace/marketplace/internal/buildinfo"
	"github.com/marketplace/marketplace/internal/logbuf"
	"github.com/marketplace/marketplace/journal"
	"github.com/marketplace/marketplace/metrics"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/badger"
	"github.com/marketplace/marketplace/storage/memory"
	"github.com/marketplace/marketplace/storage/postgres"
)

func main() {
	args := os.Args[1:]
	var err error
	switch {
	case len(args) > 0 && args[0] == "import":
		err = runImport(context.Background(), args[1:], os.Stdin, os.Stdout, os.Stderr)
	case len(args) > 0 && args[0] == "migrate":
		err = runMigrate(context.Background(), args[1:], os.Stdout, os.Stderr)
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

type config struct {
	addr          string
	data          string
	memory        bool
	postgres      string
	operatorToken string
	demo          bool
	fixtures      string
	clockMode     string
	logLevel      string
	drain         time.Duration
	// allowPrivateCallbacks and notifyTimeout configure notification
	// delivery (notify.Options).
	allowPrivateCallbacks bool
	notifyTimeout         time.Duration
	// journal is the number of requests the request journal keeps (0:
	// none); faultSeed seeds the probability draws of fault rules.
	journal   int
	faultSeed uint64
	// corsOrigins are the origins whose browser apps may call the API.
	corsOrigins originList
	// version prints the build and exits; metrics turns the Prometheus
	// metrics on, served on the public port unless metricsAddr names a
	// listener of their own; pprof serves net/http/pprof on that address
	// when given; validateRequests refuses requests that break the OpenAPI
	// document.
	version          bool
	metrics          bool
	metricsAddr      string
	pprof            string
	validateRequests bool
}

// originList is the repeatable -cors-origin flag. One value may also list
// several origins separated by commas, which is how the environment
// variable gives more than one. Values from the environment are replaced,
// not extended, by the command line's.
type originList struct {
	origins []string
	fromEnv bool
}

func (l *originList) String() string { return strings.Join(l.origins, ",") }

func (l *originList) Set(v string) error {
	if l.fromEnv {
		l.origins, l.fromEnv = nil, false
	}
	for _, o := range strings.Split(v, ",") {
		o = strings.TrimSpace(o)
		if err := httpapi.CheckCORSOrigin(o); err != nil {
			return err
		}
		l.origins = append(l.origins, o)
	}
	return nil
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	c, rest, err := parseFlagsWithArgs(args, stderr)
	if err == nil && len(rest) > 0 {
		err = usagef("unexpected argument %q (flags start with -)", rest[0])
	}
	return c, err
}

// parseFlagsWithArgs parses the server's flags, which the subcommands share,
// and returns the arguments after them. Its errors are usageErrors, but for
// flag.ErrHelp, which asks for the usage text and nothing else.
func parseFlagsWithArgs(args []string, stderr io.Writer) (config, []string, error) {
	return parseCommandFlags("", args, stderr)
}

// subcommandUsage is the usage line and summary of each subcommand, and
// the server's flags it takes: its -h prints these only.
var subcommandUsage = map[string]struct {
	usage string
	flags []string
}{
	"import": {"usage: marketplaced import [-data DIR | -postgres URL] FILE\n\nUpserts the records of a reference document (FILE, or - for standard input)\ninto the data folder or the PostgreSQL database, and exits.",
		[]string{"data", "postgres", "log-level"}},
	"migrate": {"usage: marketplaced migrate [-dry-run] [-data DIR | -postgres URL]\n\nRuns the pending storage migrations and exits; -dry-run prints each pending\nmigration and how many keys it would write and delete, and changes nothing.",
		[]string{"data", "postgres", "log-level"}},
}

// parseCommandFlags parses the server's flags for cmd ("" for the server,
// else a subcommand, whose -h shows its own usage).
func parseCommandFlags(cmd string, args []string, stderr io.Writer) (config, []string, error) {
	var c config
	fs := flag.NewFlagSet("marketplaced", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.addr, "addr", "127.0.0.1:8080", "address to listen on")
	fs.StringVar(&c.data, "data", "./marketplace-data", "Badger data folder")
	fs.BoolVar(&c.memory, "memory", false, "keep everything in memory instead of the data folder (lost on exit)")
	fs.StringVar(&c.postgres, "postgres", "", "PostgreSQL URL (postgres://user:password@host:5432/db): keep everything in that database instead of the data folder; several servers may share it")
	fs.StringVar(&c.operatorToken, "operator-token", "", "token of the /operator routes (generated and printed when empty)")
	fs.BoolVar(&c.demo, "demo", false, "create the demo seller and buyer (idempotent) and print their tokens")
	fs.StringVar(&c.fixtures, "fixtures", "", "load this fixtures file (JSON; see docs/testing-with-marketplace.md) at start, after -demo; loading it again creates nothing new")
	fs.StringVar(&c.clockMode, "clock", "wall", "clock: wall, or manual (moves only by PUT /operator/clock)")
	fs.StringVar(&c.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.DurationVar(&c.drain, "shutdown-timeout", 10*time.Second, "how long in-flight requests may finish on shutdown")
	fs.BoolVar(&c.allowPrivateCallbacks, "allow-private-callbacks", false, "let notification callback URLs reach loopback and private addresses (local receivers)")
	fs.DurationVar(&c.notifyTimeout, "notification-timeout", notify.DefaultTimeout, "timeout of each notification POST")
	fs.IntVar(&c.journal, "journal", journal.DefaultSize, "number of recent requests kept for GET /operator/requests (0 keeps none)")
	fs.Uint64Var(&c.faultSeed, "fault-seed", 0, "seed of the random draws of fault rules with a probability (the same seed repeats the same faults)")
	fs.Var(&c.corsOrigins, "cors-origin", "let browser apps of this origin (scheme://host[:port], or * for any) call the API with CORS; repeatable (comma-separated in the environment); off when none")
	fs.BoolVar(&c.version, "version", false, "print the build (module version, VCS revision and time) and exit")
	fs.BoolVar(&c.metrics, "metrics", true, "count requests, storage transactions and notifications for GET /metrics (Prometheus)")
	fs.StringVar(&c.metricsAddr, "metrics-addr", "", "serve /metrics on this address of its own instead of the public one")
	fs.StringVar(&c.pprof, "pprof", "", "serve net/http/pprof on this address (off when empty; keep it on loopback)")
	fs.BoolVar(&c.validateRequests, "validate-requests", false, "refuse with 400 a request that breaks the OpenAPI document (GET /openapi.json)")
	fs.Usage = func() {
		if u, ok := subcommandUsage[cmd]; ok {
			fmt.Fprintf(stderr, "%s\n\nFlags (each also MARKETPLACE_<NAME>):\n", u.usage)
			sub := flag.NewFlagSet(cmd, flag.ContinueOnError)
			sub.SetOutput(stderr)
			for _, name := range u.flags {
				f := fs.Lookup(name)
				sub.Var(f.Value, f.Name, f.Usage)
			}
			sub.PrintDefaults()
			return
		}
		fmt.Fprintf(stderr, "usage: marketplaced [flags]\n       marketplaced import [-data DIR | -postgres URL] FILE\n       marketplaced migrate [-dry-run] [-data DIR | -postgres URL]\n\nFlags (each also MARKETPLACE_<NAME>):\n")
		fs.PrintDefaults()
	}
	if err := applyEnv(fs); err != nil {
		return c, nil, usageError{err}
	}
	c.corsOrigins.fromEnv = len(c.corsOrigins.origins) > 0
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return c, nil, err
		}
		return c, nil, usageError{err}
	}
	if c.notifyTimeout <= 0 {
		return c, nil, usagef("-notification-timeout must be positive, not %s", c.notifyTimeout)
	}
	if c.journal < 0 {
		return c, nil, usagef("-journal must be 0 or more, not %d", c.journal)
	}
	if c.clockMode != "wall" && c.clockMode != "manual" {
		return c, nil, usagef("-clock must be wall or manual, not %q", c.clockMode)
	}
	if err := checkStorageFlags(fs, c); err != nil {
		return c, nil, err
	}
	return c, fs.Args(), nil
}

// checkStorageFlags refuses -postgres beside a data folder or -memory that
// was asked for, on the command line or in the environment: which store
// would be served is then a guess, and a wrong guess serves an empty store
// or leaves the intended one unused. -data's default does not count.
func checkStorageFlags(fs *flag.FlagSet, c config) error {
	if c.postgres == "" {
		return nil
	}
	dataSet := false
	fs.Visit(func(f *flag.Flag) { dataSet = dataSet || f.Name == "data" })
	switch {
	case dataSet:
		return usagef("-postgres cannot be combined with -data (or MARKETPLACE_DATA): choose one store")
	case c.memory:
		return usagef("-postgres cannot be combined with -memory (or MARKETPLACE_MEMORY): choose one store")
	}
	// pgx's message shows the URL with its password masked.
	if _, err := pgxpool.ParseConfig(c.postgres); err != nil {
		return usagef("-postgres: %w", err)
	}
	return nil
}

// applyEnv sets each flag from MARKETPLACE_<NAME> before the command line is
// parsed, so that the command line wins. A value that is refused names the
// values accepted.
func applyEnv(fs *flag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == "version" {
			return // a request to print and exit, not a setting
		}
		name := "MARKETPLACE_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		v, ok := os.LookupEnv(name)
		if !ok || err != nil {
			return
		}
		if values, ok := enumValues[f.Name]; ok && !slices.Contains(values, v) {
			err = fmt.Errorf("%s=%q: accepted values are %s", name, v, strings.Join(values, ", "))
			return
		}
		if e := fs.Set(f.Name, v); e != nil {
			err = fmt.Errorf("%s=%q: %w; accepted values are %s", name, v, e, acceptedValues(f))
		}
	})
	return err
}

// enumValues are the values of the flags that take one of a few words.
var enumValues = map[string][]string{
	"clock":     {"wall", "manual"},
	"log-level": {"debug", "info", "warn", "error"},
}

// acceptedValues describes what a flag takes, by its type.
func acceptedValues(f *flag.Flag) string {
	switch f.Value.(type) {
	case interface{ IsBoolFlag() bool }:
		return "true, false, 1, 0, t, f, TRUE, FALSE"
	}
	switch fmt.Sprintf("%T", f.Value) {
	case "*flag.durationValue":
		return "a duration such as 500ms, 10s or 1m"
	case "*flag.intValue":
		return "an integer"
	case "*flag.uint64Value":
		return "an integer of 0 or more"
	}
	return "a text"
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if c.version {
		b, _ := json.Marshal(buildinfo.Get())
		fmt.Fprintf(stdout, "%s\n", b)
		return nil
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.logLevel)); err != nil {
		return usagef("-log-level: %w", err)
	}
	// One write call for the lines that arrive together, instead of one
	// per request under the logger's lock (internal/logbuf).
	logOut := logbuf.New(stderr)
	defer logOut.Close()
	logger := slog.New(slog.NewJSONHandler(logOut, &slog.HandlerOptions{Level: level}))

	opts := marketplace.Options{Logger: logger, Notifications: notify.Options{
		AllowPrivateCallbacks: c.allowPrivateCallbacks,
		Timeout:               c.notifyTimeout,
	}, Faults: faults.Options{Seed: c.faultSeed}}
	var met *metrics.Metrics
	if c.metrics {
		met = metrics.New()
		defer met.ObserveStorage()()
		opts.Notifications.OnAttempt = met.NotificationAttempt
	}
	var manual *clock.Manual
	if c.clockMode == "manual" {
		manual = clock.NewManual(time.Now())
		opts.Clock = manual
	}
	m, err := openMarketplace(ctx, c, opts)
	if err != nil {
		return err
	}
	defer m.Close()

	if c.operatorToken == "" {
		c.operatorToken = generateToken()
		fmt.Fprintf(stdout, "operator token: %s\n", c.operatorToken)
	}
	if c.demo {
		d, err := m.EnsureDemo(ctx)
		if err != nil {
			return fmt.Errorf("demo accounts: %w", err)
		}
		fmt.Fprintf(stdout, "demo seller: id %d, token %s, stores %s and %s\n", d.Seller.ID, d.SellerToken, d.Stores[0].ID, d.Stores[1].ID)
		fmt.Fprintf(stdout, "demo buyer:  id %d, token %s\n", d.Buyer.ID, d.BuyerToken)
	}
	if c.fixtures != "" {
		if err := loadFixturesFile(ctx, m, c.fixtures, stdout); err != nil {
			return err
		}
	}

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg := httpapi.Config{OperatorToken: c.operatorToken, Logger: logger, Journal: journal.New(c.journal),
		CORSOrigins: c.corsOrigins.origins, Metrics: met, MetricsOwnAddress: c.metricsAddr != "",
		ValidateRequests: c.validateRequests}
	if met != nil {
		met.Engine(m)
	}
	srv := httpapi.New(m, cfg)
	if met != nil && c.metricsAddr != "" {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", met.Handler())
		go serveSide(ctx, logger, "metrics", c.metricsAddr, mux, stdout)
	}
	if c.pprof != "" {
		go serveSide(ctx, logger, "pprof", c.pprof, pprofMux(), stdout)
	}
	bg, cancelBG := context.WithCancel(ctx)
	defer cancelBG()
	go func() {
		if err := m.Start(bg); err != nil && !errors.Is(err, context.Canceled) {
			logger.Error("background work stopped", "err", err)
		}
	}()
	err = httpapi.Run(ctx, c.addr, srv, c.drain, func(addr string) {
		fmt.Fprintf(stdout, "listening on http://%s\n", addr)
		logger.Info("listening", "addr", addr, "storage", storageName(c), "clock", c.clockMode)
	})
	logger.Info("stopped")
	return err
}

// openMarketplace starts the engine on the store the flags name; Close
// closes the store.
func openMarketplace(ctx context.Context, c config, opts marketplace.Options) (*marketplace.Marketplace, error) {
	switch {
	case c.postgres != "":
		m, err := marketplace.Open(ctx, postgres.URL(c.postgres), opts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", redactPostgres(c.postgres), err)
		}
		return m, nil
	case c.memory:
		return marketplace.New(memory.New(), opts)
	default:
		return marketplace.Open(ctx, badger.Dir(c.data), opts)
	}
}

// openStore opens the durable store the flags name, for the subcommands
// that work on the store itself (they refuse -memory: a store that ends
// with the command has nothing to keep); the caller closes it.
func openStore(ctx context.Context, c config) (storage.Store, error) {
	if c.postgres != "" {
		st, err := postgres.Open(ctx, c.postgres, postgres.Options{})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", redactPostgres(c.postgres), err)
		}
		return st, nil
	}
	return badger.Open(c.data, badger.Options{})
}

// storeLocation names the durable store in a subcommand's report: the data
// folder, or the database without its password.
func storeLocation(c config) string {
	if c.postgres != "" {
		return redactPostgres(c.postgres)
	}
	return c.data
}

// storageName names the store in logs and messages. A PostgreSQL URL may
// hold a password, and logs travel further than the command line.
func storageName(c config) string {
	switch {
	case c.postgres != "":
		return "postgres:" + redactPostgres(c.postgres)
	case c.memory:
		return "memory"
	}
	return "badger:" + c.data
}

// redactPostgres returns the server, user and database that url names,
// without its password: as a postgres:// URL, whichever form (URL or
// key=value) url has, since a password may hide in either, and in a URL's
// query too.
func redactPostgres(url string) string {
	cfg, err := pgconn.ParseConfig(url)
	if err != nil {
		return "(unreadable URL)"
	}
	u := neturl.URL{Scheme: "postgres", User: neturl.User(cfg.User), Path: "/" + cfg.Database}
	if strings.HasPrefix(cfg.Host, "/") {
		// A Unix socket folder: no host part, as libpq writes it.
		u.RawQuery = neturl.Values{"host": {cfg.Host}}.Encode()
	} else {
		u.Host = net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	}
	return u.String()
}

func generateToken() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return "OPERATOR-" + hex.EncodeToString(b[:])
}
