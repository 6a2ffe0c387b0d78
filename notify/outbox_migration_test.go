package notify_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/storage"
)

// An outbox event as the binaries before the binary form wrote it (this is
// the first record of testdata/schema/48e1fd1.dump, with the user changed).
const firstFormEvent = `{"seq":5,"topic":"questions","user_id":%d,"resource":"/questions/12000000001","action":"created","received":"2026-03-04T16:03:00Z"}`

func TestOutboxMigration_FirstFormEventIsDeliveredAsItWasWritten(t *testing.T) {
	e := newEnv(t, notify.Options{})
	recv := newReceiver(t, always(http.StatusOK))
	user := e.mustUser()
	app := e.mustApp(user, recv.URL)
	st := e.m.Store()
	ctx := context.Background()
	key := keycodec.New("ntf/outbox").Uint(5)
	if err := st.Update(ctx, func(tx storage.Tx) error {
		return tx.Set(key, fmt.Appendf(nil, firstFormEvent, user))
	}); err != nil {
		t.Fatal(err)
	}

	m := notify.OutboxMigration()
	if err := st.Update(ctx, func(tx storage.Tx) error {
		_, _, err := m.Chunk(ctx, tx, nil, 100)
		return err
	}); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	e.process()

	hits := recv.got()
	if len(hits) != 1 {
		t.Fatalf("receiver got %d POSTs; want 1", len(hits))
	}
	got := hits[0].Body
	if got.Topic != "questions" || got.UserID != user || got.Resource != "/questions/12000000001" ||
		got.ApplicationID != app.ID || got.Received != "2026-03-04T16:03:00.000Z" {
		t.Fatalf("notification %+v; want the first-form event's topic, user, resource and received", got)
	}
}

func TestOutboxMigration_LeavesBinaryEventsAsTheyAre(t *testing.T) {
	e := newEnv(t, notify.Options{})
	user := e.mustUser()
	e.emit(user, "/questions/1")
	st := e.m.Store()
	ctx := context.Background()
	before := outboxValues(t, st)
	m := notify.OutboxMigration()
	if err := st.Update(ctx, func(tx storage.Tx) error {
		_, _, err := m.Chunk(ctx, tx, nil, 100)
		return err
	}); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	after := outboxValues(t, st)
	if len(before) != 1 || len(after) != 1 || before[0] != after[0] {
		t.Fatalf("outbox before %q, after %q; want one record, unchanged", before, after)
	}
}

func outboxValues(t *testing.T, st storage.Store) []string {
	t.Helper()
	var out []string
	err := st.View(context.Background(), func(tx storage.Tx) error {
		it := tx.Iterate(storage.Prefix(notify.OutboxPrefix()))
		defer it.Close()
		for ; it.Valid(); it.Next() {
			v, err := it.Value()
			if err != nil {
				return err
			}
			out = append(out, string(v))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
