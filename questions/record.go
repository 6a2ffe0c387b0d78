package questions

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/marketplace/marketplace/internal/binrec"
)

// record is what is stored for a question.
type record struct {
	ID                 int64         `json:"id"`
	SellerID           int64         `json:"seller_id"`
	BuyerID            int64         `json:"buyer_id"`
	ItemID             string        `json:"item_id"`
	SiteID             string        `json:"site_id"`
	Text               string        `json:"text"`
	Status             string        `json:"status"`
	Created            time.Time     `json:"created"`
	Updated            time.Time     `json:"updated"`
	DeletedFromListing bool          `json:"deleted_from_listing"`
	Hold               bool          `json:"hold"`
	SuspectedSpam      bool          `json:"suspected_spam"`
	Answer             *answerRecord `json:"answer,omitempty"`
}

type answerRecord struct {
	Text    string    `json:"text"`
	Status  string    `json:"status"`
	Created time.Time `json:"created"`
}

// Question records are stored in a compact binary form: a search page reads
// fifty of them, and decoding JSON was most of its cost. Records written as
// JSON before it are rewritten by RecordsMigration (migrate.go); the package
// reads the binary form only.
//
// Layout: recordV2, then the uvarint length of the rest, which must match,
// then flags (deleted from listing, hold, suspected spam, has answer), the
// ids as varints, the strings as uvarint length and bytes, and times as the
// varint Unix second and uvarint nanosecond, in field order; the answer's
// text, status and time last.
const recordV2 = 2

const (
	flagDeletedFromListing = 1 << iota
	flagHold
	flagSuspectedSpam
	flagAnswer
)

var errCorruptRecord = errors.New("corrupt question record")

func encodeRecord(r record) []byte {
	size := 3*binary.MaxVarintLen64 + 4*binary.MaxVarintLen64 + len(r.ItemID) + len(r.SiteID) + len(r.Text) + len(r.Status) +
		4*binary.MaxVarintLen64 + 1
	if r.Answer != nil {
		size += 2*binary.MaxVarintLen64 + len(r.Answer.Text) + len(r.Answer.Status) + 2*binary.MaxVarintLen64
	}
	body := make([]byte, 0, size)
	var flags byte
	if r.DeletedFromListing {
		flags |= flagDeletedFromListing
	}
	if r.Hold {
		flags |= flagHold
	}
	if r.SuspectedSpam {
		flags |= flagSuspectedSpam
	}
	if r.Answer != nil {
		flags |= flagAnswer
	}
	body = append(body, flags)
	body = binary.AppendVarint(body, r.ID)
	body = binary.AppendVarint(body, r.SellerID)
	body = binary.AppendVarint(body, r.BuyerID)
	body = binrec.AppendString(body, r.ItemID)
	body = binrec.AppendString(body, r.SiteID)
	body = binrec.AppendString(body, r.Text)
	body = binrec.AppendString(body, r.Status)
	body = binrec.AppendTime(body, r.Created)
	body = binrec.AppendTime(body, r.Updated)
	if r.Answer != nil {
		body = binrec.AppendString(body, r.Answer.Text)
		body = binrec.AppendString(body, r.Answer.Status)
		body = binrec.AppendTime(body, r.Answer.Created)
	}
	out := make([]byte, 0, 1+binary.MaxVarintLen64+len(body))
	out = append(out, recordV2)
	out = binary.AppendUvarint(out, uint64(len(body)))
	return append(out, body...)
}

// decodeRecord reads a record.
func decodeRecord(b []byte) (record, error) {
	if len(b) == 0 || b[0] != recordV2 {
		return record{}, errCorruptRecord
	}
	return decodeRecordV2(b[1:])
}

func decodeRecordV2(b []byte) (record, error) {
	d := binrec.NewDecoder(b)
	if n := d.Uvarint(); d.Err() != nil || n != uint64(d.Len()) {
		return record{}, errCorruptRecord
	}
	var r record
	flags := d.Byte()
	r.DeletedFromListing = flags&flagDeletedFromListing != 0
	r.Hold = flags&flagHold != 0
	r.SuspectedSpam = flags&flagSuspectedSpam != 0
	r.ID = d.Varint()
	r.SellerID = d.Varint()
	r.BuyerID = d.Varint()
	r.ItemID = d.String()
	r.SiteID = d.String()
	r.Text = d.String()
	r.Status = d.String()
	r.Created = d.Time()
	r.Updated = d.Time()
	if flags&flagAnswer != 0 {
		r.Answer = &answerRecord{Text: d.String(), Status: d.String(), Created: d.Time()}
	}
	if d.Done() != nil {
		return record{}, errCorruptRecord
	}
	return r, nil
}
