package notify_test

import (
	"context"
	"errors"
	"testing"

	"github.com/marketplace/marketplace/internal/teststore"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/storage"
)

// Numbers drawn ahead (on PostgreSQL with the transaction's first read;
// elsewhere none are) are taken by the Appends in order, and an Append
// past them draws its own: every event gets a number of its own, in the
// order appended.
func TestAppend_TakesTheNumbersDrawnAheadAndDrawsItsOwnOnceTheyAreSpent(t *testing.T) {
	st := teststore.New(t)
	ctx := context.Background()
	// The first draw creates the sequence, which a draw ahead needs.
	if _, err := notify.NextEventSeq(ctx, st); err != nil {
		t.Fatal(err)
	}
	var seqs []uint64
	err := st.Update(ctx, func(tx storage.Tx) error {
		seqs = seqs[:0]
		ctx := notify.DrawEventNumbers(ctx, tx, 2)
		if _, err := tx.Get([]byte("a first read")); err != nil && !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		for _, r := range []string{"/a", "/b", "/c"} {
			ev, err := notify.Append(ctx, st, tx, notify.Event{Topic: "questions", UserID: 1, Resource: r, Action: "created"})
			if err != nil {
				return err
			}
			seqs = append(seqs, ev.Seq)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seqs) != 3 || seqs[0] >= seqs[1] || seqs[1] >= seqs[2] {
		t.Fatalf("numbers of three events appended in order: %v; want increasing", seqs)
	}
	var stored []uint64
	err = st.View(ctx, func(tx storage.Tx) error {
		it := tx.Iterate(storage.Prefix(notify.OutboxPrefix()))
		defer it.Close()
		for ; it.Valid(); it.Next() {
			v, err := it.Value()
			if err != nil {
				return err
			}
			ev, err := notify.DecodeEvent(v)
			if err != nil {
				return err
			}
			stored = append(stored, ev.Seq)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != 3 || stored[0] != seqs[0] || stored[2] != seqs[2] {
		t.Fatalf("the outbox holds %v; want %v", stored, seqs)
	}
}
