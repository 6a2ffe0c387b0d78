package questions

import (
	"encoding/binary"
	"errors"

	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/schema"
)

// ClassIndexesMigration replaces the indexes of migrations 4 and 9 (q/sd,
// q/ssd, q/si, q/sf, q/id) and the counters q/n/s and q/n/ss by the
// indexes split by class and the tallies of keys.go: the old keys are
// deleted, then every question's keys are written; and it counts each
// seller's blacklist entries (q/n/blk). Frozen: its key names,
// status codes and tally form are its own copies.
func ClassIndexesMigration() schema.Migration {
	var phases []schema.Phase
	for _, ns := range []string{"q/sd", "q/ssd", "q/si", "q/sf", "q/id", "q/n/s", "q/n/ss"} {
		phases = append(phases, schema.Phase{Range: storage.Prefix(keycodec.New(ns)), Each: schema.DeleteKey})
	}
	phases = append(phases, schema.Phase{
		Range: storage.Prefix(keycodec.New("q/q")),
		Each: func(tx storage.Tx, _, value []byte) error {
			r, err := decodeQuestionAny(value)
			if err != nil {
				return err
			}
			for _, k := range classIndexKeysV10(r) {
				if err := tx.Set(k, nil); err != nil {
					return err
				}
			}
			keys, classes := classTalliesV10(r)
			for i, k := range keys {
				if err := addTallyV10(tx, k, classes[i], r.ID); err != nil {
					return err
				}
			}
			return nil
		},
	})
	// The blacklists' counts, from their entries.
	phases = append(phases, schema.Phase{
		Range: storage.Prefix(keycodec.New("q/blk")),
		Each: func(tx storage.Tx, key, _ []byte) error {
			seller := keycodec.Read(key[len(keycodec.New("q/blk")):]).Int()
			k := keycodec.New("q/n/blk").Int(seller)
			var n uint64
			if v, err := tx.Get(k); err == nil && len(v) == 8 {
				n = binary.BigEndian.Uint64(v)
			} else if err != nil && !errors.Is(err, storage.ErrNotFound) {
				return err
			}
			return tx.Set(k, binary.BigEndian.AppendUint64(nil, n+1))
		},
	})
	return schema.Migration{
		Name:  "questions: indexes split by status class, tallies for totals and divisions, blacklist counts",
		Chunk: schema.Phases(phases...),
	}
}

var statusesV10 = []string{"ANSWERED", "BANNED", "CLOSED_UNANSWERED", "DELETED", "DISABLED", "UNANSWERED", "UNDER_REVIEW"}

func statusCodeV10(status string) byte {
	for i, s := range statusesV10 {
		if s == status {
			return byte(i)
		}
	}
	return 0xff
}

func classCodeV10(r questionV1) byte {
	c := statusCodeV10(r.Status) << 1
	if r.DeletedFromListing {
		c |= 1
	}
	return c
}

func classIndexKeysV10(r questionV1) [][]byte {
	st, cls := statusCodeV10(r.Status), classCodeV10(r)
	created := r.Created.UnixNano()
	seller := func(ns string) keycodec.Key { return append(keycodec.New(ns).Int(r.SellerID), st) }
	item := func(ns string) keycodec.Key { return append(keycodec.New(ns).Str(r.ItemID), cls) }
	return [][]byte{
		seller("q/s/d").Int(created).Int(r.ID),
		seller("q/s/i").Str(r.ItemID).Int(created).Int(r.ID),
		seller("q/s/f").Int(r.BuyerID).Int(created).Int(r.ID),
		seller("q/s/if").Str(r.ItemID).Int(r.BuyerID).Int(created).Int(r.ID),
		seller("q/s/fi").Int(r.BuyerID).Str(r.ItemID).Int(created).Int(r.ID),
		item("q/i/d").Int(created).Int(r.ID),
		item("q/i/f").Int(r.BuyerID).Int(created).Int(r.ID),
	}
}

// classTalliesV10 are the tally shard keys that count r and r's class in
// each.
func classTalliesV10(r questionV1) (keys [][]byte, classes []byte) {
	st, cls := statusCodeV10(r.Status), classCodeV10(r)
	keys = [][]byte{
		append(keycodec.New("q/t/s").Int(r.SellerID), byte(uint64(r.ID)%64)),
		append(keycodec.New("q/t/i").Str(r.ItemID), byte(uint64(r.ID)%8)),
		append(keycodec.New("q/t/sf").Int(r.SellerID).Int(r.BuyerID), 0),
		append(keycodec.New("q/t/if").Str(r.ItemID).Int(r.BuyerID), 0),
	}
	return keys, []byte{st, cls, st, cls}
}

// addTallyV10 counts question id once more in class at key. A tally's
// value is, for each class it counts in increasing order, the class byte
// and 55 varints: the count, then for t = 2..10 the counts of the
// remainders of id mod t.
func addTallyV10(tx storage.Tx, key []byte, class byte, id int64) error {
	counts := map[byte][]int64{}
	b, err := tx.Get(key)
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return err
	}
	for len(b) > 0 {
		c, slots := b[0], make([]int64, 55)
		b = b[1:]
		for i := range slots {
			v, n := binary.Varint(b)
			if n <= 0 {
				return errors.New("questions: corrupt tally")
			}
			slots[i], b = v, b[n:]
		}
		counts[c] = slots
	}
	slots := counts[class]
	if slots == nil {
		slots = make([]int64, 55)
		counts[class] = slots
	}
	slots[0]++
	for t := int64(2); t <= 10; t++ {
		slots[t*(t-1)/2+id%t]++
	}
	var out []byte
	for c := range 256 {
		if s, ok := counts[byte(c)]; ok {
			out = append(out, byte(c))
			for _, v := range s {
				out = binary.AppendVarint(out, v)
			}
		}
	}
	return tx.Set(key, out)
}
