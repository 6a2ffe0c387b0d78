// Package teststore gives the tests of the domain packages a store on the
// backend that MARKETPLACE_TEST_STORE names, so that every rule is checked
// on every backend with the same tests:
//
//	go test ./...                                      # memory (the default)
//	MARKETPLACE_TEST_STORE=badger go test ./...        # Badger on disk; in memory under -short
//	MARKETPLACE_TEST_STORE=postgres go test ./...      # a database of its own per test
//
// CI runs the domain packages once per backend (.ci/run).
package teststore

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/marketplace/marketplace/internal/pgtest"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/badger"
	"github.com/marketplace/marketplace/storage/memory"
	"github.com/marketplace/marketplace/storage/postgres"
)

// EnvVar names the backend of the tests' stores.
const EnvVar = "MARKETPLACE_TEST_STORE"

// Backends are the values EnvVar accepts.
var Backends = []string{"memory", "badger", "postgres"}

// Backend returns the backend EnvVar names, memory when it is unset.
func Backend() string {
	if b := os.Getenv(EnvVar); b != "" {
		return b
	}
	return "memory"
}

// Fataler is what Open needs of a test: *testing.T, *testing.B and
// *rapid.T all have it.
type Fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// New returns an empty store on the backend of Backend, closed when the
// test ends. A PostgreSQL store is a new database on the package's shared
// server (see Main), dropped when the test ends.
func New(tb testing.TB) storage.Store {
	tb.Helper()
	st, closeStore := Open(tb, tb)
	// Tests that close the store themselves close it first; a second
	// Close is harmless on every backend.
	tb.Cleanup(closeStore)
	return st
}

// Open is New for the iterations of a property test, which end before the
// test does: the caller closes the store with the returned function. Its
// folder and database are removed when owner ends.
func Open(t Fataler, owner testing.TB) (storage.Store, func()) {
	t.Helper()
	switch b := Backend(); b {
	case "memory":
		st := memory.New()
		return st, func() { _ = st.Close() }
	case "badger":
		dir, opts := owner.TempDir(), badger.Options{}
		if testing.Short() {
			dir, opts.InMemory = "", true
		}
		st, err := badger.Open(dir, opts)
		if err != nil {
			t.Fatalf("teststore: %v", err)
		}
		return st, func() { _ = st.Close() }
	case "postgres":
		url, err := postgresSchema(owner)
		if err != nil {
			t.Fatalf("teststore: %v", err)
		}
		st, err := postgres.Open(context.Background(), url, postgres.Options{})
		if err != nil {
			t.Fatalf("teststore: %v", err)
		}
		return st, func() { _ = st.Close() }
	default:
		t.Fatalf("teststore: %s=%q; the accepted values are %v", EnvVar, b, Backends)
		return nil, nil
	}
}

// The PostgreSQL stores of a test binary are schemas of one database on the
// package's shared server: a schema is created in a few milliseconds where
// a database takes a checkpoint, and a property test opens hundreds. Their
// commits do not wait for the disk (synchronous_commit off): these tests
// check rules, not durability, which the backend's own tests check with
// every commit synced.
var postgresStores struct {
	sync.Mutex
	url string
	n   int
}

// postgresSchema creates an empty schema and returns the URL of a store in
// it (the backend's tables and sequences go where search_path points).
func postgresSchema(owner testing.TB) (string, error) {
	srv := pgtest.Shared(owner)
	postgresStores.Lock()
	defer postgresStores.Unlock()
	if postgresStores.url == "" {
		url, err := srv.CreateDatabase("teststore")
		if err != nil {
			return "", err
		}
		postgresStores.url = url
	}
	postgresStores.n++
	schema := fmt.Sprintf("store_%d", postgresStores.n)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, postgresStores.url)
	if err != nil {
		return "", err
	}
	defer c.Close(context.Background())
	if _, err := c.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		return "", err
	}
	return postgresStores.url + "&search_path=" + schema + "&synchronous_commit=off", nil
}

// Main runs the package's tests and stops the shared PostgreSQL server, if
// one was started. Call it from TestMain:
//
//	func TestMain(m *testing.M) { teststore.Main(m) }
func Main(m *testing.M) {
	if b := Backend(); b != "memory" && b != "badger" && b != "postgres" {
		fmt.Fprintf(os.Stderr, "teststore: %s=%q; the accepted values are %v\n", EnvVar, b, Backends)
		os.Exit(2)
	}
	if b := Backend(); b == "postgres" {
		// Each case of a property test opens a store of its own, and a
		// PostgreSQL store costs round trips that memory does not: fewer
		// cases, unless -rapid.checks asks for a number.
		flag.Parse()
		if f := flag.Lookup("rapid.checks"); f != nil && !isSet("rapid.checks") {
			_ = f.Value.Set(strconv.Itoa(postgresPropertyChecks))
		}
	}
	pgtest.Main(m)
}

// postgresPropertyChecks is the number of cases a property test runs on
// PostgreSQL by default (rapid's default is 100).
const postgresPropertyChecks = 20

func isSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
