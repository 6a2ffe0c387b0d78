package questions

import (
	"context"
	"slices"
	"strings"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/stock"
	"github.com/marketplace/marketplace/storage"
)

var defaultSort = []Sort{{Field: SortDateCreated, Type: "DESC"}}

// publicStatuses are the statuses that anyone may see in a listing, unless
// the seller hid the question.
var publicStatuses = []string{StatusUnanswered, StatusAnswered, StatusClosedUnanswered}

// ownStatuses are the statuses of an asker's own questions that the asker
// sees in a listing beside the public ones (and hidden ones of every
// status here or public): not those deleted or banned.
var ownStatuses = []string{StatusUnderReview, StatusDisabled}

// searchPlan is how a search is read: the order of its entries and the
// streams they come from, merged in that order.
type searchPlan struct {
	order   []Sort
	streams []stream
}

// stream is the part of a search that one index holds: the classes of one
// partition, all of them or only one asker's (from).
type stream struct {
	ix      index
	part    partition
	from    int64
	classes []byte
}

// effectiveOrder is the order a search's sorts give: what a sort on a
// field that the search fixes (the seller, the item, the asker) adds is
// nothing, and the date ends the order because the date and the id, which
// breaks its ties in the date's direction, tell every question apart. A
// search whose sorts leave the date out ends with it in the direction of
// its last sort.
func effectiveOrder(q SearchQuery) []Sort {
	sorts := q.Sorts
	if len(sorts) == 0 {
		sorts = defaultSort
	}
	var out []Sort
	for _, s := range sorts {
		switch {
		case s.Field == SortSellerID,
			s.Field == SortItemID && q.ItemID != "",
			s.Field == SortFromID && q.From != 0:
			continue
		}
		out = append(out, s)
		if s.Field == SortDateCreated {
			return out
		}
	}
	return append(out, Sort{Field: SortDateCreated, Type: sorts[len(sorts)-1].Type})
}

// indexFor is the index whose key order is order, for a partition of a
// seller or of an item, with or without a fixed asker.
func indexFor(byItem, fixedFrom bool, order []Sort) index {
	var fields []string
	for _, s := range order {
		if s.Field != SortDateCreated {
			fields = append(fields, s.Field)
		}
	}
	switch key := strings.Join(fields, ","); {
	case byItem && (fixedFrom || key == SortFromID):
		return itemByFrom
	case byItem:
		return itemByDate
	case fixedFrom && key == SortItemID:
		return sellerByFromItem
	case fixedFrom || key == SortFromID:
		return sellerByFrom
	case key == SortItemID:
		return sellerByItem
	case key == SortItemID+","+SortFromID:
		return sellerByItemFrom
	case key == SortFromID+","+SortItemID:
		return sellerByFromItem
	}
	return sellerByDate
}

// likelyReads are the keys that a search by caller reads before its
// indexes: the item of an item's search and the tallies that its plan
// will most likely sum, so that a prefetch of them all costs the round
// trip of the item's read. The plan may differ (the item's own seller
// reads no tally of its own questions, a search of an item that is not
// the seller's reads none): then some of them were read for nothing, in
// the same round trip.
func likelyReads(caller int64, q SearchQuery) [][]byte {
	if q.ItemID == "" {
		family := sellerTally
		if q.From != 0 {
			family = sellerFromTally
		}
		return family.shardKeys(partition{seller: q.SellerID}, q.From)
	}
	part := partition{item: q.ItemID}
	keys := stock.ItemKeys(q.ItemID)
	switch {
	case q.From != 0:
		keys = append(keys, itemFromTally.shardKeys(part, q.From)...)
	case caller != 0:
		keys = append(keys, itemTally.shardKeys(part, 0)...)
		keys = append(keys, itemFromTally.shardKeys(part, caller)...)
	default:
		keys = append(keys, itemTally.shardKeys(part, 0)...)
	}
	return keys
}

// planSearch plans a checked search for caller. A seller's search reads its
// own indexes, every status or the one asked for. An item's search reads
// the classes the caller may see: every one for the item's seller; the
// public ones for anyone, and for an asker also its own questions that are
// not public (under review, disabled, hidden), read from its part of the
// by-asker index.
func planSearch(tx storage.Tx, caller int64, q SearchQuery) (searchPlan, error) {
	p := searchPlan{order: effectiveOrder(q)}
	if q.ItemID == "" {
		p.streams = []stream{{ix: indexFor(false, q.From != 0, p.order), part: partition{seller: q.SellerID},
			from: q.From, classes: sellerClasses(q.Status)}}
		return p, nil
	}
	item, err := stock.GetItemWithoutStock(tx, q.ItemID)
	if e := errs.As(err); err != nil && (e == nil || e.Kind != errs.NotFound) {
		return searchPlan{}, err
	}
	if q.SellerID != 0 && item.SellerID != q.SellerID {
		return p, nil // the item is not the seller's: nothing of it is
	}
	part := partition{item: q.ItemID}
	ix := indexFor(true, q.From != 0, p.order)
	if caller != 0 && caller == item.SellerID {
		all := append(itemClasses(q.Status, Statuses, false), itemClasses(q.Status, Statuses, true)...)
		p.streams = []stream{{ix: ix, part: part, from: q.From, classes: all}}
		return p, nil
	}
	public := itemClasses(q.Status, publicStatuses, false)
	own := append(itemClasses(q.Status, ownStatuses, false), itemClasses(q.Status, ownStatuses, true)...)
	own = append(own, itemClasses(q.Status, publicStatuses, true)...)
	switch {
	case q.From != 0 && caller != 0 && q.From == caller:
		p.streams = []stream{{ix: ix, part: part, from: q.From, classes: append(public, own...)}}
	case q.From != 0:
		p.streams = []stream{{ix: ix, part: part, from: q.From, classes: public}}
	default:
		p.streams = []stream{{ix: ix, part: part, classes: public}}
		if caller != 0 && len(own) > 0 {
			p.streams = append(p.streams, stream{ix: itemByFrom, part: part, from: caller, classes: own})
		}
	}
	return p, nil
}

func sellerClasses(status string) []byte {
	if status != "" {
		return []byte{statusCode(status)}
	}
	out := make([]byte, len(Statuses))
	for i, s := range Statuses {
		out[i] = statusCode(s)
	}
	return out
}

// itemClasses are the classes of statuses (only status, when given) with
// hidden as given.
func itemClasses(status string, statuses []string, hidden bool) []byte {
	var out []byte
	for _, s := range statuses {
		if status == "" || s == status {
			out = append(out, classCode(s, hidden))
		}
	}
	return out
}

// tallyFamily is the family of tallies that counts the stream's classes.
func (st stream) tallyFamily() tallyFamily {
	switch {
	case st.ix.byItem && st.from != 0:
		return itemFromTally
	case st.ix.byItem:
		return itemTally
	case st.from != 0:
		return sellerFromTally
	}
	return sellerTally
}

// total is the number of the plan's questions, of one division when
// totalDivisions is set: a sum of tallies up to divisionMax divisions, a
// count of the keys above. It leaves out of the plan the classes that hold
// no question, which the tallies tell: such a class's range may still hold
// the keys that its questions' changes of status deleted, which Badger
// keeps until a compaction reaches the bottom level and an iterator walks
// to find nothing (a seller who answered every question of an asker has a
// range of them in the asker's unanswered class, as many as the asker's
// questions).
func (p *searchPlan) total(ctx context.Context, tx storage.Tx, totalDivisions, division int64) (int64, error) {
	slot := tallySlot(totalDivisions, division)
	if totalDivisions > divisionMax {
		slot = 0
	}
	// Every stream's tallies in one round trip.
	var keys [][]byte
	for _, st := range p.streams {
		keys = append(keys, st.tallyFamily().shardKeys(st.part, st.from)...)
	}
	if err := storage.Prefetch(tx, keys...); err != nil {
		return 0, err
	}
	var total int64
	for i, st := range p.streams {
		n, held, err := sumTallies(tx, st.tallyFamily().shardKeys(st.part, st.from), st.classes, slot)
		if err != nil {
			return 0, err
		}
		p.streams[i].classes = held
		total += n
	}
	if totalDivisions <= divisionMax {
		return total, nil
	}
	m := p.merge(tx, totalDivisions, division, 0)
	defer m.close()
	var n int64
	for {
		if n%1024 == 1023 {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
		if _, ok := m.next(); !ok {
			return n, nil
		}
		n++
	}
}

// merge reads the plan's streams in its order, each class of each stream
// with a cursor of its own; expect is how many entries the reader expects
// to take (0: unknown), which any one cursor may have to give.
func (p searchPlan) merge(tx storage.Tx, totalDivisions, division int64, expect int) *merge {
	var cursors []*cursor
	for _, st := range p.streams {
		fields := st.ix.fields
		if st.from != 0 {
			fields = fields[1:] // the asker, fixed
		}
		desc := make([]bool, 0, len(fields)+1)
		for _, f := range append(slices.Clone(fields), SortDateCreated) {
			for _, s := range p.order {
				if s.Field == f {
					desc = append(desc, s.Type == "DESC")
				}
			}
		}
		fixed := entry{item: st.part.item, from: st.from}
		list, byAsker := askersFor(st.ix)
		for _, class := range st.classes {
			base := st.ix.classPrefix(st.part, class)
			var askers []byte
			switch {
			case st.from != 0:
				base = base.Int(st.from)
			case byAsker:
				askers = list.classPrefix(st.part, class)
			}
			c := newCursor(tx, base, fields, desc, fixed, askers)
			c.expect = expect
			cursors = append(cursors, c)
		}
	}
	return newMerge(cursors, p.order, totalDivisions, division)
}
