package stock

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/schema"
)

// Migrations of the stock data (see storage/schema). Their code is frozen:
// it keeps its own copies of the older decoders, of the encoders of what it
// writes, of the title words and of the key names, so that a later change of
// the package's records or index does not change what an old migration does.

// RecordsMigration rewrites the items still in record format 1 (before the
// catalog fields) in format 2, with no catalog product. User product records
// have had one format only.
func RecordsMigration() schema.Migration {
	return schema.Migration{
		Name: "stock: items from record format 1 to format 2",
		Chunk: schema.Phases(schema.Phase{
			Range: storage.Prefix(keycodec.New("stk/item")),
			Each: func(tx storage.Tx, key, value []byte) error {
				if len(value) > 0 && value[0] >= 2 {
					return nil
				}
				it, err := decodeItemV1or2(value)
				if err != nil {
					return err
				}
				return tx.Set(key, encodeItemV2(it))
			},
		}),
	}
}

// SearchIndexMigration builds the ordered site-search index (stk/ord) and
// its list counts (stk/cnt) on a store written before it, one without the
// marker stk/ordready: whatever ordered entries and counts it holds are
// cleared first, then every active item is indexed. It then deletes the
// id-ordered lists (stk/word, stk/active) and the marker, which the package
// no longer reads.
func SearchIndexMigration() schema.Migration {
	marker := keycodec.New("stk/ordready")
	lacksIndex := func(tx storage.Tx) (bool, error) {
		_, err := tx.Get(marker)
		if errors.Is(err, storage.ErrNotFound) {
			return true, nil
		}
		return false, err
	}
	return schema.Migration{
		Name: "stock: ordered site-search index built where missing; lists stk/word, stk/active and marker stk/ordready deleted",
		Chunk: schema.Phases(
			schema.Phase{Range: storage.Prefix(keycodec.New("stk/cnt")), When: lacksIndex, Each: schema.DeleteKey},
			schema.Phase{Range: storage.Prefix(keycodec.New("stk/ord")), When: lacksIndex, Each: schema.DeleteKey},
			schema.Phase{Range: storage.Prefix(keycodec.New("stk/item")), When: lacksIndex, Each: indexItemV2},
			schema.Phase{Range: storage.Prefix(keycodec.New("stk/word")), Each: schema.DeleteKey},
			schema.Phase{Range: storage.Prefix(keycodec.New("stk/active")), Each: schema.DeleteKey},
			schema.Phase{Range: schema.KeyRange(marker), Each: schema.DeleteKey},
		),
	}
}

// SearchFoldMigration rebuilds the ordered site-search index (stk/ord) and
// its list counts (stk/cnt) with Unicode folding (compatibility
// decomposition, marks removed, case folding): the index built before it
// split a title at a combining mark and kept letters such as Š unfolded, so
// a query folded the new way would miss those items.
func SearchFoldMigration() schema.Migration {
	return schema.Migration{
		Name: "stock: site-search index rebuilt with Unicode folding",
		Chunk: schema.Phases(
			schema.Phase{Range: storage.Prefix(keycodec.New("stk/cnt")), Each: schema.DeleteKey},
			schema.Phase{Range: storage.Prefix(keycodec.New("stk/ord")), Each: schema.DeleteKey},
			schema.Phase{Range: storage.Prefix(keycodec.New("stk/item")), Each: indexItemWith(titleWordsV3)},
		),
	}
}

// SellerIndexMigration builds the lists of each seller's items by status
// (stk/sst) and the counts of each seller's items, in all and by status
// (stk/scnt), from the items: whatever keys of either an interrupted
// earlier attempt left are cleared first. The lists of all a seller's items
// (stk/seller) were written since the first format and are kept.
func SellerIndexMigration() schema.Migration {
	return schema.Migration{
		Name: "stock: seller's items by status (stk/sst) and the sellers' item counts (stk/scnt)",
		Chunk: schema.Phases(
			schema.Phase{Range: storage.Prefix(keycodec.New("stk/scnt")), Each: schema.DeleteKey},
			schema.Phase{Range: storage.Prefix(keycodec.New("stk/sst")), Each: schema.DeleteKey},
			schema.Phase{Range: storage.Prefix(keycodec.New("stk/item")), Each: indexSellerV11},
		),
	}
}

// indexSellerV11 writes an item's entry in its seller's list of its status
// and counts it in the seller's counts of all items and of that status,
// into the counters' first shard, which readers of any number of shards
// add up.
func indexSellerV11(tx storage.Tx, _, value []byte) error {
	it, err := decodeItemV1or2(value)
	if err != nil {
		return err
	}
	if err := tx.Set(keycodec.New("stk/sst").Int(it.SellerID).Str(it.status()).Str(it.id()), nil); err != nil {
		return err
	}
	for _, st := range []string{"", it.status()} {
		if err := kv.NewCounter(keycodec.New("stk/scnt").Int(it.SellerID).Str(st), 1).Add(tx, 1); err != nil {
			return err
		}
	}
	return nil
}

// SellerSortMigration builds the sorted lists of each seller's items
// (stk/sso: by status and listing type, "" for any, one entry per sort
// field) and the counts by listing type (stk/slcnt) from the items and
// their user products, clearing first whatever keys of either an
// interrupted earlier attempt left, and deletes the id-ordered lists by
// status (stk/sst) that the sorted lists replace. The counts of any
// listing type (stk/scnt, migration 11) stay as they are.
func SellerSortMigration() schema.Migration {
	return schema.Migration{
		Name: "stock: seller's items sorted by status and listing type (stk/sso), counts by listing type (stk/slcnt); stk/sst deleted",
		Chunk: schema.Phases(
			schema.Phase{Range: storage.Prefix(keycodec.New("stk/slcnt")), Each: schema.DeleteKey},
			schema.Phase{Range: storage.Prefix(keycodec.New("stk/sso")), Each: schema.DeleteKey},
			schema.Phase{Range: storage.Prefix(keycodec.New("stk/item")), Each: indexSellerSortsV12},
			schema.Phase{Range: storage.Prefix(keycodec.New("stk/sst")), Each: schema.DeleteKey},
		),
	}
}

// timeLayoutV12 is how item dates are written.
const timeLayoutV12 = "2006-01-02T15:04:05.000Z07:00"

// indexSellerSortsV12 writes an item's entries in its seller's four sorted
// lists (any status or its own, any listing type or its own), one per
// field: "t" date_created and "u" last_updated in Unix milliseconds (0 when
// unreadable), "p" price in hundredths (truncated), "q" its user product's
// quantity, "s" its sold quantity; each value followed by the id's length
// and the id. It counts the item in the counts of its listing type, of
// any status and of its own, into the counters' first shard.
func indexSellerSortsV12(tx storage.Tx, _, value []byte) error {
	it, err := decodeItemV1or2(value)
	if err != nil {
		return err
	}
	upID := it.Strings[10]
	up, err := tx.Get(keycodec.New("stk/up").Str(upID))
	if err != nil {
		return fmt.Errorf("item %s user product %s: %w", it.id(), upID, err)
	}
	quantity, err := userProductQuantityV12(up)
	if err != nil {
		return fmt.Errorf("user product %s: %w", upID, err)
	}
	millis := func(s string) int64 {
		t, err := time.Parse(timeLayoutV12, s)
		if err != nil {
			return 0
		}
		return t.UnixMilli()
	}
	fields := []struct {
		tag   string
		value int64
	}{
		{"t", millis(it.Strings[13])}, {"p", priceHundredthsV12(it.price())}, {"u", millis(it.Strings[14])},
		{"q", quantity}, {"s", it.Sold},
	}
	status, listingType := it.status(), it.Strings[7]
	idLen := int64(len(it.id()))
	for _, l := range [][2]string{{"", ""}, {status, ""}, {"", listingType}, {status, listingType}} {
		for _, f := range fields {
			k := keycodec.New("stk/sso").Int(it.SellerID).Str(l[0]).Str(l[1]).Str(f.tag).Int(f.value).Int(idLen).Str(it.id())
			if err := tx.Set(k, nil); err != nil {
				return err
			}
		}
	}
	for _, st := range []string{"", status} {
		if err := kv.NewCounter(keycodec.New("stk/slcnt").Int(it.SellerID).Str(st).Str(listingType), 1).Add(tx, 1); err != nil {
			return err
		}
	}
	return nil
}

// priceHundredthsV12 reads a stored price (a plain decimal) in hundredths,
// truncating further decimals; one that does not parse is 0.
func priceHundredthsV12(s string) int64 {
	intPart, frac, _ := strings.Cut(s, ".")
	frac = (frac + "00")[:2]
	n, err := strconv.ParseInt(intPart+frac, 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// userProductQuantityV12 reads the quantity of a user product record
// (format 1: format byte, version varint, user id varint, flags byte (bit
// 0: multi-origin), plain quantity varint, id and site id strings,
// location count uvarint, per location store id and network node id
// strings and quantity varint): the plain quantity, or the sum of the
// locations' of a multi-origin one.
func userProductQuantityV12(b []byte) (int64, error) {
	bad := errors.New("corrupt user product record")
	if len(b) == 0 || b[0] != 1 {
		return 0, errors.New("user product record of an unknown format")
	}
	b = b[1:]
	varint := func() (int64, bool) {
		v, k := binary.Varint(b)
		if k <= 0 {
			return 0, false
		}
		b = b[k:]
		return v, true
	}
	skipStrings := func(count int) bool {
		for range count {
			n, k := binary.Uvarint(b)
			if k <= 0 || n > uint64(len(b)-k) {
				return false
			}
			b = b[k+int(n):]
		}
		return true
	}
	if _, ok := varint(); !ok { // version
		return 0, bad
	}
	if _, ok := varint(); !ok { // user id
		return 0, bad
	}
	if len(b) == 0 {
		return 0, bad
	}
	multiOrigin := b[0]&1 != 0
	b = b[1:]
	plain, ok := varint()
	if !ok || !skipStrings(2) { // id, site id
		return 0, bad
	}
	if !multiOrigin {
		return plain, nil
	}
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return 0, bad
	}
	b = b[k:]
	var sum int64
	for range n {
		if !skipStrings(2) { // store id, network node id
			return 0, bad
		}
		q, ok := varint()
		if !ok {
			return 0, bad
		}
		sum += q
	}
	return sum, nil
}

// titleWordsV3 returns the distinct words of a title, sorted, folded as
// SearchFoldMigration's index is: NFKD, nonspacing marks removed, Unicode
// case folding, and the stroked letters of baseLettersV3.
func titleWordsV3(s string) []string {
	s = cases.Fold().String(norm.NFKD.String(s))
	var out []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			out = append(out, b.String())
			b.Reset()
		}
	}
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Mn, r):
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if base, ok := baseLettersV3[r]; ok {
				r = base
			}
			b.WriteRune(unicode.ToLower(r))
		default:
			flush()
		}
	}
	flush()
	slices.Sort(out)
	return slices.Compact(out)
}

var baseLettersV3 = map[rune]rune{'ø': 'o', 'ł': 'l', 'đ': 'd', 'ħ': 'h', 'ŧ': 't', 'ı': 'i'}

// LegacyCounters are the keys that held the last item and user product
// numbers before they came from sequences.
func LegacyCounters() []schema.LegacyCounter {
	return []schema.LegacyCounter{
		{Key: keycodec.New("stk/seq/item"), Sequence: "items", First: 1400000001},
		{Key: keycodec.New("stk/seq/up"), Sequence: "user_products", First: 300000001},
	}
}

// itemV2 holds the fields of item record formats 1 and 2.
type itemV2 struct {
	SellerID int64
	// ID, SiteID, Title, CategoryID, Price, BasePrice, CurrencyID,
	// ListingTypeID, Condition, Status, UserProductID, Permalink,
	// Thumbnail, DateCreated, LastUpdated, in this order.
	Strings          [15]string
	Channels         []string
	CatalogListing   bool
	CatalogProductID *string
	// Sold is the sold quantity of a format 3 record, 0 before.
	Sold int64
}

func (it itemV2) id() string     { return it.Strings[0] }
func (it itemV2) siteID() string { return it.Strings[1] }
func (it itemV2) title() string  { return it.Strings[2] }
func (it itemV2) price() string  { return it.Strings[4] }
func (it itemV2) status() string { return it.Strings[9] }

// decodeItemV1or2 reads format 1 (format byte 1, seller id varint, the 15
// strings, the channel count and channels) and format 2 (the same with
// format byte 2, then a flags byte and the catalog product id). Of a
// format 3 record (format 2 followed by the sale fields) it reads the
// format 2 part and the sold quantity that follows it, the one sale field
// a migration reads (SellerSortMigration).
func decodeItemV1or2(b []byte) (itemV2, error) {
	if len(b) == 0 || (b[0] != 1 && b[0] != 2 && b[0] != 3) {
		return itemV2{}, errors.New("item record of an unknown format")
	}
	format := b[0]
	b = b[1:]
	bad := fmt.Errorf("corrupt item record format %d", format)
	var it itemV2
	v, k := binary.Varint(b)
	if k <= 0 {
		return itemV2{}, bad
	}
	it.SellerID, b = v, b[k:]
	str := func() (string, bool) {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return "", false
		}
		s := string(b[k : k+int(n)])
		b = b[k+int(n):]
		return s, true
	}
	var ok bool
	for i := range it.Strings {
		if it.Strings[i], ok = str(); !ok {
			return itemV2{}, bad
		}
	}
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return itemV2{}, bad
	}
	b = b[k:]
	it.Channels = make([]string, n)
	for i := range it.Channels {
		if it.Channels[i], ok = str(); !ok {
			return itemV2{}, bad
		}
	}
	if format >= 2 {
		if len(b) == 0 {
			return itemV2{}, bad
		}
		flags := b[0]
		b = b[1:]
		cp, ok := str()
		if !ok {
			return itemV2{}, bad
		}
		it.CatalogListing = flags&1 != 0
		if flags&2 != 0 {
			it.CatalogProductID = &cp
		}
	}
	if format == 3 {
		v, k := binary.Varint(b)
		if k <= 0 {
			return itemV2{}, bad
		}
		it.Sold = v
	}
	return it, nil
}

// encodeItemV2 writes item record format 2.
func encodeItemV2(it itemV2) []byte {
	str := func(b []byte, s string) []byte { return append(binary.AppendUvarint(b, uint64(len(s))), s...) }
	b := binary.AppendVarint([]byte{2}, it.SellerID)
	for _, s := range it.Strings {
		b = str(b, s)
	}
	b = binary.AppendUvarint(b, uint64(len(it.Channels)))
	for _, c := range it.Channels {
		b = str(b, c)
	}
	var flags byte
	var cp string
	if it.CatalogListing {
		flags |= 1
	}
	if it.CatalogProductID != nil {
		flags |= 2
		cp = *it.CatalogProductID
	}
	return str(append(b, flags), cp)
}

// indexItemV2 writes an active item's entries of the ordered index: in the
// list of the empty word (the site's active items) and of each distinct
// title word, one entry per sort tag ("r": distinct word count; "a": price
// in hundredths), each followed by the id's length and the id; and adds the
// item to each list's count.
func indexItemV2(tx storage.Tx, key, value []byte) error {
	return indexItemWith(titleWordsV2)(tx, key, value)
}

// indexItemWith is indexItemV2 with the title's words made by words.
func indexItemWith(titleWords func(string) []string) func(tx storage.Tx, _, value []byte) error {
	return func(tx storage.Tx, _, value []byte) error {
		return indexItem(tx, value, titleWords)
	}
}

func indexItem(tx storage.Tx, value []byte, titleWords func(string) []string) error {
	it, err := decodeItemV1or2(value)
	if err != nil {
		return err
	}
	if it.status() != "active" {
		return nil
	}
	words := titleWords(it.title())
	cents, err := priceCentsV2(it.price())
	if err != nil {
		return fmt.Errorf("item %s: %w", it.id(), err)
	}
	idLen := int64(len(it.id()))
	suffixes := [2]keycodec.Key{
		keycodec.Raw().Str("r").Int(int64(len(words))).Int(idLen).Str(it.id()),
		keycodec.Raw().Str("a").Int(cents).Int(idLen).Str(it.id()),
	}
	for _, w := range append([]string{""}, words...) {
		for _, sfx := range suffixes {
			if err := tx.Set(append(keycodec.New("stk/ord").Str(it.siteID()).Str(w), sfx...), nil); err != nil {
				return err
			}
		}
		// Into the counter's first shard, which readers of any number of
		// shards add up: a migration runs alone, and so the store it
		// leaves is the same whether or not it was stopped and resumed.
		if err := kv.NewCounter(keycodec.New("stk/cnt").Str(it.siteID()).Str(w), 1).Add(tx, 1); err != nil {
			return err
		}
	}
	return nil
}

// foldV2 maps the accented Latin letters of the sites' languages to their
// base letter.
var foldV2 = map[rune]rune{
	'á': 'a', 'à': 'a', 'â': 'a', 'ã': 'a', 'ä': 'a', 'å': 'a', 'ā': 'a',
	'é': 'e', 'è': 'e', 'ê': 'e', 'ë': 'e', 'ē': 'e',
	'í': 'i', 'ì': 'i', 'î': 'i', 'ï': 'i', 'ī': 'i',
	'ó': 'o', 'ò': 'o', 'ô': 'o', 'õ': 'o', 'ö': 'o', 'ø': 'o', 'ō': 'o',
	'ú': 'u', 'ù': 'u', 'û': 'u', 'ü': 'u', 'ū': 'u',
	'ý': 'y', 'ÿ': 'y', 'ñ': 'n', 'ç': 'c',
}

// titleWordsV2 returns the distinct words of a title, sorted: runs of
// letters and digits, lowercased, accents folded.
func titleWordsV2(s string) []string {
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
		if f, ok := foldV2[r]; ok {
			r = f
		}
		b.WriteRune(r)
	}
	flush()
	slices.Sort(out)
	return slices.Compact(out)
}

// priceCentsV2 reads a stored price (a plain decimal of at most two
// decimals) in hundredths.
func priceCentsV2(s string) (int64, error) {
	intPart, frac, _ := strings.Cut(s, ".")
	frac = strings.TrimRight(frac, "0")
	if len(frac) > 2 {
		return 0, fmt.Errorf("price %q has more than 2 decimals", s)
	}
	frac += strings.Repeat("0", 2-len(frac))
	cents, err := strconv.ParseInt(intPart+frac, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("price %q: %w", s, err)
	}
	return cents, nil
}
