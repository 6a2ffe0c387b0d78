package stock

import (
	"context"
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
// for an unbounded number of posting-list lookups per candidate.
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

// posting is the value of an index entry: what the sorts need, so that a
// query orders its matches without reading the items.
func posting(it Item) []byte {
	p, _ := ParsePrice(it.Price)
	return storage.NewKeyRaw().Int(p.Cents).Int(int64(len(words(it.Title))))
}

func readPosting(v []byte) (cents, nwords int64) {
	r := storage.ReadKey(v)
	return r.Int(), r.Int()
}

// reindex moves an item's search entries from before to after. Only active
// items are searchable.
func reindex(tx storage.Tx, before, after Item) error {
	if before.ID != "" && before.Status == StatusActive {
		for _, w := range words(before.Title) {
			if err := tx.Delete(wordKey(before.SiteID, w, before.ID)); err != nil {
				return err
			}
		}
		if err := tx.Delete(activeKey(before.SiteID, before.ID)); err != nil {
			return err
		}
	}
	if after.Status != StatusActive {
		return nil
	}
	v := posting(after)
	for _, w := range words(after.Title) {
		if err := tx.Set(wordKey(after.SiteID, w, after.ID), v); err != nil {
			return err
		}
	}
	return tx.Set(activeKey(after.SiteID, after.ID), v)
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

type candidate struct {
	id     string
	cents  int64
	nwords int64
}

// Search finds the active items of a site whose title holds every word of
// the query, ignoring case and accents; an empty query finds every active
// item of the site. It reads posting lists, never every item: the matches
// are ordered from the index entries alone and only the page's items are
// read. Relevance puts first the titles with the fewest words beside the
// query's, then the oldest publication; the price sorts break ties the same
// way by publication. Errors: NotFound (site), Invalid (sort, too many
// words).
func (s *Service) Search(ctx context.Context, q SearchQuery) (SearchResult, error) {
	if _, err := s.geo.Site(ctx, q.SiteID); err != nil {
		return SearchResult{}, err
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
	// The longest word is likely the rarest: walk its list, probe the others.
	slices.SortFunc(ws, func(a, b string) int { return len(b) - len(a) })
	res := SearchResult{Sort: q.Sort}
	err := s.store.View(ctx, func(tx storage.Tx) error {
		var cands []candidate
		prefix := activePrefix(q.SiteID)
		if len(ws) > 0 {
			prefix = wordPrefix(q.SiteID, ws[0])
		}
		it := tx.Iterate(storage.Prefix(prefix))
		defer it.Close()
	next:
		for ; it.Valid(); it.Next() {
			id := storage.ReadKey(it.Key()[len(prefix):]).Str()
			for _, w := range ws[min(1, len(ws)):] {
				if _, err := tx.Get(wordKey(q.SiteID, w, id)); err != nil {
					if err == storage.ErrNotFound {
						continue next
					}
					return err
				}
			}
			v, err := it.Value()
			if err != nil {
				return err
			}
			c := candidate{id: id}
			c.cents, c.nwords = readPosting(v)
			cands = append(cands, c)
		}
		sortCandidates(cands, q.Sort)
		res.Total = len(cands)
		res.Results = []Item{}
		if q.Offset >= len(cands) {
			return nil
		}
		end := min(len(cands), q.Offset+q.Limit)
		for _, c := range cands[q.Offset:end] {
			item, err := GetItem(tx, c.id)
			if err != nil {
				return err
			}
			res.Results = append(res.Results, item)
		}
		return nil
	})
	return res, err
}

// byPublication orders item ids of one site by publication: ids are the
// site prefix and a growing number, so a shorter id is an older one.
func byPublication(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

func sortCandidates(c []candidate, sort string) {
	slices.SortFunc(c, func(a, b candidate) int {
		switch sort {
		case SortPriceAsc:
			if a.cents != b.cents {
				return cmpInt(a.cents, b.cents)
			}
		case SortPriceDesc:
			if a.cents != b.cents {
				return cmpInt(b.cents, a.cents)
			}
		default:
			if a.nwords != b.nwords {
				return cmpInt(a.nwords, b.nwords)
			}
		}
		return byPublication(a.id, b.id)
	})
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
