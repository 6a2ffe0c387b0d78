package notify_test

import (
	"fmt"
	"testing"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/storage"
)

func TestClients_ApplicationWrittenBeforeClientFieldsHasNoRedirectURIsNorSecretUntilRotated(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, notify.Options{})
	owner := e.mustUser()
	app := e.mustApp(owner, "http://127.0.0.1:9000/hook")
	// The record as applications were stored before they were clients: no
	// client_id, no redirect_uris, and no client secret key.
	old := fmt.Sprintf(`{"id":%d,"name":"app","owner_user_id":%d,"callback_url":"http://127.0.0.1:9000/hook","topics":["questions"],"secret":%q}`,
		app.ID, owner, app.Secret)
	is.NoErr(e.m.Store().Update(e.ctx, func(tx storage.Tx) error {
		if err := tx.Set(keycodec.New("ntf/app").Int(app.ID), []byte(old)); err != nil {
			return err
		}
		return tx.Delete(keycodec.New("ntf/csecret").Int(app.ID))
	}))
	got, err := e.m.Notify.Application(e.ctx, app.ID)
	is.NoErr(err)
	is.Equal(got.ClientID, app.ID)         // the client id is the id
	is.Equal(got.RedirectURIs, []string{}) // none until set
	is.Equal(got.Secret, app.Secret)       // the notification secret kept
	_, err = e.m.Notify.AuthenticateClient(e.ctx, app.ID, app.ClientSecret)
	is.True(errs.Is(err, errs.Unauthorized)) // no client secret yet

	rotated, err := e.m.Notify.RotateClientSecret(e.ctx, app.ID)
	is.NoErr(err)
	is.Equal(len(rotated.ClientSecret), 64)
	_, err = e.m.Notify.AuthenticateClient(e.ctx, app.ID, rotated.ClientSecret)
	is.NoErr(err) // the rotated secret works
	_, err = e.m.Notify.AuthenticateClient(e.ctx, app.ID, app.ClientSecret)
	is.True(errs.Is(err, errs.Unauthorized)) // and no other
	var stored map[string]any
	is.NoErr(e.m.Store().View(e.ctx, func(tx storage.Tx) error {
		return kv.GetJSON(tx, keycodec.New("ntf/app").Int(app.ID), &stored)
	}))
	is.Equal(stored["client_secret"], nil) // never in the application record

	uris := []string{"http://127.0.0.1:5000/cb"}
	_, err = e.m.Notify.UpdateApplication(e.ctx, app.ID, notify.ApplicationUpdate{RedirectURIs: &uris})
	is.NoErr(err)
	_, err = e.m.Notify.AuthorizeRedirect(e.ctx, app.ID, "http://127.0.0.1:5000/cb")
	is.NoErr(err) // exact match
	for _, bad := range []string{"http://127.0.0.1:5000/cb/", "http://127.0.0.1:5000/CB", "http://127.0.0.1:5000/cb?x=1", "http://127.0.0.1:5000"} {
		_, err = e.m.Notify.AuthorizeRedirect(e.ctx, app.ID, bad)
		is.True(errs.Is(err, errs.Invalid)) // anything else is refused
	}
}

func TestClients_RedirectURIsMustBeAbsoluteWithoutFragment(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, notify.Options{})
	owner := e.mustUser()
	for _, bad := range []string{"", "/relative", "cb", "https://", "https://a.example/#x", "javascript:alert(1)", "data:text/html,x", "https://a b.example/"} {
		_, err := e.m.Notify.CreateApplication(e.ctx, notify.NewApplication{Name: "a", OwnerUserID: owner,
			CallbackURL: "http://127.0.0.1:9000/", Topics: []string{}, RedirectURIs: []string{bad}})
		is.True(errs.Is(err, errs.Invalid)) // refused
	}
	app, err := e.m.Notify.CreateApplication(e.ctx, notify.NewApplication{Name: "a", OwnerUserID: owner,
		CallbackURL: "http://127.0.0.1:9000/", Topics: []string{},
		RedirectURIs: []string{"https://a.example/cb?x=1", "com.example.app:/oauth", "https://a.example/cb?x=1"}})
	is.NoErr(err)
	is.Equal(app.RedirectURIs, []string{"https://a.example/cb?x=1", "com.example.app:/oauth"}) // duplicates removed
}
