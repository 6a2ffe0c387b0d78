package marketplace_test

import (
	"context"
	"testing"
	"time"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/pgtest"
)

// The tests of this file check the servers' memory of tokens on a shared
// PostgreSQL store (accounts, tokencache.go): a token a server has found
// costs no round trip again, and a revocation or a replaced state is
// honoured at once by the server that made it and by every other one on
// the store's word. The deadline of seen only catches a word that never
// arrives.

func authenticated(m *marketplace.Marketplace, token string) bool {
	_, err := m.Accounts.Authenticate(context.Background(), token)
	return err == nil
}

func refused(m *marketplace.Marketplace, token string) bool {
	_, err := m.Accounts.Authenticate(context.Background(), token)
	return errs.Is(err, errs.Unauthorized)
}

func TestTokens_ATokenFoundOnceCostsNoRoundTripAgainOnASharedStore(t *testing.T) {
	proxy, dbURL := throughProxy(t, pgtest.NewDatabase(t))
	m := openEngine(t, dbURL, marketplace.Options{})
	const token = "APP_USR-remembered-token-0001"
	if _, _, err := m.Accounts.EnsureUser(context.Background(), token, accounts.NewUser{Nickname: "REMEMBERED", SiteID: "MLA"}, nil); err != nil {
		t.Fatal(err)
	}
	if !authenticated(m, token) {
		t.Fatal("the token is refused")
	}
	before := proxy.RoundTrips()
	for range 10 {
		if !authenticated(m, token) {
			t.Fatal("the token is refused")
		}
	}
	if n := proxy.RoundTrips() - before; n != 0 {
		t.Errorf("10 lookups of a token found before made %d round trips; want 0", n)
	}
}

func TestTokens_ARevokedTokenIsRefusedAtOnceWhereRevokedAndOnTheOtherServersOnTheStoresWord(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	ctx := context.Background()
	a := openEngine(t, dbURL, marketplace.Options{})
	b := openEngine(t, dbURL, marketplace.Options{})
	const one, all = "APP_USR-revoked-token-one-0001", "APP_USR-revoked-token-all-0002"
	if _, _, err := a.Accounts.EnsureUser(ctx, one, accounts.NewUser{Nickname: "REVOKED_ONE", SiteID: "MLA"}, nil); err != nil {
		t.Fatal(err)
	}
	u, _, err := a.Accounts.EnsureUser(ctx, all, accounts.NewUser{Nickname: "REVOKED_ALL", SiteID: "MLA"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []*marketplace.Marketplace{a, b} {
		if !authenticated(m, one) || !authenticated(m, all) {
			t.Fatal("a token is refused before its revocation")
		}
	}
	since := time.Now()
	if err := a.Accounts.RevokeToken(ctx, one); err != nil {
		t.Fatal(err)
	}
	if !refused(a, one) {
		t.Fatal("the server that revoked the token still takes it")
	}
	seen(t, "a token revoked through another server refused", since, func() bool { return refused(b, one) })

	since = time.Now()
	if err := b.Accounts.RevokeAllTokens(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	if !refused(b, all) {
		t.Fatal("the server that revoked every token of the user still takes one")
	}
	seen(t, "every token of a user revoked through another server refused", since, func() bool { return refused(a, all) })
}

func TestTokens_AResetThroughOneServerIsHonouredByTheOthersMemoryOfTokens(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	ctx := context.Background()
	a := openEngine(t, dbURL, marketplace.Options{})
	b := openEngine(t, dbURL, marketplace.Options{})
	start(t, b)
	const token = "APP_USR-reset-token-0001"
	if _, _, err := a.Accounts.EnsureUser(ctx, token, accounts.NewUser{Nickname: "RESET", SiteID: "MLA"}, nil); err != nil {
		t.Fatal(err)
	}
	if !authenticated(a, token) || !authenticated(b, token) {
		t.Fatal("the token is refused before the reset")
	}
	since := time.Now()
	if err := a.Reset(ctx, marketplace.ResetOptions{}); err != nil {
		t.Fatal(err)
	}
	if !refused(a, token) {
		t.Fatal("the server that reset still takes a token of the state it replaced")
	}
	seen(t, "a token of the replaced state refused by the other server", since, func() bool { return refused(b, token) })
}
