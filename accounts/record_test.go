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

func TestUserRecord_JSONWrittenBeforeTheBinaryFormStillReads(t *testing.T) {
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
		got, err := decodeUser(old)
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		if !reflect.DeepEqual(got, viaJSON) {
			t.Fatalf("decoded %#v, want %#v", got, viaJSON)
		}
	})
	old := `{"id":100000001,"nickname":"SELLER","registration_date":"2026-03-04T12:00:00.000-03:00","first_name":"Ana",` +
		`"last_name":"Paz","gender":"female","country_id":"AR","site_id":"MLA","tags":["normal","warehouse_management"]}`
	u, err := decodeUser([]byte(old))
	if err != nil {
		t.Fatal(err)
	}
	want := User{ID: 100000001, Nickname: "SELLER", RegistrationDate: "2026-03-04T12:00:00.000-03:00", FirstName: "Ana",
		LastName: "Paz", Gender: "female", CountryID: "AR", SiteID: "MLA", Tags: []string{"normal", "warehouse_management"}}
	if !reflect.DeepEqual(u, want) {
		t.Fatalf("old record read as %#v", u)
	}
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
