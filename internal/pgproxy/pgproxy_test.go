package pgproxy_test

import (
	"context"
	"fmt"
	"net/url"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/marketplace/marketplace/internal/pgproxy"
	"github.com/marketplace/marketplace/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// through returns a connection to a fresh database through a new proxy.
func through(t *testing.T, sslmode string) (*pgproxy.Proxy, *pgx.Conn, string) {
	t.Helper()
	direct := pgtest.NewDatabase(t)
	u, err := url.Parse(direct)
	if err != nil {
		t.Fatal(err)
	}
	p, err := pgproxy.Start(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	u.Host = p.Addr()
	q := u.Query()
	q.Set("sslmode", sslmode)
	u.RawQuery = q.Encode()
	conn, err := pgx.Connect(context.Background(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return p, conn, direct
}

func TestRoundTrips_ASimpleQueryAndABatchAreOneEach(t *testing.T) {
	for _, sslmode := range []string{"disable", "prefer"} {
		t.Run(sslmode, func(t *testing.T) {
			ctx := context.Background()
			p, conn, _ := through(t, sslmode)
			before := p.RoundTrips()
			if _, err := conn.PgConn().Exec(ctx, "SELECT 1; SELECT 2").ReadAll(); err != nil {
				t.Fatal(err)
			}
			if got := p.RoundTrips() - before; got != 1 {
				t.Errorf("simple query: %d round trips; want 1", got)
			}
			before = p.RoundTrips()
			var b pgx.Batch
			for i := range 5 {
				b.Queue(fmt.Sprintf("SELECT %d", i))
			}
			if err := conn.SendBatch(ctx, &b).Close(); err != nil {
				t.Fatal(err)
			}
			// pgx describes statements it has not seen in a round trip of
			// their own before the batch.
			if got := p.RoundTrips() - before; got != 2 {
				t.Errorf("a batch of 5 new statements: %d round trips; want 2", got)
			}
			before = p.RoundTrips()
			b = pgx.Batch{}
			for i := range 5 {
				b.Queue(fmt.Sprintf("SELECT %d", i))
			}
			if err := conn.SendBatch(ctx, &b).Close(); err != nil {
				t.Fatal(err)
			}
			if got := p.RoundTrips() - before; got != 1 {
				t.Errorf("the same batch again: %d round trips; want 1", got)
			}
		})
	}
}

func TestRoundTrips_WaitingForANotificationIsNone(t *testing.T) {
	ctx := context.Background()
	p, listener, direct := through(t, "disable")
	if _, err := listener.Exec(ctx, "LISTEN changes"); err != nil {
		t.Fatal(err)
	}
	// The notifying connection goes around the proxy: only the
	// listener's traffic is counted.
	other, err := pgx.Connect(ctx, direct)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	before := p.RoundTrips()
	got := make(chan string, 1)
	go func() {
		n, err := listener.WaitForNotification(ctx)
		if err != nil {
			got <- err.Error()
			return
		}
		got <- n.Payload
	}()
	if _, err := other.Exec(ctx, "NOTIFY changes, 'x'"); err != nil {
		t.Fatal(err)
	}
	if payload := <-got; payload != "x" {
		t.Fatalf("notification: %q", payload)
	}
	if n := p.RoundTrips() - before; n != 0 {
		t.Errorf("%d round trips counted while waiting for a notification", n)
	}
}
