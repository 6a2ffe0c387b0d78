package questions

import (
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/kv"
)

// Key layout of questions. Every key starts with "q/". Times are the
// question's creation instant in Unix nanoseconds (Int), so byte order is
// time order; the question id breaks ties. <st> is the question's status as
// one byte (statusCode), <cls> the status and whether the question is hidden
// from the public listings (classCode).
//
//	q/q/<qid>                                      -> record (binary, see record.go)
//	q/d/<created>/<qid>                            -> seller id (uint64); every question by date
//	q/s/d/<seller>/<st>/<created>/<qid>            -> empty; a seller's questions by date
//	q/s/i/<seller>/<st>/<item>/<created>/<qid>     -> by item, then date
//	q/s/f/<seller>/<st>/<from>/<created>/<qid>     -> by asker, then date
//	q/s/if/<seller>/<st>/<item>/<from>/<created>/<qid>
//	q/s/fi/<seller>/<st>/<from>/<item>/<created>/<qid>
//	q/i/d/<item>/<cls>/<created>/<qid>             -> an item's questions by date
//	q/i/f/<item>/<cls>/<from>/<created>/<qid>      -> by asker, then date
//	q/s/a/<seller>/<st>/<from>                     -> empty; the askers with a question of the status (askerList)
//	q/i/a/<item>/<cls>/<from>                      -> empty; the askers with a question of the class on the item
//	q/t/s/<seller>/<st>[<shard>]                   -> tally of the seller's questions (tally.go)
//	q/t/i/<item>/<cls>[<shard>]                    -> tally of the item's questions
//	q/t/sf/<seller>/<from>[<shard>]                -> tally of one asker's questions to the seller
//	q/t/if/<item>/<from>[<shard>]                  -> tally of one asker's questions on the item
//	q/fa/<buyer>                                   -> number of the buyer's questions that are ANSWERED (kv.Counter, 1 shard)
//	q/blk/<seller>/<user>                          -> blacklist entry (JSON)
//	q/n/blk/<seller>                               -> number of the seller's blacklist entries (kv.Counter, 1 shard)
//
// Every order a search offers is the order of one index's keys, read group
// by group where the directions are mixed (cursor.go), and every filter the
// search offers picks whole key ranges: the status (and, on an item, what
// an anonymous caller may see) is the class right after the partition, and
// a fixed asker the component after it. So a page reads the keys up to its
// end in each class it selects, and the total is the sum of the tallies of
// those classes (tally.go), whatever the number of questions. What this
// costs the writes: an ask writes eight index keys and four tallies, and a
// change of status (or of hidden) moves seven keys and four tallies; an
// asker's first question of a class in a shard of its tally writes its
// asker lists again, and its last one leaving the class reads the other
// shards and deletes them. Every tally has 64 shards by question id, so
// that concurrent asks, even of one asker on one item, write different
// keys (tally.go).
//
// Question ids are firstQuestionID - 1 + the next number of the store's
// questionSequence.
const (
	firstQuestionID  = 12000000001
	questionSequence = "questions"
)

func questionKey(id int64) []byte { return keycodec.New("q/q").Int(id) }

func datePrefix() []byte { return keycodec.New("q/d") }

func dateKey(r record) []byte {
	return keycodec.Key(datePrefix()).Int(r.Created.UnixNano()).Int(r.ID)
}

// The answered count of an asker is read with every question in the by-id
// form, and changes only when one of the asker's own questions is answered
// (or loses its answer): one key is enough.
func answeredCounter(buyer int64) kv.Counter {
	return kv.NewCounter(keycodec.New("q/fa").Int(buyer), 1)
}

func blacklistPrefix(seller int64) []byte { return keycodec.New("q/blk").Int(seller) }

// Only the seller changes its blacklist: one key is enough.
func blacklistCounter(seller int64) kv.Counter {
	return kv.NewCounter(keycodec.New("q/n/blk").Int(seller), 1)
}

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

// statusCode is the byte that stands for a status in index keys: its place
// in Statuses. The codes are stored; a new status takes a new code.
func statusCode(status string) byte {
	for i, s := range Statuses {
		if s == status {
			return byte(i)
		}
	}
	return 0xff
}

// classCode is a question's class in the item indexes: its status and
// whether it is hidden from the public listings.
func classCode(status string, hidden bool) byte {
	c := statusCode(status) << 1
	if hidden {
		c |= 1
	}
	return c
}

func (r record) class() byte { return classCode(r.Status, r.DeletedFromListing) }
