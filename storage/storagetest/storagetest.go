// Package storagetest is the conformance suite of the storage contract. Every
// backend's tests call Run in one line; a backend that passes it can replace
// another without a domain package noticing.
package storagetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
)

// Options describe the backend under test.
type Options struct {
	// Reopen opens the data of a store that the suite has just closed. Set it
	// for a durable backend: the persistence tests run only when it is set.
	Reopen func(t *testing.T, closed storage.Store) storage.Store
	// SerialUpdates says that the backend runs one Update at a time, so that
	// Updates never conflict and one started inside another waits for it.
	SerialUpdates bool
}

// Run runs the conformance suite. open must return a new, empty store; the
// suite closes every store it opens (so Close must be safe to call twice).
func Run(t *testing.T, open func(t *testing.T) storage.Store, opts Options) {
	s := &suite{open: open, opts: opts}
	t.Run("GetSetDelete", s.testGetSetDelete)
	t.Run("GetMissingKeyReturnsErrNotFound", s.testGetMissing)
	t.Run("DeleteMissingKeyIsNotAnError", s.testDeleteMissing)
	t.Run("EmptyValueIsStoredAndIsNotMissing", s.testEmptyValue)
	t.Run("EmptyKeyIsRejected", s.testEmptyKey)
	t.Run("LongKeysAreStoredAndLongerOnesAreMissing", s.testLongKeys)
	t.Run("SetCopiesKeyAndValue", s.testSetCopies)
	t.Run("ReturnedSlicesBelongToTheCaller", s.testReturnedCopies)
	t.Run("WriteInViewIsRejected", s.testWriteInView)
	t.Run("UpdateReadsItsOwnWrites", s.testReadOwnWrites)
	t.Run("IterateRanges", s.testIterateRanges)
	t.Run("SeekIsClampedToTheRange", s.testSeek)
	t.Run("SeekMovesBackAndForth", s.testSeekAgain)
	t.Run("IteratorKeyAndValueAreUsable", s.testIteratorValues)
	t.Run("FailedUpdateChangesNothing", s.testFailedUpdate)
	t.Run("FailedUpdateRunsOnce", s.testFailedUpdateRunsOnce)
	t.Run("PanickingTransactionChangesNothingAndStoreStaysUsable", s.testPanic)
	t.Run("ViewDoesNotSeeUncommittedUpdate", s.testUncommitted)
	t.Run("ViewSnapshotIsStableWhileUpdateCommits", s.testSnapshot)
	t.Run("ConflictingUpdateIsRunAgainAndSeesTheWinner", s.testConflictRetry)
	t.Run("ConcurrentIncrementsLoseNothing", s.testConcurrentIncrements)
	t.Run("ConcurrentViewsSeeOnlyWholeTransfers", s.testTransfers)
	t.Run("LargeValues", s.testLargeValues)
	t.Run("ManyKeys", s.testManyKeys)
	t.Run("OversizedUpdateCommitsAllOrReportsErrTooBig", s.testTooBig)
	t.Run("CanceledContextRunsNothing", s.testCanceledContext)
	t.Run("ContextCanceledDuringUpdateCommitsNothing", s.testCanceledDuringUpdate)
	t.Run("ContextEndingDuringIterationEndsItAndTheTransaction", s.testCanceledDuringIteration)
	t.Run("GetOneReadsTheLatestCommitLikeAView", s.testGetOne)
	t.Run("PrefetchChangesNoGetsAnswer", s.testPrefetch)
	t.Run("PrefetchOfManyKeysFindsEachOneItsOwnValue", s.testPrefetchMany)
	t.Run("UseAfterCloseReturnsErrClosed", s.testAfterClose)
	t.Run("SequenceStartsAtOneAndIncreases", s.testSequenceStartsAtOneAndIncreases)
	t.Run("SequencesAreIndependent", s.testSequencesAreIndependent)
	t.Run("DrawLaterInsideAnUpdateGivesTheNextOfEach", s.testDrawLater)
	t.Run("SequenceIsUniqueUnderConcurrency", s.testSequenceIsUniqueUnderConcurrency)
	t.Run("SequenceAdvanceSkipsAheadAndNeverBack", s.testSequenceAdvance)
	t.Run("SequenceAfterCloseReturnsErrClosed", s.testSequenceAfterClose)
	t.Run("SequenceRewindSetsEveryPositionBack", s.testSequenceRewind)
	t.Run("BulkCopyAndDeleteCrossTransactionLimits", s.testBulkCopyAndDelete)
	t.Run("CounterSumsItsShards", s.testCounter)
	t.Run("CounterLosesNoConcurrentAdd", s.testCounterConcurrent)
	if opts.Reopen != nil {
		t.Run("DataSurvivesCloseAndReopen", s.testReopen)
		t.Run("SequenceSurvivesReopenWithoutRepeat", s.testSequenceSurvivesReopen)
	}
	t.Run("StateMachineMatchesSortedMap", s.testStateMachine)
	t.Run("LeaseHasOneHolderAtATime", s.testLeaseOneHolderAtATime)
	t.Run("LeaseExpiresAndFencesItsOldHolder", s.testLeaseExpiresAndFencesItsOldHolder)
	t.Run("LeaseIsRenewedAndReleasedByItsHolder", s.testLeaseRenewAndRelease)
	t.Run("AnnounceChangesOnlyWhatItSays", s.testAnnounceChangesOnlyWhatItSays)
	t.Run("ChangesWakeTheTopicsSubscribers", s.testChangesWakeTheTopicsSubscribers)
}

type suite struct {
	open func(t *testing.T) storage.Store
	opts Options
}

var errBoom = errors.New("boom")

// deadlineInThePast gives an expired context without depending on the clock.
var deadlineInThePast = time.Unix(0, 0)

// store opens a fresh store that is closed when the test ends.
func (s *suite) store(t *testing.T) storage.Store {
	t.Helper()
	st := s.open(t)
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func update(t testing.TB, st storage.Store, fn func(storage.Tx) error) {
	t.Helper()
	if err := st.Update(context.Background(), fn); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

func view(t testing.TB, st storage.Store, fn func(storage.Tx) error) {
	t.Helper()
	if err := st.View(context.Background(), fn); err != nil {
		t.Fatalf("View: %v", err)
	}
}

// put stores key/value pairs in one Update.
func put(t testing.TB, st storage.Store, kv ...string) {
	t.Helper()
	update(t, st, func(tx storage.Tx) error {
		for i := 0; i+1 < len(kv); i += 2 {
			if err := tx.Set([]byte(kv[i]), []byte(kv[i+1])); err != nil {
				return err
			}
		}
		return nil
	})
}

// get reads one key in its own View; ok is false when it is missing.
func get(t testing.TB, st storage.Store, key string) (value string, ok bool) {
	t.Helper()
	view(t, st, func(tx storage.Tx) error {
		v, err := tx.Get([]byte(key))
		switch {
		case errors.Is(err, storage.ErrNotFound):
			return nil
		case err != nil:
			return err
		}
		value, ok = string(v), true
		return nil
	})
	return value, ok
}

// pair is one key and its value, as strings so failures print readably.
type pair struct{ K, V string }

func (p pair) String() string { return fmt.Sprintf("%q=%q", p.K, p.V) }

// collect walks an open iterator to its end.
func collect(it storage.Iterator) ([]pair, error) {
	var out []pair
	for ; it.Valid(); it.Next() {
		v, err := it.Value()
		if err != nil {
			return nil, err
		}
		out = append(out, pair{string(it.Key()), string(v)})
	}
	return out, nil
}

func scanTx(tx storage.Tx, r storage.Range) ([]pair, error) {
	it := tx.Iterate(r)
	defer it.Close()
	return collect(it)
}

func scan(t testing.TB, st storage.Store, r storage.Range) []pair {
	t.Helper()
	var out []pair
	view(t, st, func(tx storage.Tx) (err error) {
		out, err = scanTx(tx, r)
		return err
	})
	return out
}

func keysOf(ps []pair) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.K
	}
	return out
}

func equalPairs(t testing.TB, what string, got, want []pair) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s:\n got  %v\n want %v", what, got, want)
	}
}

func equalKeys(t testing.TB, what string, got, want []string) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s:\n got  %q\n want %q", what, got, want)
	}
}

func reversed[T any](s []T) []T {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}

func (s *suite) testGetSetDelete(t *testing.T) {
	st := s.store(t)
	put(t, st, "k1", "v1", "k2", "v2")
	if v, ok := get(t, st, "k1"); !ok || v != "v1" {
		t.Fatalf("k1 = %q, %v; want v1", v, ok)
	}
	put(t, st, "k1", "v1bis")
	if v, _ := get(t, st, "k1"); v != "v1bis" {
		t.Fatalf("k1 after overwrite = %q; want v1bis", v)
	}
	update(t, st, func(tx storage.Tx) error { return tx.Delete([]byte("k1")) })
	if _, ok := get(t, st, "k1"); ok {
		t.Fatal("k1 still there after Delete")
	}
	if v, ok := get(t, st, "k2"); !ok || v != "v2" {
		t.Fatalf("k2 = %q, %v; want v2 untouched", v, ok)
	}
}

func (s *suite) testGetMissing(t *testing.T) {
	st := s.store(t)
	put(t, st, "present", "x")
	for _, key := range []string{"absent", "presen", "present\x00", "\xff"} {
		view(t, st, func(tx storage.Tx) error {
			v, err := tx.Get([]byte(key))
			if !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("Get(%q) = %q, %v; want ErrNotFound", key, v, err)
			}
			return nil
		})
	}
	// The sentinel must also come through a wrapping caller.
	update(t, st, func(tx storage.Tx) error {
		var v struct{}
		if err := kv.GetJSON(tx, []byte("absent"), &v); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("GetJSON of a missing key: %v; want ErrNotFound", err)
		}
		return nil
	})
}

func (s *suite) testDeleteMissing(t *testing.T) {
	st := s.store(t)
	put(t, st, "a", "1")
	update(t, st, func(tx storage.Tx) error {
		if err := tx.Delete([]byte("never-set")); err != nil {
			t.Errorf("Delete of a missing key: %v", err)
		}
		// Twice in a row, and a key deleted earlier in the same transaction.
		if err := tx.Delete([]byte("a")); err != nil {
			return err
		}
		return tx.Delete([]byte("a"))
	})
	equalPairs(t, "after deletes", scan(t, st, storage.Range{}), nil)
}

func (s *suite) testEmptyValue(t *testing.T) {
	st := s.store(t)
	update(t, st, func(tx storage.Tx) error {
		if err := tx.Set([]byte("empty"), []byte{}); err != nil {
			return err
		}
		return tx.Set([]byte("nil"), nil)
	})
	for _, key := range []string{"empty", "nil"} {
		if v, ok := get(t, st, key); !ok || v != "" {
			t.Errorf("Get(%q) = %q, found %v; want an empty value that exists", key, v, ok)
		}
	}
	equalKeys(t, "scan", keysOf(scan(t, st, storage.Range{})), []string{"empty", "nil"})
}

func (s *suite) testEmptyKey(t *testing.T) {
	st := s.store(t)
	update(t, st, func(tx storage.Tx) error {
		if err := tx.Set(nil, []byte("v")); !errors.Is(err, storage.ErrEmptyKey) {
			t.Errorf("Set(nil key) = %v; want ErrEmptyKey", err)
		}
		if err := tx.Set([]byte{}, []byte("v")); !errors.Is(err, storage.ErrEmptyKey) {
			t.Errorf("Set(empty key) = %v; want ErrEmptyKey", err)
		}
		if _, err := tx.Get(nil); !errors.Is(err, storage.ErrEmptyKey) {
			t.Errorf("Get(empty key) = %v; want ErrEmptyKey", err)
		}
		if err := tx.Delete(nil); !errors.Is(err, storage.ErrEmptyKey) {
			t.Errorf("Delete(empty key) = %v; want ErrEmptyKey", err)
		}
		return nil
	})
	equalPairs(t, "store after rejected writes", scan(t, st, storage.Range{}), nil)
}

func (s *suite) testSetCopies(t *testing.T) {
	st := s.store(t)
	key, value := []byte("key"), []byte("value")
	update(t, st, func(tx storage.Tx) error {
		if err := tx.Set(key, value); err != nil {
			return err
		}
		// Reused buffers are the usual way to break a backend that keeps them.
		copy(key, "KEY")
		copy(value, "VALUE")
		v, err := tx.Get([]byte("key"))
		if err != nil || string(v) != "value" {
			t.Errorf("inside the Update, Get = %q, %v; want value", v, err)
		}
		return nil
	})
	copy(key, "kez")
	copy(value, "xxxxx")
	equalPairs(t, "store", scan(t, st, storage.Range{}), []pair{{"key", "value"}})
}

func (s *suite) testReturnedCopies(t *testing.T) {
	st := s.store(t)
	put(t, st, "key", "value")
	view(t, st, func(tx storage.Tx) error {
		v, err := tx.Get([]byte("key"))
		if err != nil {
			return err
		}
		copy(v, "XXXXX")
		it := tx.Iterate(storage.Range{})
		defer it.Close()
		if !it.Valid() {
			t.Fatal("iterator on an empty range")
		}
		iv, err := it.Value()
		if err != nil {
			return err
		}
		if string(iv) != "value" {
			t.Errorf("iterator Value after the caller changed Get's slice = %q", iv)
		}
		copy(iv, "YYYYY")
		return nil
	})
	update(t, st, func(tx storage.Tx) error {
		v, err := tx.Get([]byte("key"))
		if err != nil {
			return err
		}
		copy(v, "ZZZZZ")
		return nil
	})
	if v, _ := get(t, st, "key"); v != "value" {
		t.Fatalf("stored value = %q after callers changed returned slices; want value", v)
	}
}

func (s *suite) testWriteInView(t *testing.T) {
	st := s.store(t)
	put(t, st, "a", "1")
	view(t, st, func(tx storage.Tx) error {
		if err := tx.Set([]byte("b"), []byte("2")); !errors.Is(err, storage.ErrReadOnly) {
			t.Errorf("Set in View = %v; want ErrReadOnly", err)
		}
		if err := tx.Delete([]byte("a")); !errors.Is(err, storage.ErrReadOnly) {
			t.Errorf("Delete in View = %v; want ErrReadOnly", err)
		}
		return nil
	})
	equalPairs(t, "store", scan(t, st, storage.Range{}), []pair{{"a", "1"}})
}

func (s *suite) testReadOwnWrites(t *testing.T) {
	st := s.store(t)
	put(t, st, "p/0", "0", "p/1", "1", "q", "q")
	update(t, st, func(tx storage.Tx) error {
		if err := tx.Set([]byte("p/2"), []byte("2")); err != nil {
			return err
		}
		if err := tx.Set([]byte("p/0"), []byte("zero")); err != nil {
			return err
		}
		if err := tx.Delete([]byte("p/1")); err != nil {
			return err
		}
		if v, err := tx.Get([]byte("p/2")); err != nil || string(v) != "2" {
			t.Errorf("Get of a key set in this Update = %q, %v", v, err)
		}
		if _, err := tx.Get([]byte("p/1")); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("Get of a key deleted in this Update = %v; want ErrNotFound", err)
		}
		want := []pair{{"p/0", "zero"}, {"p/2", "2"}}
		got, err := scanTx(tx, storage.Prefix([]byte("p/")))
		if err != nil {
			return err
		}
		equalPairs(t, "forward scan inside the Update", got, want)
		got, err = scanTx(tx, storage.Range{Start: []byte("p/"), End: storage.PrefixEnd([]byte("p/")), Reverse: true})
		if err != nil {
			return err
		}
		equalPairs(t, "reverse scan inside the Update", got, reversed(want))
		return nil
	})
}

// iterKeys are chosen around the edges of byte order: 0x00 bytes, a key that
// is a prefix of others, and keys made only of 0xff.
var iterKeys = []string{
	"\x00", "\x00\x01", "a", "a\x00", "a\x00b", "ab", "abc", "b", "ba", "c",
	"\xff", "\xff\xff", "\xff\xff\x01",
}

func (s *suite) fillIterKeys(t *testing.T) storage.Store {
	st := s.store(t)
	kv := make([]string, 0, 2*len(iterKeys))
	// Written in a shuffled order so a backend cannot pass by keeping
	// insertion order.
	order := rand.New(rand.NewPCG(1, 2)).Perm(len(iterKeys))
	for _, i := range order {
		kv = append(kv, iterKeys[i], "v"+iterKeys[i])
	}
	put(t, st, kv...)
	return st
}

func raw(s string) []byte { return []byte(s) }

func (s *suite) testIterateRanges(t *testing.T) {
	st := s.fillIterKeys(t)
	tests := []struct {
		name string
		r    storage.Range
		want []string // in forward order
	}{
		{"All", storage.Range{}, iterKeys},
		{"EmptyPrefix", storage.Prefix([]byte{}), iterKeys},
		{"PrefixA", storage.Prefix(raw("a")), []string{"a", "a\x00", "a\x00b", "ab", "abc"}},
		{"PrefixWithZeroByte", storage.Prefix(raw("a\x00")), []string{"a\x00", "a\x00b"}},
		{"PrefixOfZeroByte", storage.Prefix(raw("\x00")), []string{"\x00", "\x00\x01"}},
		{"PrefixFF", storage.Prefix(raw("\xff")), []string{"\xff", "\xff\xff", "\xff\xff\x01"}},
		{"PrefixFFFF", storage.Prefix(raw("\xff\xff")), []string{"\xff\xff", "\xff\xff\x01"}},
		{"PrefixWithNoKeys", storage.Prefix(raw("zz")), nil},
		{"StartOnly", storage.Range{Start: raw("b")}, []string{"b", "ba", "c", "\xff", "\xff\xff", "\xff\xff\x01"}},
		{"EndOnlyIsExclusive", storage.Range{End: raw("a\x00")}, []string{"\x00", "\x00\x01", "a"}},
		{"HalfOpen", storage.Range{Start: raw("ab"), End: raw("b")}, []string{"ab", "abc"}},
		{"BoundsBetweenKeys", storage.Range{Start: raw("aa"), End: raw("bb")}, []string{"ab", "abc", "b", "ba"}},
		{"StartEqualsEndIsEmpty", storage.Range{Start: raw("ab"), End: raw("ab")}, nil},
		{"StartAfterEndIsEmpty", storage.Range{Start: raw("c"), End: raw("a")}, nil},
		{"OneKey", storage.Range{Start: raw("a"), End: raw("a\x00")}, []string{"a"}},
		{"StartAboveEveryKey", storage.Range{Start: raw("\xff\xff\x02")}, nil},
		{"EndBelowEveryKey", storage.Range{End: raw("\x00")}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := scan(t, st, tc.r)
			equalKeys(t, "forward", keysOf(got), tc.want)
			for _, p := range got {
				if p.V != "v"+p.K {
					t.Fatalf("value of %q = %q", p.K, p.V)
				}
			}
			rr := tc.r
			rr.Reverse = true
			equalKeys(t, "reverse", keysOf(scan(t, st, rr)), reversed(tc.want))
			// What a reader expects to read changes nothing of what
			// it reads.
			for _, expect := range []int{1, 3, 1000000} {
				re := tc.r
				re.Expect = expect
				equalKeys(t, fmt.Sprintf("forward expecting %d", expect), keysOf(scan(t, st, re)), tc.want)
				re.Reverse = true
				equalKeys(t, fmt.Sprintf("reverse expecting %d", expect), keysOf(scan(t, st, re)), reversed(tc.want))
			}
		})
	}
}

func (s *suite) testSeek(t *testing.T) {
	st := s.fillIterKeys(t)
	all := iterKeys
	rev := reversed(iterKeys)
	prefixA := storage.Prefix(raw("a"))
	tests := []struct {
		name    string
		r       storage.Range
		reverse bool
		seek    string
		want    []string // what the iterator walks after the Seek
	}{
		{"ForwardToKey", storage.Range{}, false, "ab", all[5:]},
		{"ForwardBetweenKeys", storage.Range{}, false, "aa", all[5:]},
		{"ForwardToEmptyKey", storage.Range{}, false, "", all},
		{"ForwardPastEveryKey", storage.Range{}, false, "\xff\xff\xff", nil},
		{"ForwardBelowStartIsClamped", prefixA, false, "\x00", []string{"a", "a\x00", "a\x00b", "ab", "abc"}},
		{"ForwardInsideRange", prefixA, false, "a\x00c", []string{"ab", "abc"}},
		{"ForwardAtEndIsDone", prefixA, false, "b", nil},
		{"ReverseToKey", storage.Range{}, true, "ab", []string{"ab", "a\x00b", "a\x00", "a", "\x00\x01", "\x00"}},
		{"ReverseBetweenKeys", storage.Range{}, true, "aa", []string{"a\x00b", "a\x00", "a", "\x00\x01", "\x00"}},
		{"ReversePastEveryKey", storage.Range{}, true, "\xff\xff\xff", rev},
		{"ReverseBelowEveryKey", storage.Range{}, true, "\x00\x00", []string{"\x00"}},
		{"ReverseAboveEndIsClamped", prefixA, true, "z", []string{"abc", "ab", "a\x00b", "a\x00", "a"}},
		{"ReverseAtEndExcludesEnd", storage.Range{Start: raw("ab"), End: raw("b")}, true, "b", []string{"abc", "ab"}},
		{"ReverseInsideRange", prefixA, true, "ab", []string{"ab", "a\x00b", "a\x00", "a"}},
		{"ReverseBelowStartIsDone", prefixA, true, "\x00", nil},
		{"ReverseUnderFFPrefix", storage.Prefix(raw("\xff")), true, "\xff\xff", []string{"\xff\xff", "\xff"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.r
			r.Reverse = tc.reverse
			view(t, st, func(tx storage.Tx) error {
				it := tx.Iterate(r)
				defer it.Close()
				it.Seek([]byte(tc.seek))
				got, err := collect(it)
				if err != nil {
					return err
				}
				equalKeys(t, "after Seek", keysOf(got), tc.want)
				return nil
			})
		})
	}
}

func (s *suite) testSeekAgain(t *testing.T) {
	st := s.fillIterKeys(t)
	view(t, st, func(tx storage.Tx) error {
		it := tx.Iterate(storage.Range{})
		defer it.Close()
		it.Seek(raw("c"))
		if !it.Valid() || string(it.Key()) != "c" {
			t.Fatalf("Seek(c) landed on %q", it.Key())
		}
		it.Seek(raw("a"))
		if !it.Valid() || string(it.Key()) != "a" {
			t.Fatalf("Seek(a) after Seek(c) landed on %q; want a", it.Key())
		}
		it.Next()
		if !it.Valid() || string(it.Key()) != "a\x00" {
			t.Fatalf("Next after Seek(a) landed on %q; want a\\x00", it.Key())
		}
		return nil
	})
	view(t, st, func(tx storage.Tx) error {
		it := tx.Iterate(storage.Range{Reverse: true})
		defer it.Close()
		it.Seek(raw("a"))
		if !it.Valid() || string(it.Key()) != "a" {
			t.Fatalf("reverse Seek(a) landed on %q", it.Key())
		}
		it.Seek(raw("c"))
		if !it.Valid() || string(it.Key()) != "c" {
			t.Fatalf("reverse Seek(c) after Seek(a) landed on %q; want c", it.Key())
		}
		it.Next()
		if !it.Valid() || string(it.Key()) != "ba" {
			t.Fatalf("Next after reverse Seek(c) landed on %q; want ba", it.Key())
		}
		return nil
	})
}

func (s *suite) testIteratorValues(t *testing.T) {
	st := s.fillIterKeys(t)
	view(t, st, func(tx storage.Tx) error {
		it := tx.Iterate(storage.Prefix(raw("a")))
		defer it.Close()
		var keys [][]byte
		for ; it.Valid(); it.Next() {
			// Key is only valid until Next: a caller that keeps it copies it.
			keys = append(keys, bytes.Clone(it.Key()))
			v, err := it.Value()
			if err != nil {
				return err
			}
			if string(v) != "v"+string(it.Key()) {
				t.Errorf("Value at %q = %q", it.Key(), v)
			}
		}
		if len(keys) != 5 {
			t.Errorf("walked %d keys under prefix a; want 5", len(keys))
		}
		// Next past the end stays invalid rather than panicking.
		it.Next()
		if it.Valid() {
			t.Error("iterator valid after Next past the end")
		}
		return nil
	})
}

func (s *suite) testFailedUpdate(t *testing.T) {
	st := s.store(t)
	put(t, st, "keep", "1", "change", "old", "drop", "x")
	before := scan(t, st, storage.Range{})
	err := st.Update(context.Background(), func(tx storage.Tx) error {
		for _, op := range []error{
			tx.Set(raw("new"), raw("n")),
			tx.Set(raw("change"), raw("new")),
			tx.Delete(raw("drop")),
		} {
			if op != nil {
				return op
			}
		}
		return fmt.Errorf("rule broken: %w", errBoom)
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("Update returned %v; want fn's error", err)
	}
	equalPairs(t, "store after a failed Update", scan(t, st, storage.Range{}), before)
}

func (s *suite) testFailedUpdateRunsOnce(t *testing.T) {
	st := s.store(t)
	calls := 0
	err := st.Update(context.Background(), func(tx storage.Tx) error {
		calls++
		return errBoom
	})
	if !errors.Is(err, errBoom) || calls != 1 {
		t.Fatalf("Update = %v after %d calls; want errBoom after 1", err, calls)
	}
}

func (s *suite) testPanic(t *testing.T) {
	st := s.store(t)
	put(t, st, "a", "1")
	mustPanic := func(name string, run func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s: the panic did not reach the caller", name)
			}
		}()
		run()
	}
	mustPanic("Update", func() {
		_ = st.Update(context.Background(), func(tx storage.Tx) error {
			if err := tx.Set(raw("a"), raw("2")); err != nil {
				return err
			}
			if err := tx.Set(raw("b"), raw("2")); err != nil {
				return err
			}
			panic("boom")
		})
	})
	mustPanic("View", func() {
		_ = st.View(context.Background(), func(tx storage.Tx) error {
			it := tx.Iterate(storage.Range{})
			defer it.Close()
			panic("boom")
		})
	})
	equalPairs(t, "store after panics", scan(t, st, storage.Range{}), []pair{{"a", "1"}})
	// The store still takes writes: a lock left held would hang here.
	put(t, st, "c", "3")
	equalPairs(t, "store after a later Update", scan(t, st, storage.Range{}), []pair{{"a", "1"}, {"c", "3"}})
}

func (s *suite) testUncommitted(t *testing.T) {
	st := s.store(t)
	put(t, st, "k", "old")
	inside := make(chan struct{})
	release := make(chan struct{})
	done := make(chan error, 1)
	var once sync.Once
	go func() {
		done <- st.Update(context.Background(), func(tx storage.Tx) error {
			if err := tx.Set(raw("k"), raw("new")); err != nil {
				return err
			}
			if err := tx.Set(raw("k2"), raw("new")); err != nil {
				return err
			}
			once.Do(func() { close(inside) })
			<-release
			return nil
		})
	}()
	<-inside
	if v, _ := get(t, st, "k"); v != "old" {
		t.Errorf("View saw %q while the Update was open; want old", v)
	}
	if _, ok := get(t, st, "k2"); ok {
		t.Error("View saw a key set by an Update that had not committed")
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("Update: %v", err)
	}
	if v, _ := get(t, st, "k"); v != "new" {
		t.Errorf("View after commit saw %q; want new", v)
	}
	if v, _ := get(t, st, "k2"); v != "new" {
		t.Errorf("View after commit saw k2=%q; want new", v)
	}
}

func (s *suite) testSnapshot(t *testing.T) {
	st := s.store(t)
	put(t, st, "a", "1", "b", "1")
	view(t, st, func(tx storage.Tx) error {
		it := tx.Iterate(storage.Range{})
		defer it.Close()
		if !it.Valid() || string(it.Key()) != "a" {
			t.Fatal("snapshot iterator not on a")
		}
		done := make(chan error, 1)
		go func() {
			done <- st.Update(context.Background(), func(tx storage.Tx) error {
				if err := tx.Set(raw("a"), raw("2")); err != nil {
					return err
				}
				if err := tx.Delete(raw("b")); err != nil {
					return err
				}
				return tx.Set(raw("c"), raw("2"))
			})
		}()
		if err := <-done; err != nil {
			t.Fatalf("Update during a View: %v", err)
		}
		if v, err := tx.Get(raw("a")); err != nil || string(v) != "1" {
			t.Errorf("a in the open View = %q, %v; want 1", v, err)
		}
		if v, err := tx.Get(raw("b")); err != nil || string(v) != "1" {
			t.Errorf("b in the open View = %q, %v; want 1", v, err)
		}
		if _, err := tx.Get(raw("c")); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("c in the open View: %v; want ErrNotFound", err)
		}
		rest, err := collect(it)
		if err != nil {
			return err
		}
		equalPairs(t, "open iterator", rest, []pair{{"a", "1"}, {"b", "1"}})
		again, err := scanTx(tx, storage.Range{})
		if err != nil {
			return err
		}
		equalPairs(t, "new iterator in the same View", again, []pair{{"a", "1"}, {"b", "1"}})
		return nil
	})
	equalPairs(t, "a later View", scan(t, st, storage.Range{}), []pair{{"a", "2"}, {"c", "2"}})
}

// Increment adds one to the 8-byte big-endian counter at key (a missing
// key counts as 0) and returns the new value: a read-modify-write of one
// key, the shape of a hot key, for tests of conflicts.
func Increment(tx storage.Tx, key []byte) (uint64, error) {
	b, err := tx.Get(key)
	var n uint64
	switch {
	case errors.Is(err, storage.ErrNotFound):
	case err != nil:
		return 0, err
	case len(b) != 8:
		return 0, fmt.Errorf("counter %q: %d bytes", key, len(b))
	default:
		n = keycodec.Read(b).Uint()
	}
	n++
	return n, tx.Set(key, keycodec.Raw().Uint(n))
}

func (s *suite) testConflictRetry(t *testing.T) {
	st := s.store(t)
	counter := raw("counter")
	attempts := 0
	var reads []uint64
	other := make(chan error, 1)
	err := st.Update(context.Background(), func(tx storage.Tx) error {
		attempts++
		n, err := Increment(tx, counter)
		if err != nil {
			return err
		}
		reads = append(reads, n-1)
		if attempts == 1 {
			if err := tx.Set(raw("first-attempt-only"), raw("x")); err != nil {
				return err
			}
			go func() {
				other <- st.Update(context.Background(), func(tx storage.Tx) error {
					_, err := Increment(tx, counter)
					return err
				})
			}()
			if !s.opts.SerialUpdates {
				// Let the other Update commit between this one's read and
				// its commit: a conflict by construction.
				if err := <-other; err != nil {
					return fmt.Errorf("other update: %w", err)
				}
				other <- nil
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	if err := <-other; err != nil {
		t.Fatalf("other Update: %v", err)
	}
	view(t, st, func(tx storage.Tx) error {
		n, err := tx.Get(counter)
		if err != nil {
			return err
		}
		if got := keycodec.Read(n).Uint(); got != 2 {
			t.Errorf("counter = %d after two increments; want 2", got)
		}
		return nil
	})
	if s.opts.SerialUpdates {
		if attempts != 1 {
			t.Errorf("a backend with serial Updates ran fn %d times", attempts)
		}
		if _, ok := get(t, st, "first-attempt-only"); !ok {
			t.Error("the only attempt's write is missing")
		}
		return
	}
	if attempts != 2 || !slices.Equal(reads, []uint64{0, 1}) {
		t.Errorf("attempts %d reading %v; want 2 attempts reading [0 1] (the retry sees the winner)", attempts, reads)
	}
	if _, ok := get(t, st, "first-attempt-only"); ok {
		t.Error("a write of the conflicting attempt survived its retry")
	}
}

func (s *suite) testConcurrentIncrements(t *testing.T) {
	st := s.store(t)
	const workers = 32
	counter := raw("counter")
	committed := make([]uint64, workers)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- st.Update(context.Background(), func(tx storage.Tx) error {
				n, err := Increment(tx, counter)
				// Only the attempt that commits leaves its value here.
				committed[w] = n
				if err != nil {
					return err
				}
				return tx.Set(keycodec.New("by").Uint(n), []byte{byte(w)})
			})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Update: %v", err)
		}
	}
	var final uint64
	view(t, st, func(tx storage.Tx) error {
		v, err := tx.Get(counter)
		final = keycodec.Read(v).Uint()
		return err
	})
	if final != workers {
		t.Fatalf("counter = %d after %d increments", final, workers)
	}
	// Every commit read the value the one before it wrote: the committed
	// values are exactly 1..workers, each once.
	slices.Sort(committed)
	for i, n := range committed {
		if n != uint64(i+1) {
			t.Fatalf("committed values %v; want 1..%d each once", committed, workers)
		}
	}
	if got := scan(t, st, storage.Prefix(keycodec.New("by"))); len(got) != workers {
		t.Fatalf("%d index keys; want %d", len(got), workers)
	}
}

// testTransfers moves amounts between accounts from several writers while
// readers add the balances up: any View that sees half a transfer, or any
// lost Update, shows as a wrong total.
func (s *suite) testTransfers(t *testing.T) {
	st := s.store(t)
	const accounts, start, writers, transfers, readers = 4, 100, 4, 25, 4
	account := func(i int) []byte { return keycodec.New("acct").Int(int64(i)) }
	amount := func(v []byte) int64 { return keycodec.Read(v).Int() }
	update(t, st, func(tx storage.Tx) error {
		for i := range accounts {
			if err := tx.Set(account(i), keycodec.Raw().Int(start)); err != nil {
				return err
			}
		}
		return nil
	})
	total := func(tx storage.Tx) (byScan, byGet int64, err error) {
		it := tx.Iterate(storage.Prefix(keycodec.New("acct")))
		defer it.Close()
		for ; it.Valid(); it.Next() {
			v, err := it.Value()
			if err != nil {
				return 0, 0, err
			}
			byScan += amount(v)
		}
		for i := range accounts {
			v, err := tx.Get(account(i))
			if err != nil {
				return 0, 0, err
			}
			byGet += amount(v)
		}
		return byScan, byGet, nil
	}

	var writing, reading sync.WaitGroup
	errs := make(chan error, writers+readers)
	done := make(chan struct{})
	for w := range writers {
		writing.Add(1)
		go func() {
			defer writing.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for range transfers {
				from, to, n := rng.IntN(accounts), rng.IntN(accounts), int64(1+rng.IntN(10))
				err := st.Update(context.Background(), func(tx storage.Tx) error {
					a, err := tx.Get(account(from))
					if err != nil {
						return err
					}
					if err := tx.Set(account(from), keycodec.Raw().Int(amount(a)-n)); err != nil {
						return err
					}
					c, err := tx.Get(account(to))
					if err != nil {
						return err
					}
					return tx.Set(account(to), keycodec.Raw().Int(amount(c)+n))
				})
				if err != nil {
					errs <- fmt.Errorf("transfer: %w", err)
					return
				}
			}
		}()
	}
	for range readers {
		reading.Add(1)
		go func() {
			defer reading.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				err := st.View(context.Background(), func(tx storage.Tx) error {
					byScan, byGet, err := total(tx)
					if err == nil && (byScan != accounts*start || byGet != accounts*start) {
						err = fmt.Errorf("a View saw totals %d (scan) and %d (get); want %d", byScan, byGet, accounts*start)
					}
					return err
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	writing.Wait()
	close(done)
	reading.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	view(t, st, func(tx storage.Tx) error {
		byScan, _, err := total(tx)
		if err == nil && byScan != accounts*start {
			t.Errorf("final total %d; want %d", byScan, accounts*start)
		}
		return err
	})
}

func (s *suite) testLargeValues(t *testing.T) {
	st := s.store(t)
	rng := rand.New(rand.NewPCG(3, 4))
	sizes := []int{1<<20 - 1, 1 << 20, 1<<20 + 1, 4 << 20}
	values := make([][]byte, len(sizes))
	for i, n := range sizes {
		values[i] = make([]byte, n)
		for j := range values[i] {
			values[i][j] = byte(rng.Uint32())
		}
	}
	for i := range sizes {
		update(t, st, func(tx storage.Tx) error {
			return tx.Set(keycodec.New("big").Int(int64(i)), values[i])
		})
	}
	view(t, st, func(tx storage.Tx) error {
		for i := range sizes {
			v, err := tx.Get(keycodec.New("big").Int(int64(i)))
			if err != nil {
				return err
			}
			if !bytes.Equal(v, values[i]) {
				t.Errorf("value of %d bytes came back as %d different bytes", sizes[i], len(v))
			}
		}
		it := tx.Iterate(storage.Prefix(keycodec.New("big")))
		defer it.Close()
		i := 0
		for ; it.Valid(); it.Next() {
			v, err := it.Value()
			if err != nil {
				return err
			}
			if !bytes.Equal(v, values[i]) {
				t.Errorf("iterator value %d differs", i)
			}
			i++
		}
		if i != len(sizes) {
			t.Errorf("iterated %d large values; want %d", i, len(sizes))
		}
		return nil
	})
	// Replacing and deleting large values works like any other.
	update(t, st, func(tx storage.Tx) error {
		if err := tx.Set(keycodec.New("big").Int(3), raw("small")); err != nil {
			return err
		}
		return tx.Delete(keycodec.New("big").Int(0))
	})
	got := scan(t, st, storage.Prefix(keycodec.New("big")))
	if len(got) != 3 || got[2].V != "small" {
		t.Fatalf("after replace and delete: %d keys, last %d bytes", len(got), len(got[len(got)-1].V))
	}
}

func (s *suite) testManyKeys(t *testing.T) {
	st := s.store(t)
	const n, batch = 10000, 1000
	key := func(i int) []byte { return keycodec.New("many").Int(int64(i)) }
	// Written from both ends so order comes from the keys, not the writes.
	for lo := 0; lo < n; lo += batch {
		update(t, st, func(tx storage.Tx) error {
			for i := lo; i < lo+batch; i++ {
				j := i / 2
				if i%2 == 1 {
					j = n - 1 - i/2
				}
				if err := tx.Set(key(j), fmt.Appendf(nil, "%d", j)); err != nil {
					return err
				}
			}
			return nil
		})
	}
	check := func(reverse bool, want func(i int) bool) {
		t.Helper()
		r := storage.Prefix(keycodec.New("many"))
		r.Reverse = reverse
		var got []int
		view(t, st, func(tx storage.Tx) error {
			it := tx.Iterate(r)
			defer it.Close()
			for ; it.Valid(); it.Next() {
				kr := keycodec.Read(it.Key())
				kr.Str()
				i := int(kr.Int())
				v, err := it.Value()
				if err != nil {
					return err
				}
				if string(v) != fmt.Sprint(i) {
					t.Fatalf("value at %d = %q", i, v)
				}
				got = append(got, i)
			}
			return nil
		})
		var wantKeys []int
		for i := range n {
			if want(i) {
				wantKeys = append(wantKeys, i)
			}
		}
		if reverse {
			slices.Reverse(wantKeys)
		}
		if !slices.Equal(got, wantKeys) {
			t.Fatalf("reverse=%v: walked %d keys, want %d in order", reverse, len(got), len(wantKeys))
		}
	}
	all := func(int) bool { return true }
	check(false, all)
	check(true, all)
	update(t, st, func(tx storage.Tx) error {
		for i := 0; i < n; i += 2 {
			if err := tx.Delete(key(i)); err != nil {
				return err
			}
		}
		return nil
	})
	odd := func(i int) bool { return i%2 == 1 }
	check(false, odd)
	check(true, odd)
}

func (s *suite) testTooBig(t *testing.T) {
	st := s.store(t)
	put(t, st, "before", "x")
	const n = 50000
	value := make([]byte, 100)
	err := st.Update(context.Background(), func(tx storage.Tx) error {
		for i := range n {
			if err := tx.Set(keycodec.New("big").Int(int64(i)), value); err != nil {
				return err
			}
		}
		return nil
	})
	got := scan(t, st, storage.Range{})
	switch {
	case err == nil:
		if len(got) != n+1 {
			t.Fatalf("Update of %d keys committed, but %d keys are stored", n, len(got)-1)
		}
	case errors.Is(err, storage.ErrTooBig):
		equalPairs(t, "store after an oversized Update", got, []pair{{"before", "x"}})
	default:
		t.Fatalf("Update of %d keys = %v; want nil or ErrTooBig", n, err)
	}
}

func (s *suite) testCanceledContext(t *testing.T) {
	st := s.store(t)
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), deadlineInThePast)
	defer cancel2()
	for _, tc := range []struct {
		ctx  context.Context
		want error
	}{{canceled, context.Canceled}, {expired, context.DeadlineExceeded}} {
		called := false
		fn := func(tx storage.Tx) error {
			called = true
			return tx.Set(raw("k"), raw("v"))
		}
		if err := st.Update(tc.ctx, fn); !errors.Is(err, tc.want) {
			t.Errorf("Update = %v; want %v", err, tc.want)
		}
		if err := st.View(tc.ctx, func(storage.Tx) error { called = true; return nil }); !errors.Is(err, tc.want) {
			t.Errorf("View = %v; want %v", err, tc.want)
		}
		if called {
			t.Errorf("fn ran under a context that was already done (%v)", tc.want)
		}
	}
	equalPairs(t, "store", scan(t, st, storage.Range{}), nil)
}

func (s *suite) testCanceledDuringUpdate(t *testing.T) {
	st := s.store(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := st.Update(ctx, func(tx storage.Tx) error {
		if err := tx.Set(raw("k"), raw("v")); err != nil {
			return err
		}
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Update = %v; want context.Canceled", err)
	}
	equalPairs(t, "store", scan(t, st, storage.Range{}), nil)
}

// testCanceledDuringIteration checks the bound on a transaction's work: a
// range walk notices its context's end within IterationCheckEvery keys,
// stops there, and the transaction returns the context's error (an
// Update's writes are not committed), so that a caller never takes a
// partial walk for a whole one.
func (s *suite) testCanceledDuringIteration(t *testing.T) {
	st := s.store(t)
	const n, batch = 6 * storage.IterationCheckEvery, 1000
	key := func(i int) []byte { return keycodec.New("walk").Int(int64(i)) }
	for lo := 0; lo < n; lo += batch {
		update(t, st, func(tx storage.Tx) error {
			for i := lo; i < lo+batch; i++ {
				if err := tx.Set(key(i), raw("v")); err != nil {
					return err
				}
			}
			return nil
		})
	}
	const before = 10
	walk := func(tx storage.Tx, reverse bool, cancel func()) (int, error) {
		r := storage.Prefix(keycodec.New("walk"))
		r.Reverse = reverse
		it := tx.Iterate(r)
		defer it.Close()
		seen := 0
		for ; it.Valid(); it.Next() {
			if seen++; seen == before {
				cancel()
			}
		}
		return seen, nil
	}
	for _, reverse := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		var seen int
		err := st.View(ctx, func(tx storage.Tx) error {
			var err error
			seen, err = walk(tx, reverse, cancel)
			return err
		})
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("View (reverse %v) walked %d keys and returned %v; want context.Canceled", reverse, seen, err)
		}
		if seen > before+storage.IterationCheckEvery {
			t.Fatalf("View (reverse %v) walked %d keys after its context ended; want at most %d", reverse, seen-before, storage.IterationCheckEvery)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := st.Update(ctx, func(tx storage.Tx) error {
		if err := tx.Set(raw("written"), raw("v")); err != nil {
			return err
		}
		_, err := walk(tx, false, cancel)
		return err
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Update = %v; want context.Canceled", err)
	}
	view(t, st, func(tx storage.Tx) error {
		if _, err := tx.Get(raw("written")); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("the canceled Update's write: Get = %v; want ErrNotFound", err)
		}
		return nil
	})
}

func (s *suite) testPrefetch(t *testing.T) {
	st := s.store(t)
	put(t, st, "a", "1", "b", "2", "c", "3")
	want := func(tx storage.Tx, key, value string) {
		t.Helper()
		got, err := tx.Get(raw(key))
		switch {
		case value == "" && !errors.Is(err, storage.ErrNotFound):
			t.Fatalf("Get(%s) = %q, %v; want ErrNotFound", key, got, err)
		case value != "" && (err != nil || string(got) != value):
			t.Fatalf("Get(%s) = %q, %v; want %s", key, got, err, value)
		}
	}
	update(t, st, func(tx storage.Tx) error {
		if err := tx.Set(raw("c"), raw("30")); err != nil {
			return err
		}
		if err := storage.Prefetch(tx, raw("a"), raw("b"), raw("c"), raw("missing"), raw("a")); err != nil {
			return err
		}
		want(tx, "a", "1")
		want(tx, "c", "30") // written before the prefetch
		want(tx, "missing", "")
		if err := tx.Set(raw("a"), raw("10")); err != nil {
			return err
		}
		if err := tx.Delete(raw("b")); err != nil {
			return err
		}
		if err := tx.Set(raw("missing"), raw("found")); err != nil {
			return err
		}
		want(tx, "a", "10")
		want(tx, "b", "")
		want(tx, "missing", "found")
		// A range read in between (which a backend may use to send the
		// writes so far) changes nothing either.
		if _, err := scanTx(tx, storage.Range{}); err != nil {
			return err
		}
		want(tx, "a", "10")
		want(tx, "b", "")
		want(tx, "missing", "found")
		return nil
	})
	view(t, st, func(tx storage.Tx) error {
		if err := storage.Prefetch(tx, raw("a"), raw("b")); err != nil {
			return err
		}
		// A commit after the View's first read is not in its snapshot,
		// whenever a backend sends the prefetch (with that read, on
		// PostgreSQL, where the snapshot is taken at the first
		// statement).
		want(tx, "b", "")
		put(t, st, "a", "100")
		want(tx, "a", "10")
		return nil
	})
}

func (s *suite) testPrefetchMany(t *testing.T) {
	st := s.store(t)
	update(t, st, func(tx storage.Tx) error {
		for i := range 100 {
			if err := tx.Set(fmt.Appendf(nil, "k%03d", i), fmt.Appendf(nil, "v%d", i)); err != nil {
				return err
			}
		}
		return tx.Set(raw("empty"), []byte{})
	})
	// Present, missing and empty keys interleaved, out of key order and
	// one of them twice.
	var keys [][]byte
	for i := 99; i >= 0; i -= 3 {
		keys = append(keys, fmt.Appendf(nil, "k%03d", i), fmt.Appendf(nil, "k%03d/missing", i))
	}
	keys = append(keys, raw("empty"), raw("k042"))
	check := func(tx storage.Tx) error {
		if err := storage.Prefetch(tx, keys...); err != nil {
			return err
		}
		for _, k := range keys {
			got, err := tx.Get(k)
			var i int
			switch {
			case string(k) == "empty":
				if err != nil || len(got) != 0 {
					t.Errorf("Get(empty) = %q, %v; want an empty value that exists", got, err)
				}
			case bytes.HasSuffix(k, raw("/missing")):
				if !errors.Is(err, storage.ErrNotFound) {
					t.Errorf("Get(%s) = %q, %v; want ErrNotFound", k, got, err)
				}
			default:
				_, _ = fmt.Sscanf(string(k), "k%03d", &i)
				if want := fmt.Sprintf("v%d", i); err != nil || string(got) != want {
					t.Errorf("Get(%s) = %q, %v; want %s", k, got, err, want)
				}
			}
		}
		return nil
	}
	view(t, st, check)
	update(t, st, check)
}

func (s *suite) testDrawLater(t *testing.T) {
	st := s.store(t)
	ctx := context.Background()
	// The first draws create the sequences.
	first, err := storage.NextOfEach(ctx, st, []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	var got []uint64
	update(t, st, func(tx storage.Tx) error {
		values := storage.DrawLater(ctx, st, tx, "a", "b", "a")
		if _, err := tx.Get(raw("some key")); !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		var err error
		got, err = values()
		return err
	})
	if len(got) != 3 || got[0] <= first[0] || got[2] <= got[0] || got[1] <= first[1] {
		t.Fatalf("DrawLater(a, b, a) after a=%d, b=%d: %v; want a and b higher, the second a above the first", first[0], first[1], got)
	}
	// A View draws too (at once where it cannot with its reads).
	view(t, st, func(tx storage.Tx) error {
		again, err := storage.DrawLater(ctx, st, tx, "a")()
		if err == nil && again[0] <= got[2] {
			t.Errorf("DrawLater(a) in a View after %d: %d; want higher", got[2], again[0])
		}
		return err
	})
}

func (s *suite) testGetOne(t *testing.T) {
	st := s.store(t)
	ctx := context.Background()
	put(t, st, "k", "v1")
	update(t, st, func(tx storage.Tx) error { return tx.Set(raw("empty"), nil) })
	got, err := storage.GetOne(ctx, st, raw("k"))
	if err != nil || string(got) != "v1" {
		t.Fatalf("GetOne(k) = %q, %v; want v1", got, err)
	}
	got[0] = 'X' // the slice is the caller's
	put(t, st, "k", "v2")
	if got, err := storage.GetOne(ctx, st, raw("k")); err != nil || string(got) != "v2" {
		t.Fatalf("GetOne(k) after a commit = %q, %v; want v2", got, err)
	}
	if got, err := storage.GetOne(ctx, st, raw("empty")); err != nil || len(got) != 0 {
		t.Fatalf("GetOne(empty) = %q, %v; want an empty value", got, err)
	}
	if _, err := storage.GetOne(ctx, st, raw("missing")); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("GetOne(missing) = %v; want ErrNotFound", err)
	}
	if _, err := storage.GetOne(ctx, st, nil); !errors.Is(err, storage.ErrEmptyKey) {
		t.Fatalf("GetOne(nil) = %v; want ErrEmptyKey", err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := storage.GetOne(canceled, st, raw("k")); !errors.Is(err, context.Canceled) {
		t.Fatalf("GetOne with a canceled context = %v; want context.Canceled", err)
	}
	if err := st.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := storage.GetOne(ctx, st, raw("k")); !errors.Is(err, storage.ErrClosed) {
		t.Fatalf("GetOne after Close = %v; want ErrClosed", err)
	}
}

func (s *suite) testAfterClose(t *testing.T) {
	st := s.store(t)
	put(t, st, "k", "v")
	if err := st.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	called := false
	if err := st.View(context.Background(), func(storage.Tx) error { called = true; return nil }); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("View after Close = %v; want ErrClosed", err)
	}
	if err := st.Update(context.Background(), func(storage.Tx) error { called = true; return nil }); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("Update after Close = %v; want ErrClosed", err)
	}
	if called {
		t.Error("fn ran on a closed store")
	}
	// A second Close must not panic; it may report an error.
	_ = st.Close()
}

func (s *suite) testReopen(t *testing.T) {
	st := s.open(t)
	seq := raw("seq")
	big := bytes.Repeat(raw("0123456789abcdef"), 1<<16) // 1 MiB
	update(t, st, func(tx storage.Tx) error {
		for _, kv := range [][2]string{{"a", "1"}, {"b", "2"}, {"c", "3"}, {"\xff", "ff"}} {
			if err := tx.Set(raw(kv[0]), raw(kv[1])); err != nil {
				return err
			}
		}
		if _, err := Increment(tx, seq); err != nil {
			return err
		}
		return tx.Set(raw("big"), big)
	})
	put(t, st, "b", "2bis")
	update(t, st, func(tx storage.Tx) error { return tx.Delete(raw("c")) })
	_ = st.Update(context.Background(), func(tx storage.Tx) error {
		if err := tx.Set(raw("failed"), raw("x")); err != nil {
			return err
		}
		return errBoom
	})
	want := scan(t, st, storage.Range{})
	if err := st.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	st2 := s.opts.Reopen(t, st)
	t.Cleanup(func() { _ = st2.Close() })
	got := scan(t, st2, storage.Range{})
	equalPairs(t, "after reopen", got, want)
	if v, _ := get(t, st2, "big"); v != string(big) {
		t.Fatal("large value changed across reopen")
	}
	update(t, st2, func(tx storage.Tx) error {
		n, err := Increment(tx, seq)
		if err == nil && n != 2 {
			t.Errorf("sequence after reopen gave %d; want 2", n)
		}
		return err
	})
	want = scan(t, st2, storage.Range{})
	if err := st2.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	st3 := s.opts.Reopen(t, st2)
	t.Cleanup(func() { _ = st3.Close() })
	equalPairs(t, "after a second reopen", scan(t, st3, storage.Range{}), want)
}
