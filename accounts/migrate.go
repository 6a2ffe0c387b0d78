package accounts

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/schema"
)

// Migrations of the accounts data (see storage/schema). Their code is
// frozen: it keeps its own copies of the older decoders, of the encoders of
// the forms it writes and of the key names, so that a later change of the
// package's records does not change what an old migration does.

// RecordsMigration rewrites the user and token records still stored as
// JSON (the first form, written before the binary ones) in their binary
// forms: user record 2 and token record 2. Binary records are left as they
// are.
func RecordsMigration() schema.Migration {
	return schema.Migration{
		Name: "accounts: user and token records from JSON to their binary forms",
		Chunk: schema.Phases(
			schema.Phase{Range: storage.Prefix(keycodec.New("acc/user")), Each: migrateUserRecord},
			schema.Phase{Range: storage.Prefix(keycodec.New("acc/token")), Each: migrateTokenRecord},
		),
	}
}

// LegacyCounters are the keys that held the last user and store ids before
// ids came from sequences.
func LegacyCounters() []schema.LegacyCounter {
	return []schema.LegacyCounter{
		{Key: keycodec.New("acc/seq/user"), Sequence: "users", First: 100000001},
		{Key: keycodec.New("acc/seq/store"), Sequence: "stores", First: 1000001},
	}
}

// userV1 is a user record as first stored: JSON.
type userV1 struct {
	ID               int64    `json:"id"`
	Nickname         string   `json:"nickname"`
	RegistrationDate string   `json:"registration_date"`
	FirstName        string   `json:"first_name"`
	LastName         string   `json:"last_name"`
	Gender           string   `json:"gender"`
	CountryID        string   `json:"country_id"`
	SiteID           string   `json:"site_id"`
	Tags             []string `json:"tags"`
}

func migrateUserRecord(tx storage.Tx, key, value []byte) error {
	if len(value) > 0 && value[0] == 2 {
		return nil // user record 2
	}
	var u userV1
	if err := json.Unmarshal(value, &u); err != nil {
		return fmt.Errorf("user record neither binary nor JSON: %w", err)
	}
	return tx.Set(key, encodeUserV2(u))
}

// encodeUserV2 writes user record 2: the tag 2, the uvarint length of the
// rest, the id as a varint, the seven strings (uvarint length and bytes),
// then the number of tags plus one (0 for no tag list) and each tag.
func encodeUserV2(u userV1) []byte {
	str := func(b []byte, s string) []byte { return append(binary.AppendUvarint(b, uint64(len(s))), s...) }
	body := binary.AppendVarint(nil, u.ID)
	for _, s := range [...]string{u.Nickname, u.RegistrationDate, u.FirstName, u.LastName, u.Gender, u.CountryID, u.SiteID} {
		body = str(body, s)
	}
	if u.Tags == nil {
		body = binary.AppendUvarint(body, 0)
	} else {
		body = binary.AppendUvarint(body, uint64(len(u.Tags))+1)
		for _, t := range u.Tags {
			body = str(body, t)
		}
	}
	out := binary.AppendUvarint([]byte{2}, uint64(len(body)))
	return append(out, body...)
}

// tokenV1 is a token record as first stored: JSON.
type tokenV1 struct {
	UserID  int64     `json:"user_id"`
	Created time.Time `json:"created"`
}

func migrateTokenRecord(tx storage.Tx, key, value []byte) error {
	if len(value) == 17 && value[0] == 2 {
		return nil // token record 2
	}
	var t tokenV1
	if err := json.Unmarshal(value, &t); err != nil {
		return fmt.Errorf("token record neither binary nor JSON: %w", err)
	}
	// Token record 2: the tag, the user id and the creation instant in Unix
	// nanoseconds, both 8 bytes big-endian.
	b := make([]byte, 17)
	b[0] = 2
	binary.BigEndian.PutUint64(b[1:], uint64(t.UserID))
	binary.BigEndian.PutUint64(b[9:], uint64(t.Created.UnixNano()))
	return tx.Set(key, b)
}
