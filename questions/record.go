package questions

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"time"
)

// Question records are stored in a compact binary form: a search page reads
// fifty of them, and decoding JSON was most of its cost. Records written
// before it (JSON objects, starting with '{') still read; they are rewritten
// in the binary form when they next change.
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
	body = appendString(body, r.ItemID)
	body = appendString(body, r.SiteID)
	body = appendString(body, r.Text)
	body = appendString(body, r.Status)
	body = appendTime(body, r.Created)
	body = appendTime(body, r.Updated)
	if r.Answer != nil {
		body = appendString(body, r.Answer.Text)
		body = appendString(body, r.Answer.Status)
		body = appendTime(body, r.Answer.Created)
	}
	out := make([]byte, 0, 1+binary.MaxVarintLen64+len(body))
	out = append(out, recordV2)
	out = binary.AppendUvarint(out, uint64(len(body)))
	return append(out, body...)
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendTime(b []byte, t time.Time) []byte {
	b = binary.AppendVarint(b, t.Unix())
	return binary.AppendUvarint(b, uint64(t.Nanosecond()))
}

// decodeRecord reads either form of a record.
func decodeRecord(b []byte) (record, error) {
	if len(b) > 0 && b[0] == recordV2 {
		return decodeRecordV2(b[1:])
	}
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return record{}, err
	}
	return r, nil
}

func decodeRecordV2(b []byte) (record, error) {
	d := recordDecoder{b: b}
	if n := d.uvarint(); d.err != nil || n != uint64(len(d.b)) {
		return record{}, errCorruptRecord
	}
	// One string holds the whole record and every field is a slice of it:
	// one allocation rather than one per field.
	d.s = string(d.b)
	d.off = 0
	var r record
	flags := d.byte()
	r.DeletedFromListing = flags&flagDeletedFromListing != 0
	r.Hold = flags&flagHold != 0
	r.SuspectedSpam = flags&flagSuspectedSpam != 0
	r.ID = d.varint()
	r.SellerID = d.varint()
	r.BuyerID = d.varint()
	r.ItemID = d.string()
	r.SiteID = d.string()
	r.Text = d.string()
	r.Status = d.string()
	r.Created = d.time()
	r.Updated = d.time()
	if flags&flagAnswer != 0 {
		r.Answer = &answerRecord{Text: d.string(), Status: d.string(), Created: d.time()}
	}
	if d.err != nil || len(d.b) != 0 {
		return record{}, errCorruptRecord
	}
	return r, nil
}

// recordDecoder reads the binary form; after the first error every read
// returns a zero value and err stays set.
type recordDecoder struct {
	b   []byte
	err error
	// s is b as a string from where it was taken, off bytes ahead of b:
	// strings are cut from it.
	s   string
	off int
}

func (d *recordDecoder) byte() byte {
	if d.err != nil || len(d.b) == 0 {
		d.err = errCorruptRecord
		return 0
	}
	c := d.b[0]
	d.advance(1)
	return c
}

func (d *recordDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errCorruptRecord
		return 0
	}
	d.advance(n)
	return v
}

func (d *recordDecoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errCorruptRecord
		return 0
	}
	d.advance(n)
	return v
}

func (d *recordDecoder) string() string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)) {
		d.err = errCorruptRecord
		return ""
	}
	s := d.s[d.off : d.off+int(n)]
	d.advance(int(n))
	return s
}

func (d *recordDecoder) advance(n int) {
	d.b = d.b[n:]
	d.off += n
}

// time reads a time as UTC: records only compare, format and key by
// instants, never by the zone they were written in.
func (d *recordDecoder) time() time.Time {
	sec := d.varint()
	nsec := d.uvarint()
	if d.err != nil {
		return time.Time{}
	}
	if nsec >= 1e9 {
		d.err = errCorruptRecord
		return time.Time{}
	}
	return time.Unix(sec, int64(nsec)).UTC()
}
