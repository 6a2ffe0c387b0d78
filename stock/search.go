package stock

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"marketplace/errs"
	"marketplace/storage"
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

// foldTable maps the accented Latin letters of the sites' languages
// (Spanish, Portuguese) to their base letter.
var foldTable = map[rune]rune{
	'á': 'a', 'à': 'a', 'â': 'a', 'ã': 'a', 'ä': 'a', 'å': 'a', 'ā': 'a',
	'é': 'e', 'è': 'e', 'ê': 'e', 'ë': 'e', 'ē': 'e',
	'í': 'i', 'ì': 'i', 'î': 'i', 'ï': 'i', 'ī': 'i',
	'ó': 'o', 'ò': 'o', 'ô': 'o', 'õ': 'o', 'ö': 'o', 'ø': 'o', 'ō': 'o',
	'ú': 'u', 'ù': 'u', 'û': 'u', 'ü': 'u', 'ū': 'u',
	'ý': 'y', 'ÿ': 'y', 'ñ': 'n', 'ç': 'c',
}

// tokens splits s into lowercase, accent-free words, in order: a word is a
// run of letters and digits.
func tokens(s string) []string {
	var out []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			out = append(out, b.String())
			b.Reset()
		}
	}
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		r = unicode.ToLower(r)
		if f, ok := foldTable[r]; ok {
			r = f
		}
		b.WriteRune(r)
	}
	flush()
	return out
}

// words returns the distinct tokens of s, sorted.
func words(s string) []string {
	w := tokens(s)
	slices.Sort(w)
	return slices.Compact(w)
}

// entrySuffix is what follows the item id in an index key: what the sorts
// need (price in hundredths, distinct title words), so that a query orders
// its matches from the keys alone, without reading values or items.
func entrySuffix(it Item) storage.Key {
	p, _ := ParsePrice(it.Price)
	return storage.NewKeyRaw().Int(p.Cents).Int(int64(len(words(it.Title))))
}

func entryKey(prefix []byte, it Item) []byte {
	k := storage.Key(slices.Clone(prefix)).Str(it.ID)
	return append(k, entrySuffix(it)...)
}

// reindex moves an item's search entries from before to after: the ordered
// index once the store has it, the id-ordered lists until then. Only active
// items are searchable.
func reindex(tx storage.Tx, before, after Item) error {
	ready, err := ordReady(tx)
	if err != nil {
		return err
	}
	if ready {
		// The id-ordered lists serve only stores without the ordered index:
		// a store with it never reads them, and has none (it started with
		// no active item), so they are not kept.
		return reindexOrdered(tx, before, after)
	}
	if before.ID != "" && before.Status == StatusActive {
		for _, w := range words(before.Title) {
			if err := tx.Delete(entryKey(wordPrefix(before.SiteID, w), before)); err != nil {
				return err
			}
		}
		if err := tx.Delete(entryKey(activePrefix(before.SiteID), before)); err != nil {
			return err
		}
	}
	if after.Status != StatusActive {
		return nil
	}
	for _, w := range words(after.Title) {
		if err := tx.Set(entryKey(wordPrefix(after.SiteID, w), after), nil); err != nil {
			return err
		}
	}
	return tx.Set(entryKey(activePrefix(after.SiteID), after), nil)
}

// ordReady reports whether the ordered index is complete. A store without
// the marker gets it as long as no item is indexed yet (a new store, or
// one whose items are all inactive), since the ordered index of no item is
// empty; a store whose active items were indexed before the ordered index
// existed keeps searching the id-ordered lists.
func ordReady(tx storage.Tx) (bool, error) {
	_, err := tx.Get(ordReadyKey())
	if err == nil {
		return true, nil
	}
	if !errors.Is(err, storage.ErrNotFound) {
		return false, err
	}
	it := tx.Iterate(storage.Prefix(storage.NewKey("stk/active")))
	indexed := it.Valid()
	it.Close()
	if indexed {
		return false, nil
	}
	return true, tx.Set(ordReadyKey(), nil)
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
func ordSuffixes(it Item) [2]storage.Key {
	p, _ := ParsePrice(it.Price)
	nw := int64(len(words(it.Title)))
	idLen := int64(len(it.ID))
	return [2]storage.Key{
		storage.NewKeyRaw().Str(tagRelevance).Int(nw).Int(idLen).Str(it.ID),
		storage.NewKeyRaw().Str(tagPrice).Int(p.Cents).Int(idLen).Str(it.ID),
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

// reindexOrdered moves an item's ordered entries and list counts from
// before to after.
func reindexOrdered(tx storage.Tx, before, after Item) error {
	bl, al := ordLists(before), ordLists(after)
	bs, as := ordSuffixes(before), ordSuffixes(after)
	if slices.Equal(bl, al) && before.SiteID == after.SiteID && slices.EqualFunc(bs[:], as[:], func(a, b storage.Key) bool { return bytes.Equal(a, b) }) {
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
		if err := addCount(tx, cmp.Or(after.ID, before.ID), before.SiteID, after.SiteID, w, slices.Contains(bl, w), slices.Contains(al, w)); err != nil {
			return err
		}
	}
	return nil
}

// addCount takes the item out of list w of site from (when it was in it)
// and puts it in list w of site to (when it is in it now).
func addCount(tx storage.Tx, itemID, from, to, w string, was, is bool) error {
	member := storage.NewKeyRaw().Str(itemID)
	if was {
		if err := listCounter(from, w).Add(tx, member, -1); err != nil {
			return err
		}
	}
	if is {
		return listCounter(to, w).Add(tx, member, 1)
	}
	return nil
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
	if _, err := s.geo.Site(ctx, q.SiteID); err != nil {
		return SearchResult{}, err
	}
	if q.Offset < 0 || q.Limit < 0 {
		return SearchResult{}, errs.Invalidf("Invalid paging: offset %d and limit %d must be non-negative", q.Offset, q.Limit)
	}
	if q.Sort == "" {
		q.Sort = SortRelevance
	}
	if !slices.ContainsFunc(SortNames, func(n struct{ ID, Name string }) bool { return n.ID == q.Sort }) {
		return SearchResult{}, errs.Invalidf("Invalid sort: %s. Valid values are: [relevance, price_asc, price_desc]", q.Sort)
	}
	ws := words(q.Q)
	if len(ws) > MaxQueryWords {
		return SearchResult{}, errs.Invalidf("Invalid q: at most %d words are allowed", MaxQueryWords)
	}
	prefixes := [][]byte{activePrefix(q.SiteID)}
	if len(ws) > 0 {
		prefixes = prefixes[:0]
		for _, w := range ws {
			prefixes = append(prefixes, wordPrefix(q.SiteID, w))
		}
	}
	res := SearchResult{Sort: q.Sort}
	err := s.store.View(ctx, func(tx storage.Tx) error {
		if _, err := tx.Get(ordReadyKey()); err == nil {
			return searchOrdered(tx, q, ws, &res)
		} else if !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		var m matches
		m.collect(tx, prefixes)
		res.Total = len(m.cands)
		res.Results = []Item{}
		if q.Offset >= len(m.cands) {
			return nil
		}
		page := m.top(q.Sort, q.Offset+q.Limit)
		for _, c := range page[q.Offset:] {
			item, err := GetItem(tx, string(m.id(c)))
			if err != nil {
				return err
			}
			res.Results = append(res.Results, item)
		}
		return nil
	})
	return res, err
}

// candidate is a match: its sort data and its id, kept as a span of one
// shared buffer so that a query over many matches does not allocate per
// match.
type candidate struct {
	cents, nwords int64
	off, n        int32
}

// matches collects the entries present in every posting list of a query.
type matches struct {
	ids   []byte
	cands []candidate
}

func (m *matches) id(c candidate) []byte { return m.ids[c.off : c.off+c.n] }

// entryID splits an index key after its prefix into the item id (without
// its terminator) and the sort data.
func entryID(key []byte, prefixLen int) (id, rest []byte) {
	k := key[prefixLen:]
	i := bytes.IndexByte(k, 0)
	if i < 0 {
		return k, nil
	}
	return k[:i], k[i+1:]
}

// cursor walks one posting list, holding the current key and its item id
// (read once per move: a backend may copy the key on every Key call).
type cursor struct {
	it   storage.Iterator
	plen int
	key  []byte
	id   []byte
	ok   bool
}

func (c *cursor) load() {
	c.ok = c.it.Valid()
	if c.ok {
		c.key = c.it.Key()
		c.id, _ = entryID(c.key, c.plen)
	}
}

// collect is a leapfrog join: each posting list is sorted by item id, so
// every cursor seeks to the largest id any of them stands on, and an id on
// which all agree is a match. The cost follows the shortest list, not the
// longest.
func (m *matches) collect(tx storage.Tx, prefixes [][]byte) {
	cs := make([]*cursor, len(prefixes))
	for i, p := range prefixes {
		it := tx.Iterate(storage.Prefix(p))
		defer it.Close()
		cs[i] = &cursor{it: it, plen: len(p)}
		cs[i].load()
	}
	seek := make([]byte, 0, 64)
	for {
		var target []byte
		for _, c := range cs {
			if !c.ok {
				return
			}
			if target == nil || bytes.Compare(c.id, target) > 0 {
				target = c.id
			}
		}
		agreed := true
		for i, c := range cs {
			if !bytes.Equal(c.id, target) {
				agreed = false
				seek = append(append(append(seek[:0], prefixes[i]...), target...), 0)
				c.it.Seek(seek)
				c.load()
			}
		}
		if !agreed {
			continue
		}
		_, rest := entryID(cs[0].key, cs[0].plen)
		r := storage.ReadKey(rest)
		m.cands = append(m.cands, candidate{cents: r.Int(), nwords: r.Int(), off: int32(len(m.ids)), n: int32(len(target))})
		m.ids = append(m.ids, target...)
		cs[0].it.Next()
		cs[0].load()
	}
}

// less orders candidates by sort, then by publication: ids are the site
// prefix and a growing number, so a shorter id is an older one.
func (m *matches) less(sort string, a, b candidate) bool {
	switch sort {
	case SortPriceAsc:
		if a.cents != b.cents {
			return a.cents < b.cents
		}
	case SortPriceDesc:
		if a.cents != b.cents {
			return a.cents > b.cents
		}
	default:
		if a.nwords != b.nwords {
			return a.nwords < b.nwords
		}
	}
	if a.n != b.n {
		return a.n < b.n
	}
	return bytes.Compare(m.id(a), m.id(b)) < 0
}

// top returns the first k candidates in order, selected with a bounded heap
// (O(n log k)) rather than by sorting every match.
func (m *matches) top(sort string, k int) []candidate {
	if k <= 0 {
		return nil
	}
	less := func(a, b candidate) bool { return m.less(sort, a, b) }
	cmp := func(a, b candidate) int {
		switch {
		case less(a, b):
			return -1
		case less(b, a):
			return 1
		}
		return 0
	}
	if k >= len(m.cands) {
		out := slices.Clone(m.cands)
		slices.SortFunc(out, cmp)
		return out
	}
	// h is a max-heap of the k best so far: its root is the worst of them.
	h := make([]candidate, 0, k)
	for _, c := range m.cands {
		if len(h) < k {
			h = append(h, c)
			for i := len(h) - 1; i > 0; {
				p := (i - 1) / 2
				if !less(h[p], h[i]) {
					break
				}
				h[p], h[i] = h[i], h[p]
				i = p
			}
			continue
		}
		if !less(c, h[0]) {
			continue
		}
		h[0] = c
		for i := 0; ; {
			l, worst := 2*i+1, i
			if l < len(h) && less(h[worst], h[l]) {
				worst = l
			}
			if r := l + 1; r < len(h) && less(h[worst], h[r]) {
				worst = r
			}
			if worst == i {
				break
			}
			h[i], h[worst] = h[worst], h[i]
			i = worst
		}
	}
	slices.SortFunc(h, cmp)
	return h
}

// searchOrdered answers a query from the ordered index. The total of a
// one-word (or empty) query is the list's count and its page a prefix of
// the list in the sort's order. A many-word query walks its rarest word's
// list in the sort's order, looking each entry up in the other words'
// lists: the matches come in order, so the page is the matches from offset
// on, and the walk goes on only to count them.
func searchOrdered(tx storage.Tx, q SearchQuery, ws []string, res *SearchResult) error {
	lists := ws
	if len(lists) == 0 {
		lists = []string{""}
	}
	tag := sortTag(q.Sort)
	rare, rareN := 0, int64(-1)
	for i, w := range lists {
		n, err := listCounter(q.SiteID, w).Read(tx)
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
	drive := storage.Key(ordPrefix(q.SiteID, lists[rare])).Str(tag)
	var others [][]byte
	for i, w := range lists {
		if i != rare {
			others = append(others, storage.Key(ordPrefix(q.SiteID, w)).Str(tag))
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
			r := storage.ReadKey(rest)
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
	if _, err := walk(tx, drive, len(drive), visit); err != nil {
		return err
	}
	res.Total = total
	if len(others) == 0 {
		res.Total = int(rareN)
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

// walkAsc calls visit with what follows from of every key under prefix, in
// order, until visit returns false.
func walkAsc(tx storage.Tx, prefix []byte, from int, visit func(rest []byte) (bool, error)) (bool, error) {
	it := tx.Iterate(storage.Prefix(prefix))
	defer it.Close()
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
func walkPriceDesc(tx storage.Tx, prefix []byte, from int, visit func(rest []byte) (bool, error)) (bool, error) {
	rev := tx.Iterate(storage.Range{Start: prefix, End: storage.PrefixEnd(prefix), Reverse: true})
	defer rev.Close()
	group := make([]byte, 0, len(prefix)+8)
	for rev.Valid() {
		k := rev.Key()
		if len(k) < len(prefix)+8 {
			return false, fmt.Errorf("stock: search entry %q is short", k)
		}
		group = append(group[:0], k[:len(prefix)+8]...)
		if more, err := walkAsc(tx, group, from, visit); err != nil || !more {
			return false, err
		}
		// Every key of the price extends group, so the last key <= group
		// is the last of the next lower price.
		rev.Seek(group)
	}
	return true, nil
}
