package main

import (
	"context"
	"fmt"
	"net"
	neturl "net/url"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/badger"
	"github.com/marketplace/marketplace/storage/memory"
	"github.com/marketplace/marketplace/storage/postgres"
)

// openMarketplace starts the engine on the store the flags name; Close
// closes the store.
func openMarketplace(ctx context.Context, c Config, opts marketplace.Options) (*marketplace.Marketplace, error) {
	switch {
	case c.Postgres != "":
		m, err := marketplace.Open(ctx, postgres.URL(c.Postgres), opts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", redactPostgres(c.Postgres), err)
		}
		return m, nil
	case c.Memory:
		return marketplace.New(memory.New(), opts)
	default:
		return marketplace.Open(ctx, badger.Dir(c.Data), opts)
	}
}

// openStore opens the durable store the flags name, for the subcommands
// that work on the store itself (they refuse -memory: a store that ends
// with the command has nothing to keep); the caller closes it.
func openStore(ctx context.Context, c Config) (storage.Store, error) {
	if c.Postgres != "" {
		st, err := postgres.Open(ctx, c.Postgres, postgres.Options{})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", redactPostgres(c.Postgres), err)
		}
		return st, nil
	}
	return badger.Open(c.Data, badger.Options{})
}

// storeLocation names the durable store in a subcommand's report: the data
// folder, or the database without its password.
func storeLocation(c Config) string {
	if c.Postgres != "" {
		return redactPostgres(c.Postgres)
	}
	return c.Data
}

// storageName names the store in logs and messages. A PostgreSQL URL may
// hold a password, and logs travel further than the command line.
func storageName(c Config) string {
	switch {
	case c.Postgres != "":
		return "postgres:" + redactPostgres(c.Postgres)
	case c.Memory:
		return "memory"
	}
	return "badger:" + c.Data
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
