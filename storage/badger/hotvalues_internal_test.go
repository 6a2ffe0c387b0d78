package badger

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/storage"
)

func openHotStore(t *testing.T) *Store {
	t.Helper()
	st, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func counterKey(i int) []byte { return []byte(fmt.Sprintf("count/%02d", i)) }

func readCount(tx storage.Tx, key []byte) (uint64, bool, error) {
	b, err := tx.Get(key)
	if errors.Is(err, storage.ErrNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	if len(b) != 8 {
		return 0, true, fmt.Errorf("value of %q is %d bytes", key, len(b))
	}
	return binary.BigEndian.Uint64(b), true, nil
}

func sumCounts(tx storage.Tx, keys [][]byte) (uint64, error) {
	var sum uint64
	for _, k := range keys {
		n, _, err := readCount(tx, k)
		if err != nil {
			return 0, err
		}
		sum += n
	}
	return sum, nil
}

func countValue(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }

// Shards of a count, prefetched by every View, and a total written in the
// same Updates but read without Prefetch (from Badger): in every snapshot
// the shards add up to the total. Blind writers set a pair of keys to one
// value or delete both, so the Views also see concurrent blind writes of
// one key and deletes; and the entries are dropped over and over, as
// eviction may, so that they are made while Updates commit.
func TestHotValues_AViewReadsWhatItsSnapshotHoldsWhileUpdatesCommit(t *testing.T) {
	const shards, writers, blinders, readers, updatesEach = 8, 4, 2, 4, 400
	st := openHotStore(t)
	ctx := context.Background()
	total := []byte("total")
	pairA, pairB := []byte("pair/a"), []byte("pair/b")
	keys := make([][]byte, shards)
	for i := range keys {
		keys[i] = counterKey(i)
	}
	var (
		wg       sync.WaitGroup
		done     atomic.Bool
		failures = make(chan error, readers+writers+blinders)
		written  atomic.Uint64 // the largest total an Update has returned
	)
	fail := func(err error) {
		select {
		case failures <- err:
		default:
		}
	}
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for range updatesEach {
				var wrote uint64
				err := st.Update(ctx, func(tx storage.Tx) error {
					k := keys[rng.IntN(shards)]
					// Half the writers read from memory where they can,
					// half from Badger alone.
					if w%2 == 0 {
						if err := storage.Prefetch(tx, k, total); err != nil {
							return err
						}
					}
					n, _, err := readCount(tx, k)
					if err != nil {
						return err
					}
					sum, _, err := readCount(tx, total)
					if err != nil {
						return err
					}
					wrote = sum + 1
					if rng.IntN(4) == 0 {
						// Widens the window in which another Update
						// commits between this one's reads and its commit.
						time.Sleep(200 * time.Microsecond)
					}
					return errors.Join(tx.Set(k, countValue(n+1)), tx.Set(total, countValue(wrote)))
				})
				if err != nil {
					fail(err)
					return
				}
				for old := written.Load(); old < wrote && !written.CompareAndSwap(old, wrote); old = written.Load() {
				}
				// What an Update returned, a View begun after it reads.
				err = st.View(ctx, func(tx storage.Tx) error {
					if err := storage.Prefetch(tx, keys...); err != nil {
						return err
					}
					sum, err := sumCounts(tx, keys)
					if err != nil {
						return err
					}
					if sum < wrote {
						return fmt.Errorf("a View after an Update that wrote a total of %d reads shards adding up to %d", wrote, sum)
					}
					return nil
				})
				if err != nil {
					fail(err)
					return
				}
			}
		}()
	}
	for b := range blinders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range updatesEach {
				err := st.Update(ctx, func(tx storage.Tx) error {
					if i%5 == 4 {
						return errors.Join(tx.Delete(pairA), tx.Delete(pairB))
					}
					v := countValue(uint64(b*updatesEach + i))
					return errors.Join(tx.Set(pairA, v), tx.Set(pairB, v))
				})
				if err != nil {
					fail(err)
					return
				}
			}
		}()
	}
	// Eviction may drop any entry no Update is committing: dropping them
	// all, over and over, has the keys made again while Updates commit.
	var readersWG sync.WaitGroup
	readersWG.Add(1)
	go func() {
		defer readersWG.Done()
		for !done.Load() {
			st.hot.dropIdle()
			time.Sleep(50 * time.Microsecond)
		}
	}()
	for range readers {
		readersWG.Add(1)
		go func() {
			defer readersWG.Done()
			var last uint64
			for !done.Load() {
				err := st.View(ctx, func(tx storage.Tx) error {
					if err := storage.Prefetch(tx, append(keys, pairA)...); err != nil {
						return err
					}
					sum, err := sumCounts(tx, keys)
					if err != nil {
						return err
					}
					want, _, err := readCount(tx, total)
					if err != nil {
						return err
					}
					if sum != want {
						return fmt.Errorf("prefetched shards add up to %d, the total in the same snapshot is %d", sum, want)
					}
					if sum < last {
						return fmt.Errorf("a View reads a total of %d after an earlier one read %d", sum, last)
					}
					last = sum
					a, foundA, err := readCount(tx, pairA)
					if err != nil {
						return err
					}
					b, foundB, err := readCount(tx, pairB)
					if err != nil {
						return err
					}
					if a != b || foundA != foundB {
						return fmt.Errorf("a pair written together reads %d (found %v) and %d (found %v)", a, foundA, b, foundB)
					}
					return nil
				})
				if err != nil {
					fail(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	done.Store(true)
	readersWG.Wait()
	close(failures)
	for err := range failures {
		t.Fatal(err)
	}
	// No increment was lost, whether its reads came from memory or not.
	err := st.View(ctx, func(tx storage.Tx) error {
		sum, err := sumCounts(tx, keys)
		if err != nil {
			return err
		}
		want, _, err := readCount(tx, total)
		if err != nil {
			return err
		}
		if sum != writers*updatesEach || want != writers*updatesEach {
			return fmt.Errorf("after %d increments the shards add up to %d and the total is %d", writers*updatesEach, sum, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.hot.hits.Load() == 0 {
		t.Fatal("no View was answered from memory: the test did not test the cache")
	}
}

func TestHotValues_AQuietKeyIsAnsweredFromMemoryAndAWriteReplacesIt(t *testing.T) {
	is := is.New(t)
	st := openHotStore(t)
	ctx := context.Background()
	key := []byte("count/quiet")
	is.NoErr(st.Update(ctx, func(tx storage.Tx) error { return tx.Set(key, countValue(1)) }))
	read := func() (uint64, bool) {
		var n uint64
		var found bool
		is.NoErr(st.View(ctx, func(tx storage.Tx) error {
			if err := storage.Prefetch(tx, key); err != nil {
				return err
			}
			var err error
			n, found, err = readCount(tx, key)
			return err
		}))
		return n, found
	}
	n, _ := read()
	is.Equal(n, uint64(1))
	hits := st.hot.hits.Load()
	n, _ = read()
	is.Equal(n, uint64(1))
	is.Equal(st.hot.hits.Load(), hits+1) // the second View read memory

	is.NoErr(st.Update(ctx, func(tx storage.Tx) error { return tx.Set(key, countValue(2)) }))
	n, _ = read()
	is.Equal(n, uint64(2))
	is.Equal(st.hot.hits.Load(), hits+2) // the commit left its value

	is.NoErr(st.Update(ctx, func(tx storage.Tx) error { return tx.Delete(key) }))
	_, found := read()
	is.True(!found)

	// A failed Update leaves the newest value as it was.
	boom := errors.New("boom")
	err := st.Update(ctx, func(tx storage.Tx) error {
		if err := tx.Set(key, countValue(9)); err != nil {
			return err
		}
		return boom
	})
	is.True(errors.Is(err, boom))
	_, found = read()
	is.True(!found)
}

func TestHotValues_EntriesStayWithinTheirBound(t *testing.T) {
	is := is.New(t)
	st := openHotStore(t)
	ctx := context.Background()
	const n = hotStripes * hotPerStripe * 3
	for start := 0; start < n; start += 1000 {
		keys := make([][]byte, 0, 1000)
		for i := start; i < start+1000 && i < n; i++ {
			keys = append(keys, []byte(fmt.Sprintf("k/%06d", i)))
		}
		is.NoErr(st.View(ctx, func(tx storage.Tx) error { return storage.Prefetch(tx, keys...) }))
	}
	entries := 0
	for i := range st.hot.stripes {
		entries += len(st.hot.stripes[i].entries)
	}
	is.True(entries > 0)
	is.True(entries <= hotStripes*hotPerStripe)
}

// dropIdle drops every entry that no Update is committing, as eviction may.
func (h *hotValues) dropIdle() {
	for i := range h.stripes {
		s := &h.stripes[i]
		s.mu.Lock()
		for k, e := range s.entries {
			if e.writers == 0 && e.readers == 0 {
				delete(s.entries, k)
			}
		}
		s.mu.Unlock()
	}
}

// A key is kept while Updates of other keys commit, so that a search's
// records are kept under a steady stream of asks; not while an Update of a
// key of its mark is committing, nor after one ended since the read began.
func TestHotValues_AKeyIsMadeWhileUpdatesOfOtherKeysCommit(t *testing.T) {
	is := is.New(t)
	h := newHotValues()
	busy := []byte("q/busy")
	_, busyMark := h.slot(busy)
	other := []byte("q/other")
	for i := 0; ; i++ {
		if _, m := h.slot(other); m != busyMark {
			break
		}
		other = fmt.Appendf(nil, "q/other/%d", i)
	}
	held := func(key []byte) bool {
		s, _ := h.slot(key)
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.entries[string(key)] != nil
	}

	begin := h.begin()
	c, err := h.precommit(begin, []hotWrite{{key: busy, value: countValue(1)}}, nil)
	is.NoErr(err)
	h.offer(other, begin, countValue(7), true)
	is.True(held(other)) // another key's Update does not stop it
	h.offer(busy, begin, countValue(0), true)
	is.True(!held(busy)) // its own Update, committing, does
	h.postcommit(c, nil)
	h.offer(busy, begin, countValue(0), true)
	is.True(!held(busy)) // nor may a read from before that commit make it

	_, value, found, ok := h.lookup(other, h.begin())
	is.True(ok && found)
	is.Equal(value, countValue(7))
	h.offer(busy, h.begin(), countValue(1), true)
	is.True(held(busy)) // a read begun after the commit does
}
