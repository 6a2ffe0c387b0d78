package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
)

// Counter is a count that concurrent writers of different records keep
// without a common key. It lives under one prefix: the prefix itself holds
// the base (an 8-byte big-endian number, so a counter written as one plain
// key reads as a base), and each record that changed the count since the
// last compaction has its own key, the prefix followed by the record's
// member bytes, holding its net contribution (8-byte two's complement).
//
// A writer reads and writes only its record's key, which its transaction
// already owns (it writes the record too), so writers of different records
// never conflict. The count is the base plus the contributions. Now and then
// a writer folds every contribution into the base (Compact): that reads and
// deletes the contributions present in its snapshot, so it conflicts only
// with another compaction or a writer of one of those records, and one
// retries. Contributions made meanwhile are new keys it did not read.
//
// A counter's prefix must be its own: every longer key under it is read as
// a contribution. Key.Str and Key.Int parts end the prefix unambiguously.
type Counter []byte

// compactEvery is about how many contributions a counter gathers before a
// writer folds them: a read of the count scans about this many keys.
const compactEvery = 64

// Add changes the count by delta on behalf of the record member (its id, as
// key bytes). After this many contributions on average, it compacts the
// counter in the same transaction.
func (c Counter) Add(tx Tx, member []byte, delta int64) error {
	if delta == 0 {
		return nil
	}
	key := append(append(make([]byte, 0, len(c)+len(member)), c...), member...)
	cur, err := c.value(tx, key)
	if err != nil {
		return err
	}
	if v := cur + delta; v == 0 {
		err = tx.Delete(key)
	} else {
		err = tx.Set(key, binary.BigEndian.AppendUint64(nil, uint64(v)))
	}
	if err != nil {
		return err
	}
	if compacts(member) {
		return c.Compact(tx)
	}
	return nil
}

// compacts picks about one member in compactEvery, the same ones on every
// run (a fixed hash, not a random seed), so that the cost of a read is the
// same from one run to the next.
func compacts(member []byte) bool {
	h := fnv.New64a()
	h.Write(member)
	return h.Sum64()%compactEvery == 0
}

// Read returns the count: the base plus every contribution.
func (c Counter) Read(tx Tx) (int64, error) {
	var n int64
	it := tx.Iterate(Prefix(c))
	defer it.Close()
	for ; it.Valid(); it.Next() {
		v, err := it.Value()
		if err != nil {
			return 0, err
		}
		d, err := decodeCount(it.Key(), v)
		if err != nil {
			return 0, err
		}
		n += d
	}
	return n, nil
}

// Compact folds every contribution into the base.
func (c Counter) Compact(tx Tx) error {
	var n int64
	var members [][]byte
	it := tx.Iterate(Prefix(c))
	for ; it.Valid(); it.Next() {
		v, err := it.Value()
		if err == nil {
			var d int64
			if d, err = decodeCount(it.Key(), v); err == nil {
				n += d
			}
		}
		if err != nil {
			it.Close()
			return err
		}
		if len(it.Key()) > len(c) {
			members = append(members, append([]byte(nil), it.Key()...))
		}
	}
	it.Close()
	for _, k := range members {
		if err := tx.Delete(k); err != nil {
			return err
		}
	}
	if n == 0 {
		return tx.Delete(c)
	}
	return tx.Set(c, binary.BigEndian.AppendUint64(nil, uint64(n)))
}

func (c Counter) value(tx Tx, key []byte) (int64, error) {
	v, err := tx.Get(key)
	if errors.Is(err, ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return decodeCount(key, v)
}

func decodeCount(key, v []byte) (int64, error) {
	if len(v) != 8 {
		return 0, fmt.Errorf("counter %q: corrupt value", key)
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}
