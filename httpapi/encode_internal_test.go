package httpapi

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/accounts"
)

func drawTags(t *rapid.T) []string {
	if rapid.Bool().Draw(t, "nil_tags") {
		return nil
	}
	return rapid.SliceOfN(rapid.Custom(func(t *rapid.T) string { return jsonText(t, "tag") }), 0, 4).Draw(t, "tags")
}

func TestUserEncoding_IsByteForByteEncodingJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		u := accounts.User{ID: rapid.Int64().Draw(t, "id"), Nickname: jsonText(t, "nickname"),
			RegistrationDate: jsonText(t, "date"), FirstName: jsonText(t, "first"), LastName: jsonText(t, "last"),
			Gender: jsonText(t, "gender"), CountryID: jsonText(t, "country"), SiteID: jsonText(t, "site"), Tags: drawTags(t)}
		if got, want := append(appendUser(nil, u), '\n'), encodingJSON(t, u); !bytes.Equal(got, want) {
			t.Fatalf("user: got  %s\nwant %s", got, want)
		}
		pu := u.Public()
		if got, want := append(appendPublicUser(nil, pu), '\n'), encodingJSON(t, pu); !bytes.Equal(got, want) {
			t.Fatalf("public user: got  %s\nwant %s", got, want)
		}
	})
}
