package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/oauth2"
)

// chromiumPath returns Debian's chromium. Under CI it must be there (.ci/run
// installs it); on a user's machine without it the test is skipped.
func chromiumPath(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("chromium not found under CI: %v", err)
		}
		t.Skip("chromium not installed (apt-get install -y chromium): the authorization page is not tested in a browser")
	}
	return path
}

// TestAuthorizationPage_InChromium signs in as a test user on the page in a
// real headless browser, grants, and lands on the client's redirect
// receiver with the code and the state; the code then buys a token for that
// test user.
func TestAuthorizationPage_InChromium(t *testing.T) {
	browser := chromiumPath(t)
	srv := newLiveServer(t)

	type landing struct{ code, state string }
	landed := make(chan landing, 1)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r)
			return
		}
		select {
		case landed <- landing{r.URL.Query().Get("code"), r.URL.Query().Get("state")}:
		default:
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!DOCTYPE html><title>Signed in</title><p id="done">Signed in</p>`))
	}))
	t.Cleanup(receiver.Close)
	redirect := receiver.URL + "/callback"

	seller := srv.Seller
	app := srv.mustOAuthApp(seller.ID, redirect)
	res := srv.do("POST", "/users/test_user", seller.Token, map[string]any{"site_id": "MLA"})
	if res.Status != http.StatusCreated {
		t.Fatalf("create test user: %d %s", res.Status, res.Raw)
	}
	testUser := res.Obj()
	conf := &oauth2.Config{ClientID: app.ClientID, ClientSecret: app.Secret, RedirectURL: redirect,
		Endpoint: oauth2.Endpoint{AuthURL: srv.URL + "/authorization", TokenURL: srv.URL + "/oauth/token"}}
	verifier := oauth2.GenerateVerifier()
	authURL := conf.AuthCodeURL("state-42", oauth2.S256ChallengeOption(verifier))

	// A bound for a browser that hangs, not a timing the test relies on.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(browser),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("no-first-run", true),
		chromedp.UserDataDir(t.TempDir()),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()

	err := chromedp.Do(bctx,
		chromedp.Navigate(authURL),
		chromedp.WaitVisible("#nickname"),
	)
	if err != nil {
		t.Fatalf("browser: open the page: %v", err)
	}
	title, err := chromedp.Run(bctx, chromedp.Title())
	if err != nil {
		t.Fatalf("browser: title: %v", err)
	}
	err = chromedp.Do(bctx,
		chromedp.SendKeys("#nickname", testUser["nickname"].(string)),
		chromedp.SendKeys("#password", testUser["password"].(string)),
		chromedp.Click("#allow"),
		chromedp.WaitVisible("#done"),
	)
	if err != nil {
		t.Fatalf("browser: sign in and grant: %v", err)
	}
	finalURL, err := chromedp.Run(bctx, chromedp.Location())
	if err != nil {
		t.Fatalf("browser: location: %v", err)
	}
	if title != "Authorize My app" {
		t.Fatalf("page title %q", title)
	}
	if !strings.HasPrefix(finalURL, redirect+"?") {
		t.Fatalf("the browser landed on %q, want the redirect receiver", finalURL)
	}
	var got landing
	select {
	case got = <-landed:
	default:
		t.Fatal("the redirect receiver was not called")
	}
	if got.state != "state-42" || !strings.HasPrefix(got.code, "TG-") {
		t.Fatalf("landed with code %q and state %q", got.code, got.state)
	}
	if u, _ := url.Parse(finalURL); u.Query().Get("code") != got.code {
		t.Fatalf("the browser's URL %q does not carry the code", finalURL)
	}
	hc := context.WithValue(context.Background(), oauth2.HTTPClient, http.DefaultClient)
	tok, err := conf.Exchange(hc, got.code, oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange the page's code: %v", err)
	}
	if tok.Extra("user_id") != testUser["id"] {
		t.Fatalf("token of user %v, want the test user %v", tok.Extra("user_id"), testUser["id"])
	}
}
