package questions_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/questions"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/schema"
)

// TestSearch_EveryOrderAndFilterEqualsTheSortedScan checks the searches of
// sellers and of items, by every caller (the seller, an asker, a stranger,
// nobody), in every order of up to four sort fields with their own
// directions, with the status, asker and division filters, against the
// reference that loads, filters and sorts every question: the index-backed
// pages must be the same questions in the same order with the same total,
// ties on the date and hidden questions included.
func TestSearch_EveryOrderAndFilterEqualsTheSortedScan(t *testing.T) {
	owner := t
	rapid.Check(t, func(t *rapid.T) {
		e, done := newPropertyEnv(t, owner)
		defer done()
		seller := e.mustUser(t)
		buyers := []int64{e.mustUser(t), e.mustUser(t), e.mustUser(t)}
		stranger := e.mustUser(t)
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
			switch rapid.IntRange(0, 6).Draw(t, "change") {
			case 1:
				e.mustAnswer(t, seller, id, "yes")
			case 2:
				if err := e.q.Delete(e.ctx, seller, id); err != nil {
					t.Fatalf("delete: %v", err)
				}
			case 3, 4:
				status := rapid.SampledFrom([]string{questions.StatusBanned, questions.StatusUnderReview, questions.StatusDisabled}).Draw(t, "moderation")
				if _, err := e.q.Moderate(e.ctx, id, questions.Moderation{Status: &status}); err != nil {
					t.Fatalf("moderate: %v", err)
				}
			case 5:
				if _, err := e.q.Hide(e.ctx, seller, questions.HideInput{QuestionIDs: []int64{id}}); err != nil {
					t.Fatalf("hide: %v", err)
				}
			}
		}
		if rapid.Bool().Draw(t, "close an item") {
			e.closeItem(t, seller, items[0])
		}
		fields := []string{questions.SortItemID, questions.SortSellerID, questions.SortFromID, questions.SortDateCreated}
		statuses := append([]string{""}, questions.Statuses...)
		for range 10 {
			var sorts []questions.Sort
			for _, f := range rapid.SliceOfNDistinct(rapid.SampledFrom(fields), 0, 4, rapid.ID[string]).Draw(t, "fields") {
				sorts = append(sorts, questions.Sort{Field: f, Type: rapid.SampledFrom([]string{"ASC", "DESC"}).Draw(t, "type")})
			}
			q := questions.SearchQuery{
				Status: rapid.SampledFrom(statuses).Draw(t, "status"),
				From:   rapid.SampledFrom(append([]int64{0, 0}, buyers...)).Draw(t, "from"),
				Sorts:  sorts,
				Offset: rapid.IntRange(0, 30).Draw(t, "offset"),
				Limit:  rapid.IntRange(0, 30).Draw(t, "limit"),
			}
			if div := rapid.IntRange(0, 13).Draw(t, "totalDivisions"); div > 0 && rapid.Bool().Draw(t, "divided") {
				q.TotalDivisions = int64(div)
				q.Division = int64(rapid.IntRange(0, div-1).Draw(t, "division"))
			}
			caller := seller
			if rapid.Bool().Draw(t, "by item") {
				q.ItemID = rapid.SampledFrom(items).Draw(t, "item")
				caller = rapid.SampledFrom(append([]int64{0, seller, stranger}, buyers...)).Draw(t, "caller")
				if caller == seller && rapid.Bool().Draw(t, "and seller") {
					q.SellerID = seller
				}
			} else {
				q.SellerID = seller
			}
			got, err := e.q.Search(e.ctx, caller, q)
			if err != nil {
				t.Fatalf("search %+v by %d: %v", q, caller, err)
			}
			want, err := e.q.SearchByScan(e.ctx, caller, q)
			if err != nil {
				t.Fatalf("scan: %v", err)
			}
			if got.Total != want.Total || !slices.Equal(ids(got), ids(want)) {
				t.Fatalf("%+v by %d: index total %d %v, scan total %d %v", q, caller, got.Total, ids(got), want.Total, ids(want))
			}
		}
	})
}

// TestSearch_ItemOfAnotherSellerIsEmptyForTheSellerFilter: a search by
// seller and item finds nothing when the item is not the seller's.
func TestSearch_ItemOfAnotherSellerIsEmptyForTheSellerFilter(t *testing.T) {
	e := newEnv(t)
	seller, other, buyer := e.mustUser(t), e.mustUser(t), e.mustUser(t)
	item := e.mustItem(t, other)
	e.mustAsk(t, buyer, item, "is it new?")
	got, err := e.q.Search(e.ctx, seller, questions.SearchQuery{SellerID: seller, ItemID: item, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got.Total != 0 || len(got.Questions) != 0 {
		t.Fatalf("got total %d, %d questions; want none", got.Total, len(got.Questions))
	}
}

// indexNamespaces are the namespaces of the indexes and tallies that
// migration 10 writes.
var indexNamespaces = []string{"q/s/d", "q/s/i", "q/s/f", "q/s/if", "q/s/fi", "q/i/d", "q/i/f", "q/t/s", "q/t/i", "q/t/sf", "q/t/if", "q/n/blk"}

// TestSearch_OlderStoreGetsClassIndexesAndTalliesByMigration gives a store
// the keys of the layout before migration 10 (the seller's indexes by date,
// by status and date, by item and by asker, the item's by date, the
// counters, no blacklist count) in place of today's: migration 10, in
// chunks, deletes them and writes the keys, tallies and counts that asks,
// answers and blocks write, with the tallies' shards of its time, which
// migration 14 then splits as today's are: the two give exactly today's
// keys.
func TestSearch_OlderStoreGetsClassIndexesAndTalliesByMigration(t *testing.T) {
	e := newEnv(t)
	seller, buyer, other := e.mustUser(t), e.mustUser(t), e.mustUser(t)
	items := []string{e.mustItem(t, seller), e.mustItem(t, seller)}
	for i := range 9 {
		e.clock.Advance(time.Minute)
		q := e.mustAsk(t, []int64{buyer, other}[i%2], items[i%2], fmt.Sprintf("q%d", i))
		switch i % 3 {
		case 0:
			e.mustAnswer(t, seller, q.ID, "yes")
		case 1:
			if _, err := e.q.Hide(e.ctx, seller, questions.HideInput{QuestionIDs: []int64{q.ID}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, u := range []int64{buyer, other} {
		if _, err := e.q.Block(e.ctx, seller, seller, u); err != nil {
			t.Fatal(err)
		}
	}
	dump := func() map[string][]byte {
		out := map[string][]byte{}
		err := e.store.View(e.ctx, func(tx storage.Tx) error {
			for _, ns := range append(indexNamespaces, "q/sd", "q/ssd", "q/si", "q/sf", "q/id", "q/n/s", "q/n/ss") {
				it := tx.Iterate(storage.Prefix(keycodec.New(ns)))
				for ; it.Valid(); it.Next() {
					v, err := it.Value()
					if err != nil {
						it.Close()
						return err
					}
					out[string(it.Key())] = v
				}
				it.Close()
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	want := dump()
	// The older store: today's keys replaced by the old layout's.
	err := e.store.Update(e.ctx, func(tx storage.Tx) error {
		for k := range want {
			if err := tx.Delete([]byte(k)); err != nil {
				return err
			}
		}
		old := [][]byte{
			keycodec.New("q/sd").Int(seller).Int(1).Int(12000000001),
			keycodec.New("q/ssd").Int(seller).Str("ANSWERED").Int(1).Int(12000000001),
			keycodec.New("q/si").Int(seller).Str(items[0]).Int(1).Int(12000000001),
			keycodec.New("q/sf").Int(seller).Int(buyer).Int(1).Int(12000000001),
			keycodec.New("q/id").Str(items[0]).Int(1).Int(12000000001),
			keycodec.New("q/n/s").Int(seller),
			keycodec.New("q/n/ss").Int(seller).Str("ANSWERED"),
		}
		for _, k := range old {
			if err := tx.Set(k, []byte{0, 0, 0, 0, 0, 0, 0, 1}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := schema.Migrate(e.ctx, e.store, []schema.Migration{questions.ClassIndexesMigration(), questions.TallyShardsMigration()}, schema.Options{ChunkSize: 3}); err != nil {
		t.Fatal(err)
	}
	got := dump()
	for k, v := range want {
		if len(v) == 0 && strings.HasPrefix(k, "q/t/") {
			delete(want, k) // a tally counted down to nothing: the same as none
			continue
		}
		if g, ok := got[k]; !ok || !bytes.Equal(g, v) {
			t.Errorf("key %q: got %v (present %v), want %v", k, g, ok, v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("key %q left or written by the migration, not by asks", k)
		}
	}
}

// TestSearch_OlderStoreGetsAskerListsByMigration gives a store whose
// questions were written before the asker lists (q/s/a, q/i/a): migration
// 13, in chunks, writes exactly the lists that asks, answers, deletions
// and hiding keep, and leaves every other key as it was.
func TestSearch_OlderStoreGetsAskerListsByMigration(t *testing.T) {
	e := newEnv(t)
	seller := e.mustUser(t)
	buyers := []int64{e.mustUser(t), e.mustUser(t), e.mustUser(t)}
	items := []string{e.mustItem(t, seller), e.mustItem(t, seller)}
	for i := range 12 {
		e.clock.Advance(time.Minute)
		q := e.mustAsk(t, buyers[i%3], items[i%2], fmt.Sprintf("q%d", i))
		switch i % 4 {
		case 0:
			e.mustAnswer(t, seller, q.ID, "yes")
		case 1:
			if _, err := e.q.Hide(e.ctx, seller, questions.HideInput{QuestionIDs: []int64{q.ID}}); err != nil {
				t.Fatal(err)
			}
		case 2:
			if err := e.q.Delete(e.ctx, seller, q.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	dump := func() map[string][]byte {
		out := map[string][]byte{}
		err := e.store.View(e.ctx, func(tx storage.Tx) error {
			it := tx.Iterate(storage.Prefix([]byte("q/")))
			defer it.Close()
			for ; it.Valid(); it.Next() {
				v, err := it.Value()
				if err != nil {
					return err
				}
				out[string(it.Key())] = v
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	want := dump()
	lists := 0
	err := e.store.Update(e.ctx, func(tx storage.Tx) error {
		for k := range want {
			if strings.HasPrefix(k, string(keycodec.New("q/s/a"))) || strings.HasPrefix(k, string(keycodec.New("q/i/a"))) {
				lists++
				if err := tx.Delete([]byte(k)); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if lists == 0 {
		t.Fatal("no asker list keys to take away")
	}
	if _, err := schema.Migrate(e.ctx, e.store, []schema.Migration{questions.AskerListsMigration()}, schema.Options{ChunkSize: 3}); err != nil {
		t.Fatal(err)
	}
	got := dump()
	for k, v := range want {
		if g, ok := got[k]; !ok || !bytes.Equal(g, v) {
			t.Errorf("key %q: got %v (present %v), want %v", k, g, ok, v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("key %q written by the migration, not by the questions' changes", k)
		}
	}
}

// TestSearch_OlderStoreGetsTalliesOver64ShardsByMigration gives a store the
// tallies of the layout before migration 14 (the item's over 8 shards, one
// key per asker and seller or item) in place of today's: migration 14, in
// chunks, writes exactly the tallies that asks, answers, hiding and
// deletions write, leaves every other key as it was, and a search totals
// as before.
func TestSearch_OlderStoreGetsTalliesOver64ShardsByMigration(t *testing.T) {
	e := newEnv(t)
	seller := e.mustUser(t)
	buyers := []int64{e.mustUser(t), e.mustUser(t), e.mustUser(t)}
	items := []string{e.mustItem(t, seller), e.mustItem(t, seller)}
	total := func() int {
		got, err := e.q.Search(e.ctx, seller, questions.SearchQuery{SellerID: seller, ItemID: items[0], From: buyers[0], Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		return got.Total
	}
	for i := range 40 {
		e.clock.Advance(time.Minute)
		q := e.mustAsk(t, buyers[i%3], items[i%2], fmt.Sprintf("q%d", i))
		switch i % 4 {
		case 0:
			e.mustAnswer(t, seller, q.ID, "yes")
		case 1:
			if _, err := e.q.Hide(e.ctx, seller, questions.HideInput{QuestionIDs: []int64{q.ID}}); err != nil {
				t.Fatal(err)
			}
		case 2:
			if err := e.q.Delete(e.ctx, seller, q.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	wantTotal := total()
	if wantTotal == 0 {
		t.Fatal("the searched asker has no question on the item")
	}
	dump := func() map[string][]byte {
		out := map[string][]byte{}
		err := e.store.View(e.ctx, func(tx storage.Tx) error {
			it := tx.Iterate(storage.Prefix([]byte("q/")))
			defer it.Close()
			for ; it.Valid(); it.Next() {
				v, err := it.Value()
				if err != nil {
					return err
				}
				out[string(it.Key())] = v
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	want := dump()
	// The older store: the three families' tallies in the layout before,
	// a shard of 8 for the item, one key for each asker.
	taken := 0
	err := e.store.Update(e.ctx, func(tx storage.Tx) error {
		for k := range want {
			for _, ns := range []string{"q/t/i", "q/t/sf", "q/t/if"} {
				if strings.HasPrefix(k, string(keycodec.New(ns))) {
					taken++
					if err := tx.Delete([]byte(k)); err != nil {
						return err
					}
				}
			}
		}
		for _, k := range [][]byte{
			append(keycodec.New("q/t/i").Str(items[0]), 3),
			append(keycodec.New("q/t/sf").Int(seller).Int(buyers[0]), 0),
			append(keycodec.New("q/t/if").Str(items[1]).Int(buyers[1]), 0),
		} {
			if err := tx.Set(k, []byte{10, 2}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if taken < 3*8 {
		t.Fatalf("%d tallies of the three families taken away; want them over more shards than the layout before had", taken)
	}
	if _, err := schema.Migrate(e.ctx, e.store, []schema.Migration{questions.TallyShardsMigration()}, schema.Options{ChunkSize: 3}); err != nil {
		t.Fatal(err)
	}
	got := dump()
	for k, v := range want {
		if len(v) == 0 && strings.HasPrefix(k, "q/t/") {
			delete(want, k) // a tally counted down to nothing: the same as none
			continue
		}
		if g, ok := got[k]; !ok || !bytes.Equal(g, v) {
			t.Errorf("key %q: got %v (present %v), want %v", k, g, ok, v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("key %q left or written by the migration, not by the questions' changes", k)
		}
	}
	if got := total(); got != wantTotal {
		t.Errorf("total of the asker's questions on the item %d after the migration; want %d", got, wantTotal)
	}
}

// TestPut_AnAskerLeavesAStatusListOnlyWhenNoShardOfItsTallyHoldsTheStatus
// asks two questions of one asker, counted in two shards of the asker's
// tally: answering the first leaves the asker in the seller's list of
// unanswered questions, answering the second takes it out.
func TestPut_AnAskerLeavesAStatusListOnlyWhenNoShardOfItsTallyHoldsTheStatus(t *testing.T) {
	e := newEnv(t)
	seller, buyer := e.mustUser(t), e.mustUser(t)
	item := e.mustItem(t, seller)
	lists := func() int {
		n := 0
		err := e.store.View(e.ctx, func(tx storage.Tx) error {
			for _, p := range [][]byte{keycodec.New("q/s/a").Int(seller), keycodec.New("q/i/a").Str(item)} {
				it := tx.Iterate(storage.Prefix(p))
				for ; it.Valid(); it.Next() {
					n++
				}
				it.Close()
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	q1 := e.mustAsk(t, buyer, item, "is it new?")
	q2 := e.mustAsk(t, buyer, item, "does it come with a case?")
	if got := lists(); got != 2 {
		t.Fatalf("%d list keys after two asks; want the asker once in the seller's and once in the item's", got)
	}
	e.mustAnswer(t, seller, q1.ID, "yes")
	if got := lists(); got != 4 {
		t.Fatalf("%d list keys after one answer; want the asker in both statuses of both lists, 4", got)
	}
	e.mustAnswer(t, seller, q2.ID, "yes")
	if got := lists(); got != 2 {
		t.Fatalf("%d list keys after both answers; want the asker in the answered status of both lists only, 2", got)
	}
}
