// Package pgtest starts real PostgreSQL servers for tests: initdb in a
// temporary folder, pg_ctl start on a free loopback port, and a fresh
// database per test.
//
// Each server runs with fsync on, since durability is part of the storage
// contract (package pgserver starts and stops it). initdb takes about a
// second, so a package's tests share one server: call Main from TestMain and
// NewDatabase in each test. A test that stops or restarts its server (an
// outage) starts a server of its own with Start.
//
// The server binaries are looked up on PATH, then in the folder that
// `pg_config --bindir` prints. Without them a test is skipped, except when
// the environment has CI=true: there a missing PostgreSQL fails the test.
// When the tests run as root, the server runs as the user postgres, which
// initdb requires.
package pgtest

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/marketplace/marketplace/internal/pgtest/pgserver"
)

// Server is a PostgreSQL server in a temporary folder, reached over TCP on
// 127.0.0.1 as the superuser postgres, with no password: Port, URL, Stop,
// Start and Restart come from pgserver.Server.
type Server struct {
	*pgserver.Server
}

// Start starts a server of the test's own, stopped and removed when the
// test ends.
func Start(tb testing.TB) *Server {
	tb.Helper()
	s, err := pgserver.Start()
	if err != nil {
		fail(tb, err)
	}
	tb.Cleanup(s.Destroy)
	return &Server{s}
}

// fail skips the test when PostgreSQL is missing, or fails it in CI, where
// a skipped backend would pass unnoticed.
func fail(tb testing.TB, err error) {
	tb.Helper()
	if errors.Is(err, pgserver.ErrNoBinaries) && os.Getenv("CI") != "true" {
		tb.Skipf("pgtest: %v", err)
	}
	tb.Fatalf("pgtest: %v", err)
}

var databases atomic.Int64

// NewDatabase creates an empty database on the server and returns its URL.
// The database is dropped when the test ends.
func (s *Server) NewDatabase(tb testing.TB) string {
	tb.Helper()
	name := fmt.Sprintf("t%d_%s", databases.Add(1), identPart(tb.Name()))
	url, err := s.CreateDatabase(name)
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	tb.Cleanup(func() {
		// A test may leave the server stopped: then the folder goes with
		// the server.
		_ = s.DropDatabase(name)
	})
	return url
}

// identPart makes a test name usable inside an SQL identifier, which helps
// to tell the databases of a server apart.
func identPart(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 40 {
			break
		}
	}
	return b.String()
}

// shared is the server that the tests of one package share, started by the
// first NewDatabase and stopped by Main.
var shared struct {
	sync.Mutex
	inMain bool
	server *Server
	err    error
}

// Main runs the package's tests and then stops the shared server, if one
// was started. Call it from TestMain:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
func Main(m *testing.M) {
	shared.Lock()
	shared.inMain = true
	shared.Unlock()
	code := m.Run()
	shared.Lock()
	if shared.server != nil {
		shared.server.Destroy()
	}
	shared.Unlock()
	os.Exit(code)
}

// Shared returns the package's shared server, starting it on first use. It
// needs Main in the package's TestMain, which stops the server when the
// tests are done.
func Shared(tb testing.TB) *Server {
	tb.Helper()
	shared.Lock()
	defer shared.Unlock()
	if !shared.inMain {
		tb.Fatal("pgtest: a shared server needs pgtest.Main(m) in the package's TestMain, to stop it at the end")
	}
	if shared.server == nil && shared.err == nil {
		var s *pgserver.Server
		if s, shared.err = pgserver.Start(); shared.err == nil {
			shared.server = &Server{s}
		}
	}
	if shared.err != nil {
		fail(tb, shared.err)
	}
	return shared.server
}

// NewDatabase creates an empty database on the package's shared server and
// returns its URL; see Shared and Server.NewDatabase.
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	return Shared(tb).NewDatabase(tb)
}
