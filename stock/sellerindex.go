package stock

import (
	"hash/fnv"
	"slices"
	"strconv"
	"time"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
)

// Orders of the seller's item search (SellerItemsQuery.Sort), named as
// the public API names them. A _desc order is the exact reverse of its
// _asc order, ties included: equal values are in publication order
// ascending, and newest first descending.
const (
	SellerSortStartTimeAsc          = "start_time_asc"
	SellerSortStartTimeDesc         = "start_time_desc"
	SellerSortAvailableQuantityAsc  = "available_quantity_asc"
	SellerSortAvailableQuantityDesc = "available_quantity_desc"
	SellerSortSoldQuantityAsc       = "sold_quantity_asc"
	SellerSortSoldQuantityDesc      = "sold_quantity_desc"
	SellerSortPriceAsc              = "price_asc"
	SellerSortPriceDesc             = "price_desc"
	SellerSortLastUpdatedDesc       = "last_updated_desc"
	SellerSortLastUpdatedAsc        = "last_updated_asc"
)

// DefaultSellerSort is the order of a seller's item search that asks for
// none. The public API's default, stop_time_asc, orders by the end of the
// listing; items here have no end, and their start (date_created) is the
// order of publication whenever the clock moved forward between them.
const DefaultSellerSort = SellerSortStartTimeAsc

// SellerSort is one order of the seller's item search: its id and the name
// the answer shows beside it.
type SellerSort struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// SellerSorts are the orders of the seller's item search, in the public
// API's order of available_orders (those of its list that items here have
// the data for; the names are the public API's, "lastUpdated" included).
var SellerSorts = []SellerSort{
	{SellerSortStartTimeAsc, "Order by start time ascending"},
	{SellerSortStartTimeDesc, "Order by start time descending"},
	{SellerSortAvailableQuantityAsc, "Order by available quantity ascending"},
	{SellerSortAvailableQuantityDesc, "Order by available quantity descending"},
	{SellerSortSoldQuantityAsc, "Order by sold quantity ascending"},
	{SellerSortSoldQuantityDesc, "Order by sold quantity descending"},
	{SellerSortPriceAsc, "Order by price ascending"},
	{SellerSortPriceDesc, "Order by price descending"},
	{SellerSortLastUpdatedDesc, "Order by lastUpdated descending"},
	{SellerSortLastUpdatedAsc, "Order by last updated ascending"},
}

// sellerSortTags are the sort fields of the seller's lists (keys.go), in
// the order of the entries an item has in each list.
const (
	sellerTagStart     = "t"
	sellerTagPrice     = "p"
	sellerTagUpdated   = "u"
	sellerTagAvailable = "q"
	sellerTagSold      = "s"
)

var sellerTags = [...]string{sellerTagStart, sellerTagPrice, sellerTagUpdated, sellerTagAvailable, sellerTagSold}

// sellerSortWalk is the list field an order reads and whether it reads it
// backwards.
func sellerSortWalk(sort string) (tag string, reverse bool, ok bool) {
	switch sort {
	case SellerSortStartTimeAsc, SellerSortStartTimeDesc:
		tag = sellerTagStart
	case SellerSortPriceAsc, SellerSortPriceDesc:
		tag = sellerTagPrice
	case SellerSortLastUpdatedAsc, SellerSortLastUpdatedDesc:
		tag = sellerTagUpdated
	case SellerSortAvailableQuantityAsc, SellerSortAvailableQuantityDesc:
		tag = sellerTagAvailable
	case SellerSortSoldQuantityAsc, SellerSortSoldQuantityDesc:
		tag = sellerTagSold
	default:
		return "", false, false
	}
	return tag, sort[len(sort)-len("_desc"):] == "_desc", true
}

// sellerSortValues are the item's values of sellerTags: its start and last
// update in milliseconds, its price in hundredths (as site search sorts
// it), its available and sold quantities.
func sellerSortValues(it Item) [len(sellerTags)]int64 {
	return [...]int64{stampMillis(it.DateCreated), priceHundredths(string(it.Price)), stampMillis(it.LastUpdated),
		it.AvailableQuantity, it.SoldQuantity}
}

// stampMillis reads a stored date; one that does not parse (never written
// so) sorts first.
func stampMillis(s string) int64 {
	t, err := time.Parse(TimeLayout, s)
	if err != nil {
		return 0
	}
	return t.UnixMilli()
}

// sellerLists are the lists an item is in: every (status, listing type)
// pair of its own status or "" and its own listing type or "".
func sellerLists(it Item) [4][2]string {
	return [4][2]string{{"", ""}, {it.Status, ""}, {"", it.ListingTypeID}, {it.Status, it.ListingTypeID}}
}

// sellerEntries are the item's keys in its seller's sorted lists.
func sellerEntries(it Item) []string {
	vals := sellerSortValues(it)
	idLen := int64(len(it.ID))
	out := make([]string, 0, 4*len(sellerTags))
	for _, l := range sellerLists(it) {
		for i, tag := range sellerTags {
			k := keycodec.Key(sellerSortPrefix(it.SellerID, l[0], l[1], tag)).Int(vals[i]).Int(idLen).Str(it.ID)
			out = append(out, string(k))
		}
	}
	return out
}

// indexSeller moves the item's entries of its seller's lists (keys.go: the
// list of all the seller's items in id order, and the sorted lists of each
// status and listing type) and their counts from before (zero for a new
// item) to after, the counts' changes noted in counts. A seller's item
// never changes seller nor listing type, and is never deleted.
func indexSeller(tx storage.Tx, before, after Item, counts *kv.Changes) error {
	spread := itemSpread(after)
	var old []string
	if before.ID == "" {
		if err := tx.Set(sellerItemKey(after.SellerID, after.ID), nil); err != nil {
			return err
		}
	} else {
		old = sellerEntries(before)
	}
	now := sellerEntries(after)
	for _, k := range old {
		if !slices.Contains(now, k) {
			if err := tx.Delete([]byte(k)); err != nil {
				return err
			}
		}
	}
	for _, k := range now {
		if !slices.Contains(old, k) {
			if err := tx.Set([]byte(k), nil); err != nil {
				return err
			}
		}
	}
	var was [4][2]string
	if before.ID != "" {
		was = sellerLists(before)
	}
	is := sellerLists(after)
	for i := range is {
		if before.ID != "" && was[i] == is[i] {
			continue
		}
		if before.ID != "" {
			counts.AddAt(sellerListCounter(before.SellerID, was[i][0], was[i][1]), -1, spread)
		}
		counts.AddAt(sellerListCounter(after.SellerID, is[i][0], is[i][1]), 1, spread)
	}
	return nil
}

// itemSpread picks the item's shard of its seller's counts: its number,
// drawn from the items' sequence, so that consecutive publications change
// different shards and every change of one item the same one.
func itemSpread(it Item) uint64 {
	if len(it.ID) > len(it.SiteID) {
		if n, err := strconv.ParseUint(it.ID[len(it.SiteID):], 10, 64); err == nil {
			return n
		}
	}
	h := fnv.New64a()
	h.Write([]byte(it.ID))
	return h.Sum64()
}

// sellerTotal reads the number of the seller's items of status and listing
// type ("" for any) from the list's count: sellerCounterShards point reads.
func sellerTotal(tx storage.Tx, sellerID int64, status, listingType string) (int, error) {
	if err := storage.Prefetch(tx, sellerTotalKeys(sellerID, status, listingType)...); err != nil {
		return 0, err
	}
	n, err := sellerListCounter(sellerID, status, listingType).Read(tx)
	return int(n), err
}

// sellerTotalKeys are the keys sellerTotal reads, for a caller that asks
// for them with its first read.
func sellerTotalKeys(sellerID int64, status, listingType string) [][]byte {
	c := sellerListCounter(sellerID, status, listingType)
	shards := make([][]byte, sellerCounterShards)
	for i := range shards {
		shards[i] = c.ShardKey(uint64(i))
	}
	return shards
}

// sellerWindow reads the ids of the window offset, limit of a seller's
// list (a prefix whose keys end in the id, read by read), walked forwards
// or backwards: at most offset+limit keys, whatever the list's length.
func sellerWindow(tx storage.Tx, prefix []byte, reverse bool, offset, limit int, read func(*keycodec.Reader) string) ([]string, error) {
	ids := []string{}
	if limit == 0 {
		return ids, nil
	}
	it := openSellerWindow(tx, prefix, reverse, offset, limit)
	defer it.Close()
	return readSellerWindow(it, prefix, offset, limit, read)
}

// openSellerWindow opens the iterator sellerWindow reads, sized for the
// window: opened before a transaction's first read, its first page goes
// with that read.
func openSellerWindow(tx storage.Tx, prefix []byte, reverse bool, offset, limit int) storage.Iterator {
	r := storage.Prefix(prefix)
	r.Reverse = reverse
	r.Expect = offset + limit
	return tx.Iterate(r)
}

// readSellerWindow reads the window's ids from it, opened by
// openSellerWindow over prefix.
func readSellerWindow(it storage.Iterator, prefix []byte, offset, limit int, read func(*keycodec.Reader) string) ([]string, error) {
	ids := []string{}
	for seen := 0; len(ids) < limit && it.Valid(); it.Next() {
		if seen >= offset {
			kr := keycodec.Read(it.Key()[len(prefix):])
			id := read(kr)
			if err := kr.Err(); err != nil {
				return nil, errs.Internalf(err, "seller list key %x", it.Key())
			}
			ids = append(ids, id)
		}
		seen++
	}
	return ids, nil
}

// readListedID reads the id of a key of the list of all a seller's items.
func readListedID(r *keycodec.Reader) string { return r.Str() }

// readSortedID reads the id of a key of a sorted list: after its value and
// the id's length.
func readSortedID(r *keycodec.Reader) string {
	r.Int()
	r.Int()
	return r.Str()
}

// sellerSortedPage reads a page of the seller's items of status and
// listing type ("" for any) in order sort (one of SellerSorts): its total
// from the list's count and its ids from the sorted list up to the page's
// end.
func sellerSortedPage(tx storage.Tx, sellerID int64, status, listingType, sort string, offset, limit int) ([]string, int, error) {
	total, err := sellerTotal(tx, sellerID, status, listingType)
	if err != nil {
		return nil, 0, err
	}
	tag, reverse, ok := sellerSortWalk(sort)
	if !ok {
		return nil, 0, errs.Internalf(nil, "seller sort %q", sort)
	}
	if offset >= total {
		return []string{}, total, nil
	}
	ids, err := sellerWindow(tx, sellerSortPrefix(sellerID, status, listingType, tag), reverse, offset, limit, readSortedID)
	return ids, total, err
}
