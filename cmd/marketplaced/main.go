// Command marketplaced serves the marketplace API over HTTP, on a Badger
// folder (the default) or in memory.
//
// Every flag can also be set by an environment variable MARKETPLACE_<NAME>,
// the flag's name in upper case with dashes as underscores (-operator-token:
// MARKETPLACE_OPERATOR_TOKEN). A flag given on the command line wins.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"marketplace"
	"marketplace/clock"
	"marketplace/httpapi"
	"marketplace/notify"
	"marketplace/storage/memory"
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
		os.Exit(1)
	}
}

type config struct {
	addr          string
	data          string
	memory        bool
	operatorToken string
	demo          bool
	clockMode     string
	logLevel      string
	drain         time.Duration
	// allowPrivateCallbacks and notifyTimeout configure notification
	// delivery (notify.Options).
	allowPrivateCallbacks bool
	notifyTimeout         time.Duration
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	c, rest, err := parseFlagsWithArgs(args, stderr)
	if err == nil && len(rest) > 0 {
		err = fmt.Errorf("unexpected argument %q (flags start with -)", rest[0])
	}
	return c, err
}

func parseFlagsWithArgs(args []string, stderr io.Writer) (config, []string, error) {
	var c config
	fs := flag.NewFlagSet("marketplaced", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.addr, "addr", "127.0.0.1:8080", "address to listen on")
	fs.StringVar(&c.data, "data", "./marketplace-data", "Badger data folder")
	fs.BoolVar(&c.memory, "memory", false, "keep everything in memory instead of the data folder (lost on exit)")
	fs.StringVar(&c.operatorToken, "operator-token", "", "token of the /operator routes (generated and printed when empty)")
	fs.BoolVar(&c.demo, "demo", false, "create the demo seller and buyer (idempotent) and print their tokens")
	fs.StringVar(&c.clockMode, "clock", "wall", "clock: wall, or manual (moves only by PUT /operator/clock)")
	fs.StringVar(&c.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.DurationVar(&c.drain, "shutdown-timeout", 10*time.Second, "how long in-flight requests may finish on shutdown")
	fs.BoolVar(&c.allowPrivateCallbacks, "allow-private-callbacks", false, "let notification callback URLs reach loopback and private addresses (local receivers)")
	fs.DurationVar(&c.notifyTimeout, "notification-timeout", notify.DefaultTimeout, "timeout of each notification POST")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: marketplaced [flags]\n       marketplaced import [-data DIR] FILE\n       marketplaced migrate [-dry-run] [-data DIR]\n\nFlags (each also MARKETPLACE_<NAME>):\n")
		fs.PrintDefaults()
	}
	if err := applyEnv(fs); err != nil {
		return c, nil, err
	}
	if err := fs.Parse(args); err != nil {
		return c, nil, err
	}
	if c.notifyTimeout <= 0 {
		return c, nil, fmt.Errorf("-notification-timeout must be positive, not %s", c.notifyTimeout)
	}
	if c.clockMode != "wall" && c.clockMode != "manual" {
		return c, nil, fmt.Errorf("-clock must be wall or manual, not %q", c.clockMode)
	}
	return c, fs.Args(), nil
}

// applyEnv sets each flag from MARKETPLACE_<NAME> before the command line is
// parsed, so that the command line wins.
func applyEnv(fs *flag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		name := "MARKETPLACE_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(name); ok && err == nil {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("%s: %w", name, e)
			}
		}
	})
	return err
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.logLevel)); err != nil {
		return fmt.Errorf("-log-level: %w", err)
	}
	logger := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level}))

	opts := marketplace.Options{Logger: logger, Notifications: notify.Options{
		AllowPrivateCallbacks: c.allowPrivateCallbacks,
		Timeout:               c.notifyTimeout,
	}}
	var manual *clock.Manual
	if c.clockMode == "manual" {
		manual = clock.NewManual(time.Now())
		opts.Clock = manual
	}
	var m *marketplace.Marketplace
	if c.memory {
		m, err = marketplace.New(memory.New(), opts)
	} else {
		m, err = marketplace.Open(c.data, opts)
	}
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

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg := httpapi.Config{OperatorToken: c.operatorToken, Logger: logger}
	if manual != nil {
		cfg.ManualClock = manual
	}
	srv := httpapi.New(m, cfg)
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

func storageName(c config) string {
	if c.memory {
		return "memory"
	}
	return "badger:" + c.data
}

func generateToken() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return "OPERATOR-" + hex.EncodeToString(b[:])
}
