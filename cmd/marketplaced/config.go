package main

import (
	"errors"
	"flag"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/marketplace/marketplace/httpapi"
	"github.com/marketplace/marketplace/journal"
	"github.com/marketplace/marketplace/notify"
)

// Config is what the server and its subcommands are told: one field per
// flag, each also set by MARKETPLACE_<NAME> (env.go). The flags fill it;
// Program.Run opens what it names.
type Config struct {
	Addr          string
	Data          string
	Memory        bool
	Postgres      string
	OperatorToken string
	Demo          bool
	Fixtures      string
	Clock         string
	LogLevel      string
	// ShutdownTimeout is how long in-flight requests may finish;
	// RequestTimeout bounds each request of the API (httpapi.Config).
	ShutdownTimeout time.Duration
	RequestTimeout  time.Duration
	// ConcurrentSearches caps the searches running at once (0: the
	// default of httpapi).
	ConcurrentSearches int
	// AllowPrivateCallbacks and NotificationTimeout configure notification
	// delivery (notify.Options).
	AllowPrivateCallbacks bool
	NotificationTimeout   time.Duration
	// Journal is the number of requests the request journal keeps (0:
	// none); FaultSeed seeds the probability draws of fault rules.
	Journal   int
	FaultSeed uint64
	// JournalBodies keeps the requests' headers and bodies in the
	// journal; Stubs is a file or folder of stub mappings loaded at start.
	JournalBodies bool
	Stubs         string
	// CORSOrigins are the origins whose browser apps may call the API.
	CORSOrigins []string
	// Version prints the build and exits; Metrics turns the Prometheus
	// metrics on, served on the public port unless MetricsAddr names a
	// listener of their own; Pprof serves net/http/pprof on that address
	// when given; ValidateRequests refuses requests that break the OpenAPI
	// document.
	Version          bool
	Metrics          bool
	MetricsAddr      string
	Pprof            string
	ValidateRequests bool
	// Upstream is the real API's base URL, where the public requests that
	// no route and no stub answers are forwarded (every public request
	// with UpstreamAll), each within UpstreamTimeout; Record is the folder
	// each forwarded exchange is recorded into as a stub mapping, and
	// RecordRepeats records every answer of a request, in order
	// (docs/recording.md).
	Upstream        string
	UpstreamAll     bool
	UpstreamTimeout time.Duration
	Record          string
	RecordRepeats   bool
}

// flags is the server's flag set, with what each flag accepts: a refused
// environment variable names it, and the flag package does not say.
type flags struct {
	*flag.FlagSet
	accepts map[string]string   // a description of the values
	words   map[string][]string // the only values of a flag that takes one of a few words
}

// What each kind of flag accepts, as a refused environment variable says it.
const (
	acceptsBool     = "true, false, 1, 0, t, f, TRUE, FALSE"
	acceptsDuration = "a duration such as 500ms, 10s or 1m"
	acceptsInt      = "an integer"
	acceptsUint64   = "an integer of 0 or more"
	acceptsText     = "a text"
)

func (fs flags) text(p *string, name, value, usage string) {
	fs.StringVar(p, name, value, usage)
	fs.accepts[name] = acceptsText
}

// oneOf is a text flag that takes only words. The environment is held to
// them when it is read, and its error names them; the command line's value
// is checked where it is used (-clock after parsing, -log-level by
// Program.Run), whose errors name the flag.
func (fs flags) oneOf(p *string, name, value string, words []string, usage string) {
	fs.text(p, name, value, usage)
	fs.words[name] = words
}

func (fs flags) boolean(p *bool, name string, value bool, usage string) {
	fs.BoolVar(p, name, value, usage)
	fs.accepts[name] = acceptsBool
}

func (fs flags) duration(p *time.Duration, name string, value time.Duration, usage string) {
	fs.DurationVar(p, name, value, usage)
	fs.accepts[name] = acceptsDuration
}

func (fs flags) integer(p *int, name string, value int, usage string) {
	fs.IntVar(p, name, value, usage)
	fs.accepts[name] = acceptsInt
}

func (fs flags) uint64(p *uint64, name string, value uint64, usage string) {
	fs.Uint64Var(p, name, value, usage)
	fs.accepts[name] = acceptsUint64
}

func (fs flags) value(v flag.Value, name, usage string) {
	fs.Var(v, name, usage)
	fs.accepts[name] = acceptsText
}

// newFlags declares the server's flags, which fill c.
func newFlags(c *Config, cors *originList, stderr io.Writer) flags {
	fs := flags{flag.NewFlagSet("marketplaced", flag.ContinueOnError), map[string]string{}, map[string][]string{}}
	fs.SetOutput(stderr)
	fs.text(&c.Addr, "addr", "127.0.0.1:8080", "address to listen on")
	fs.text(&c.Data, "data", "./marketplace-data", "Badger data folder")
	fs.boolean(&c.Memory, "memory", false, "keep everything in memory instead of the data folder (lost on exit)")
	fs.text(&c.Postgres, "postgres", "", "PostgreSQL URL (postgres://user:password@host:5432/db): keep everything in that database instead of the data folder; several servers may share it")
	fs.text(&c.OperatorToken, "operator-token", "", "token of the /operator routes (generated and printed when empty)")
	fs.boolean(&c.Demo, "demo", false, "create the demo seller and buyer (idempotent) and print their tokens")
	fs.text(&c.Fixtures, "fixtures", "", "load this fixtures file (JSON; see docs/testing-with-marketplace.md) at start, after -demo; loading it again creates nothing new")
	fs.oneOf(&c.Clock, "clock", "wall", []string{"wall", "manual"}, "clock: wall, or manual (moves only by PUT /operator/clock)")
	fs.oneOf(&c.LogLevel, "log-level", "info", []string{"debug", "info", "warn", "error"}, "log level: debug, info, warn, error")
	fs.duration(&c.ShutdownTimeout, "shutdown-timeout", 10*time.Second, "how long in-flight requests may finish on shutdown")
	fs.duration(&c.RequestTimeout, "request-timeout", httpapi.DefaultRequestTimeout, "longest time a request of the API may work before it is answered 503 request_timeout (operator routes are not bound)")
	fs.integer(&c.ConcurrentSearches, "concurrent-searches", 0, "searches (of questions, orders, a seller's items, a site) that run at once; the others wait for a slot (0: one per two CPUs, at least one)")
	fs.boolean(&c.AllowPrivateCallbacks, "allow-private-callbacks", false, "let notification callback URLs reach loopback and private addresses (local receivers)")
	fs.duration(&c.NotificationTimeout, "notification-timeout", notify.DefaultTimeout, "timeout of each notification POST")
	fs.integer(&c.Journal, "journal", journal.DefaultSize, "number of recent requests kept for GET /operator/requests (0 keeps none)")
	fs.boolean(&c.JournalBodies, "journal-bodies", false, "keep the requests' headers and bodies in the journal too (redacted and bounded), for POST /operator/requests/count and /find")
	fs.text(&c.Stubs, "stubs", "", "load the WireMock stub mappings of this file, or of every .json file of this folder, at start (see docs/stubs.md)")
	fs.uint64(&c.FaultSeed, "fault-seed", 0, "seed of the random draws of fault rules with a probability (the same seed repeats the same faults)")
	fs.value(cors, "cors-origin", "let browser apps of this origin (scheme://host[:port], or * for any) call the API with CORS; repeatable (comma-separated in the environment); off when none")
	fs.boolean(&c.Version, "version", false, "print the build (module version, VCS revision and time) and exit")
	fs.boolean(&c.Metrics, "metrics", true, "count requests, storage transactions and notifications for GET /metrics (Prometheus)")
	fs.text(&c.MetricsAddr, "metrics-addr", "", "serve /metrics on this address of its own instead of the public one")
	fs.text(&c.Pprof, "pprof", "", "serve net/http/pprof on this address (off when empty; keep it on loopback)")
	fs.boolean(&c.ValidateRequests, "validate-requests", false, "refuse with 400 a request that breaks the OpenAPI document (GET /openapi.json)")
	fs.text(&c.Upstream, "upstream", "", "forward each public request that no route and no stub answers to this base URL of the real API (https://api.mercadolibre.com), with the caller's Authorization, and relay its answer (see docs/recording.md)")
	fs.boolean(&c.UpstreamAll, "upstream-all", false, "forward every public request to -upstream, emulated or not (never the operator's routes nor the server's own), to record the real answers of the emulated routes")
	fs.duration(&c.UpstreamTimeout, "upstream-timeout", httpapi.DefaultUpstreamTimeout, "longest time a forwarded request may take before it is answered 502")
	fs.text(&c.Record, "record", "", "write each forwarded exchange into this folder as a stub mapping, its secrets left out (-stubs loads it back)")
	fs.boolean(&c.RecordRepeats, "record-repeats", false, "record every answer of a repeated request, in order, as a sequence limited by times, rather than the first answer only")
	return fs
}

// originList is the repeatable -cors-origin flag, which fills origins. One
// value may also list several origins separated by commas, which is how the
// environment variable gives more than one. Values from the environment are
// replaced, not extended, by the command line's.
type originList struct {
	origins *[]string
	fromEnv bool
}

func (l *originList) String() string {
	if l.origins == nil {
		return "" // the flag package's zero value, when it prints the defaults
	}
	return strings.Join(*l.origins, ",")
}

func (l *originList) Set(v string) error {
	if l.fromEnv {
		*l.origins, l.fromEnv = nil, false
	}
	for _, o := range strings.Split(v, ",") {
		o = strings.TrimSpace(o)
		if err := httpapi.CheckCORSOrigin(o); err != nil {
			return err
		}
		*l.origins = append(*l.origins, o)
	}
	return nil
}

func parseFlags(args []string, stderr io.Writer) (Config, error) {
	c, rest, err := parseFlagsWithArgs(args, stderr)
	if err == nil && len(rest) > 0 {
		err = usagef("unexpected argument %q (flags start with -)", rest[0])
	}
	return c, err
}

// parseFlagsWithArgs parses the server's flags, which the subcommands share,
// and returns the arguments after them. Its errors are usageErrors, but for
// flag.ErrHelp, which asks for the usage text and nothing else.
func parseFlagsWithArgs(args []string, stderr io.Writer) (Config, []string, error) {
	return parseCommandFlags("", args, stderr)
}

// parseCommandFlags parses the server's flags for cmd ("" for the server,
// else a subcommand, whose -h shows its own usage).
func parseCommandFlags(cmd string, args []string, stderr io.Writer) (Config, []string, error) {
	var c Config
	cors := &originList{origins: &c.CORSOrigins}
	fs := newFlags(&c, cors, stderr)
	fs.Usage = func() { printUsage(stderr, cmd, fs.FlagSet) }
	if err := applyEnv(fs); err != nil {
		return c, nil, usageError{err}
	}
	cors.fromEnv = len(c.CORSOrigins) > 0
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return c, nil, err
		}
		return c, nil, usageError{err}
	}
	if c.ConcurrentSearches < 0 {
		return c, nil, usagef("-concurrent-searches must be 0 or more, not %d", c.ConcurrentSearches)
	}
	if c.RequestTimeout <= 0 {
		return c, nil, usagef("-request-timeout must be positive, not %s", c.RequestTimeout)
	}
	if c.NotificationTimeout <= 0 {
		return c, nil, usagef("-notification-timeout must be positive, not %s", c.NotificationTimeout)
	}
	if c.Journal < 0 {
		return c, nil, usagef("-journal must be 0 or more, not %d", c.Journal)
	}
	if c.Clock != "wall" && c.Clock != "manual" {
		return c, nil, usagef("-clock must be wall or manual, not %q", c.Clock)
	}
	if err := checkUpstreamFlags(c); err != nil {
		return c, nil, err
	}
	if err := checkStorageFlags(fs.FlagSet, c); err != nil {
		return c, nil, err
	}
	return c, fs.Args(), nil
}

// checkStorageFlags refuses -postgres beside a data folder or -memory that
// was asked for, on the command line or in the environment: which store
// would be served is then a guess, and a wrong guess serves an empty store
// or leaves the intended one unused. -data's default does not count.
func checkStorageFlags(fs *flag.FlagSet, c Config) error {
	if c.Postgres == "" {
		return nil
	}
	dataSet := false
	fs.Visit(func(f *flag.Flag) { dataSet = dataSet || f.Name == "data" })
	switch {
	case dataSet:
		return usagef("-postgres cannot be combined with -data (or MARKETPLACE_DATA): choose one store")
	case c.Memory:
		return usagef("-postgres cannot be combined with -memory (or MARKETPLACE_MEMORY): choose one store")
	}
	// pgx's message shows the URL with its password masked.
	if _, err := pgxpool.ParseConfig(c.Postgres); err != nil {
		return usagef("-postgres: %w", err)
	}
	return nil
}
