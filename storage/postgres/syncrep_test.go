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

// With Patroni's synchronous mode a COMMIT waits until a standby has the
// transaction. PostgreSQL ends that wait when the statement is canceled
// (here by the caller's deadline) and answers that the COMMIT succeeded,
// although only the primary has it.
func TestUpdate_ACommitWhoseWaitForAStandbyIsCanceledIsNotAcknowledged(t *testing.T) {
	srv := pgtest.Start(t)
	url := srv.NewDatabase(t)
	st := open(t, url)
	mustUpdate(t, st, func(tx storage.Tx) error { return tx.Set([]byte("k"), []byte("before")) })

	// A synchronous standby that never connects: every COMMIT waits.
	exec(t, url, "ALTER SYSTEM SET synchronous_standby_names = 'never'")
	exec(t, url, "SELECT pg_reload_conf()")
	t.Cleanup(func() {
		// The database is dropped after this, in a transaction that
		// would wait too.
		exec(t, url, "ALTER SYSTEM RESET synchronous_standby_names")
		exec(t, url, "SELECT pg_reload_conf()")
	})
	eventually(t, "the standby's name in force", func() bool { return exec(t, url, "SHOW synchronous_standby_names") == "never" })
	// A connection reads the setting again only when it gets to the
	// reload's signal, which a loaded machine may delay past the Update:
	// a store opened now has connections that start with it.
	st = open(t, url)

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := st.Update(ctx, func(tx storage.Tx) error { return tx.Set([]byte("k"), []byte("primary only")) })
	if !errors.Is(err, postgres.ErrCommitUnknown) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Update whose COMMIT waited for a standby past its deadline: %v; want ErrCommitUnknown and the deadline", err)
	}
	// What PostgreSQL did: committed on the primary, which the caller must
	// not take for an acknowledgement.
	if got := mustGet(t, st, "k"); got != "primary only" {
		t.Fatalf("k = %q on the primary; want the locally committed value", got)
	}
}
