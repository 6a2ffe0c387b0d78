package questions_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/questions"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/schema"
)

// TestSearch_SellerIndexPagesEqualTheSortedScan checks every sort a seller
// may ask for, with and without a status filter and an asker, against the reference that
// loads and sorts every question: the index-backed pages must be the same
// questions in the same order with the same total, ties on the date included.
func TestSearch_SellerIndexPagesEqualTheSortedScan(t *testing.T) {
	owner := t
	rapid.Check(t, func(t *rapid.T) {
		e, done := newPropertyEnv(t, owner)
		defer done()
		seller := e.mustUser(t)
		buyers := []int64{e.mustUser(t), e.mustUser(t), e.mustUser(t)}
		items := []string{e.mustItem(t, seller), e.mustItem(t, seller), e.mustItem(t, seller)}
		var asked []int64
		for i := range rapid.IntRange(0, 25).Draw(t, "questions") {
			// A zero step leaves several questions on one instant, so the
			// ties are checked too.
			e.clock.Advance(time.Duration(rapid.IntRange(0, 2).Draw(t, "step")) * time.Minute)
			b := rapid.SampledFrom(buyers).Draw(t, "buyer")
			it := rapid.SampledFrom(items).Draw(t, "item")
			asked = append(asked, e.mustAsk(t, b, it, fmt.Sprintf("q%d", i)).ID)
		}
		for _, id := range asked {
			switch rapid.IntRange(0, 3).Draw(t, "change") {
			case 1:
				e.mustAnswer(t, seller, id, "yes")
			case 2:
				if err := e.q.Delete(e.ctx, seller, id); err != nil {
					t.Fatalf("delete: %v", err)
				}
			case 3:
				banned := questions.StatusBanned
				if _, err := e.q.Moderate(e.ctx, id, questions.Moderation{Status: &banned}); err != nil {
					t.Fatalf("moderate: %v", err)
				}
			}
		}
		fields := []string{questions.SortItemID, questions.SortSellerID, questions.SortFromID, questions.SortDateCreated}
		for range 8 {
			var sorts []questions.Sort
			for _, f := range rapid.SliceOfNDistinct(rapid.SampledFrom(fields), 0, 3, rapid.ID[string]).Draw(t, "fields") {
				sorts = append(sorts, questions.Sort{Field: f, Type: rapid.SampledFrom([]string{"ASC", "DESC"}).Draw(t, "type")})
			}
			q := questions.SearchQuery{
				SellerID: seller,
				Status:   rapid.SampledFrom([]string{"", questions.StatusUnanswered, questions.StatusAnswered, questions.StatusDeleted}).Draw(t, "status"),
				From:     rapid.SampledFrom(append([]int64{0}, buyers...)).Draw(t, "from"),
				Sorts:    sorts,
				Offset:   rapid.IntRange(0, 30).Draw(t, "offset"),
				Limit:    rapid.IntRange(0, 30).Draw(t, "limit"),
			}
			got, err := e.q.Search(e.ctx, seller, q)
			if err != nil {
				t.Fatalf("search: %v", err)
			}
			want, err := e.q.SearchByScan(e.ctx, seller, q)
			if err != nil {
				t.Fatalf("scan: %v", err)
			}
			if got.Total != want.Total || !slices.Equal(ids(got), ids(want)) {
				t.Fatalf("%+v: index total %d %v, scan total %d %v", q, got.Total, ids(got), want.Total, ids(want))
			}
		}
	})
}

// TestSearch_StoreFilledBeforeTheItemAndAskerIndexesGetsThemByMigration
// simulates a store whose questions were written before the item and asker
// indexes existed (and without the mark of a store that had them): its
// migration builds them, and those orders then read them.
func TestSearch_StoreFilledBeforeTheItemAndAskerIndexesGetsThemByMigration(t *testing.T) {
	e := newEnv(t)
	seller, buyer := e.mustUser(t), e.mustUser(t)
	items := []string{e.mustItem(t, seller), e.mustItem(t, seller)}
	for i := range 6 {
		e.clock.Advance(time.Minute)
		e.mustAsk(t, buyer, items[i%2], fmt.Sprintf("q%d", i))
	}
	err := e.store.Update(e.ctx, func(tx storage.Tx) error {
		var keys [][]byte
		for _, ns := range []string{"q/si", "q/ssi", "q/sf", "q/ssf"} {
			it := tx.Iterate(storage.Prefix(keycodec.New(ns)))
			for ; it.Valid(); it.Next() {
				keys = append(keys, slices.Clone(it.Key()))
			}
			it.Close()
		}
		keys = append(keys, keycodec.New("q/ix/order"))
		for _, k := range keys {
			if err := tx.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := schema.Migrate(e.ctx, e.store, []schema.Migration{questions.OrderIndexesMigration()}, schema.Options{ChunkSize: 4}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{questions.SortItemID, questions.SortFromID} {
		q := questions.SearchQuery{SellerID: seller, Sorts: []questions.Sort{{Field: f, Type: "DESC"}}, Limit: 50}
		got, err := e.q.Search(e.ctx, seller, q)
		if err != nil {
			t.Fatal(err)
		}
		want, err := e.q.SearchByScan(e.ctx, seller, q)
		if err != nil {
			t.Fatal(err)
		}
		if got.Total != 6 || !slices.Equal(ids(got), ids(want)) {
			t.Fatalf("%s: got total %d %v, want %v", f, got.Total, ids(got), ids(want))
		}
	}
}

// TestSearch_StatusOrderIndexesOfAnOlderStoreAreDeletedByMigration gives a
// store the status-then-item and status-then-asker indexes that asks wrote
// before (migration 4 builds them on a store without the item and asker
// indexes): migration 9 deletes them, in chunks, and leaves every other
// index, and the searches they served still equal the scan.
func TestSearch_StatusOrderIndexesOfAnOlderStoreAreDeletedByMigration(t *testing.T) {
	e := newEnv(t)
	seller, buyer := e.mustUser(t), e.mustUser(t)
	items := []string{e.mustItem(t, seller), e.mustItem(t, seller)}
	for i := range 7 {
		e.clock.Advance(time.Minute)
		q := e.mustAsk(t, buyer, items[i%2], fmt.Sprintf("q%d", i))
		if i%3 == 0 {
			e.mustAnswer(t, seller, q.ID, "yes")
		}
	}
	count := func(ns string) int {
		n := 0
		err := e.store.View(e.ctx, func(tx storage.Tx) error {
			it := tx.Iterate(storage.Prefix(keycodec.New(ns)))
			defer it.Close()
			for ; it.Valid(); it.Next() {
				n++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	// The older store: its item and asker indexes deleted with the marker,
	// so that migration 4 builds all four again.
	err := e.store.Update(e.ctx, func(tx storage.Tx) error {
		for _, ns := range []string{"q/si", "q/sf"} {
			var keys [][]byte
			it := tx.Iterate(storage.Prefix(keycodec.New(ns)))
			for ; it.Valid(); it.Next() {
				keys = append(keys, slices.Clone(it.Key()))
			}
			it.Close()
			for _, k := range keys {
				if err := tx.Delete(k); err != nil {
					return err
				}
			}
		}
		return tx.Delete(keycodec.New("q/ix/order"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := schema.Migrate(e.ctx, e.store, []schema.Migration{questions.OrderIndexesMigration()}, schema.Options{ChunkSize: 4}); err != nil {
		t.Fatal(err)
	}
	if count("q/ssi") != 7 || count("q/ssf") != 7 {
		t.Fatalf("before: q/ssi %d, q/ssf %d keys, want 7 each", count("q/ssi"), count("q/ssf"))
	}
	if _, err := schema.Migrate(e.ctx, e.store, []schema.Migration{questions.OrderIndexesMigration(), questions.StatusOrderIndexesMigration()}, schema.Options{ChunkSize: 3}); err != nil {
		t.Fatal(err)
	}
	for ns, want := range map[string]int{"q/ssi": 0, "q/ssf": 0, "q/si": 7, "q/sf": 7, "q/sd": 7, "q/ssd": 7} {
		if got := count(ns); got != want {
			t.Errorf("after: %s holds %d keys, want %d", ns, got, want)
		}
	}
	for _, status := range []string{questions.StatusUnanswered, questions.StatusAnswered} {
		for _, f := range []string{questions.SortItemID, questions.SortFromID} {
			q := questions.SearchQuery{SellerID: seller, Status: status, Sorts: []questions.Sort{{Field: f, Type: "ASC"}}, Offset: 1, Limit: 2}
			got, err := e.q.Search(e.ctx, seller, q)
			if err != nil {
				t.Fatal(err)
			}
			want, err := e.q.SearchByScan(e.ctx, seller, q)
			if err != nil {
				t.Fatal(err)
			}
			if got.Total != want.Total || !slices.Equal(ids(got), ids(want)) {
				t.Errorf("%s by %s: got total %d %v, want total %d %v", status, f, got.Total, ids(got), want.Total, ids(want))
			}
		}
	}
}
