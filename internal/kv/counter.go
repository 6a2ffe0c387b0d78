package kv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"sync/atomic"

	"github.com/marketplace/marketplace/storage"
)

// Counter is a count that concurrent writers keep without a common key: it
// is split over a fixed number of shard keys, and each Add changes one shard,
// taken in turn, so that writers running at the same time change different
// keys. A read adds the shards up with point reads.
//
// Shard keys are never deleted while they hold a value, nor does their number
// grow with the records counted: on an LSM store (Badger) deleted and
// overwritten keys linger until compaction, and a range scan walks through
// every one of them while a point read goes straight to the latest version.
// So a Counter costs the same after a million changes as after one.
//
// Shard 0 is the prefix itself, so a count written before as one plain
// 8-byte big-endian key reads as shard 0. Shard i > 0 is the prefix and the
// byte i. A counter's prefix must be its own: no other key may be the prefix
// followed by one byte.
type Counter struct {
	prefix []byte
	shards int
}

// MaxCounterShards bounds the shards of a Counter. Writers that overlap in
// time change different shards as long as there are no more of them than
// shards; a group of synced commits releases as many writers at once as
// there are clients, so a count that every client may change needs this
// many.
const MaxCounterShards = 64

// NewCounter returns the counter at prefix, split over shards keys (1 for a
// count that few writers change at once, up to MaxCounterShards).
func NewCounter(prefix []byte, shards int) Counter {
	return Counter{prefix: prefix, shards: min(max(shards, 1), MaxCounterShards)}
}

// turns hands out shards in turn. Counters share them by a hash of their
// prefix: two counters on one turn only spread each other's shards apart.
var turns [256]atomic.Uint32

func (c Counter) shardKey(i int) []byte {
	if i == 0 {
		return c.prefix
	}
	return append(append(make([]byte, 0, len(c.prefix)+1), c.prefix...), byte(i))
}

func (c Counter) nextShard() int {
	if c.shards == 1 {
		return 0
	}
	h := fnv.New32a()
	h.Write(c.prefix)
	return int(turns[h.Sum32()%uint32(len(turns))].Add(1) % uint32(c.shards))
}

// Add changes the count by delta.
func (c Counter) Add(tx storage.Tx, delta int64) error {
	if delta == 0 {
		return nil
	}
	return addToShard(tx, c.shardKey(c.nextShard()), delta)
}

// ShardKey returns the key of the shard that AddAt(tx, delta, spread)
// changes, for storage.Prefetch.
func (c Counter) ShardKey(spread uint64) []byte {
	return c.shardKey(int(spread % uint64(c.shards)))
}

// AddAt changes the count by delta on the shard that spread picks: writers
// that pass different consecutive numbers (the ids of the records they
// count, drawn from one sequence) change different shards, in every process
// that shares the store, and the shard is known before the Update reads it.
func (c Counter) AddAt(tx storage.Tx, delta int64, spread uint64) error {
	if delta == 0 {
		return nil
	}
	return addToShard(tx, c.ShardKey(spread), delta)
}

// Changes are changes of counters made together: their shards are picked
// as Add and AddAt pick them, and Apply reads them all at once (one round
// trip on a backend at network distance) before it changes them. The zero
// value is ready to use.
type Changes struct {
	keys   [][]byte
	deltas []int64
}

// Add notes that c changes by delta, on the shard Add would change.
func (cs *Changes) Add(c Counter, delta int64) {
	if delta != 0 {
		cs.keys, cs.deltas = append(cs.keys, c.shardKey(c.nextShard())), append(cs.deltas, delta)
	}
}

// AddAt notes that c changes by delta, on the shard spread picks.
func (cs *Changes) AddAt(c Counter, delta int64, spread uint64) {
	if delta != 0 {
		cs.keys, cs.deltas = append(cs.keys, c.ShardKey(spread)), append(cs.deltas, delta)
	}
}

// Apply makes the changes noted, in order, inside tx.
func (cs *Changes) Apply(tx storage.Tx) error {
	if err := storage.Prefetch(tx, cs.keys...); err != nil {
		return err
	}
	for i, key := range cs.keys {
		if err := addToShard(tx, key, cs.deltas[i]); err != nil {
			return err
		}
	}
	return nil
}

func addToShard(tx storage.Tx, key []byte, delta int64) error {
	cur, err := readShard(tx, key)
	if err != nil {
		return err
	}
	return tx.Set(key, binary.BigEndian.AppendUint64(nil, uint64(cur+delta)))
}

// Read returns the count: the sum of the shards.
func (c Counter) Read(tx storage.Tx) (int64, error) {
	if err := PrefetchCounters(tx, c); err != nil {
		return 0, err
	}
	var n int64
	for i := range c.shards {
		v, err := readShard(tx, c.shardKey(i))
		if err != nil {
			return 0, err
		}
		n += v
	}
	return n, nil
}

func readShard(tx storage.Tx, key []byte) (int64, error) {
	v, err := tx.Get(key)
	if errors.Is(err, storage.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("counter %q: corrupt value", key)
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}

// PrefetchCounters tells tx that the counters' shards are about to be
// read: a backend at network distance reads them all in one round trip
// (storage.Prefetcher) rather than one per shard. Reading several counts
// together, pass them all.
func PrefetchCounters(tx storage.Tx, counters ...Counter) error {
	if _, ok := tx.(storage.Prefetcher); !ok {
		return nil
	}
	var keys [][]byte
	for _, c := range counters {
		for i := range c.shards {
			keys = append(keys, c.shardKey(i))
		}
	}
	return storage.Prefetch(tx, keys...)
}
