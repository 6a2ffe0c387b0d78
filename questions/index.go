package questions

import (
	"bytes"
	"strings"

	"github.com/marketplace/marketplace/internal/keycodec"
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
