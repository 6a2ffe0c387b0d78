package accounts

import (
	"encoding/json"
	"reflect"
	"testing"

	"pgregory.net/rapid"
)

func drawUser(t *rapid.T) User {
	u := User{ID: rapid.Int64().Draw(t, "id"), Nickname: rapid.String().Draw(t, "nickname"),
		RegistrationDate: rapid.String().Draw(t, "date"), FirstName: rapid.String().Draw(t, "first"),
		LastName: rapid.String().Draw(t, "last"), Gender: rapid.String().Draw(t, "gender"),
		CountryID: rapid.String().Draw(t, "country"), SiteID: rapid.String().Draw(t, "site")}
	if !rapid.Bool().Draw(t, "nil_tags") {
		u.Tags = rapid.SliceOfN(rapid.String(), 0, 5).Draw(t, "tags")
	}
	return u
}

func TestUserRecord_BinaryFormRoundTripsKeepingNilAndEmptyTagsApart(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		want := drawUser(t)
		got, err := decodeUser(encodeUser(want))
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decoded %#v, want %#v", got, want)
		}
	})
}

func TestUserRecord_MigrationWritesTheFormTheDecoderReads(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		want := drawUser(t)
		// Valid UTF-8 only: JSON would have replaced anything else.
		old, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		var viaJSON User
		if err := json.Unmarshal(old, &viaJSON); err != nil {
			t.Fatal(err)
		}
		if _, err := decodeUser(old); err == nil {
			t.Fatal("a JSON record read without its migration")
		}
		var v1 userV1
		if err := json.Unmarshal(old, &v1); err != nil {
			t.Fatal(err)
		}
		migrated := encodeUserV2(v1)
		if !reflect.DeepEqual(migrated, encodeUser(viaJSON)) {
			t.Fatalf("the migration wrote %x, the package writes %x", migrated, encodeUser(viaJSON))
		}
		got, err := decodeUser(migrated)
		if err != nil || !reflect.DeepEqual(got, viaJSON) {
			t.Fatalf("decoded %#v, %v; want %#v", got, err, viaJSON)
		}
	})
}

func TestUserRecord_TruncatedOrExtendedBinaryIsCorruptNotAPanic(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := encodeUser(drawUser(t))
		var bad []byte
		if rapid.Bool().Draw(t, "truncate") {
			bad = b[:rapid.IntRange(0, len(b)-1).Draw(t, "len")]
		} else {
			bad = append(append([]byte{}, b...), rapid.SliceOfN(rapid.Byte(), 1, 8).Draw(t, "extra")...)
		}
		if _, err := decodeUser(bad); err == nil {
			t.Fatalf("decoded %x without an error", bad)
		}
	})
}
