package questions

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/schema"
)

// Migrations of the questions data (see storage/schema). Their code is
// frozen: it keeps its own copies of the older decoders, of the encoder of
// the form it writes and of the key names, so that a later change of the
// package's records or indexes does not change what an old migration does.

// RecordsMigration rewrites the question records still stored as JSON (the
// first form) in record form 2. Records in form 2 are left as they are.
func RecordsMigration() schema.Migration {
	return schema.Migration{
		Name: "questions: records from JSON to binary form 2",
		Chunk: schema.Phases(schema.Phase{
			Range: storage.Prefix(keycodec.New("q/q")),
			Each: func(tx storage.Tx, key, value []byte) error {
				if len(value) > 0 && value[0] == 2 {
					return nil
				}
				r, err := decodeQuestionV1(value)
				if err != nil {
					return err
				}
				return tx.Set(key, encodeQuestionV2(r))
			},
		}),
	}
}

// OrderIndexesMigration builds the seller's item and asker indexes (q/si,
// q/ssi, q/sf, q/ssf) of every question on a store filled before them, one
// without the marker q/ix/order, and then deletes the marker, which the
// package no longer reads.
func OrderIndexesMigration() schema.Migration {
	marker := keycodec.New("q/ix/order")
	lacksIndexes := func(tx storage.Tx) (bool, error) {
		_, err := tx.Get(marker)
		if errors.Is(err, storage.ErrNotFound) {
			return true, nil
		}
		return false, err
	}
	return schema.Migration{
		Name: "questions: item and asker indexes built where missing; marker q/ix/order deleted",
		Chunk: schema.Phases(
			schema.Phase{
				Range: storage.Prefix(keycodec.New("q/q")),
				When:  lacksIndexes,
				Each: func(tx storage.Tx, _, value []byte) error {
					r, err := decodeQuestionAny(value)
					if err != nil {
						return err
					}
					created := r.Created.UnixNano()
					for _, k := range [][]byte{
						keycodec.New("q/si").Int(r.SellerID).Str(r.ItemID).Int(created).Int(r.ID),
						keycodec.New("q/ssi").Int(r.SellerID).Str(r.Status).Str(r.ItemID).Int(created).Int(r.ID),
						keycodec.New("q/sf").Int(r.SellerID).Int(r.BuyerID).Int(created).Int(r.ID),
						keycodec.New("q/ssf").Int(r.SellerID).Str(r.Status).Int(r.BuyerID).Int(created).Int(r.ID),
					} {
						if err := tx.Set(k, nil); err != nil {
							return err
						}
					}
					return nil
				},
			},
			schema.Phase{
				Range: schema.KeyRange(marker),
				Each:  schema.DeleteKey,
			},
		),
	}
}

// StatusOrderIndexesMigration deletes the seller's indexes by status then
// item (q/ssi) and by status then asker (q/ssf): a search of one status in
// those orders now reads the item or asker index and skips the other
// statuses, and the ask and the answer no longer write them.
func StatusOrderIndexesMigration() schema.Migration {
	return schema.Migration{
		Name: "questions: the status-then-item and status-then-asker indexes (q/ssi, q/ssf) deleted",
		Chunk: schema.Phases(
			schema.Phase{Range: storage.Prefix(keycodec.New("q/ssi")), Each: schema.DeleteKey},
			schema.Phase{Range: storage.Prefix(keycodec.New("q/ssf")), Each: schema.DeleteKey},
		),
	}
}

// LegacyCounters are the keys that held the last question id before ids
// came from a sequence.
func LegacyCounters() []schema.LegacyCounter {
	return []schema.LegacyCounter{{Key: keycodec.New("q/seq"), Sequence: "questions", First: 12000000001}}
}

// questionV1 is a question record as first stored: JSON. Form 2 holds the
// same fields.
type questionV1 struct {
	ID                 int64     `json:"id"`
	SellerID           int64     `json:"seller_id"`
	BuyerID            int64     `json:"buyer_id"`
	ItemID             string    `json:"item_id"`
	SiteID             string    `json:"site_id"`
	Text               string    `json:"text"`
	Status             string    `json:"status"`
	Created            time.Time `json:"created"`
	Updated            time.Time `json:"updated"`
	DeletedFromListing bool      `json:"deleted_from_listing"`
	Hold               bool      `json:"hold"`
	SuspectedSpam      bool      `json:"suspected_spam"`
	Answer             *struct {
		Text    string    `json:"text"`
		Status  string    `json:"status"`
		Created time.Time `json:"created"`
	} `json:"answer,omitempty"`
}

func decodeQuestionV1(b []byte) (questionV1, error) {
	var r questionV1
	if err := json.Unmarshal(b, &r); err != nil {
		return questionV1{}, fmt.Errorf("question record neither binary nor JSON: %w", err)
	}
	return r, nil
}

// Form 2 flags.
const (
	v2DeletedFromListing = 1 << iota
	v2Hold
	v2SuspectedSpam
	v2Answer
)

// encodeQuestionV2 writes record form 2: the tag 2, the uvarint length of
// the rest, flags, the ids as varints, the strings as uvarint length and
// bytes, the times as varint Unix second and uvarint nanosecond, in field
// order, and the answer's text, status and time last.
func encodeQuestionV2(r questionV1) []byte {
	str := func(b []byte, s string) []byte { return append(binary.AppendUvarint(b, uint64(len(s))), s...) }
	tm := func(b []byte, t time.Time) []byte {
		return binary.AppendUvarint(binary.AppendVarint(b, t.Unix()), uint64(t.Nanosecond()))
	}
	var flags byte
	if r.DeletedFromListing {
		flags |= v2DeletedFromListing
	}
	if r.Hold {
		flags |= v2Hold
	}
	if r.SuspectedSpam {
		flags |= v2SuspectedSpam
	}
	if r.Answer != nil {
		flags |= v2Answer
	}
	body := []byte{flags}
	body = binary.AppendVarint(body, r.ID)
	body = binary.AppendVarint(body, r.SellerID)
	body = binary.AppendVarint(body, r.BuyerID)
	body = str(body, r.ItemID)
	body = str(body, r.SiteID)
	body = str(body, r.Text)
	body = str(body, r.Status)
	body = tm(body, r.Created)
	body = tm(body, r.Updated)
	if r.Answer != nil {
		body = str(body, r.Answer.Text)
		body = str(body, r.Answer.Status)
		body = tm(body, r.Answer.Created)
	}
	out := binary.AppendUvarint([]byte{2}, uint64(len(body)))
	return append(out, body...)
}

// decodeQuestionAny reads the fields the indexes need from either form:
// the ids, item, status and creation time.
func decodeQuestionAny(b []byte) (questionV1, error) {
	if len(b) == 0 || b[0] != 2 {
		return decodeQuestionV1(b)
	}
	bad := errors.New("corrupt question record form 2")
	b = b[1:]
	n, k := binary.Uvarint(b)
	if k <= 0 || n != uint64(len(b)-k) {
		return questionV1{}, bad
	}
	b = b[k:]
	if len(b) == 0 {
		return questionV1{}, bad
	}
	var r questionV1
	r.DeletedFromListing = b[0]&v2DeletedFromListing != 0
	b = b[1:]
	ok := true
	varint := func() int64 {
		v, k := binary.Varint(b)
		if k <= 0 {
			ok = false
			return 0
		}
		b = b[k:]
		return v
	}
	str := func() string {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			ok = false
			return ""
		}
		s := string(b[k : k+int(n)])
		b = b[k+int(n):]
		return s
	}
	r.ID, r.SellerID, r.BuyerID = varint(), varint(), varint()
	r.ItemID, r.SiteID, r.Text, r.Status = str(), str(), str(), str()
	sec := varint()
	nsec, k := binary.Uvarint(b)
	if !ok || k <= 0 {
		return questionV1{}, bad
	}
	r.Created = time.Unix(sec, int64(nsec))
	return r, nil
}
