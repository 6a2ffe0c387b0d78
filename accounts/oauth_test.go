package accounts_test

import (
	"context"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/errs"
)

func TestExchangeCode_PlainChallengeIsTheVerifierItselfAndDefaultMethod(t *testing.T) {
	is := is.New(t)
	svc, _ := newService(t)
	ctx := context.Background()
	u := mustUser(t, svc, accounts.NewUser{Nickname: "A", SiteID: "MLA"})
	v := strings.Repeat("a", 43)
	for _, method := range []string{"plain", ""} {
		code, err := svc.IssueCode(ctx, accounts.Authorization{ClientID: 7, UserID: u.ID, RedirectURI: "https://x/cb",
			CodeChallenge: v, CodeChallengeMethod: method})
		is.NoErr(err)
		pair, err := svc.ExchangeCode(ctx, 7, code, "https://x/cb", v)
		is.NoErr(err) // the verifier equals the challenge
		is.Equal(pair.UserID, u.ID)
	}
	code, err := svc.IssueCode(ctx, accounts.Authorization{ClientID: 7, UserID: u.ID, RedirectURI: "https://x/cb",
		CodeChallenge: v, CodeChallengeMethod: "plain"})
	is.NoErr(err)
	_, err = svc.ExchangeCode(ctx, 7, code, "https://x/cb", strings.Repeat("b", 43))
	is.Equal(errs.As(err).Code, "invalid_grant") // another verifier is refused
}

func TestIssueCode_BadChallengeOrMethodIsInvalidRequestAndUnknownUserNotFound(t *testing.T) {
	is := is.New(t)
	svc, _ := newService(t)
	ctx := context.Background()
	u := mustUser(t, svc, accounts.NewUser{Nickname: "A", SiteID: "MLA"})
	good := strings.Repeat("a", 43)
	for _, a := range []accounts.Authorization{
		{CodeChallenge: "short", CodeChallengeMethod: "S256"},
		{CodeChallenge: strings.Repeat("a", 129), CodeChallengeMethod: "S256"},
		{CodeChallenge: strings.Repeat("a", 42) + "!", CodeChallengeMethod: "S256"},
		{CodeChallenge: good, CodeChallengeMethod: "S512"},
		{CodeChallengeMethod: "S256"},
	} {
		a.ClientID, a.UserID, a.RedirectURI = 7, u.ID, "https://x/cb"
		_, err := svc.IssueCode(ctx, a)
		is.Equal(errs.As(err).Code, "invalid_request") // refused before any write
	}
	_, err := svc.IssueCode(ctx, accounts.Authorization{ClientID: 7, UserID: 999, RedirectURI: "https://x/cb"})
	is.True(errs.Is(err, errs.NotFound)) // no such user
}

func TestCreateTestUser_NeedsAnExistingOwnerAndAValidSite(t *testing.T) {
	is := is.New(t)
	svc, _ := newService(t)
	ctx := context.Background()
	_, err := svc.CreateTestUser(ctx, 999, "MLA")
	is.True(errs.Is(err, errs.NotFound)) // unknown owner
	u := mustUser(t, svc, accounts.NewUser{Nickname: "A", SiteID: "MLA"})
	_, err = svc.CreateTestUser(ctx, u.ID, "ZZZ")
	is.True(errs.Is(err, errs.Invalid)) // unknown site
	tu, err := svc.CreateTestUser(ctx, u.ID, "MLB")
	is.NoErr(err)
	got, err := svc.User(ctx, tu.ID)
	is.NoErr(err)
	is.Equal(got.SiteID, "MLB")
	is.Equal(got.CountryID, "BR")
	is.Equal(got.Nickname, tu.Nickname)
	is.True(got.HasTag(accounts.TagTestUser))
	_, err = svc.SignIn(ctx, "", "")
	is.True(errs.Is(err, errs.Unauthorized)) // nothing to sign in with
	_, err = svc.SignIn(ctx, "A", "anything")
	is.True(errs.Is(err, errs.Unauthorized)) // only test users have passwords
}

func TestRevokeAllTokens_AlsoRetiresTheRefreshTokensOfGrants(t *testing.T) {
	is := is.New(t)
	svc, _ := newService(t)
	ctx := context.Background()
	u := mustUser(t, svc, accounts.NewUser{Nickname: "A", SiteID: "MLA"})
	var pairs []accounts.TokenPair
	for _, client := range []int64{7, 8} {
		code, err := svc.IssueCode(ctx, accounts.Authorization{ClientID: client, UserID: u.ID, RedirectURI: "https://x/cb"})
		is.NoErr(err)
		pair, err := svc.ExchangeCode(ctx, client, code, "https://x/cb", "")
		is.NoErr(err)
		pairs = append(pairs, pair)
	}
	is.NoErr(svc.RevokeAllTokens(ctx, u.ID))
	for i, client := range []int64{7, 8} {
		_, err := svc.Authenticate(ctx, pairs[i].AccessToken)
		is.True(errs.Is(err, errs.Unauthorized)) // the access token is revoked
		_, err = svc.Refresh(ctx, client, pairs[i].RefreshToken)
		is.Equal(errs.As(err).Code, "invalid_grant") // and its refresh token
	}
}
