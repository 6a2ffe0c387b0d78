package marketplace_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/pgtest"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/oauth"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/badger"
	"github.com/marketplace/marketplace/storage/memory"
	"github.com/marketplace/marketplace/storage/postgres"
)

// oauthBackends opens one engine per backend, each on a manual clock.
func oauthBackends(t *testing.T) map[string]func(t *testing.T) (*marketplace.Marketplace, *clock.Manual) {
	open := func(t *testing.T, st storage.Store) (*marketplace.Marketplace, *clock.Manual) {
		t.Helper()
		clk := clock.NewManual(time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC))
		m, err := marketplace.New(st, marketplace.Options{Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = m.Close(); _ = st.Close() })
		return m, clk
	}
	return map[string]func(t *testing.T) (*marketplace.Marketplace, *clock.Manual){
		"memory": func(t *testing.T) (*marketplace.Marketplace, *clock.Manual) { return open(t, memory.New()) },
		"badger": func(t *testing.T) (*marketplace.Marketplace, *clock.Manual) {
			st, err := badger.Open(t.TempDir(), badger.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return open(t, st)
		},
		"postgres": func(t *testing.T) (*marketplace.Marketplace, *clock.Manual) {
			st, err := postgres.Open(context.Background(), pgtest.NewDatabase(t), postgres.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return open(t, st)
		},
	}
}

const testRedirect = "http://127.0.0.1:9999/callback"

// oauthClient creates a user and an application with testRedirect
// registered, and returns the user, the application and its secret.
func oauthClient(t *testing.T, m *marketplace.Marketplace) (accounts.User, notify.Application) {
	t.Helper()
	ctx := context.Background()
	u, _, err := m.CreateUser(ctx, accounts.NewUser{Nickname: "SELLER", SiteID: "MLA"})
	if err != nil {
		t.Fatal(err)
	}
	app, err := m.Notify.CreateApplication(ctx, notify.NewApplication{Name: "App", OwnerUserID: u.ID,
		CallbackURL: "https://example.com/cb", Topics: []string{}, RedirectURIs: []string{testRedirect}})
	if err != nil {
		t.Fatal(err)
	}
	return u, app
}

func s256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk-0123456789"

func isInvalidGrant(err error) bool {
	e := errs.As(err)
	return e != nil && e.Kind == errs.Invalid && e.Code == "invalid_grant" &&
		e.Description == "Error validating grant. Your authorization code or refresh token may be expired or it was already used"
}

func TestOAuthGrants_EveryBackend(t *testing.T) {
	for name, open := range oauthBackends(t) {
		t.Run(name, func(t *testing.T) {
			t.Run("CodeIsSingleUseAndTheTokenHasThePublicShape", func(t *testing.T) {
				m, _ := open(t)
				ctx := context.Background()
				u, app := oauthClient(t, m)
				code, err := m.OAuth.Authorize(ctx, oauth.OperatorGrant{ClientID: app.ID, UserID: u.ID, RedirectURI: testRedirect,
					CodeChallenge: s256(verifier), CodeChallengeMethod: "S256"})
				if err != nil {
					t.Fatal(err)
				}
				if !strings.HasPrefix(code, "TG-") {
					t.Fatalf("code %q: want TG-…", code)
				}
				req := oauth.TokenRequest{GrantType: "authorization_code", ClientID: fmt.Sprint(app.ID), ClientSecret: app.ClientSecret,
					Code: code, RedirectURI: testRedirect, CodeVerifier: verifier}
				pair, err := m.OAuth.Token(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				want := regexp.MustCompile(fmt.Sprintf(`^APP_USR-%d-030415-[0-9a-f]{32}-%d$`, app.ID, u.ID))
				if !want.MatchString(pair.AccessToken) {
					t.Fatalf("access token %q: want APP_USR-<client_id>-<MMddHH>-<random>-<user_id>", pair.AccessToken)
				}
				if pair.TokenType != "Bearer" || pair.ExpiresIn != 21600 || pair.Scope != "offline_access read write" ||
					pair.UserID != u.ID || !strings.HasPrefix(pair.RefreshToken, "TG-") {
					t.Fatalf("token answer %+v", pair)
				}
				if id, err := m.Accounts.Authenticate(ctx, pair.AccessToken); err != nil || id != u.ID {
					t.Fatalf("the access token authenticates %d, %v; want %d", id, err, u.ID)
				}
				if _, err := m.OAuth.Token(ctx, req); !isInvalidGrant(err) {
					t.Fatalf("second exchange of the code: %v; want invalid_grant", err)
				}
			})
			t.Run("ExpiryFollowsTheServerClock", func(t *testing.T) {
				m, clk := open(t)
				ctx := context.Background()
				u, app := oauthClient(t, m)
				stale, err := m.OAuth.Authorize(ctx, oauth.OperatorGrant{ClientID: app.ID, UserID: u.ID, RedirectURI: testRedirect})
				if err != nil {
					t.Fatal(err)
				}
				code, err := m.OAuth.Authorize(ctx, oauth.OperatorGrant{ClientID: app.ID, UserID: u.ID, RedirectURI: testRedirect})
				if err != nil {
					t.Fatal(err)
				}
				_, operatorToken, err := m.CreateUser(ctx, accounts.NewUser{Nickname: "OPERATOR_MADE", SiteID: "MLA"})
				if err != nil {
					t.Fatal(err)
				}
				req := oauth.TokenRequest{GrantType: "authorization_code", ClientID: fmt.Sprint(app.ID), ClientSecret: app.ClientSecret,
					Code: code, RedirectURI: testRedirect}
				must(t, clk.Set(clk.Now().Add(10*time.Minute-time.Nanosecond)))
				pair, err := m.OAuth.Token(ctx, req)
				if err != nil {
					t.Fatalf("a code just under 10 minutes old: %v", err)
				}
				must(t, clk.Set(clk.Now().Add(time.Nanosecond)))
				req.Code = stale
				if _, err := m.OAuth.Token(ctx, req); !isInvalidGrant(err) {
					t.Fatalf("a code 10 minutes old: %v; want invalid_grant", err)
				}
				must(t, clk.Set(clk.Now().Add(6*time.Hour-2*time.Nanosecond))) // the token is 1ns old already
				if _, err := m.Accounts.Authenticate(ctx, pair.AccessToken); err != nil {
					t.Fatalf("an access token just under 6 hours old: %v", err)
				}
				must(t, clk.Set(clk.Now().Add(time.Nanosecond)))
				if _, err := m.Accounts.Authenticate(ctx, pair.AccessToken); !errs.Is(err, errs.Unauthorized) {
					t.Fatalf("an access token 6 hours old: %v; want Unauthorized", err)
				}
				must(t, clk.Set(clk.Now().AddDate(1, 0, 0)))
				if _, err := m.Accounts.Authenticate(ctx, operatorToken); err != nil {
					t.Fatalf("an operator's token a year later: %v; it never expires", err)
				}
				rreq := oauth.TokenRequest{GrantType: "refresh_token", ClientID: fmt.Sprint(app.ID), ClientSecret: app.ClientSecret,
					RefreshToken: pair.RefreshToken}
				if _, err := m.OAuth.Token(ctx, rreq); !isInvalidGrant(err) {
					t.Fatalf("a refresh token a year old: %v; want invalid_grant", err)
				}
			})
			t.Run("OnlyTheLatestRefreshTokenWorksOnce", func(t *testing.T) {
				m, clk := open(t)
				ctx := context.Background()
				u, app := oauthClient(t, m)
				exchange := func() accounts.TokenPair {
					t.Helper()
					code, err := m.OAuth.Authorize(ctx, oauth.OperatorGrant{ClientID: app.ID, UserID: u.ID, RedirectURI: testRedirect})
					if err != nil {
						t.Fatal(err)
					}
					pair, err := m.OAuth.Token(ctx, oauth.TokenRequest{GrantType: "authorization_code", ClientID: fmt.Sprint(app.ID),
						ClientSecret: app.ClientSecret, Code: code, RedirectURI: testRedirect})
					if err != nil {
						t.Fatal(err)
					}
					return pair
				}
				refresh := func(tok string) (accounts.TokenPair, error) {
					return m.OAuth.Token(ctx, oauth.TokenRequest{GrantType: "refresh_token", ClientID: fmt.Sprint(app.ID),
						ClientSecret: app.ClientSecret, RefreshToken: tok})
				}
				first := exchange()
				second := exchange()
				if _, err := refresh(first.RefreshToken); !isInvalidGrant(err) {
					t.Fatalf("a refresh token superseded by a later grant: %v; want invalid_grant", err)
				}
				must(t, clk.Set(clk.Now().Add(7*time.Hour)))
				next, err := refresh(second.RefreshToken)
				if err != nil {
					t.Fatal(err)
				}
				if next.RefreshToken == second.RefreshToken || next.AccessToken == second.AccessToken {
					t.Fatal("a refresh returns a new pair")
				}
				if _, err := refresh(second.RefreshToken); !isInvalidGrant(err) {
					t.Fatalf("a refresh token used twice: %v; want invalid_grant", err)
				}
				if _, err := m.Accounts.Authenticate(ctx, next.AccessToken); err != nil {
					t.Fatalf("the refreshed access token: %v", err)
				}

				// Concurrent refreshes with one token: exactly one wins.
				const n = 8
				var wg sync.WaitGroup
				results := make([]error, n)
				for i := range n {
					wg.Add(1)
					go func() {
						defer wg.Done()
						_, results[i] = refresh(next.RefreshToken)
					}()
				}
				wg.Wait()
				won := 0
				for _, err := range results {
					switch {
					case err == nil:
						won++
					case !isInvalidGrant(err):
						t.Fatalf("a concurrent refresh failed otherwise: %v", err)
					}
				}
				if won != 1 {
					t.Fatalf("%d of %d concurrent refreshes with one token succeeded; want exactly 1", won, n)
				}
			})
			t.Run("TestUsersSignInAndAreLimitedToTenPerOwner", func(t *testing.T) {
				m, _ := open(t)
				ctx := context.Background()
				owner, _, err := m.CreateUser(ctx, accounts.NewUser{Nickname: "OWNER", SiteID: "MLA"})
				if err != nil {
					t.Fatal(err)
				}
				var wg sync.WaitGroup
				created := make(chan accounts.TestUser, 2*accounts.MaxTestUsers)
				for range 2 * accounts.MaxTestUsers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						tu, err := m.Accounts.CreateTestUser(ctx, owner.ID, "MLA")
						if err == nil {
							created <- tu
						} else if !errs.Is(err, errs.Invalid) {
							t.Errorf("create test user: %v", err)
						}
					}()
				}
				wg.Wait()
				close(created)
				var users []accounts.TestUser
				for tu := range created {
					users = append(users, tu)
				}
				if len(users) != accounts.MaxTestUsers {
					t.Fatalf("%d test users created by concurrent calls; want exactly %d", len(users), accounts.MaxTestUsers)
				}
				tu := users[0]
				if id, err := m.Accounts.SignIn(ctx, tu.Nickname, tu.Password); err != nil || id != tu.ID {
					t.Fatalf("sign in: %d %v; want %d", id, err, tu.ID)
				}
				if _, err := m.Accounts.SignIn(ctx, tu.Nickname, tu.Password+"x"); !errs.Is(err, errs.Unauthorized) {
					t.Fatalf("a wrong password: %v; want Unauthorized", err)
				}
			})
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
