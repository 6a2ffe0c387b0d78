package stock

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/paging"
	"github.com/marketplace/marketplace/storage"
)

// Sorts of site search.
const (
	SortRelevance = "relevance"
	SortPriceAsc  = "price_asc"
	SortPriceDesc = "price_desc"
)

// SortNames are the names the search envelope shows for each sort id, in
// the order of available_sorts.
var SortNames = []struct{ ID, Name string }{
	{SortRelevance, "More relevant"},
	{SortPriceAsc, "Lower price"},
	{SortPriceDesc, "Higher price"},
}

// MaxQueryWords bounds the words of a query, so that one request cannot ask
// for an unbounded number of posting lists to join.
const MaxQueryWords = 20

// words returns the distinct tokens of s, sorted.
func words(s string) []string {
	w := tokens(s)
	slices.Sort(w)
	return slices.Compact(w)
}

// Sort tags of the ordered index (keys.go).
const (
	tagRelevance = "r"
	tagPrice     = "a"
)

func sortTag(sort string) string {
	if sort == SortPriceAsc || sort == SortPriceDesc {
		return tagPrice
	}
	return tagRelevance
}

// ordSuffixes are what follows a list's prefix in the item's two ordered
// entries (price descending walks the price list backwards, see
// walkPriceDesc). They are the same in every list of the item, so that an entry
// found in one list names the entry to look up in another. Publication
// order (the tie-break) is id length, then id.
func ordSuffixes(it Item) [2]keycodec.Key {
	nw := int64(len(words(it.Title)))
	idLen := int64(len(it.ID))
	return [2]keycodec.Key{
		keycodec.Raw().Str(tagRelevance).Int(nw).Int(idLen).Str(it.ID),
		keycodec.Raw().Str(tagPrice).Int(priceHundredths(string(it.Price))).Int(idLen).Str(it.ID),
	}
}

// ordLists are the lists an item is in: its title's words, and the site's
// active items (the empty word). An inactive item is in none.
func ordLists(it Item) []string {
	if it.ID == "" || it.Status != StatusActive {
		return nil
	}
	return append([]string{""}, words(it.Title)...)
}

// reindex moves an item's entries of the ordered index and its list counts
// from before to after (the counts' changes noted in counts). Only active
// items are searchable.
func reindex(tx storage.Tx, before, after Item, counts *kv.Changes) error {
	bl, al := ordLists(before), ordLists(after)
	bs, as := ordSuffixes(before), ordSuffixes(after)
	if slices.Equal(bl, al) && before.SiteID == after.SiteID && slices.EqualFunc(bs[:], as[:], func(a, b keycodec.Key) bool { return bytes.Equal(a, b) }) {
		return nil
	}
	delta := map[string]int64{}
	for _, w := range bl {
		delta[w]--
		for _, sfx := range bs {
			if err := tx.Delete(append(ordPrefix(before.SiteID, w), sfx...)); err != nil {
				return err
			}
		}
	}
	for _, w := range al {
		delta[w]++
		for _, sfx := range as {
			if err := tx.Set(append(ordPrefix(after.SiteID, w), sfx...), nil); err != nil {
				return err
			}
		}
	}
	for w, d := range delta {
		if d == 0 && before.SiteID == after.SiteID {
			continue
		}
		addCount(counts, before.SiteID, after.SiteID, w, slices.Contains(bl, w), slices.Contains(al, w))
	}
	return nil
}

// addCount takes the item out of list w of site from (when it was in it)
// and puts it in list w of site to (when it is in it now).
func addCount(counts *kv.Changes, from, to, w string, was, is bool) {
	if was {
		counts.Add(listCounter(from, w), -1)
	}
	if is {
		counts.Add(listCounter(to, w), 1)
	}
}

// SearchQuery is a site search.
type SearchQuery struct {
	SiteID string
	Q      string
	Sort   string
	Offset int
	Limit  int
}

// SearchResult is one page of a site search and the number of matches.
type SearchResult struct {
	// Sort is the sort applied (relevance when none was asked for).
	Sort    string
	Total   int
	Results []Item
}

// Search finds the active items of a site whose title holds every word of
// the query, ignoring case and accents; an empty query finds every active
// item of the site. It joins posting lists and never reads every item: the
// matches are ordered from the index keys alone and only the page's items
// are read. Relevance puts first the titles with the fewest words beside the
// query's, then the oldest publication; the price sorts break ties the same
// way by publication. Errors: NotFound (site), Invalid (sort, too many
// words, negative offset or limit).
func (s *Service) Search(ctx context.Context, q SearchQuery) (SearchResult, error) {
	if err := paging.Check(q.Offset, q.Limit); err != nil {
		return SearchResult{}, err
	}
	if q.Sort == "" {
		q.Sort = SortRelevance
	}
	ws := words(q.Q)
	badSort := !slices.ContainsFunc(SortNames, func(n struct{ ID, Name string }) bool { return n.ID == q.Sort })
	if badSort || len(ws) > MaxQueryWords {
		// An unknown site is the first error, as for a valid query, whose
		// View reads the site with the rest.
		if _, err := s.geo.Site(ctx, q.SiteID); err != nil {
			return SearchResult{}, err
		}
		if badSort {
			return SearchResult{}, errs.Invalidf("Invalid sort: %s. Valid values are: [relevance, price_asc, price_desc]", q.Sort)
		}
		return SearchResult{}, errs.Invalidf("Invalid q: at most %d words are allowed", MaxQueryWords)
	}
	res := SearchResult{Sort: q.Sort}
	err := s.store.View(ctx, func(tx storage.Tx) error {
		return searchOrdered(tx, q, ws, &res)
	})
	return res, err
}

// searchLists are the lists a query walks: one per word, or the list of
// every item for no word.
func searchLists(ws []string) []string {
	if len(ws) == 0 {
		return []string{""}
	}
	return ws
}

// searchOrdered answers a query from the ordered index. The total of a
// one-word (or empty) query is the list's count and its page a prefix of
// the list in the sort's order. A many-word query walks its rarest word's
// list in the sort's order, looking each entry up in the other words'
// lists: the matches come in order, so the page is the matches from offset
// on, and the walk goes on only to count them.
//
// At network distance, the site, the lists' counts and, for a query of
// one list, the first page of the list go to the store together: the
// page's iterator is opened before the first read, and the site is read
// in the same View.
func searchOrdered(tx storage.Tx, q SearchQuery, ws []string, res *SearchResult) error {
	lists := searchLists(ws)
	tag := sortTag(q.Sort)
	counters := make([]kv.Counter, len(lists))
	for i, w := range lists {
		counters[i] = listCounter(q.SiteID, w)
	}
	if err := storage.Prefetch(tx, geo.SiteKeys(q.SiteID)...); err != nil {
		return err
	}
	if err := kv.PrefetchCounters(tx, counters...); err != nil {
		return err
	}
	var opened storage.Iterator
	if len(lists) == 1 && q.Limit > 0 {
		opened = openWalk(tx, keycodec.Key(ordPrefix(q.SiteID, lists[0])).Str(tag), q)
		defer opened.Close()
	}
	if _, err := geo.GetSite(tx, q.SiteID); err != nil {
		return err
	}
	rare, rareN := 0, int64(-1)
	for i := range lists {
		n, err := counters[i].Read(tx)
		if err != nil {
			return err
		}
		if rareN < 0 || n < rareN {
			rare, rareN = i, n
		}
	}
	res.Results = []Item{}
	if rareN == 0 {
		return nil
	}
	drive := keycodec.Key(ordPrefix(q.SiteID, lists[rare])).Str(tag)
	var others [][]byte
	for i, w := range lists {
		if i != rare {
			others = append(others, keycodec.Key(ordPrefix(q.SiteID, w)).Str(tag))
		}
	}
	if len(others) == 0 && (q.Limit == 0 || q.Offset >= int(rareN)) {
		res.Total = int(rareN)
		return nil
	}
	var page []string
	total := 0
	probe := make([]byte, 0, 96)
	visit := func(rest []byte) (bool, error) {
		if len(others) == 0 && len(page) == q.Limit {
			return false, nil
		}
		for _, o := range others {
			probe = append(append(probe[:0], o...), rest...)
			if _, err := tx.Get(probe); errors.Is(err, storage.ErrNotFound) {
				return true, nil
			} else if err != nil {
				return false, err
			}
		}
		total++
		if total > q.Offset && len(page) < q.Limit {
			r := keycodec.Read(rest)
			r.Uint()
			r.Uint()
			id := r.Str()
			if err := r.Err(); err != nil {
				return false, fmt.Errorf("stock: search entry %q: %w", rest, err)
			}
			page = append(page, id)
		}
		return true, nil
	}
	walk := walkAsc
	if q.Sort == SortPriceDesc {
		walk = walkPriceDesc
	}
	if _, err := walk(tx, opened, drive, len(drive), visit); err != nil {
		return err
	}
	res.Total = total
	if len(others) == 0 {
		res.Total = int(rareN)
	}
	if err := prefetchItems(tx, page); err != nil {
		return err
	}
	for _, id := range page {
		item, err := GetItem(tx, id)
		if err != nil {
			return err
		}
		res.Results = append(res.Results, item)
	}
	return nil
}

// openWalk opens the iterator the walk of prefix in q's sort starts with,
// sized for q's page: the keys up to its end are what a one-list query
// reads.
func openWalk(tx storage.Tx, prefix []byte, q SearchQuery) storage.Iterator {
	r := storage.Prefix(prefix)
	r.Expect = q.Offset + q.Limit
	if q.Sort == SortPriceDesc {
		r.Reverse = true
		r.Expect = 1 // the highest price, whose entries walkAsc then reads
	}
	return tx.Iterate(r)
}

// walkAsc calls visit with what follows from of every key under prefix, in
// order, until visit returns false; it starts from opened, when not nil,
// an iterator over prefix that openWalk opened.
func walkAsc(tx storage.Tx, opened storage.Iterator, prefix []byte, from int, visit func(rest []byte) (bool, error)) (bool, error) {
	it := opened
	if it == nil {
		it = tx.Iterate(storage.Prefix(prefix))
		defer it.Close()
	}
	for ; it.Valid(); it.Next() {
		if more, err := visit(it.Key()[from:]); err != nil || !more {
			return false, err
		}
	}
	return true, nil
}

// walkPriceDesc walks a price list (price, then publication) by price
// descending, then publication ascending: the prices from the highest down,
// and the entries of each price forward. It costs one seek per price met,
// and spares the index a third list kept in that order.
func walkPriceDesc(tx storage.Tx, opened storage.Iterator, prefix []byte, from int, visit func(rest []byte) (bool, error)) (bool, error) {
	rev := opened
	if rev == nil {
		rev = tx.Iterate(storage.Range{Start: prefix, End: storage.PrefixEnd(prefix), Reverse: true})
		defer rev.Close()
	}
	group := make([]byte, 0, len(prefix)+8)
	for rev.Valid() {
		k := rev.Key()
		if len(k) < len(prefix)+8 {
			return false, fmt.Errorf("stock: search entry %q is short", k)
		}
		group = append(group[:0], k[:len(prefix)+8]...)
		if more, err := walkAsc(tx, nil, group, from, visit); err != nil || !more {
			return false, err
		}
		// Every key of the price extends group, so the last key <= group
		// is the last of the next lower price.
		rev.Seek(group)
	}
	return true, nil
}
