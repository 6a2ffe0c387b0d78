package accounts_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/schema"
)

// writeJSONToken stores tok for user the way token records were first
// written: a JSON record under the token's hash, and the user's index key.
func writeJSONToken(t *testing.T, st storage.Store, user int64, tok string) {
	t.Helper()
	sum := sha256.Sum256([]byte(tok))
	h := hex.EncodeToString(sum[:])
	rec := fmt.Sprintf(`{"user_id":%d,"created":"2025-01-02T03:04:05Z"}`, user)
	err := st.Update(context.Background(), func(tx storage.Tx) error {
		if err := tx.Set(keycodec.New("acc/token").Str(h), []byte(rec)); err != nil {
			return err
		}
		return tx.Set(keycodec.New("acc/utoken").Int(user).Str(h), nil)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func migrateRecords(t *testing.T, st storage.Store) {
	t.Helper()
	if _, err := schema.Migrate(context.Background(), st, []schema.Migration{accounts.RecordsMigration()}, schema.Options{}); err != nil {
		t.Fatal(err)
	}
}

func TestTokens_RecordsWrittenAsJSONAreMigratedThenAuthenticateAndRevoke(t *testing.T) {
	is := is.New(t)
	svc, st := newService(t)
	ctx := context.Background()
	a := mustUser(t, svc, accounts.NewUser{Nickname: "A", SiteID: "MLA"})
	b := mustUser(t, svc, accounts.NewUser{Nickname: "B", SiteID: "MLA"})
	writeJSONToken(t, st, a.ID, "old-json-token-one")
	writeJSONToken(t, st, a.ID, "old-json-token-two")
	_, err := svc.Authenticate(ctx, "old-json-token-one")
	is.True(errs.Is(err, errs.Internal)) // the package reads the binary form only
	migrateRecords(t, st)

	id, err := svc.Authenticate(ctx, "old-json-token-one")
	is.NoErr(err)
	is.Equal(id, a.ID)                                                            // the old record names its user
	is.NoErr(svc.AddToken(ctx, a.ID, "old-json-token-one"))                       // already a's: no-op
	is.True(errs.Is(svc.AddToken(ctx, b.ID, "old-json-token-one"), errs.Invalid)) // a's, not b's

	is.NoErr(svc.RevokeToken(ctx, "old-json-token-one"))
	_, err = svc.Authenticate(ctx, "old-json-token-one")
	is.True(errs.Is(err, errs.Unauthorized)) // revoked
	newTok, err := svc.IssueToken(ctx, a.ID)
	is.NoErr(err)
	is.NoErr(svc.RevokeAllTokens(ctx, a.ID))
	for _, tok := range []string{"old-json-token-two", newTok} {
		_, err = svc.Authenticate(ctx, tok)
		is.True(errs.Is(err, errs.Unauthorized)) // old and new records revoked together
	}
}

func TestTokens_CorruptRecordIsAnInternalErrorNotAnotherUser(t *testing.T) {
	is := is.New(t)
	svc, st := newService(t)
	sum := sha256.Sum256([]byte("corrupt-token-value"))
	err := st.Update(context.Background(), func(tx storage.Tx) error {
		return tx.Set(keycodec.New("acc/token").Str(hex.EncodeToString(sum[:])), []byte{2, 0, 1})
	})
	is.NoErr(err)
	id, err := svc.Authenticate(context.Background(), "corrupt-token-value")
	is.True(errs.Is(err, errs.Internal)) // neither a user nor Unauthorized
	is.Equal(id, int64(0))
}

func TestUsers_RecordWrittenAsJSONIsMigratedFieldForField(t *testing.T) {
	is := is.New(t)
	svc, st := newService(t)
	ctx := context.Background()
	u := mustUser(t, svc, accounts.NewUser{Nickname: "OLD", SiteID: "MLA", FirstName: "Ana"})
	old := fmt.Sprintf(`{"id":%d,"nickname":"OLD","registration_date":%q,"first_name":"Ana","last_name":"",`+
		`"gender":"","country_id":"AR","site_id":"MLA","tags":["normal"]}`, u.ID, u.RegistrationDate)
	is.NoErr(st.Update(ctx, func(tx storage.Tx) error {
		return tx.Set(keycodec.New("acc/user").Int(u.ID), []byte(old))
	}))
	migrateRecords(t, st)
	got, err := svc.User(ctx, u.ID)
	is.NoErr(err)
	is.Equal(got, accounts.User{ID: u.ID, Nickname: "OLD", RegistrationDate: u.RegistrationDate, FirstName: "Ana",
		CountryID: "AR", SiteID: "MLA", Tags: []string{"normal"}}) // the old record, field for field
}
