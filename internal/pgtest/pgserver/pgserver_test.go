package pgserver

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// skipWithoutBinaries skips the test when PostgreSQL is missing, except in
// CI, where a skipped test would pass unnoticed.
func skipWithoutBinaries(t *testing.T) {
	t.Helper()
	if _, _, err := findBinaries(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

func TestServer_PIDIsTheRunningServerAndBinaryFindsItsPrograms(t *testing.T) {
	skipWithoutBinaries(t)
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Destroy()
	pid, err := s.PID()
	if err != nil || !processAlive(pid) {
		t.Fatalf("PID = %d, %v; want a running process", pid, err)
	}
	url, err := s.CreateDatabase("created")
	if err != nil || !strings.HasSuffix(url, "/created?sslmode=disable") {
		t.Fatalf("CreateDatabase = %q, %v", url, err)
	}
	if err := s.DropDatabase("created"); err != nil {
		t.Fatal(err)
	}
	p, err := Binary("pgbench")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(p, "--version").CombinedOutput(); err != nil || !strings.Contains(string(out), "pgbench") {
		t.Fatalf("%s --version: %s, %v", p, out, err)
	}
	if _, err := Binary("no-such-program"); err == nil {
		t.Fatal("Binary found a program that does not exist")
	}
}

func TestOrphan_ServerOfADeadProcessIsReaped(t *testing.T) {
	if os.Getenv("PGTEST_LEAK") == "1" {
		// The child: start a server and die without stopping it.
		s, err := Start()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Println("DIR", s.dir)
		os.Exit(0)
	}
	skipWithoutBinaries(t)
	cmd := exec.Command(os.Args[0], "-test.run", "^TestOrphan_ServerOfADeadProcessIsReaped$")
	cmd.Env = append(os.Environ(), "PGTEST_LEAK=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	_, after, ok := strings.Cut(string(out), "DIR ")
	if !ok {
		t.Fatalf("child said nothing of its server:\n%s", out)
	}
	dir := strings.TrimSpace(strings.SplitN(after, "\n", 2)[0])
	if _, err := os.Stat(filepath.Join(dir, "data", "postmaster.pid")); err != nil {
		t.Fatalf("the child's server is not running: %v", err)
	}
	s := &Server{}
	s.initdb, s.pgctl, _ = findBinaries()
	if os.Geteuid() == 0 {
		s.runAs, _ = postgresUser()
	}
	reapOrphans(s)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the folder of a dead process's server is still there: %v", err)
	}
}
