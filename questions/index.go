package questions

import (
	"bytes"
	"errors"
	"strings"

	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/storage"
)

// index is one of the orders the search reads questions in (keys.go): the
// partition (a seller's or an item's questions), the class after it, the
// components fields names in key order, then the creation time and the id.
type index struct {
	ns     string
	byItem bool
	fields []string
}

var (
	sellerByDate     = index{ns: "q/s/d"}
	sellerByItem     = index{ns: "q/s/i", fields: []string{SortItemID}}
	sellerByFrom     = index{ns: "q/s/f", fields: []string{SortFromID}}
	sellerByItemFrom = index{ns: "q/s/if", fields: []string{SortItemID, SortFromID}}
	sellerByFromItem = index{ns: "q/s/fi", fields: []string{SortFromID, SortItemID}}
	itemByDate       = index{ns: "q/i/d", byItem: true}
	itemByFrom       = index{ns: "q/i/f", byItem: true, fields: []string{SortFromID}}

	// indexes are every index put keeps, in a fixed order.
	indexes = []index{sellerByDate, sellerByItem, sellerByFrom, sellerByItemFrom, sellerByFromItem, itemByDate, itemByFrom}
)

// askerList lists, by class, the askers who have at least one question of
// the class in a partition, in asker order: a search ordered by asker
// reads its askers from it, each asker's questions under the asker's
// component of the index. The index alone would do, but for Badger the
// keys a change of status deletes stay until a compaction reaches the
// bottom level, and an iterator walks them to find nothing: a frequent
// asker whose questions were all answered leaves as many deleted keys at
// the start of the unanswered class as it asked questions. Here it leaves
// one, whatever the number of its questions.
type askerList struct {
	ns     string
	byItem bool
}

var (
	sellerAskers = askerList{ns: "q/s/a"}
	itemAskers   = askerList{ns: "q/i/a", byItem: true}
)

func (l askerList) classPrefix(p partition, class byte) keycodec.Key {
	return index{ns: l.ns, byItem: l.byItem}.classPrefix(p, class)
}

func (l askerList) key(r record, class byte) []byte {
	return l.classPrefix(partition{seller: r.SellerID, item: r.ItemID}, class).Int(r.BuyerID)
}

func (l askerList) classOf(r record) byte {
	return index{byItem: l.byItem}.classOf(r)
}

// follow keeps the list as put moves r (from before, unless nil) in its
// asker's tally: emptied when before's class is left without a question
// in every shard of the tally, filled when r's class had none in r's
// shard. A filled shard is often one of several that hold the class (an
// asker's questions spread over 64 shards), so the key is read first and
// written only where it is missing: a write of it at every such ask would
// be one more key per ask (two with the item's list), and once the key is
// there, the concurrent asks of one asker that read it do not conflict.
func (l askerList) follow(tx storage.Tx, before *record, r record, emptied, filled bool) error {
	if emptied && before != nil {
		if err := tx.Delete(l.key(*before, l.classOf(*before))); err != nil {
			return err
		}
	}
	if !filled {
		return nil
	}
	k := l.key(r, l.classOf(r))
	if _, err := tx.Get(k); err == nil {
		return nil
	} else if !errors.Is(err, storage.ErrNotFound) {
		return err
	}
	return tx.Set(k, nil)
}

// askersFor is the asker list whose groups are those of ix's first field,
// if ix is ordered by asker first.
func askersFor(ix index) (askerList, bool) {
	if len(ix.fields) == 0 || ix.fields[0] != SortFromID {
		return askerList{}, false
	}
	if ix.byItem {
		return itemAskers, true
	}
	return sellerAskers, true
}

// partition names whose questions an index key belongs to: the seller's,
// or the item's.
type partition struct {
	seller int64
	item   string
}

func (ix index) partitionOf(r record) partition {
	return partition{seller: r.SellerID, item: r.ItemID}
}

// classOf is r's class in ix: the status alone in a seller's indexes, which
// only the seller reads; the status and whether it is hidden in an item's,
// which anyone reads.
func (ix index) classOf(r record) byte {
	if ix.byItem {
		return r.class()
	}
	return statusCode(r.Status)
}

func (ix index) classPrefix(p partition, class byte) keycodec.Key {
	k := keycodec.New(ix.ns)
	if ix.byItem {
		k = k.Str(p.item)
	} else {
		k = k.Int(p.seller)
	}
	return append(k, class)
}

func appendField(k keycodec.Key, field string, r record) keycodec.Key {
	if field == SortItemID {
		return k.Str(r.ItemID)
	}
	return k.Int(r.BuyerID)
}

func (ix index) key(r record) []byte {
	k := ix.classPrefix(ix.partitionOf(r), ix.classOf(r))
	for _, f := range ix.fields {
		k = appendField(k, f, r)
	}
	return k.Int(r.Created.UnixNano()).Int(r.ID)
}

// fieldLen is the length of the encoded field at the start of b: a string
// ends with its zero byte (keycodec escapes the zeros inside it).
func fieldLen(b []byte, field string) int {
	if field == SortItemID {
		if i := bytes.IndexByte(b, 0); i >= 0 {
			return i + 1
		}
		return len(b)
	}
	return min(8, len(b))
}

// entry is what an index key tells of its question: the fields the search
// orders by. Those an index does not hold are filled by the cursor that
// read it where they are fixed (the item of an item's index, the asker of
// a cursor on one asker), and compare equal otherwise.
type entry struct {
	item    string
	from    int64
	created int64
	id      int64
}

// decodeEntry reads the fields after the first skip bytes of key, a key of
// an index whose remaining components are fields.
func decodeEntry(key []byte, skip int, fields []string, base entry) entry {
	r := keycodec.Read(key[skip:])
	e := base
	for _, f := range fields {
		if f == SortItemID {
			e.item = r.Str()
		} else {
			e.from = r.Int()
		}
	}
	e.created = r.Int()
	e.id = r.Int()
	return e
}

// compareEntries orders two entries by order, the search's sorts as
// effectiveOrder leaves them: fields, then the date, whose ties the id
// breaks in the date's direction.
func compareEntries(a, b entry, order []Sort) int {
	for _, s := range order {
		c := 0
		switch s.Field {
		case SortItemID:
			c = strings.Compare(a.item, b.item)
		case SortFromID:
			c = cmpInt(a.from, b.from)
		case SortDateCreated:
			if c = cmpInt(a.created, b.created); c == 0 {
				c = cmpInt(a.id, b.id)
			}
		}
		if s.Type == "DESC" {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
