// Package pgtest starts real PostgreSQL servers for tests: initdb in a
// temporary folder, pg_ctl start on a free loopback port, and a fresh
// database per test.
//
// Each server runs with fsync on, since durability is part of the storage
// contract. initdb takes about a second, so a package's tests share one
// server: call Main from TestMain and NewDatabase in each test. A test that
// stops or restarts its server (an outage) starts a server of its own with
// Start.
//
// The server binaries are looked up on PATH, then in the folder that
// `pg_config --bindir` prints. Without them a test is skipped, except when
// the environment has CI=true: there a missing PostgreSQL fails the test.
// When the tests run as root, the server runs as the user postgres, which
// initdb requires.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Server is a PostgreSQL server in a temporary folder, reached over TCP on
// 127.0.0.1 as the superuser postgres, with no password.
type Server struct {
	initdb, pgctl string
	dir           string // holds data/, the socket folder and the log
	port          int
	// runAs is the user the server runs as when the tests run as root
	// (initdb and postgres refuse to run as root); nil otherwise.
	runAs *syscall.Credential

	mu sync.Mutex
}

// Start starts a server of the test's own, stopped and removed when the
// test ends.
func Start(tb testing.TB) *Server {
	tb.Helper()
	s, err := start()
	if err != nil {
		fail(tb, err)
	}
	tb.Cleanup(s.destroy)
	return s
}

// errNoBinaries says why no server can be started here.
var errNoBinaries = errors.New("PostgreSQL server binaries (initdb, pg_ctl) not found on PATH or in `pg_config --bindir`")

// fail skips the test when PostgreSQL is missing, or fails it in CI, where
// a skipped backend would pass unnoticed.
func fail(tb testing.TB, err error) {
	tb.Helper()
	if errors.Is(err, errNoBinaries) && os.Getenv("CI") != "true" {
		tb.Skipf("pgtest: %v", err)
	}
	tb.Fatalf("pgtest: %v", err)
}

func start() (*Server, error) {
	initdb, pgctl, err := findBinaries()
	if err != nil {
		return nil, err
	}
	s := &Server{initdb: initdb, pgctl: pgctl}
	if os.Geteuid() == 0 {
		if s.runAs, err = postgresUser(); err != nil {
			return nil, err
		}
	}
	reapOnce.Do(func() { reapOrphans(s) })
	if s.dir, err = os.MkdirTemp("", dirPrefix); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(s.dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		s.destroy()
		return nil, err
	}
	if err := s.mkdir("sock"); err != nil {
		s.destroy()
		return nil, err
	}
	if s.runAs != nil {
		if err := os.Chown(s.dir, int(s.runAs.Uid), int(s.runAs.Gid)); err != nil {
			s.destroy()
			return nil, err
		}
	}
	// --no-sync only skips initdb's own final flush of a cluster that the
	// test throws away; the server itself runs with fsync on.
	if out, err := s.run(s.initdb, "-D", s.data(), "-U", "postgres", "-A", "trust", "-E", "UTF8",
		"--no-locale", "--no-sync"); err != nil {
		s.destroy()
		return nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	// Another process may take the free port between the look-up and the
	// server's bind: then try another one.
	for attempt := 0; ; attempt++ {
		if s.port, err = freePort(); err != nil {
			s.destroy()
			return nil, err
		}
		err = s.Start()
		if err == nil {
			return s, nil
		}
		if attempt == 2 || !strings.Contains(s.log(), "could not bind") {
			s.destroy()
			return nil, err
		}
	}
}

// dirPrefix starts the name of every server's temporary folder.
const dirPrefix = "pgtest-"

// ownerFile, in a server's folder, holds the id of the test process that
// started the server.
const ownerFile = "owner.pid"

var reapOnce sync.Once

// reapOrphans stops and removes the servers of test processes that died
// without stopping them (a panic in a goroutine, a kill), so that they do
// not run on after their tests. proto gives the binaries and the user to
// stop them with.
func reapOrphans(proto *Server) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		orphan := &Server{pgctl: proto.pgctl, runAs: proto.runAs, dir: dir}
		orphan.destroy()
	}
}

// processAlive reports whether a process with this id exists (one of
// another user counts: signal 0 is then refused, not unknown).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// findBinaries finds initdb and pg_ctl on PATH, else where pg_config says
// the server binaries are (Debian keeps them off PATH).
func findBinaries() (initdb, pgctl string, err error) {
	initdb, err1 := exec.LookPath("initdb")
	pgctl, err2 := exec.LookPath("pg_ctl")
	if err1 == nil && err2 == nil {
		return initdb, pgctl, nil
	}
	out, err := exec.Command("pg_config", "--bindir").Output()
	if err != nil {
		return "", "", errNoBinaries
	}
	bin := strings.TrimSpace(string(out))
	initdb, pgctl = filepath.Join(bin, "initdb"), filepath.Join(bin, "pg_ctl")
	for _, p := range []string{initdb, pgctl} {
		if _, err := os.Stat(p); err != nil {
			return "", "", errNoBinaries
		}
	}
	return initdb, pgctl, nil
}

func postgresUser() (*syscall.Credential, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root, the server must run as the user postgres: %w", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("user postgres: %w", err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) data() string    { return filepath.Join(s.dir, "data") }
func (s *Server) socket() string  { return filepath.Join(s.dir, "sock") }
func (s *Server) logFile() string { return filepath.Join(s.dir, "log") }

func (s *Server) log() string {
	b, _ := os.ReadFile(s.logFile())
	return string(b)
}

func (s *Server) mkdir(name string) error {
	p := filepath.Join(s.dir, name)
	if err := os.Mkdir(p, 0o700); err != nil {
		return err
	}
	if s.runAs != nil {
		return os.Chown(p, int(s.runAs.Uid), int(s.runAs.Gid))
	}
	return nil
}

// run runs a server binary as the user the server runs as.
func (s *Server) run(name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = s.dir
	if s.runAs != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.runAs}
	}
	return cmd.CombinedOutput()
}

// Port returns the TCP port the server listens on, on 127.0.0.1.
func (s *Server) Port() int { return s.port }

// URL returns the connection URL of database on the server.
func (s *Server) URL(database string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, database)
}

// Start starts the server after Stop, on the same port and data.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	opts := fmt.Sprintf("-p %d -h 127.0.0.1 -k '%s' -c fsync=on -c synchronous_commit=on -c max_connections=300 -c shared_buffers=32MB",
		s.port, s.socket())
	if out, err := s.run(s.pgctl, "start", "-D", s.data(), "-l", s.logFile(), "-w", "-t", "60", "-o", opts); err != nil {
		return fmt.Errorf("pg_ctl start: %v: %s\n%s", err, out, s.log())
	}
	return nil
}

// Stop shuts the server down as an operator would (pg_ctl stop -m fast):
// open connections are closed and open transactions rolled back.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if out, err := s.run(s.pgctl, "stop", "-D", s.data(), "-m", "fast", "-w"); err != nil {
		return fmt.Errorf("pg_ctl stop: %v: %s", err, out)
	}
	return nil
}

// Restart stops the server and starts it again.
func (s *Server) Restart() error {
	if err := s.Stop(); err != nil {
		return err
	}
	return s.Start()
}

// destroy stops the server, if it runs, without waiting for a clean
// shutdown, and removes its folder.
func (s *Server) destroy() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := os.Stat(filepath.Join(s.data(), "postmaster.pid")); err == nil {
		_, _ = s.run(s.pgctl, "stop", "-D", s.data(), "-m", "immediate", "-w")
	}
	_ = os.RemoveAll(s.dir)
}

var databases atomic.Int64

// NewDatabase creates an empty database on the server and returns its URL.
// The database is dropped when the test ends.
func (s *Server) NewDatabase(tb testing.TB) string {
	tb.Helper()
	name := fmt.Sprintf("t%d_%s", databases.Add(1), identPart(tb.Name()))
	if err := s.admin(func(ctx context.Context, c *pgx.Conn) error {
		_, err := c.Exec(ctx, "CREATE DATABASE "+name)
		return err
	}); err != nil {
		tb.Fatalf("pgtest: create database: %v", err)
	}
	tb.Cleanup(func() {
		// A test may leave the server stopped: then the folder goes with
		// the server.
		_ = s.admin(func(ctx context.Context, c *pgx.Conn) error {
			_, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			return err
		})
	})
	return s.URL(name)
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

// admin runs fn on a connection to the maintenance database.
func (s *Server) admin(fn func(context.Context, *pgx.Conn) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	return fn(ctx, c)
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
		shared.server.destroy()
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
		shared.server, shared.err = start()
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
