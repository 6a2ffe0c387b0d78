package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/marketplace/marketplace/internal/pgtest"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/postgres"
)

func openWith(tb testing.TB, url string, opts postgres.Options) *postgres.Store {
	tb.Helper()
	st, err := postgres.Open(context.Background(), url, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = st.Close() })
	return st
}

func viewOne(tb testing.TB, st storage.Store, key string) {
	tb.Helper()
	err := st.View(context.Background(), func(tx storage.Tx) error {
		_, err := tx.Get([]byte(key))
		if errors.Is(err, storage.ErrNotFound) {
			return nil
		}
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// idleInTransaction counts the sessions of the database left in a
// transaction.
func idleInTransaction(tb testing.TB, dbURL string) int {
	tb.Helper()
	c, err := pgx.Connect(context.Background(), dbURL)
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close(context.Background())
	var n int
	if err := c.QueryRow(context.Background(),
		"SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle in transaction'").Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}

func TestViews_AViewsRollbackGoesWithTheNextReadOnItsConnection(t *testing.T) {
	proxy, url := throughProxy(t, pgtest.NewDatabase(t))
	st := openWith(t, url, postgres.Options{ReadConns: 1, ViewLinger: time.Hour})
	// pgx describes a statement it has not sent on a connection yet in a
	// round trip of its own: the first two Views send each once.
	viewOne(t, st, "a")
	viewOne(t, st, "a")
	before := proxy.RoundTrips()
	for range 10 {
		viewOne(t, st, "a")
	}
	if n := proxy.RoundTrips() - before; n != 10 {
		t.Errorf("10 Views of one read each made %d round trips; want 10 (each ROLLBACK with the next View's BEGIN)", n)
	}
	before = proxy.RoundTrips()
	for range 10 {
		if _, err := storage.GetOne(context.Background(), st, []byte("a")); !errors.Is(err, storage.ErrNotFound) {
			t.Fatal(err)
		}
	}
	if n := proxy.RoundTrips() - before; n != 10 {
		t.Errorf("10 single reads after a View made %d round trips; want 10", n)
	}
}

func TestViews_AConnectionLeftInItsViewIsRolledBackAfterTheLinger(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	st := openWith(t, dbURL, postgres.Options{ViewLinger: 20 * time.Millisecond})
	viewOne(t, st, "a")
	eventually(t, "no session left in a transaction", func() bool { return idleInTransaction(t, dbURL) == 0 })
	// The connection rolled back serves the next View.
	viewOne(t, st, "a")
}

func TestViews_CloseRollsBackTheConnectionsLeftInTheirView(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	st, err := postgres.Open(context.Background(), dbURL, postgres.Options{ViewLinger: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	viewOne(t, st, "a")
	if n := idleInTransaction(t, dbURL); n != 1 {
		t.Fatalf("%d sessions in a transaction after a View; want its connection's", n)
	}
	// Close waits for the pools' connections: one left in its View would
	// hold it for ever.
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "no session left in a transaction after Close", func() bool { return idleInTransaction(t, dbURL) == 0 })
}

func TestViews_ReadsNeverWaitOnAConnectionLeftInAView(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	st := openWith(t, dbURL, postgres.Options{ReadConns: 2, ViewLinger: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// More Views at once than connections, again and again: each takes a
	// connection left in its View or one the pool still has.
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			var err error
			for range 50 {
				if err = st.View(ctx, func(tx storage.Tx) error {
					_, err := tx.Get([]byte("a"))
					if errors.Is(err, storage.ErrNotFound) {
						return nil
					}
					return err
				}); err != nil {
					break
				}
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
