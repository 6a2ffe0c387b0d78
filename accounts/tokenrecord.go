package accounts

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/marketplace/marketplace/storage"
)

// tokenRecord is what is stored for a token: never the token itself.
type tokenRecord struct {
	UserID  int64
	Created time.Time
	// Expires is when a token issued by a grant stops working (record form
	// 3); zero for the operator's tokens, which never expire.
	Expires time.Time
	// ClientID is the application a grant issued the token to.
	ClientID int64
}

// tokenRecordV2 tags the binary form of a token record: the tag, the user id
// and the creation instant in Unix nanoseconds, both big-endian. Every
// authenticated request reads one, and a JSON decode cost more than the rest
// of the lookup; records written as JSON before are rewritten by
// RecordsMigration (migrate.go).
const tokenRecordV2 = 2

const tokenRecordV2Len = 1 + 8 + 8

func encodeTokenRecord(rec tokenRecord) []byte {
	b := make([]byte, tokenRecordV2Len)
	b[0] = tokenRecordV2
	binary.BigEndian.PutUint64(b[1:], uint64(rec.UserID))
	binary.BigEndian.PutUint64(b[9:], uint64(rec.Created.UnixNano()))
	return b
}

func decodeTokenRecord(b []byte) (tokenRecord, error) {
	if len(b) == tokenRecordV2Len && b[0] == tokenRecordV2 {
		return tokenRecord{
			UserID:  int64(binary.BigEndian.Uint64(b[1:])),
			Created: time.Unix(0, int64(binary.BigEndian.Uint64(b[9:]))).UTC(),
		}, nil
	}
	if len(b) == tokenRecordV3Len && b[0] == tokenRecordV3 {
		return decodeTokenRecordV3(b), nil
	}
	return tokenRecord{}, errors.New("corrupt token record")
}

// getTokenRecord reads the record of the token with hash h; a missing one is
// storage.ErrNotFound.
func getTokenRecord(tx storage.Tx, h string) (tokenRecord, error) {
	b, err := tx.Get(tokenKey(h))
	if err != nil {
		return tokenRecord{}, err
	}
	return decodeTokenRecord(b)
}

// tokenRecordV3 tags the binary form of a token issued by a grant: the
// tag, the user id, the creation and expiry instants in Unix nanoseconds and
// the client id, each 8 bytes big-endian. Records of form 2 (operator
// tokens) stay as they are and never expire.
const tokenRecordV3 = 3

const tokenRecordV3Len = 1 + 8 + 8 + 8 + 8

func encodeTokenRecordV3(rec tokenRecord) []byte {
	b := make([]byte, tokenRecordV3Len)
	b[0] = tokenRecordV3
	binary.BigEndian.PutUint64(b[1:], uint64(rec.UserID))
	binary.BigEndian.PutUint64(b[9:], uint64(rec.Created.UnixNano()))
	binary.BigEndian.PutUint64(b[17:], uint64(rec.Expires.UnixNano()))
	binary.BigEndian.PutUint64(b[25:], uint64(rec.ClientID))
	return b
}

func decodeTokenRecordV3(b []byte) tokenRecord {
	return tokenRecord{
		UserID:   int64(binary.BigEndian.Uint64(b[1:])),
		Created:  time.Unix(0, int64(binary.BigEndian.Uint64(b[9:]))).UTC(),
		Expires:  time.Unix(0, int64(binary.BigEndian.Uint64(b[17:]))).UTC(),
		ClientID: int64(binary.BigEndian.Uint64(b[25:])),
	}
}
