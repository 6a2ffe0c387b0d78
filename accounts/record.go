package accounts

import (
	"encoding/binary"
	"errors"

	"github.com/marketplace/marketplace/internal/binrec"
)

// User records are stored in a compact binary form: every GET /users/:id
// reads one, and decoding JSON was most of that request's cost. Records
// written as JSON before it are rewritten by RecordsMigration (migrate.go);
// the package reads the binary form only.
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
		body = binrec.AppendString(body, s)
	}
	if u.Tags == nil {
		body = binary.AppendUvarint(body, 0)
	} else {
		body = binary.AppendUvarint(body, uint64(len(u.Tags))+1)
		for _, t := range u.Tags {
			body = binrec.AppendString(body, t)
		}
	}
	out := make([]byte, 0, 1+binary.MaxVarintLen64+len(body))
	out = append(out, userRecordV2)
	out = binary.AppendUvarint(out, uint64(len(body)))
	return append(out, body...)
}

// decodeUser reads a user record.
func decodeUser(b []byte) (User, error) {
	if len(b) == 0 || b[0] != userRecordV2 {
		return User{}, errCorruptUser
	}
	d := binrec.NewDecoder(b[1:])
	if n := d.Uvarint(); d.Err() != nil || n != uint64(d.Len()) {
		return User{}, errCorruptUser
	}
	var u User
	u.ID = d.Varint()
	for _, dst := range [...]*string{&u.Nickname, &u.RegistrationDate, &u.FirstName, &u.LastName, &u.Gender, &u.CountryID, &u.SiteID} {
		*dst = d.String()
	}
	// The tag count is stored plus one, so that 0 tells a nil list apart from
	// an empty one.
	tags := d.Uvarint()
	if tags > 0 {
		if tags-1 > uint64(d.Len()) {
			return User{}, errCorruptUser
		}
		u.Tags = make([]string, tags-1)
		for i := range u.Tags {
			u.Tags[i] = d.String()
		}
	}
	if d.Done() != nil {
		return User{}, errCorruptUser
	}
	return u, nil
}
