package questions

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/storage"
)

// A tally counts the questions of a partition by class, and for every
// totalDivisions up to divisionMax, how many of each class fall in each
// division (id mod totalDivisions): so the total of a search, with or
// without divisions, is a sum of tallies, never a count of keys. Its value
// holds, for each class it has counted, the class byte and tallySlots
// varints: the count, then for t = 2..divisionMax the counts of the
// remainders 0..t-1.
//
// A tally is split over shards keys by question id, so that concurrent
// asks, which draw consecutive ids, change different keys; a change of
// class changes one key. Every tally has 64 shards, as many as the
// concurrent asks an ask load of 64 clients has in flight: the asks of one
// buyer on one item change four tallies (the seller's, the item's and the
// asker's in each), and with fewer shards of the item's or the asker's
// (8 and 1 before migration 14), those asks ran again after conflicts 2.3
// times each on Badger and waited for one another. A search reads every
// shard of the tallies it sums, in one round trip where the store can.
const (
	divisionMax       = 10
	tallySlots        = 1 + (divisionMax*(divisionMax+1))/2 - 1
	sellerTallyShards = 64
	itemTallyShards   = 64
	askerTallyShards  = 64
)

// tallySlot is the slot of division d of t (t <= 1: the count).
func tallySlot(t, d int64) int {
	if t <= 1 {
		return 0
	}
	return int(t*(t-1)/2 + d)
}

type tallyFamily struct {
	ns     string
	shards int
}

var (
	sellerTally     = tallyFamily{ns: "q/t/s", shards: sellerTallyShards}
	itemTally       = tallyFamily{ns: "q/t/i", shards: itemTallyShards}
	sellerFromTally = tallyFamily{ns: "q/t/sf", shards: askerTallyShards}
	itemFromTally   = tallyFamily{ns: "q/t/if", shards: askerTallyShards}

	tallies = []tallyFamily{sellerTally, itemTally, sellerFromTally, itemFromTally}
)

func (f tallyFamily) byItem() bool { return f == itemTally || f == itemFromTally }

// askers is the list of askers by class that follows the family's tallies
// of one asker, if it counts one asker's questions.
func (f tallyFamily) askers() (askerList, bool) {
	switch f {
	case sellerFromTally:
		return sellerAskers, true
	case itemFromTally:
		return itemAskers, true
	}
	return askerList{}, false
}

// prefix is the tally's key before its shard byte; from is the asker of the
// families that count one asker's questions.
func (f tallyFamily) prefix(p partition, from int64) keycodec.Key {
	k := keycodec.New(f.ns)
	if f.byItem() {
		k = k.Str(p.item)
	} else {
		k = k.Int(p.seller)
	}
	if f == sellerFromTally || f == itemFromTally {
		k = k.Int(from)
	}
	return k
}

// keyOf is the key of the tally shard that counts r, and classOf its class
// there.
func (f tallyFamily) keyOf(r record) []byte {
	k := f.prefix(f.partitionOf(r), r.BuyerID)
	return append(k, byte(uint64(r.ID)%uint64(f.shards)))
}

func (f tallyFamily) partitionOf(r record) partition {
	return partition{seller: r.SellerID, item: r.ItemID}
}

func (f tallyFamily) classOf(r record) byte {
	if f.byItem() {
		return r.class()
	}
	return statusCode(r.Status)
}

// shardKeys are the keys of every shard of one tally.
func (f tallyFamily) shardKeys(p partition, from int64) [][]byte {
	base := f.prefix(p, from)
	out := make([][]byte, f.shards)
	for i := range out {
		out[i] = append(append(make([]byte, 0, len(base)+1), base...), byte(i))
	}
	return out
}

// tallyValue is a tally's counts by class.
type tallyValue map[byte][]int64

// moveInTally counts question id once more in class to at key, and once
// less in class from unless from is noClass: a change of class is one
// write. It tells whether from was left empty in this shard and whether
// to was empty in it before, which the asker lists follow (askers).
func moveInTally(tx storage.Tx, key []byte, id int64, from, to byte) (emptied, filled bool, err error) {
	v, err := readTally(tx, key)
	if err != nil {
		return false, false, err
	}
	if from != noClass {
		v.add(from, id, -1)
		_, held := v[from]
		emptied = !held
	}
	_, held := v[to]
	filled = !held
	v.add(to, id, 1)
	return emptied, filled, tx.Set(key, v.encode())
}

// noClass stands for "none" where a class is expected.
const noClass = 0xff

func (v tallyValue) add(class byte, id, delta int64) {
	slots := v[class]
	if slots == nil {
		slots = make([]int64, tallySlots)
		v[class] = slots
	}
	slots[0] += delta
	for t := int64(2); t <= divisionMax; t++ {
		slots[tallySlot(t, id%t)] += delta
	}
	if slots[0] == 0 {
		delete(v, class)
	}
}

// encode writes the classes in increasing order. A tally holds a few
// classes: they are sorted, not looked up one by one among the 256 a
// class byte can be (which was a third of an ask's time in its tallies).
func (v tallyValue) encode() []byte {
	classes := make([]byte, 0, 8)
	for class := range v {
		classes = append(classes, class)
	}
	slices.Sort(classes)
	out := make([]byte, 0, len(v)*(1+tallySlots*2))
	for _, class := range classes {
		out = append(out, class)
		for _, n := range v[class] {
			out = binary.AppendVarint(out, n)
		}
	}
	return out
}

func readTally(tx storage.Tx, key []byte) (tallyValue, error) {
	b, err := tx.Get(key)
	if errors.Is(err, storage.ErrNotFound) {
		return tallyValue{}, nil
	}
	if err != nil {
		return nil, err
	}
	v, err := decodeTally(b)
	if err != nil {
		return nil, fmt.Errorf("questions: corrupt tally %q", key)
	}
	return v, nil
}

var errCorruptTally = errors.New("questions: corrupt tally")

// decodeTally reads a tally's stored form (encode).
func decodeTally(b []byte) (tallyValue, error) {
	v := tallyValue{}
	for len(b) > 0 {
		class, slots := b[0], make([]int64, tallySlots)
		b = b[1:]
		for i := range slots {
			n, k := binary.Varint(b)
			if k <= 0 {
				return nil, errCorruptTally
			}
			slots[i], b = n, b[k:]
		}
		v[class] = slots
	}
	return v, nil
}

// sumTallies adds slot of classes in the tallies at keys, read in one
// round trip where the store can, and returns the classes that hold any
// question: a question is counted in one shard, so a class a shard holds
// counts at least one.
func sumTallies(tx storage.Tx, keys [][]byte, classes []byte, slot int) (int64, []byte, error) {
	if err := storage.Prefetch(tx, keys...); err != nil {
		return 0, nil, err
	}
	var total int64
	held := make([]bool, len(classes))
	for _, k := range keys {
		b, err := tx.Get(k)
		if errors.Is(err, storage.ErrNotFound) {
			continue
		}
		if err != nil {
			return 0, nil, err
		}
		n, ok := sumTallySlot(b, classes, slot, held)
		if !ok {
			return 0, nil, fmt.Errorf("questions: corrupt tally %q", k)
		}
		total += n
	}
	var out []byte
	for i, c := range classes {
		if held[i] {
			out = append(out, c)
		}
	}
	return total, out, nil
}

// anyShardHolds tells whether any of the tally shards at keys counts a
// question of class; it stops at the first that does.
func anyShardHolds(tx storage.Tx, keys [][]byte, class byte) (bool, error) {
	classes, held := []byte{class}, []bool{false}
	for _, k := range keys {
		b, err := tx.Get(k)
		if errors.Is(err, storage.ErrNotFound) {
			continue
		}
		if err != nil {
			return false, err
		}
		if _, ok := sumTallySlot(b, classes, 0, held); !ok {
			return false, fmt.Errorf("questions: corrupt tally %q", k)
		}
		if held[0] {
			return true, nil
		}
	}
	return false, nil
}

// sumTallySlot adds slot of each of classes that the tally value b holds,
// marking it in held, and decodes nothing else: every search reads every
// shard of its partition's tally (64 for a seller's), and decoding each
// whole into a map cost a third of a short search. It is false where b is
// not a tally's encoding.
func sumTallySlot(b, classes []byte, slot int, held []bool) (int64, bool) {
	var total int64
	for len(b) > 0 {
		want := bytes.IndexByte(classes, b[0])
		b = b[1:]
		for i := range tallySlots {
			if i == slot && want >= 0 {
				n, k := binary.Varint(b)
				if k <= 0 {
					return 0, false
				}
				total += n
				held[want] = true
				b = b[k:]
				continue
			}
			k := varintLen(b)
			if k == 0 {
				return 0, false
			}
			b = b[k:]
		}
	}
	return total, true
}

// varintLen is the length of the varint that b begins with, 0 if b
// begins with none.
func varintLen(b []byte) int {
	for i := 0; i < len(b) && i < binary.MaxVarintLen64; i++ {
		if b[i] < 0x80 {
			return i + 1
		}
	}
	return 0
}
