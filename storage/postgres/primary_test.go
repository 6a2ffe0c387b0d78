package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/marketplace/marketplace/internal/pgtest"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/postgres"
)

func TestPrimary_ARestartedServerCountsOneFailoverAndTheTimeWithoutAPrimary(t *testing.T) {
	srv := pgtest.Start(t)
	st := open(t, srv.NewDatabase(t))
	set := func(v string) error {
		return st.Update(context.Background(), func(tx storage.Tx) error { return tx.Set([]byte("k"), []byte(v)) })
	}
	if err := set("before"); err != nil {
		t.Fatal(err)
	}
	if n, d := st.Failovers(), st.WithoutPrimary(); n != 0 || d != 0 {
		t.Fatalf("before any outage: %d failovers, %v without a primary; want none", n, d)
	}

	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := set("during"); !errors.Is(err, storage.ErrUnavailable) {
		t.Fatalf("Update while the server is down: %v; want ErrUnavailable", err)
	}
	during := st.WithoutPrimary()
	if during <= 0 {
		t.Fatalf("%v without a primary after a failed Update; want more than 0", during)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	if err := set("after"); err != nil {
		t.Fatalf("Update after the restart: %v", err)
	}
	// The restarted server is another run of the same cluster: the
	// connections found a different primary, once.
	if n := st.Failovers(); n != 1 {
		t.Fatalf("%d failovers after a restart; want 1", n)
	}
	ended := st.WithoutPrimary()
	if ended < during {
		t.Fatalf("%v without a primary after the outage, %v during it: the counter went back", ended, during)
	}
	// The outage ended with the first answered statement: the counter
	// stands still from then on.
	time.Sleep(20 * time.Millisecond)
	if err := set("later"); err != nil {
		t.Fatal(err)
	}
	if later := st.WithoutPrimary(); later != ended {
		t.Fatalf("%v without a primary after the outage ended, then %v: it still grows", ended, later)
	}
}

func TestPrimary_ABrokenConnectionToALivePrimaryCountsNoFailover(t *testing.T) {
	url := pgtest.NewDatabase(t)
	st := open(t, url)
	mustUpdate(t, st, func(tx storage.Tx) error { return tx.Set([]byte("k"), []byte("v")) })
	exec(t, url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
	// Each broken connection fails one call (an Update sent whole with its
	// COMMIT cannot know whether it committed); then new connections to
	// the same server answer.
	var err error
	for range 10 {
		if err = st.Update(context.Background(), func(tx storage.Tx) error { return tx.Set([]byte("k"), []byte("w")) }); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("Update after the connections broke: %v", err)
	}
	if n := st.Failovers(); n != 0 {
		t.Fatalf("%d failovers after connections to the same server broke; want 0", n)
	}
}

func TestPrimary_AnIdleStoreNoticesAnOutageByItsListener(t *testing.T) {
	srv := pgtest.Start(t)
	st := open(t, srv.NewDatabase(t))
	listening(t, st, "clock")
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	// No request: the listener's connection is lost, and its safety poll
	// or its reconnection says so.
	eventually(t, "time without a primary on a store that makes no request", func() bool { return st.WithoutPrimary() > 0 })
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the listener on the restarted server", func() bool { return postgres.Listens(st) >= 2 })
	if n := st.Failovers(); n != 1 {
		t.Fatalf("%d failovers after the listener reached the restarted server; want 1", n)
	}
	// Reached again, the primary ended the outage.
	d := st.WithoutPrimary()
	time.Sleep(20 * time.Millisecond)
	if again := st.WithoutPrimary(); again != d {
		t.Fatalf("%v without a primary after the listener reconnected, then %v: the outage did not end", d, again)
	}
}
