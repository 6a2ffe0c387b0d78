package claims

import (
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/kv"
)

// Key layout of claims and returns. Every key starts with "clm".
//
//	clm/c/<claim_id>                       -> record (JSON): the claim, its return, its history of stages, its expected resolutions and evidences
//	clm/act/<claim_id>/<n>                 -> actionRecord (JSON): the n-th entry of the claim's actions history (n from 1)
//	clm/msg/<claim_id>/<n>                 -> messageRecord (JSON): the n-th message of the claim (n from 1)
//	clm/file/<claim_id>/<kind>/<name>      -> fileRecord (JSON): an uploaded file's metadata; kind "m" (message attachment), "e" (evidence), "r" (return review)
//	clm/blob/<claim_id>/<kind>/<name>/<i>  -> the i-th piece (from 0) of the file's bytes, at most blobPiece bytes each
//	clm/ret/<return_id>                    -> claim id (keycodec Int): the claim a return belongs to (the return is kept in the claim's record)
//	clm/order/<order_id>/<claim_id>        -> empty: the claims of an order (search by order, pack, resource; the conversation's claim state)
//	clm/pay/<payment_id>/<claim_id>        -> empty: the claims of an order's payments, written when the claim opens (search by payment_id)
//	clm/due/<due unix ms>/<claim_id>       -> empty: the claim's next timed change (a missed mandatory action), for Expire
//
// The claims of a player (search.go): for each player of a claim (its
// complainant and its respondent), one entry in each of four lists: all
// the player's claims, those of the claim's status, those where the player
// has the claim's role, and those of that role and status; each list is
// ordered by date_created then id, and its count is kept beside it over
// counterShards shards picked by the claim id (kv.Counter.AddAt): a
// seller's claims opened at once by different buyers change different
// shards.
//
//	clm/by/<user_id>/<role or "">/<status or "">/<date_created unix ms>/<claim_id> -> empty
//	clm/cnt/<user_id>/<role or "">/<status or "">[<shard>]                          -> number of entries
//
// Ids are drawn from the store's sequences, numbered from the first*
// constants: claims have ten digits starting with 5, returns eight, the
// return shipments eleven.
const (
	firstClaimID          = 5000000001
	firstReturnID         = 57000001
	firstReturnShipmentID = 46000000001

	claimSequence          = "claims"
	returnSequence         = "returns"
	returnShipmentSequence = "return_shipments"
)

// counterShards spreads a player's counts: a seller's claims all add to
// them.
const counterShards = 16

// blobPiece bounds the value of one key of a file's bytes, so that no
// value is larger than a backend takes comfortably in one write.
const blobPiece = 512 << 10

// File kinds in the key layout.
const (
	kindMessage  = "m"
	kindEvidence = "e"
	kindReturn   = "r"
)

func claimKey(id int64) []byte  { return keycodec.New("clm/c").Int(id) }
func returnKey(id int64) []byte { return keycodec.New("clm/ret").Int(id) }

func actionPrefix(claimID int64) []byte { return keycodec.New("clm/act").Int(claimID) }
func actionKey(claimID, n int64) []byte {
	return keycodec.Key(actionPrefix(claimID)).Int(n)
}

func messagePrefix(claimID int64) []byte { return keycodec.New("clm/msg").Int(claimID) }
func messageKey(claimID, n int64) []byte {
	return keycodec.Key(messagePrefix(claimID)).Int(n)
}

func fileKey(claimID int64, kind, name string) []byte {
	return keycodec.New("clm/file").Int(claimID).Str(kind).Str(name)
}

func blobKey(claimID int64, kind, name string, i int64) []byte {
	return keycodec.New("clm/blob").Int(claimID).Str(kind).Str(name).Int(i)
}

func orderPrefix(orderID int64) []byte { return keycodec.New("clm/order").Int(orderID) }
func orderIndexKey(orderID, claimID int64) []byte {
	return keycodec.Key(orderPrefix(orderID)).Int(claimID)
}

func paymentPrefix(paymentID int64) []byte { return keycodec.New("clm/pay").Int(paymentID) }
func paymentIndexKey(paymentID, claimID int64) []byte {
	return keycodec.Key(paymentPrefix(paymentID)).Int(claimID)
}

func duePrefix() []byte { return keycodec.New("clm/due") }
func dueKey(ms, claimID int64) []byte {
	return keycodec.Key(duePrefix()).Int(ms).Int(claimID)
}

// listPrefix is the list of a player's claims of role and status ("" for
// any).
func listPrefix(userID int64, role, status string) []byte {
	return keycodec.New("clm/by").Int(userID).Str(role).Str(status)
}

func listKey(userID int64, role, status string, createdMs, claimID int64) []byte {
	return keycodec.Key(listPrefix(userID, role, status)).Int(createdMs).Int(claimID)
}

func listCounter(userID int64, role, status string) kv.Counter {
	return kv.NewCounter(keycodec.New("clm/cnt").Int(userID).Str(role).Str(status), counterShards)
}
