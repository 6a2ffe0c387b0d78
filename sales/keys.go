package sales

import (
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/kv"
)

// Key layout of sales. Every key starts with "sal".
//
//	sal/order/<order_id>    -> orderRecord (JSON): the order, its payments, where its units came from
//	sal/pack/<pack_id>      -> order id (keycodec Int): every order is alone in its pack
//	sal/ship/<shipment_id>  -> shipmentRecord (JSON): the shipment and its history
//
// Order search (search.go): for each party of an order (role "s" for its
// seller, "b" for its buyer), one entry in the list of all the party's
// orders and one in the list of the party's orders of the order's status,
// both ordered by date_created then id, and a count of each list kept
// beside it (kv.Counter: no hot key, a seller's concurrent sales add to
// different shards):
//
//	sal/by/<role>/<user_id>/<status or "">/<date_created unix ms>/<order_id> -> empty
//	sal/cnt/<role>/<user_id>/<status or "">[<shard>]                         -> number of entries
//
// Ids are drawn from the store's sequences (orders, packs, shipments,
// payments), numbered from the first* constants: integers in the public
// API's style (16 digits for orders and packs, 11 for shipments and
// payments).
const (
	firstOrderID    = 2000000000000001
	firstPackID     = 2100000000000001
	firstShipmentID = 40000000001
	firstPaymentID  = 10000000001

	orderSequence    = "orders"
	packSequence     = "packs"
	shipmentSequence = "shipments"
	paymentSequence  = "payments"
)

// Roles of a party in the search index.
const (
	roleSeller = "s"
	roleBuyer  = "b"
)

// counterShards spreads a party's counts: a seller's sales all add to them.
const counterShards = 16

func orderKey(id int64) []byte    { return keycodec.New("sal/order").Int(id) }
func packKey(id int64) []byte     { return keycodec.New("sal/pack").Int(id) }
func shipmentKey(id int64) []byte { return keycodec.New("sal/ship").Int(id) }

// listPrefix is the list of a party's orders of status ("" for all).
func listPrefix(role string, userID int64, status string) []byte {
	return keycodec.New("sal/by").Str(role).Int(userID).Str(status)
}

func listKey(role string, userID int64, status string, createdMs, orderID int64) []byte {
	return keycodec.Key(listPrefix(role, userID, status)).Int(createdMs).Int(orderID)
}

func listCounter(role string, userID int64, status string) kv.Counter {
	return kv.NewCounter(keycodec.New("sal/cnt").Str(role).Int(userID).Str(status), counterShards)
}
