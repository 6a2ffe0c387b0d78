// Package keycodec lays out the ordered keys of the store: a namespace and
// parts (strings, integers, descending integers) whose byte order is the
// order the indexes need, and reads them back. Every key the engine has
// written was made by it, so its bytes never change: data folders of every
// earlier version depend on them.
package keycodec

import (
	"encoding/binary"
	"errors"
)

// Key builds an ordered key from parts. Every domain package lays out its keys
// with it (see each package's keys.go), so that byte order is the order the
// indexes need: strings are written followed by a 0x00 terminator (so "a"
// sorts before "ab" and no string part is a prefix of another's), integers as
// fixed-width big-endian. A 0x00 or 0x01 inside a string is escaped (as 0x01
// 0x01 and 0x01 0x02), which keeps the order and keeps input such as a
// nickname with a NUL byte from forging the parts that follow it.
type Key []byte

// New starts a key with a namespace such as "acc/user".
func New(namespace string) Key {
	k := make(Key, 0, 48)
	return k.Str(namespace)
}

// Str appends a string part. Any string is allowed.
func (k Key) Str(s string) Key {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case 0x00, 0x01:
			k = append(k, 0x01, c+1)
		default:
			k = append(k, c)
		}
	}
	return append(k, 0)
}

// Uint appends an unsigned integer part.
func (k Key) Uint(v uint64) Key {
	return binary.BigEndian.AppendUint64(k, v)
}

// Int appends a signed integer part that sorts in numeric order.
func (k Key) Int(v int64) Key {
	return k.Uint(uint64(v) ^ (1 << 63))
}

// Desc appends an integer part that sorts in reverse numeric order, for
// indexes read newest first.
func (k Key) Desc(v int64) Key {
	return k.Uint(^(uint64(v) ^ (1 << 63)))
}

// Bytes returns the key as a byte slice.
func (k Key) Bytes() []byte { return []byte(k) }

// ErrShort is returned when a key part cannot be read back.
var ErrShort = errors.New("storage: key too short")

// Reader reads back the parts of a key written with Key, in order.
type Reader struct {
	b   []byte
	err error
}

// Read starts reading k.
func Read(k []byte) *Reader { return &Reader{b: k} }

// Str reads a string part.
func (r *Reader) Str() string {
	escaped := false
	for i, c := range r.b {
		switch c {
		case 0x00:
			s := r.b[:i]
			r.b = r.b[i+1:]
			if escaped {
				return unescape(s)
			}
			return string(s)
		case 0x01:
			escaped = true
		}
	}
	r.fail()
	return ""
}

// unescape undoes the escaping of Key.Str. A stray escape byte (a key not
// written by Key.Str) is kept as it is rather than guessed at.
func unescape(b []byte) string {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] == 0x01 && i+1 < len(b) && (b[i+1] == 0x01 || b[i+1] == 0x02) {
			out = append(out, b[i+1]-1)
			i++
			continue
		}
		out = append(out, b[i])
	}
	return string(out)
}

func (r *Reader) fail() {
	if r.err == nil {
		r.err = ErrShort
	}
	r.b = nil
}

// Uint reads an unsigned integer part.
func (r *Reader) Uint() uint64 {
	if len(r.b) < 8 {
		r.fail()
		return 0
	}
	v := binary.BigEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

// Int reads a signed integer part written with Key.Int.
func (r *Reader) Int() int64 { return int64(r.Uint() ^ (1 << 63)) }

// Desc reads an integer part written with Key.Desc.
func (r *Reader) Desc() int64 { return int64(^r.Uint() ^ (1 << 63)) }

// Err returns the first error met while reading.
func (r *Reader) Err() error { return r.err }

// Rest returns the bytes not read yet.
func (r *Reader) Rest() []byte { return r.b }

// Raw returns an empty key, for values built from key parts.
func Raw() Key { return Key{} }
