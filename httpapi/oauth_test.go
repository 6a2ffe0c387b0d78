package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	"golang.org/x/oauth2"

	"github.com/marketplace/marketplace/marketplacetest"
)

// oauthApp is an application registered as an OAuth client.
type oauthApp struct {
	ID       int64
	ClientID string
	Secret   string
}

// mustOAuthApp registers an application of owner with redirect as its one
// redirect URI.
func (ts *testServer) mustOAuthApp(owner int64, redirect string) oauthApp {
	ts.t.Helper()
	return createOAuthApp(ts, owner, redirect)
}

func createOAuthApp(s operatorAPI, owner int64, redirect string) oauthApp {
	s.tb().Helper()
	res := s.operator("POST", "/operator/applications", map[string]any{
		"name": "My app", "owner_user_id": owner, "callback_url": "https://example.com/notifications",
		"topics": []string{}, "redirect_uris": []string{redirect},
	})
	if res.Status != http.StatusCreated {
		s.tb().Fatalf("create application: %d %s", res.Status, res.Raw)
	}
	o := res.Obj()
	return oauthApp{ID: int64(o["id"].(float64)), ClientID: fmt.Sprint(int64(o["client_id"].(float64))), Secret: o["client_secret"].(string)}
}

// mustCode asks the operator route for a code of user for app.
func (ts *testServer) mustCode(app oauthApp, userID int64, redirect string, extra map[string]any) string {
	ts.t.Helper()
	return createCode(ts, app, userID, redirect, extra)
}

func createCode(s operatorAPI, app oauthApp, userID int64, redirect string, extra map[string]any) string {
	s.tb().Helper()
	body := map[string]any{"client_id": app.ID, "user_id": userID, "redirect_uri": redirect}
	for k, v := range extra {
		body[k] = v
	}
	res := s.operator("POST", "/operator/authorizations", body)
	if res.Status != http.StatusCreated {
		s.tb().Fatalf("operator authorization: %d %s", res.Status, res.Raw)
	}
	return res.Obj()["code"].(string)
}

// form posts values to path as a form body.
func (ts *testServer) form(path string, values url.Values) response {
	ts.t.Helper()
	return ts.do("POST", path, "", values.Encode(), "Content-Type", "application/x-www-form-urlencoded")
}

const appRedirect = "http://127.0.0.1:9/callback"

func TestOAuth_GolangOAuth2ClientRunsTheCodeFlowWithPKCEAndRefreshesAfterSixHours(t *testing.T) {
	is := is.New(t)
	srv := newLiveServer(t)
	seller := srv.Seller
	app := srv.mustOAuthApp(seller.ID, appRedirect)
	conf := &oauth2.Config{
		ClientID: app.ClientID, ClientSecret: app.Secret, RedirectURL: appRedirect, Scopes: nil,
		Endpoint: oauth2.Endpoint{AuthURL: srv.URL + "/authorization", TokenURL: srv.URL + "/oauth/token"},
	}
	v := oauth2.GenerateVerifier()
	// What a person's grant on the page does: the page itself is driven by
	// a browser in TestAuthorizationPage_InChromium.
	code := srv.mustCode(app, seller.ID, appRedirect, map[string]any{
		"code_challenge": oauth2.S256ChallengeFromVerifier(v), "code_challenge_method": "S256"})
	authURL, err := url.Parse(conf.AuthCodeURL("xyz", oauth2.S256ChallengeOption(v)))
	is.NoErr(err)
	is.Equal(authURL.Query().Get("code_challenge_method"), "S256") // the library asks with PKCE

	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, http.DefaultClient)
	_, err = conf.Exchange(ctx, code, oauth2.VerifierOption("wrong-"+v))
	var re *oauth2.RetrieveError
	is.True(errors.As(err, &re))            // a wrong verifier is refused
	is.Equal(re.ErrorCode, "invalid_grant") // as invalid_grant
	code = srv.mustCode(app, seller.ID, appRedirect, map[string]any{
		"code_challenge": oauth2.S256ChallengeFromVerifier(v), "code_challenge_method": "S256"})
	tok, err := conf.Exchange(ctx, code, oauth2.VerifierOption(v))
	is.NoErr(err)
	is.True(strings.HasPrefix(tok.AccessToken, "APP_USR-"+app.ClientID+"-030415-")) // the public shape, MMddHH of the server clock
	is.True(strings.HasSuffix(tok.AccessToken, fmt.Sprintf("-%d", seller.ID)))
	is.True(strings.HasPrefix(tok.RefreshToken, "TG-"))
	is.Equal(tok.Type(), "Bearer")
	is.Equal(tok.Extra("user_id"), float64(seller.ID))
	is.Equal(tok.Extra("scope"), "offline_access read write")
	is.Equal(tok.ExpiresIn, int64(21600))

	// The library decides expiry on the wall clock; the server on its own
	// clock. Hand the source a token the library thinks is expired once
	// the server's clock has passed 6 hours.
	me := func(access string) response { return srv.do("GET", "/users/me", access, nil) }
	is.Equal(me(tok.AccessToken).Obj()["id"], float64(seller.ID)) // the token's user
	is.NoErr(srv.Clock.Set(marketplacetest.DefaultStart.Add(6*time.Hour + time.Second)))
	wantError(t, me(tok.AccessToken), http.StatusUnauthorized, "Expired access token")
	stale := *tok
	stale.Expiry = time.Now().Add(-time.Minute)
	src := conf.TokenSource(ctx, &stale)
	fresh, err := src.Token()
	is.NoErr(err)
	is.True(fresh.AccessToken != tok.AccessToken)                   // a new access token
	is.True(fresh.RefreshToken != tok.RefreshToken)                 // and a new refresh token
	is.Equal(me(fresh.AccessToken).Obj()["id"], float64(seller.ID)) // that works
	is.True(strings.Contains(fresh.AccessToken, "-030421-"))        // stamped at the server's hour

	reuse := conf.TokenSource(ctx, &stale)
	_, err = reuse.Token()
	is.True(errors.As(err, &re))            // the used refresh token is refused
	is.Equal(re.ErrorCode, "invalid_grant") // as invalid_grant
}

func TestTokenEndpoint_AcceptsFormJSONQueryAndBasicAuth(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	seller := ts.mustUser("MLA")
	app := ts.mustOAuthApp(seller.ID, appRedirect)
	params := func(code string) url.Values {
		return url.Values{"grant_type": {"authorization_code"}, "client_id": {app.ClientID}, "client_secret": {app.Secret},
			"code": {code}, "redirect_uri": {appRedirect}}
	}
	res := ts.form("/oauth/token", params(ts.mustCode(app, seller.ID, appRedirect, nil)))
	is.Equal(res.Status, http.StatusOK)                       // form body
	is.Equal(res.Header.Get("Cache-Control"), "no-store")     // never cached
	is.Equal(len(res.Obj()), 6)                               // access_token, token_type, expires_in, scope, user_id, refresh_token
	is.Equal(res.Obj()["user_id"], float64(seller.ID))        // the grant's user
	is.Equal(res.Obj()["scope"], "offline_access read write") // scope
	is.Equal(res.Obj()["token_type"], "Bearer")               // token type
	is.Equal(res.Obj()["expires_in"], float64(21600))         // 6 hours

	jsonBody := map[string]any{"grant_type": "authorization_code", "client_id": app.ID, "client_secret": app.Secret,
		"code": ts.mustCode(app, seller.ID, appRedirect, nil), "redirect_uri": appRedirect}
	res = ts.do("POST", "/oauth/token", "", jsonBody)
	is.Equal(res.Status, http.StatusOK) // JSON body, client_id a number

	res = ts.do("POST", "/oauth/token?"+params(ts.mustCode(app, seller.ID, appRedirect, nil)).Encode(), "", nil)
	is.Equal(res.Status, http.StatusOK) // query string, as older SDKs send it

	p := params(ts.mustCode(app, seller.ID, appRedirect, nil))
	p.Del("client_id")
	p.Del("client_secret")
	req := httptest.NewRequest("POST", "/oauth/token", strings.NewReader(p.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(app.ClientID, app.Secret)
	rec := httptest.NewRecorder()
	ts.handler.ServeHTTP(rec, req)
	is.Equal(rec.Code, http.StatusOK) // client authenticated with HTTP Basic
}

func TestTokenEndpoint_EveryErrorHasItsExactBody(t *testing.T) {
	ts := newTestServer(t)
	seller := ts.mustUser("MLA")
	app := ts.mustOAuthApp(seller.ID, appRedirect)
	other := ts.mustOAuthApp(seller.ID, appRedirect)
	const grantMsg = "Error validating grant. Your authorization code or refresh token may be expired or it was already used"
	invalidGrant := map[string]any{"message": grantMsg, "error_description": grantMsg, "error": "invalid_grant", "status": 400.0, "cause": []any{}}
	invalidClient := map[string]any{"message": "Invalid client_id or client_secret", "error_description": "Invalid client_id or client_secret",
		"error": "invalid_client", "status": 401.0, "cause": []any{}}
	invalidRequest := func(msg string) map[string]any {
		return map[string]any{"message": msg, "error_description": msg, "error": "invalid_request", "status": 400.0, "cause": []any{}}
	}
	used := ts.mustCode(app, seller.ID, appRedirect, nil)
	if res := ts.form("/oauth/token", url.Values{"grant_type": {"authorization_code"}, "client_id": {app.ClientID},
		"client_secret": {app.Secret}, "code": {used}, "redirect_uri": {appRedirect}}); res.Status != http.StatusOK {
		t.Fatalf("exchange: %d %s", res.Status, res.Raw)
	}
	pkceCode := func() string {
		return ts.mustCode(app, seller.ID, appRedirect, map[string]any{
			"code_challenge": oauth2.S256ChallengeFromVerifier(strings.Repeat("v", 43)), "code_challenge_method": "S256"})
	}
	code := func(extra ...string) url.Values {
		v := url.Values{"grant_type": {"authorization_code"}, "client_id": {app.ClientID}, "client_secret": {app.Secret},
			"code": {ts.mustCode(app, seller.ID, appRedirect, nil)}, "redirect_uri": {appRedirect}}
		for i := 0; i+1 < len(extra); i += 2 {
			if extra[i+1] == "" {
				v.Del(extra[i])
			} else {
				v.Set(extra[i], extra[i+1])
			}
		}
		return v
	}
	cases := []struct {
		name   string
		values url.Values
		body   string // sent as is with Content-Type JSON when set
		status int
		want   map[string]any
	}{
		{"NoGrantType", code("grant_type", ""), "", 400, invalidRequest("The parameter [grant_type] is required")},
		{"UnsupportedGrantType", code("grant_type", "password"), "", 400, map[string]any{
			"message":           "Unsupported grant_type: password. Valid values are: authorization_code, refresh_token",
			"error_description": "Unsupported grant_type: password. Valid values are: authorization_code, refresh_token",
			"error":             "unsupported_grant_type", "status": 400.0, "cause": []any{}}},
		{"NoClientID", code("client_id", ""), "", 400, invalidRequest("The parameter [client_id] is required")},
		{"NoClientSecret", code("client_secret", ""), "", 400, invalidRequest("The parameter [client_secret] is required")},
		{"NoCode", code("code", ""), "", 400, invalidRequest("The parameter [code] is required")},
		{"NoRedirectURI", code("redirect_uri", ""), "", 400, invalidRequest("The parameter [redirect_uri] is required")},
		{"NoRefreshToken", url.Values{"grant_type": {"refresh_token"}, "client_id": {app.ClientID}, "client_secret": {app.Secret}},
			"", 400, invalidRequest("The parameter [refresh_token] is required")},
		{"MalformedJSON", nil, `{"grant_type":`, 400, invalidRequest("Malformed JSON body: a JSON object of parameters is expected")},
		{"JSONParameterNotAString", nil, `{"grant_type":["authorization_code"]}`, 400, invalidRequest("Invalid parameter [grant_type]: a string is expected")},
		{"WrongSecret", code("client_secret", "nope"), "", 401, invalidClient},
		{"UnknownClient", code("client_id", "999999999"), "", 401, invalidClient},
		{"ClientIDNotANumber", code("client_id", "abc"), "", 401, invalidClient},
		{"AnotherClientsSecret", code("client_secret", other.Secret), "", 401, invalidClient},
		{"UsedCode", code("code", used), "", 400, invalidGrant},
		{"UnknownCode", code("code", "TG-nothing-1"), "", 400, invalidGrant},
		{"CodeOfAnotherClient", code("client_id", other.ClientID, "client_secret", other.Secret), "", 400, invalidGrant},
		{"RedirectURIMismatch", code("redirect_uri", appRedirect+"/x"), "", 400, invalidGrant},
		{"MissingVerifier", code("code", pkceCode()), "", 400, invalidGrant},
		{"WrongVerifier", code("code", pkceCode(), "code_verifier", strings.Repeat("w", 43)), "", 400, invalidGrant},
		{"VerifierWithoutChallenge", code("code_verifier", strings.Repeat("v", 43)), "", 400, invalidGrant},
		{"UnknownRefreshToken", url.Values{"grant_type": {"refresh_token"}, "client_id": {app.ClientID}, "client_secret": {app.Secret},
			"refresh_token": {"TG-nothing-1"}}, "", 400, invalidGrant},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var res response
			if c.body != "" {
				res = ts.do("POST", "/oauth/token", "", c.body)
			} else {
				res = ts.form("/oauth/token", c.values)
			}
			if res.Status != c.status {
				t.Fatalf("status %d, want %d: %s", res.Status, c.status, res.Raw)
			}
			got, _ := json.Marshal(res.Obj())
			want, _ := json.Marshal(c.want)
			if string(got) != string(want) {
				t.Fatalf("body\n got %s\nwant %s", got, want)
			}
		})
	}
	// The verifier is checked once: the code is spent by a failed try.
	c := pkceCode()
	ts.form("/oauth/token", code("code", c, "code_verifier", strings.Repeat("w", 43)))
	res := ts.form("/oauth/token", code("code", c, "code_verifier", strings.Repeat("v", 43)))
	if res.Status != 400 || res.Obj()["error"] != "invalid_grant" {
		t.Fatalf("a code after a failed verifier: %d %s; want invalid_grant", res.Status, res.Raw)
	}
}

func TestAuthorizationPage_RedirectURIMismatchOrUnknownClientNeverRedirects(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	seller := ts.mustUser("MLA")
	app := ts.mustOAuthApp(seller.ID, appRedirect)
	get := func(q url.Values) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		ts.handler.ServeHTTP(rec, httptest.NewRequest("GET", "/authorization?"+q.Encode(), nil))
		return rec
	}
	q := func(kv ...string) url.Values {
		v := url.Values{"response_type": {"code"}, "client_id": {app.ClientID}, "redirect_uri": {appRedirect}, "state": {"s1"}}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	for name, tc := range map[string]struct {
		q      url.Values
		status int
		text   string
	}{
		"RedirectURIPrefixOnly":  {q("redirect_uri", appRedirect+"/evil"), 400, "The redirect_uri does not match any redirect URI registered for the application"},
		"RedirectURIOtherHost":   {q("redirect_uri", "https://evil.example/callback"), 400, "does not match"},
		"RedirectURIMissing":     {q("redirect_uri", ""), 400, "The parameter [redirect_uri] is required"},
		"UnknownClient":          {q("client_id", "999999999"), 404, "Unknown client_id: 999999999"},
		"ClientIDNotANumber":     {q("client_id", "<b>x</b>"), 404, "Unknown client_id: &lt;b&gt;x&lt;/b&gt;"},
		"BadResponseTypeAndHost": {q("redirect_uri", "https://evil.example/", "response_type", "token"), 400, "does not match"},
	} {
		rec := get(tc.q)
		is.Equal(rec.Code, tc.status)                                                                // an error page
		is.Equal(rec.Header().Get("Location"), "")                                                   // never a redirect
		is.True(strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html"))                    // HTML
		is.True(strings.Contains(rec.Body.String(), tc.text))                                        // with the reason
		is.True(!strings.Contains(rec.Body.String(), "<form"))                                       // and no sign-in form
		is.True(strings.Contains(rec.Header().Get("Content-Security-Policy"), "default-src 'none'")) // no external assets
		_ = name
	}

	// A registered client and redirect URI with another fault goes back
	// to the client, with the state.
	rec := get(q("response_type", "token"))
	is.Equal(rec.Code, http.StatusFound)
	loc, err := url.Parse(rec.Header().Get("Location"))
	is.NoErr(err)
	is.Equal(loc.Query().Get("error"), "unsupported_response_type")
	is.Equal(loc.Query().Get("state"), "s1")
	rec = get(q("code_challenge", "short", "code_challenge_method", "S256"))
	is.Equal(rec.Code, http.StatusFound)
	loc, _ = url.Parse(rec.Header().Get("Location"))
	is.Equal(loc.Query().Get("error"), "invalid_request") // a bad PKCE challenge

	// The page: no external assets, a form to sign in.
	rec = get(q())
	is.Equal(rec.Code, http.StatusOK)
	is.True(strings.Contains(rec.Body.String(), `<form method="post" action="/authorization"`))
	is.True(!strings.Contains(rec.Body.String(), "<script")) // no script
	is.True(!strings.Contains(rec.Body.String(), "src="))    // nothing loaded
	is.True(!strings.Contains(rec.Body.String(), `<link`))   // from anywhere
}

func TestAuthorizationPage_FormSignsInTestUserOrOperatorPickAndDenyRedirectsWithAccessDenied(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	seller := ts.mustUser("MLA")
	app := ts.mustOAuthApp(seller.ID, appRedirect)
	res := ts.do("POST", "/users/test_user", seller.Token, map[string]any{"site_id": "MLA"})
	is.Equal(res.Status, http.StatusCreated)
	tu := res.Obj()
	base := url.Values{"response_type": {"code"}, "client_id": {app.ClientID}, "redirect_uri": {appRedirect}, "state": {"abc"}}
	post := func(extra ...string) *httptest.ResponseRecorder {
		v := url.Values{}
		for k, vs := range base {
			v[k] = vs
		}
		for i := 0; i+1 < len(extra); i += 2 {
			v.Set(extra[i], extra[i+1])
		}
		req := httptest.NewRequest("POST", "/authorization", strings.NewReader(v.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		rec := httptest.NewRecorder()
		ts.handler.ServeHTTP(rec, req)
		return rec
	}
	rec := post("nickname", tu["nickname"].(string), "password", "wrong", "action", "allow")
	is.Equal(rec.Code, http.StatusUnauthorized)                                  // a wrong password
	is.True(strings.Contains(rec.Body.String(), "Invalid nickname or password")) // is shown on the page
	is.Equal(rec.Header().Get("Location"), "")                                   // without a redirect
	rec = post("nickname", tu["nickname"].(string), "password", tu["password"].(string), "action", "allow")
	is.Equal(rec.Code, http.StatusFound)
	loc, _ := url.Parse(rec.Header().Get("Location"))
	is.Equal(loc.Scheme+"://"+loc.Host+loc.Path, appRedirect)
	is.Equal(loc.Query().Get("state"), "abc")
	is.True(strings.HasPrefix(loc.Query().Get("code"), "TG-"))
	res = ts.form("/oauth/token", url.Values{"grant_type": {"authorization_code"}, "client_id": {app.ClientID},
		"client_secret": {app.Secret}, "code": {loc.Query().Get("code")}, "redirect_uri": {appRedirect}})
	is.Equal(res.Status, http.StatusOK)
	is.Equal(res.Obj()["user_id"], tu["id"]) // the test user's token

	rec = post("operator_token", "wrong-operator-token-value", "user_id", fmt.Sprint(seller.ID))
	is.Equal(rec.Code, http.StatusUnauthorized) // the operator pick needs the operator token
	rec = post("operator_token", testOperatorToken, "user_id", fmt.Sprint(seller.ID))
	is.Equal(rec.Code, http.StatusFound)
	loc, _ = url.Parse(rec.Header().Get("Location"))
	res = ts.form("/oauth/token", url.Values{"grant_type": {"authorization_code"}, "client_id": {app.ClientID},
		"client_secret": {app.Secret}, "code": {loc.Query().Get("code")}, "redirect_uri": {appRedirect}})
	is.Equal(res.Obj()["user_id"], float64(seller.ID)) // the picked user's token

	rec = post("action", "deny")
	is.Equal(rec.Code, http.StatusFound)
	loc, _ = url.Parse(rec.Header().Get("Location"))
	is.Equal(loc.Query().Get("error"), "access_denied")
	is.Equal(loc.Query().Get("state"), "abc")
	is.Equal(loc.Query().Get("code"), "")

	rec = post("redirect_uri", "https://evil.example/cb", "nickname", tu["nickname"].(string), "password", tu["password"].(string))
	is.Equal(rec.Code, http.StatusBadRequest) // a submitted form is checked again
	is.Equal(rec.Header().Get("Location"), "")
}

func TestTestUsers_CreatedWithAUserTokenAtMostTenAndSeenByUsersMe(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	owner := ts.mustUser("MLA")
	res := ts.do("POST", "/users/test_user", owner.Token, map[string]any{"site_id": "MLA"})
	is.Equal(res.Status, http.StatusCreated)
	o := res.Obj()
	is.Equal(len(o), 5) // id, nickname, password, site_status, email
	is.True(strings.HasPrefix(o["nickname"].(string), "TEST"))
	is.Equal(o["site_status"], "active")
	is.True(len(o["password"].(string)) >= 10)
	is.Equal(o["email"], fmt.Sprintf("test_user_%d@testuser.com", int64(o["id"].(float64))))

	for i := 1; i < 10; i++ {
		is.Equal(ts.do("POST", "/users/test_user", owner.Token, map[string]any{"site_id": "MLB"}).Status, http.StatusCreated)
	}
	wantError(t, ts.do("POST", "/users/test_user", owner.Token, map[string]any{"site_id": "MLA"}), http.StatusBadRequest,
		"Test user limit reached: a user may create at most 10 test users")
	wantError(t, ts.do("POST", "/users/test_user", ts.mustUser("MLA").Token, map[string]any{"site_id": "XXX"}), http.StatusBadRequest,
		"Invalid site_id: XXX")
	wantError(t, ts.do("POST", "/users/test_user", ts.mustUser("MLA").Token, map[string]any{}), http.StatusBadRequest,
		"The fields [site_id] are required for requested call")
	wantError(t, ts.do("POST", "/users/test_user", "", map[string]any{"site_id": "MLA"}), http.StatusUnauthorized, "")
	wantError(t, ts.do("POST", "/users/123", owner.Token, map[string]any{"site_id": "MLA"}), http.StatusNotFound,
		"Resource POST /users/123 not found")

	me := ts.do("GET", "/users/me", owner.Token, nil)
	is.Equal(me.Status, http.StatusOK)
	is.Equal(me.Obj()["id"], float64(owner.ID)) // the token's user
	is.Equal(me.Obj()["first_name"], "Test")    // the whole record
}

func TestApplications_SecretShownOnceRotatedAndRedirectURIsExact(t *testing.T) {
	is := is.New(t)
	ts := newTestServer(t)
	seller := ts.mustUser("MLA")
	app := ts.mustOAuthApp(seller.ID, appRedirect)
	res := ts.do("GET", fmt.Sprintf("/operator/applications/%d", app.ID), testOperatorToken, nil)
	is.Equal(res.Obj()["client_secret"], nil)                // never read back
	is.Equal(res.Obj()["redirect_uris"], []any{appRedirect}) // registered
	res = ts.do("POST", fmt.Sprintf("/operator/applications/%d/secret", app.ID), testOperatorToken, nil)
	is.Equal(res.Status, http.StatusOK)
	newSecret := res.Obj()["client_secret"].(string)
	is.True(newSecret != app.Secret)
	tokenWith := func(secret string) response {
		return ts.form("/oauth/token", url.Values{"grant_type": {"authorization_code"}, "client_id": {app.ClientID},
			"client_secret": {secret}, "code": {ts.mustCode(app, seller.ID, appRedirect, nil)}, "redirect_uri": {appRedirect}})
	}
	is.Equal(tokenWith(app.Secret).Status, http.StatusUnauthorized) // the old secret stops working
	is.Equal(tokenWith(newSecret).Status, http.StatusOK)            // the new one works
	wantError(t, ts.do("POST", "/operator/applications/99999999/secret", testOperatorToken, nil), http.StatusNotFound,
		"Application not found: 99999999")

	res = ts.do("PUT", fmt.Sprintf("/operator/applications/%d", app.ID), testOperatorToken, map[string]any{
		"redirect_uris": []string{"https://app.example/cb", "com.example.app:/oauth"}})
	is.Equal(res.Status, http.StatusOK)
	is.Equal(res.Obj()["redirect_uris"], []any{"https://app.example/cb", "com.example.app:/oauth"})
	wantError(t, ts.do("PUT", fmt.Sprintf("/operator/applications/%d", app.ID), testOperatorToken, map[string]any{
		"redirect_uris": []string{"https://app.example/cb#frag"}}), http.StatusBadRequest,
		`Invalid redirect_uri: "https://app.example/cb#frag". It must be an absolute URL without a fragment`)
	wantError(t, ts.do("POST", "/operator/authorizations", testOperatorToken, map[string]any{
		"client_id": app.ID, "user_id": seller.ID, "redirect_uri": appRedirect}), http.StatusBadRequest,
		fmt.Sprintf("The redirect_uri does not match any redirect URI registered for the application %d", app.ID))
	wantError(t, ts.do("POST", "/operator/authorizations", seller.Token, map[string]any{}), http.StatusForbidden, "")
}
