package questions

import (
	"time"

	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/kv"
)

// Key layout of questions. Every key starts with "q/". Times are the
// question's creation instant in Unix nanoseconds (Int), so byte order is
// time order; the question id breaks ties.
//
//	q/q/<qid>                                      -> record (binary, see record.go)
//	q/sd/<seller>/<created>/<qid>                  -> empty; a seller's questions by date
//	q/ssd/<seller>/<status>/<created>/<qid>        -> empty; a seller's questions of one status by date
//	q/si/<seller>/<item_id>/<created>/<qid>        -> empty; a seller's questions by item, then date
//	q/sf/<seller>/<buyer>/<created>/<qid>          -> empty; a seller's questions by asker, then date
//	q/id/<item_id>/<created>/<qid>                 -> empty; an item's questions by date
//	q/d/<created>/<qid>                            -> seller id (uint64); every question by date
//	q/n/s/<seller>[<shard>]                        -> number of the seller's questions (kv.Counter, 64 shards)
//	q/n/ss/<seller>/<status>[<shard>]              -> number of the seller's questions in status (kv.Counter, 64 shards)
//	q/fa/<buyer>                                   -> number of the buyer's questions that are ANSWERED (kv.Counter, 1 shard)
//	q/blk/<seller>/<user>                          -> blacklist entry (JSON)
//
// The seller indexes (by date, by item then date, by asker then date, and by
// date per status) let a seller page through any number of questions in any
// order the search offers with one direction, reading only the keys up to the
// page's end; the counters give the total without a scan. A search of one
// status in the order of items or askers reads the item or asker index and
// skips the questions of other statuses, reading their records: every index
// key costs each ask and each answer a write, two more indexes per status
// cost the ask a sixth of its rate on the memory store, and those orders
// of one status are the searches least asked for. A seller's
// counts are split over sellerCounterShards keys, so that concurrent asks and
// answers to one seller write different keys.
//
// Question ids are firstQuestionID - 1 + the next number of the store's
// questionSequence.
const (
	firstQuestionID     = 12000000001
	questionSequence    = "questions"
	sellerCounterShards = kv.MaxCounterShards
)

func questionKey(id int64) []byte { return keycodec.New("q/q").Int(id) }

func sellerDatePrefix(seller int64) []byte { return keycodec.New("q/sd").Int(seller) }

func sellerDateKey(seller int64, created time.Time, id int64) []byte {
	return keycodec.Key(sellerDatePrefix(seller)).Int(created.UnixNano()).Int(id)
}

func sellerStatusPrefix(seller int64, status string) []byte {
	return keycodec.New("q/ssd").Int(seller).Str(status)
}

func sellerStatusKey(seller int64, status string, created time.Time, id int64) []byte {
	return keycodec.Key(sellerStatusPrefix(seller, status)).Int(created.UnixNano()).Int(id)
}

func sellerItemPrefix(seller int64) []byte { return keycodec.New("q/si").Int(seller) }

func sellerItemKey(seller int64, itemID string, created time.Time, id int64) []byte {
	return keycodec.Key(sellerItemPrefix(seller)).Str(itemID).Int(created.UnixNano()).Int(id)
}

func sellerFromPrefix(seller int64) []byte { return keycodec.New("q/sf").Int(seller) }

func sellerFromKey(seller, buyer int64, created time.Time, id int64) []byte {
	return keycodec.Key(sellerFromPrefix(seller)).Int(buyer).Int(created.UnixNano()).Int(id)
}

func itemDatePrefix(itemID string) []byte { return keycodec.New("q/id").Str(itemID) }

func itemDateKey(itemID string, created time.Time, id int64) []byte {
	return keycodec.Key(itemDatePrefix(itemID)).Int(created.UnixNano()).Int(id)
}

func datePrefix() []byte { return keycodec.New("q/d") }

func dateKey(created time.Time, id int64) []byte {
	return keycodec.Key(datePrefix()).Int(created.UnixNano()).Int(id)
}

func sellerCounter(seller int64) kv.Counter {
	return kv.NewCounter(keycodec.New("q/n/s").Int(seller), sellerCounterShards)
}

func sellerStatusCounter(seller int64, status string) kv.Counter {
	return kv.NewCounter(keycodec.New("q/n/ss").Int(seller).Str(status), sellerCounterShards)
}

// The answered count of an asker is read with every question in the by-id
// form, and changes only when one of the asker's own questions is answered
// (or loses its answer): one key is enough.
func answeredCounter(buyer int64) kv.Counter {
	return kv.NewCounter(keycodec.New("q/fa").Int(buyer), 1)
}

func blacklistPrefix(seller int64) []byte { return keycodec.New("q/blk").Int(seller) }

func blacklistKey(seller, user int64) []byte {
	return keycodec.Key(blacklistPrefix(seller)).Int(user)
}

// readTrailingID reads the question id at the end of an index key.
func readTrailingID(key []byte) int64 {
	if len(key) < 8 {
		return 0
	}
	return keycodec.Read(key[len(key)-8:]).Int()
}
