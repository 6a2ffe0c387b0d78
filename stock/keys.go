package stock

import (
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/kv"
)

// Key layout of stock. Every key starts with "stk".
//
//	stk/item/<item_id>                    -> Item (binary, codec.go)
//	stk/up/<user_product_id>              -> UserProduct (binary, codec.go): owner, version, quantities per store
//	stk/upitem/<user_product_id>/<item_id> -> empty; the items a user product groups
//	stk/seller/<seller_id>/<item_id>      -> empty; a seller's items
//
// A seller's items sorted (sellerindex.go), written in the transaction of
// every item change (publication, the seller's update, a stock write or a
// sale that moves quantities or pauses and reactivates the item, close, a
// relist's new item): one list per (status, listing type) pair, "" standing
// for any, so four lists per item (any/any, its status/any, any/its listing
// type, its status/its listing type), each with one entry per sort field.
// Beside each list, the number of its items (kv.Counter, 64 shards, each
// item always on the shard of its number: a seller's concurrent
// publications add to different keys). So a page of GET
// /users/{id}/items/search reads its total with point reads and its ids as
// the keys of one list up to the page's end, for every combination of
// status, listing type and order. SellerIndexMigration (migration 11)
// built the counts of any listing type and the id-ordered lists by status
// (stk/sst) that the sorted lists replaced; SellerSortMigration (migration
// 12, migrate.go) builds the sorted lists and the counts by listing type
// and deletes stk/sst.
//
//	stk/sso/<seller_id>/<status or "">/<listing type or "">/<field>/<value>/<id length>/<item_id> -> empty
//	    field "t": date_created, "u": last_updated (Unix milliseconds);
//	    "p": price in hundredths; "q": available_quantity; "s": sold_quantity
//	stk/scnt/<seller_id>/<status or "">[<shard>] -> number of the seller's items (of that status)
//	stk/slcnt/<seller_id>/<status or "">/<listing type>[<shard>] -> number of the seller's items of that listing type (and status)

// Item numbers are firstItemNumber - 1 + the next number of the store's
// itemSequence, user product numbers likewise from userProductSequence.
const (
	firstItemNumber        = 1400000001
	firstUserProductNumber = 300000001
	itemSequence           = "items"
	userProductSequence    = "user_products"
)

func itemKey(id string) []byte { return keycodec.New("stk/item").Str(id) }

func userProductKey(id string) []byte { return keycodec.New("stk/up").Str(id) }

func userProductItemsPrefix(upID string) []byte { return keycodec.New("stk/upitem").Str(upID) }

func userProductItemKey(upID, itemID string) []byte {
	return keycodec.Key(userProductItemsPrefix(upID)).Str(itemID)
}

func sellerItemsPrefix(sellerID int64) []byte { return keycodec.New("stk/seller").Int(sellerID) }

func sellerItemKey(sellerID int64, itemID string) []byte {
	return keycodec.Key(sellerItemsPrefix(sellerID)).Str(itemID)
}

func sellerSortPrefix(sellerID int64, status, listingType, field string) []byte {
	return keycodec.New("stk/sso").Int(sellerID).Str(status).Str(listingType).Str(field)
}

// sellerCounterShards spreads a seller's counts over the most shards a
// counter has, as the questions' seller tallies: every client of a seller
// may publish at once, and each publication adds to four counts.
const sellerCounterShards = kv.MaxCounterShards

// sellerListCounter counts the seller's items of status and listing type
// ("" for any). The counts of any listing type were written before those
// by listing type, under their own namespace.
func sellerListCounter(sellerID int64, status, listingType string) kv.Counter {
	if listingType == "" {
		return kv.NewCounter(keycodec.New("stk/scnt").Int(sellerID).Str(status), sellerCounterShards)
	}
	return kv.NewCounter(keycodec.New("stk/slcnt").Int(sellerID).Str(status).Str(listingType), sellerCounterShards)
}

// Search index (see search.go), written in the transaction of every item
// change: posting lists kept in the order of each sort, and the length of
// each list, so that a one-word query reads its total with one Get and its
// page as a bounded prefix, and a many-word query walks only its rarest
// word. The empty word stands for the site's active items (no title word is
// empty). Only active items have entries. A store written before this
// index had id-ordered lists (stk/word, stk/active) and a marker
// (stk/ordready); SearchIndexMigration (migrate.go) replaced them.
//
//	stk/ord/<site_id>/<word>/<sort>/<sort value>/<id length>/<item_id> -> empty
//	    sort "r": value = distinct title words; "a": price in hundredths
//	    (walked backwards price by price for price_desc)
//	stk/cnt/<site_id>/<word>[<shard>] -> number of entries of the list (kv.Counter, 64 shards)

func ordPrefix(siteID, word string) []byte { return keycodec.New("stk/ord").Str(siteID).Str(word) }

// listCounter is split over the most shards a counter has: every
// publication in a site changes the count of its active list.
func listCounter(siteID, word string) kv.Counter {
	return kv.NewCounter(keycodec.New("stk/cnt").Str(siteID).Str(word), kv.MaxCounterShards)
}

// ItemKeys returns the keys of the items of ids as GetItemWithoutStock
// reads them, for storage.Prefetch: a caller at network distance reads them
// with its other keys in one round trip.
func ItemKeys(ids ...string) [][]byte {
	keys := make([][]byte, 0, len(ids))
	for _, id := range ids {
		if id != "" {
			keys = append(keys, itemKey(id))
		}
	}
	return keys
}

// UserProductKeys returns the keys of the user products of ids, which
// GetItem reads beside the item's, for storage.Prefetch.
func UserProductKeys(ids ...string) [][]byte {
	keys := make([][]byte, 0, len(ids))
	for _, id := range ids {
		if id != "" {
			keys = append(keys, userProductKey(id))
		}
	}
	return keys
}
