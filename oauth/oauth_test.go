package oauth_test

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/oauth"
	"github.com/marketplace/marketplace/storage/memory"
)

func newEngine(t *testing.T) (*marketplace.Marketplace, accounts.User, notify.Application) {
	t.Helper()
	m, err := marketplace.New(memory.New(), marketplace.Options{Clock: clock.NewManual(time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	ctx := context.Background()
	u, _, err := m.CreateUser(ctx, accounts.NewUser{Nickname: "SELLER", SiteID: "MLA"})
	if err != nil {
		t.Fatal(err)
	}
	app, err := m.Notify.CreateApplication(ctx, notify.NewApplication{Name: "App", OwnerUserID: u.ID,
		CallbackURL: "https://example.com/cb", Topics: []string{}, RedirectURIs: []string{"https://app.example/cb?tenant=7"}})
	if err != nil {
		t.Fatal(err)
	}
	return m, u, app
}

func TestGrant_RedirectKeepsTheRegisteredQueryAndAddsCodeAndState(t *testing.T) {
	is := is.New(t)
	m, u, app := newEngine(t)
	ctx := context.Background()
	req := oauth.AuthorizationRequest{ResponseType: "code", ClientID: "1000001", RedirectURI: "https://app.example/cb?tenant=7", State: "s&t"}
	to, err := m.OAuth.Grant(ctx, req, u.ID)
	is.NoErr(err)
	loc, err := url.Parse(to)
	is.NoErr(err)
	is.Equal(loc.Host+loc.Path, "app.example/cb")
	is.Equal(loc.Query().Get("tenant"), "7")  // the registered query is kept
	is.Equal(loc.Query().Get("state"), "s&t") // the state, escaped and back
	code := loc.Query().Get("code")
	pair, err := m.OAuth.Token(ctx, oauth.TokenRequest{GrantType: "authorization_code", ClientID: "1000001",
		ClientSecret: app.ClientSecret, Code: code, RedirectURI: req.RedirectURI})
	is.NoErr(err)
	is.Equal(pair.UserID, u.ID)

	req.State = ""
	to, err = m.OAuth.Deny(ctx, req)
	is.NoErr(err)
	loc, _ = url.Parse(to)
	is.Equal(loc.Query().Get("error"), "access_denied")
	is.True(!loc.Query().Has("state")) // no state sent, none returned
}

func TestCheck_ClientAndRedirectURIFaultsAreNeverRedirects(t *testing.T) {
	is := is.New(t)
	m, _, _ := newEngine(t)
	ctx := context.Background()
	var re *oauth.RedirectError
	for _, req := range []oauth.AuthorizationRequest{
		{ResponseType: "token", ClientID: "", RedirectURI: "https://app.example/cb?tenant=7"},
		{ResponseType: "token", ClientID: "42", RedirectURI: "https://app.example/cb?tenant=7"},
		{ResponseType: "token", ClientID: "1000001", RedirectURI: "https://app.example/cb"},
		{ResponseType: "token", ClientID: "1000001", RedirectURI: ""},
	} {
		_, err := m.OAuth.Check(ctx, req)
		is.True(err != nil)
		is.True(!errors.As(err, &re)) // shown on the page, not sent to the redirect URI
	}
	_, err := m.OAuth.Check(ctx, oauth.AuthorizationRequest{ResponseType: "token", ClientID: "1000001", RedirectURI: "https://app.example/cb?tenant=7"})
	is.True(errors.As(err, &re)) // a registered redirect URI gets the other faults
	is.Equal(re.Code, "unsupported_response_type")
}

func TestToken_ParametersAreCheckedBeforeTheClientAndTheClientBeforeTheGrant(t *testing.T) {
	is := is.New(t)
	m, _, _ := newEngine(t)
	ctx := context.Background()
	_, err := m.OAuth.Token(ctx, oauth.TokenRequest{GrantType: "refresh_token", ClientID: "1", ClientSecret: "x"})
	is.Equal(errs.As(err).Code, "invalid_request") // a missing refresh_token first
	_, err = m.OAuth.Token(ctx, oauth.TokenRequest{GrantType: "refresh_token", ClientID: "1", ClientSecret: "x", RefreshToken: "TG-x"})
	is.Equal(errs.As(err).Code, "invalid_client") // then the client
	is.True(errs.Is(err, errs.Unauthorized))      // a 401
}
