package storagetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/marketplace/marketplace/storage"
)

// testAnnounceChangesOnlyWhatItSays checks what Announce does on every
// store: nothing to the data. An Update that only announces succeeds, one
// that announces and writes commits its writes, and a View may announce.
func (s *suite) testAnnounceChangesOnlyWhatItSays(t *testing.T) {
	st := s.store(t)
	ctx := context.Background()
	update(t, st, func(tx storage.Tx) error {
		storage.Announce(tx, "topic")
		return nil
	})
	update(t, st, func(tx storage.Tx) error {
		storage.Announce(tx, "topic")
		storage.Announce(tx, "topic")
		return tx.Set(raw("k"), raw("v"))
	})
	err := st.View(ctx, func(tx storage.Tx) error {
		storage.Announce(tx, "topic")
		return nil
	})
	if err != nil {
		t.Fatalf("a View that announces: %v", err)
	}
	if got, err := storage.GetOne(ctx, st, raw("k")); err != nil || string(got) != "v" {
		t.Fatalf("the write of an Update that announces: %q, %v", got, err)
	}
}

// testChangesWakeTheTopicsSubscribers checks, on a store that tells of
// changes (storage.Changes), that a committed announcement wakes the
// subscribers of its topic, and that one whose Update failed does not
// make a subscriber of its topic miss the next one.
func (s *suite) testChangesWakeTheTopicsSubscribers(t *testing.T) {
	st := s.store(t)
	changed, cancel, ok := storage.Subscribe(st, "topic")
	if !ok {
		t.Skip("the store does not tell of changes (storage.Changes)")
	}
	defer cancel()
	ctx := context.Background()
	announce := func(fail bool) {
		t.Helper()
		err := st.Update(ctx, func(tx storage.Tx) error {
			storage.Announce(tx, "topic")
			if err := tx.Set(raw("k"), raw("v")); err != nil {
				return err
			}
			if fail {
				return errBoom
			}
			return nil
		})
		if fail != errors.Is(err, errBoom) {
			t.Fatalf("Update: %v", err)
		}
	}
	for round := range 3 {
		announce(round == 1)
		announce(false)
		// A generous bound: a change that never comes fails the test,
		// one that comes late does not.
		select {
		case <-changed:
		case <-time.After(20 * time.Second):
			t.Fatalf("round %d: no wake-up after a committed announcement", round)
		}
	}
}
