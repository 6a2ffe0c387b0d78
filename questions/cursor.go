package questions

import (
	"bytes"

	"github.com/marketplace/marketplace/storage"
)

// cursor reads the keys under base in the order of its levels: the index
// components after base (fields), then the date, each with its own
// direction (desc). Where the directions of the levels that follow a level
// all agree, one iterator reads them; above that, the levels are read group
// by group: each group's keys in their own direction, the groups in
// theirs, one seek from a group to the next. So a cursor reads the keys it
// yields, plus one seek per group it enters, and never a key it skips.
// Where an asker list is given (askerList), the askers of the first level
// are read from it rather than from the index.
type cursor struct {
	tx     storage.Tx
	base   []byte
	fields []string
	desc   []bool // one per field, then the date's
	// split is the first level from which every direction agrees: the
	// levels before it are walked group by group.
	split  int
	frames []frame
	inner  storage.Iterator
	// askers is the prefix of the asker list of base's class, or nil.
	askers []byte
	// fixed holds what the cursor's keys share: their item and asker where
	// base fixes them.
	fixed   entry
	started bool
	// expect is how many keys the cursor's reader expects to take (0:
	// unknown), which its range of the date level is told.
	expect int
}

// frame is one group level being walked: the iterator over the groups of
// its parent group, standing on the group being read.
type frame struct {
	it    storage.Iterator
	group []byte
}

func newCursor(tx storage.Tx, base []byte, fields []string, desc []bool, fixed entry, askers []byte) *cursor {
	split := len(desc) - 1
	for split > 0 && desc[split-1] == desc[len(desc)-1] {
		split--
	}
	if askers != nil {
		split = max(split, 1)
	}
	return &cursor{tx: tx, base: base, fields: fields, desc: desc, split: split,
		frames: make([]frame, split), askers: askers, fixed: fixed}
}

// next returns the next key, or false when there is none. The key is the
// cursor's until the next call.
func (c *cursor) next() ([]byte, bool) {
	if !c.started {
		c.started = true
		if !c.open(0, c.base) && !c.advance() {
			return nil, false
		}
	}
	for c.inner != nil {
		if c.inner.Valid() {
			k := bytes.Clone(c.inner.Key())
			c.inner.Next()
			return k, true
		}
		c.inner.Close()
		c.inner = nil
		if !c.advance() {
			return nil, false
		}
	}
	return nil, false
}

// advance moves the deepest level that has another group to it, closing
// the levels below, and opens the levels under it: until a group holds a
// key (a group of the asker list may hold none in the index), or none is
// left.
func (c *cursor) advance() bool {
	for {
		j := c.split - 1
		for ; j >= 0; j-- {
			f := &c.frames[j]
			if f.it == nil {
				continue // a level that open found empty
			}
			switch {
			case j == 0 && c.askers != nil:
				f.it.Next()
			case c.desc[j]:
				f.it.Seek(f.group)
			default:
				f.it.Seek(storage.PrefixEnd(f.group))
			}
			if f.it.Valid() {
				break
			}
			f.it.Close()
			f.it = nil
		}
		if j < 0 {
			return false
		}
		c.frames[j].group = c.groupAt(j)
		if c.open(j+1, c.frames[j].group) {
			return true
		}
	}
}

// groupAt is the group that level j's iterator stands on.
func (c *cursor) groupAt(j int) []byte {
	key := c.frames[j].it.Key()
	if j == 0 && c.askers != nil {
		return append(bytes.Clone(c.base), key[len(c.askers):]...)
	}
	parent := c.base
	if j > 0 {
		parent = c.frames[j-1].group
	}
	return groupOf(key, len(parent), c.fields[j])
}

// open starts the levels from j down in the group parent: each group level
// on its first group, and the iterator of the levels whose directions
// agree. It is false when parent holds no key.
func (c *cursor) open(j int, parent []byte) bool {
	for ; j < c.split; j++ {
		r := storage.Range{Start: parent, End: storage.PrefixEnd(parent), Reverse: c.desc[j]}
		if j == 0 && c.askers != nil {
			r = storage.Prefix(c.askers)
			r.Reverse = c.desc[0]
		}
		it := c.tx.Iterate(r)
		if !it.Valid() {
			it.Close()
			return false
		}
		c.frames[j] = frame{it: it}
		parent = c.groupAt(j)
		c.frames[j].group = parent
	}
	r := storage.Prefix(parent)
	r.Reverse = c.desc[len(c.desc)-1]
	if c.split == 0 {
		r.Expect = c.expect
	}
	c.inner = c.tx.Iterate(r)
	return true
}

// prime opens a cursor that walks no group level: its one range, asked for
// before any cursor of the merge reads, goes to the store with theirs
// (storage/postgres sends them in one round trip).
func (c *cursor) prime() {
	if c.split == 0 && !c.started {
		c.started = true
		c.open(0, c.base)
	}
}

func groupOf(key []byte, at int, field string) []byte {
	return bytes.Clone(key[:at+fieldLen(key[at:], field)])
}

// close releases the cursor's iterators.
func (c *cursor) close() {
	if c.inner != nil {
		c.inner.Close()
		c.inner = nil
	}
	for i := range c.frames {
		if c.frames[i].it != nil {
			c.frames[i].it.Close()
			c.frames[i].it = nil
		}
	}
}

// merge yields the entries of several cursors in one order, those of
// division of totalDivisions only when totalDivisions is set.
type merge struct {
	cursors []*cursor
	heads   []entry
	live    []bool
	order   []Sort
	// totalDivisions and division keep one division (totalDivisions 0:
	// every entry).
	totalDivisions, division int64
}

func newMerge(cursors []*cursor, order []Sort, totalDivisions, division int64) *merge {
	m := &merge{cursors: cursors, heads: make([]entry, len(cursors)), live: make([]bool, len(cursors)),
		order: order, totalDivisions: totalDivisions, division: division}
	for _, c := range cursors {
		c.prime()
	}
	for i := range cursors {
		m.advance(i)
	}
	return m
}

func (m *merge) advance(i int) {
	c := m.cursors[i]
	k, ok := c.next()
	if !ok {
		m.live[i] = false
		return
	}
	m.heads[i], m.live[i] = decodeEntry(k, len(c.base), c.fields, c.fixed), true
}

// next returns the next entry in order, or false at the end. A division
// is kept from the merged order, not from each cursor: a class whose
// questions all fall in other divisions is then read no further than the
// others.
func (m *merge) next() (entry, bool) {
	for {
		best := -1
		for i, live := range m.live {
			if live && (best < 0 || compareEntries(m.heads[i], m.heads[best], m.order) < 0) {
				best = i
			}
		}
		if best < 0 {
			return entry{}, false
		}
		e := m.heads[best]
		m.advance(best)
		if m.totalDivisions == 0 || e.id%m.totalDivisions == m.division {
			return e, true
		}
	}
}

func (m *merge) close() {
	for _, c := range m.cursors {
		c.close()
	}
}
