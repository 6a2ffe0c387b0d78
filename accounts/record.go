package accounts

import (
	"encoding/binary"
	"encoding/json"
	"errors"
)

// User records are stored in a compact binary form: every GET /users/:id
// reads one, and decoding JSON was most of that request's cost. Records
// written before it (JSON objects, starting with '{') still read; they are
// rewritten in the binary form when they next change.
//
// Layout: userRecordV2, the uvarint length of the rest, which must match,
// the id as a varint, then nickname, registration date, first name, last
// name, gender, country and site as uvarint length and bytes, then the
// number of tags plus one (0 for no tag list at all) and each tag.
const userRecordV2 = 2

var errCorruptUser = errors.New("corrupt user record")

func encodeUser(u User) []byte {
	strs := [...]string{u.Nickname, u.RegistrationDate, u.FirstName, u.LastName, u.Gender, u.CountryID, u.SiteID}
	size := 2 * binary.MaxVarintLen64
	for _, s := range strs {
		size += binary.MaxVarintLen64 + len(s)
	}
	for _, t := range u.Tags {
		size += binary.MaxVarintLen64 + len(t)
	}
	body := make([]byte, 0, size)
	body = binary.AppendVarint(body, u.ID)
	for _, s := range strs {
		body = appendString(body, s)
	}
	if u.Tags == nil {
		body = binary.AppendUvarint(body, 0)
	} else {
		body = binary.AppendUvarint(body, uint64(len(u.Tags))+1)
		for _, t := range u.Tags {
			body = appendString(body, t)
		}
	}
	out := make([]byte, 0, 1+binary.MaxVarintLen64+len(body))
	out = append(out, userRecordV2)
	out = binary.AppendUvarint(out, uint64(len(body)))
	return append(out, body...)
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// decodeUser reads either form of a user record.
func decodeUser(b []byte) (User, error) {
	if len(b) == 0 || b[0] != userRecordV2 {
		var u User
		if err := json.Unmarshal(b, &u); err != nil {
			return User{}, err
		}
		return u, nil
	}
	b = b[1:]
	n, k := binary.Uvarint(b)
	if k <= 0 || n != uint64(len(b)-k) {
		return User{}, errCorruptUser
	}
	b = b[k:]
	// One string holds the whole record and every field is a slice of it:
	// one allocation rather than one per field.
	str := string(b)
	var u User
	var ok bool
	if u.ID, b, ok = readVarint(b); !ok {
		return User{}, errCorruptUser
	}
	for _, dst := range [...]*string{&u.Nickname, &u.RegistrationDate, &u.FirstName, &u.LastName, &u.Gender, &u.CountryID, &u.SiteID} {
		if *dst, b, ok = readString(b, str); !ok {
			return User{}, errCorruptUser
		}
	}
	tags, k := binary.Uvarint(b)
	if k <= 0 || tags > uint64(len(b)) {
		return User{}, errCorruptUser
	}
	b = b[k:]
	if tags > 0 {
		u.Tags = make([]string, tags-1)
		for i := range u.Tags {
			if u.Tags[i], b, ok = readString(b, str); !ok {
				return User{}, errCorruptUser
			}
		}
	}
	if len(b) != 0 {
		return User{}, errCorruptUser
	}
	return u, nil
}

func readVarint(b []byte) (int64, []byte, bool) {
	v, n := binary.Varint(b)
	if n <= 0 {
		return 0, b, false
	}
	return v, b[n:], true
}

// readString reads a string at the start of b, which is the tail of str.
func readString(b []byte, str string) (string, []byte, bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return "", b, false
	}
	off := len(str) - len(b) + k
	return str[off : off+int(n)], b[k+int(n):], true
}
