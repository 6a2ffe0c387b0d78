// Package pgserver runs a throwaway PostgreSQL server: initdb in a temporary
// folder, pg_ctl start on a free loopback port, with fsync on, since
// durability is part of what runs on it. Package pgtest uses it for tests;
// programs that measure the PostgreSQL backend use it directly, without the
// testing package.
//
// The server binaries are looked up on PATH, then in the folder that
// `pg_config --bindir` prints. When the process runs as root, the server
// runs as the user postgres, which initdb requires.
//
// A server's folder records the process that started it: the first Start
// of a later process stops and removes the servers of processes that died
// without calling Destroy (a panic in a goroutine, a kill).
package pgserver

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
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// Server is a PostgreSQL server in a temporary folder, reached over TCP on
// 127.0.0.1 as the superuser postgres, with no password.
type Server struct {
	initdb, pgctl string
	dir           string // holds data/, the socket folder and the log
	port          int
	// runAs is the user the server runs as when the process runs as root
	// (initdb and postgres refuse to run as root); nil otherwise.
	runAs *syscall.Credential

	mu sync.Mutex
}

// ErrNoBinaries says why no server can be started here.
var ErrNoBinaries = errors.New("PostgreSQL server binaries (initdb, pg_ctl) not found on PATH or in `pg_config --bindir`")

// Start creates a cluster in a new temporary folder and starts a server on
// it. The caller must Destroy the server. Errors: ErrNoBinaries when
// PostgreSQL is not installed, or why initdb or the server failed.
func Start() (*Server, error) {
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
		s.Destroy()
		return nil, err
	}
	if err := s.mkdir("sock"); err != nil {
		s.Destroy()
		return nil, err
	}
	if s.runAs != nil {
		if err := os.Chown(s.dir, int(s.runAs.Uid), int(s.runAs.Gid)); err != nil {
			s.Destroy()
			return nil, err
		}
	}
	// --no-sync only skips initdb's own final flush of a cluster that is
	// thrown away; the server itself runs with fsync on.
	if out, err := s.run(s.initdb, "-D", s.data(), "-U", "postgres", "-A", "trust", "-E", "UTF8",
		"--no-locale", "--no-sync"); err != nil {
		s.Destroy()
		return nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	// Another process may take the free port between the look-up and the
	// server's bind: then try another one.
	for attempt := 0; ; attempt++ {
		if s.port, err = freePort(); err != nil {
			s.Destroy()
			return nil, err
		}
		err = s.Start()
		if err == nil {
			return s, nil
		}
		if attempt == 2 || !strings.Contains(s.log(), "could not bind") {
			s.Destroy()
			return nil, err
		}
	}
}

// dirPrefix starts the name of every server's temporary folder.
const dirPrefix = "pgtest-"

// ownerFile, in a server's folder, holds the id of the process that
// started the server.
const ownerFile = "owner.pid"

var reapOnce sync.Once

// reapOrphans stops and removes the servers of processes that died without
// stopping them, so that they do not run on after their process. proto
// gives the binaries and the user to stop them with.
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
		orphan.Destroy()
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
	bin, err := configBindir()
	if err != nil {
		return "", "", ErrNoBinaries
	}
	initdb, pgctl = filepath.Join(bin, "initdb"), filepath.Join(bin, "pg_ctl")
	for _, p := range []string{initdb, pgctl} {
		if _, err := os.Stat(p); err != nil {
			return "", "", ErrNoBinaries
		}
	}
	return initdb, pgctl, nil
}

func configBindir() (string, error) {
	out, err := exec.Command("pg_config", "--bindir").Output()
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// Binary returns the path of the PostgreSQL program name (pgbench, psql)
// of the installation whose server Start runs: from the folder of initdb,
// symbolic links followed, else from `pg_config --bindir`. A program found
// on PATH instead could be a wrapper, or another major version.
func Binary(name string) (string, error) {
	var dirs []string
	if initdb, _, err := findBinaries(); err == nil {
		if real, err := filepath.EvalSymlinks(initdb); err == nil {
			dirs = append(dirs, filepath.Dir(real))
		}
	}
	if bin, err := configBindir(); err == nil {
		dirs = append(dirs, bin)
	}
	for _, dir := range dirs {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found beside initdb or in `pg_config --bindir` (searched %s)", name, strings.Join(dirs, ", "))
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

// Dir returns the server's temporary folder, which holds its data.
func (s *Server) Dir() string { return s.dir }

// Port returns the TCP port the server listens on, on 127.0.0.1.
func (s *Server) Port() int { return s.port }

// URL returns the connection URL of database on the server.
func (s *Server) URL(database string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, database)
}

// PID returns the process id of the running server (the postmaster, parent
// of one process per connection).
func (s *Server) PID() (int, error) {
	b, err := os.ReadFile(filepath.Join(s.data(), "postmaster.pid"))
	if err != nil {
		return 0, err
	}
	first, _, _ := strings.Cut(string(b), "\n")
	return strconv.Atoi(strings.TrimSpace(first))
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

// Destroy stops the server, if it runs, without waiting for a clean
// shutdown, and removes its folder.
func (s *Server) Destroy() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := os.Stat(filepath.Join(s.data(), "postmaster.pid")); err == nil {
		_, _ = s.run(s.pgctl, "stop", "-D", s.data(), "-m", "immediate", "-w")
	}
	_ = os.RemoveAll(s.dir)
}

// CreateDatabase creates an empty database named name (an SQL identifier)
// and returns its URL.
func (s *Server) CreateDatabase(name string) (string, error) {
	err := s.admin(func(ctx context.Context, c *pgx.Conn) error {
		_, err := c.Exec(ctx, "CREATE DATABASE "+name)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	return s.URL(name), nil
}

// DropDatabase drops the database named name, if it exists, closing its
// connections.
func (s *Server) DropDatabase(name string) error {
	return s.admin(func(ctx context.Context, c *pgx.Conn) error {
		_, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		return err
	})
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
