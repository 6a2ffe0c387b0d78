package pgtest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/marketplace/marketplace/internal/pgtest/pgserver"
)

func TestMain(m *testing.M) { Main(m) }

// recorder notes how a test ended instead of ending it.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Skipf(format string, args ...any) {
	r.skipped = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// outcome runs fail on a recorder in a goroutine of its own, as Skipf and
// Fatalf end the goroutine.
func outcome(err error) *recorder {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fail(r, err)
	}()
	<-done
	return r
}

func TestMissingBinaries_SkipWithOneLineOutsideCIAndFailInCI(t *testing.T) {
	t.Setenv("CI", "")
	r := outcome(pgserver.ErrNoBinaries)
	if r.skipped == "" || r.failed != "" || strings.Contains(r.skipped, "\n") {
		t.Fatalf("outside CI: skipped %q, failed %q; want a one-line skip", r.skipped, r.failed)
	}
	t.Setenv("CI", "true")
	if r := outcome(pgserver.ErrNoBinaries); r.failed == "" || r.skipped != "" {
		t.Fatalf("in CI: skipped %q, failed %q; want a failure", r.skipped, r.failed)
	}
	t.Setenv("CI", "")
	if r := outcome(fmt.Errorf("initdb: exit status 1")); r.failed == "" {
		t.Fatal("a server that fails to start must fail the test, not skip it")
	}
}

func TestServer_DatabasesAreFreshAndTheServerStopsAndStartsAgain(t *testing.T) {
	s := Start(t)
	a, b := s.NewDatabase(t), s.NewDatabase(t)
	if a == b {
		t.Fatalf("two databases share the URL %s", a)
	}
	query := func(url, sql string) (string, error) {
		ctx := context.Background()
		c, err := pgx.Connect(ctx, url)
		if err != nil {
			return "", err
		}
		defer c.Close(ctx)
		var out string
		return out, c.QueryRow(ctx, sql).Scan(&out)
	}
	if _, err := query(a, "CREATE TABLE t (x int)"); !errors.Is(err, pgx.ErrNoRows) {
		t.Fatal(err)
	}
	if got, err := query(b, "SELECT count(*)::text FROM pg_tables WHERE tablename = 't'"); err != nil || got != "0" {
		t.Fatalf("a table of one database shows in another: %q, %v", got, err)
	}
	if got, err := query(a, "SHOW fsync"); err != nil || got != "on" {
		t.Fatalf("fsync = %q, %v; want on", got, err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := query(a, "SELECT 'up'"); err == nil {
		t.Fatal("the server answers after Stop")
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	if got, err := query(a, "SELECT 'up'"); err != nil || got != "up" {
		t.Fatalf("after Start: %q, %v", got, err)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if got, err := query(a, "SELECT 'up'"); err != nil || got != "up" {
		t.Fatalf("after Restart: %q, %v", got, err)
	}
}

func TestShared_OneServerForThePackage(t *testing.T) {
	first, second := Shared(t), Shared(t)
	if first != second {
		t.Fatal("two shared servers in one package")
	}
	a, b := NewDatabase(t), NewDatabase(t)
	if a == b {
		t.Fatal("NewDatabase returned one database twice")
	}
}
