package storage

import (
	"encoding/binary"
	"errors"
)

// Key builds an ordered key from parts. Every domain package lays out its keys
// with it (see each package's keys.go), so that byte order is the order the
// indexes need: strings are written as they are followed by a 0x00
// terminator (so "a" sorts before "ab" and no string is a prefix of another's
// key part), integers as fixed-width big-endian.
type Key []byte

// NewKey starts a key with a namespace such as "acc/user".
func NewKey(namespace string) Key {
	k := make(Key, 0, 48)
	return k.Str(namespace)
}

// Str appends a string part. The string must not contain 0x00.
func (k Key) Str(s string) Key {
	k = append(k, s...)
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

// ErrShortKey is returned when a key part cannot be read back.
var ErrShortKey = errors.New("storage: key too short")

// KeyReader reads back the parts of a key written with Key, in order.
type KeyReader struct {
	b   []byte
	err error
}

// ReadKey starts reading k.
func ReadKey(k []byte) *KeyReader { return &KeyReader{b: k} }

// Str reads a string part.
func (r *KeyReader) Str() string {
	for i, c := range r.b {
		if c == 0 {
			s := string(r.b[:i])
			r.b = r.b[i+1:]
			return s
		}
	}
	r.err = ErrShortKey
	r.b = nil
	return ""
}

// Uint reads an unsigned integer part.
func (r *KeyReader) Uint() uint64 {
	if len(r.b) < 8 {
		r.err = ErrShortKey
		r.b = nil
		return 0
	}
	v := binary.BigEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

// Int reads a signed integer part written with Key.Int.
func (r *KeyReader) Int() int64 { return int64(r.Uint() ^ (1 << 63)) }

// Desc reads an integer part written with Key.Desc.
func (r *KeyReader) Desc() int64 { return int64(^r.Uint() ^ (1 << 63)) }

// Err returns the first error met while reading.
func (r *KeyReader) Err() error { return r.err }
