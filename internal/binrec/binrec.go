// Package binrec writes and reads the compact binary records that the hot
// domain records (tokens, users, questions, items, user products) are stored
// in: varints, length-prefixed strings and times, read back by a Decoder
// whose first failure sticks, so that a record decoder reads every field and
// checks once.
package binrec

import (
	"encoding/binary"
	"errors"
	"time"
)

// ErrCorrupt is returned for a record that does not decode.
var ErrCorrupt = errors.New("corrupt record")

// AppendString appends s as its uvarint length and its bytes.
func AppendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// AppendTime appends t as seconds (varint) and nanoseconds (uvarint); the
// zone is not kept.
func AppendTime(b []byte, t time.Time) []byte {
	b = binary.AppendVarint(b, t.Unix())
	return binary.AppendUvarint(b, uint64(t.Nanosecond()))
}

// Decoder reads a record. Strings are cut from one copy of the record, so a
// record costs one allocation for all its strings rather than one each.
type Decoder struct {
	b   []byte
	s   string // the record as a string, off bytes before b
	off int
	err error
}

// NewDecoder starts reading b.
func NewDecoder(b []byte) *Decoder {
	return &Decoder{b: b, s: string(b)}
}

// Err returns ErrCorrupt if any read failed.
func (d *Decoder) Err() error { return d.err }

// Len returns the number of bytes not yet read.
func (d *Decoder) Len() int { return len(d.b) }

// Done returns ErrCorrupt if a read failed or bytes are left over.
func (d *Decoder) Done() error {
	if d.err == nil && len(d.b) != 0 {
		d.err = ErrCorrupt
	}
	return d.err
}

func (d *Decoder) fail() { d.err = ErrCorrupt }

// Fail marks the record corrupt, for a value read whole that its reader
// refuses (a flag out of its range, an embedded text that does not parse).
func (d *Decoder) Fail() { d.fail() }

func (d *Decoder) advance(n int) {
	d.b = d.b[n:]
	d.off += n
}

// Byte reads one byte.
func (d *Decoder) Byte() byte {
	if d.err != nil || len(d.b) == 0 {
		d.fail()
		return 0
	}
	c := d.b[0]
	d.advance(1)
	return c
}

// Uvarint reads an unsigned varint.
func (d *Decoder) Uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.advance(n)
	return v
}

// Varint reads a signed varint.
func (d *Decoder) Varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.advance(n)
	return v
}

// Count reads a uvarint that counts the elements that follow, refusing one
// larger than the bytes left (each element takes at least one byte), so
// that a corrupt count cannot make the caller allocate without bound.
func (d *Decoder) Count() int {
	n := d.Uvarint()
	if d.err == nil && n > uint64(len(d.b)) {
		d.fail()
	}
	if d.err != nil {
		return 0
	}
	return int(n)
}

// String reads a length-prefixed string.
func (d *Decoder) String() string {
	n := d.Uvarint()
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)) {
		d.fail()
		return ""
	}
	s := d.s[d.off : d.off+int(n)]
	d.advance(int(n))
	return s
}

// Time reads a time written by AppendTime, in UTC: records compare, format
// and key by instants, never by the zone they were written in.
func (d *Decoder) Time() time.Time {
	sec := d.Varint()
	nsec := d.Uvarint()
	if d.err != nil {
		return time.Time{}
	}
	if nsec >= 1e9 {
		d.fail()
		return time.Time{}
	}
	return time.Unix(sec, int64(nsec)).UTC()
}

// The optional values below keep what JSON keeps: a nil pointer apart from
// a pointer to the zero value, and a nil slice (null) apart from an empty
// one ([]).

// AppendStringPtr appends p: 0 for nil, else 1 and the string.
func AppendStringPtr(b []byte, p *string) []byte {
	if p == nil {
		return append(b, 0)
	}
	return AppendString(append(b, 1), *p)
}

// AppendInt64Ptr appends p: 0 for nil, else 1 and the varint.
func AppendInt64Ptr(b []byte, p *int64) []byte {
	if p == nil {
		return append(b, 0)
	}
	return binary.AppendVarint(append(b, 1), *p)
}

// AppendLen appends the length of a slice or map of n elements: 0 for nil,
// else n+1.
func AppendLen(b []byte, n int, isNil bool) []byte {
	if isNil {
		return append(b, 0)
	}
	return binary.AppendUvarint(b, uint64(n)+1)
}

// present reads the flag of an optional value: false for absent, and a
// failure for anything but 0 or 1.
func (d *Decoder) present() bool {
	switch d.Byte() {
	case 0:
		return false
	case 1:
		return d.err == nil
	}
	d.fail()
	return false
}

// StringPtr reads what AppendStringPtr wrote.
func (d *Decoder) StringPtr() *string {
	if !d.present() {
		return nil
	}
	s := d.String()
	if d.err != nil {
		return nil
	}
	return &s
}

// Int64Ptr reads what AppendInt64Ptr wrote.
func (d *Decoder) Int64Ptr() *int64 {
	if !d.present() {
		return nil
	}
	v := d.Varint()
	if d.err != nil {
		return nil
	}
	return &v
}

// SliceLen reads what AppendLen wrote: -1 for nil, else the count, refused when
// larger than the bytes left as Count refuses it.
func (d *Decoder) SliceLen() int {
	n := d.Uvarint()
	if d.err != nil || n == 0 {
		return -1
	}
	if n-1 > uint64(len(d.b)) {
		d.fail()
		return -1
	}
	return int(n - 1)
}
