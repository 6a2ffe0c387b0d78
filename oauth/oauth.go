// Package oauth is the OAuth 2 protocol of the public API: the
// authorization request (RFC 6749 4.1.1, PKCE per RFC 7636) and the token
// endpoint's grants (authorization_code, refresh_token), with their errors.
//
// It is its own package because it joins two domains that cannot reach each
// other: the clients are applications (notify, which imports accounts), and
// the grants and tokens are users' (accounts, which may not import notify).
// The rules of each half stay in its domain; this package holds the order
// in which they are asked and the protocol's error codes.
package oauth

import (
	"context"
	"net/url"
	"strconv"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/notify"
)

// Grant types of the token endpoint.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantRefreshToken      = "refresh_token"
)

// Service answers authorization requests and token requests.
type Service struct {
	accounts *accounts.Service
	notify   *notify.Service
}

// New returns the OAuth service over the users and the applications.
func New(a *accounts.Service, n *notify.Service) *Service {
	return &Service{accounts: a, notify: n}
}

// TokenRequest is a request to the token endpoint, every parameter as
// sent.
type TokenRequest struct {
	GrantType    string
	ClientID     string
	ClientSecret string
	Code         string
	RedirectURI  string
	CodeVerifier string
	RefreshToken string
}

// Token answers a token request: the parameters the grant needs must be
// present, the client must authenticate, then the grant decides. Errors:
// Invalid (invalid_request, unsupported_grant_type, invalid_grant),
// Unauthorized (invalid_client).
func (s *Service) Token(ctx context.Context, req TokenRequest) (accounts.TokenPair, error) {
	var required []string
	switch req.GrantType {
	case "":
		return accounts.TokenPair{}, accounts.ErrInvalidRequest("The parameter [grant_type] is required")
	case GrantAuthorizationCode:
		required = []string{"client_id", "client_secret", "code", "redirect_uri"}
	case GrantRefreshToken:
		required = []string{"client_id", "client_secret", "refresh_token"}
	default:
		msg := "Unsupported grant_type: " + truncate(req.GrantType, 50) + ". Valid values are: authorization_code, refresh_token"
		return accounts.TokenPair{}, errs.WithCode(errs.Invalid, "unsupported_grant_type", msg).WithDescription(msg)
	}
	values := map[string]string{"client_id": req.ClientID, "client_secret": req.ClientSecret, "code": req.Code,
		"redirect_uri": req.RedirectURI, "refresh_token": req.RefreshToken}
	for _, name := range required {
		if values[name] == "" {
			return accounts.TokenPair{}, accounts.ErrInvalidRequest("The parameter [" + name + "] is required")
		}
	}
	clientID, err := strconv.ParseInt(req.ClientID, 10, 64)
	if err != nil || clientID <= 0 {
		return accounts.TokenPair{}, notify.ErrInvalidClient()
	}
	if _, err := s.notify.AuthenticateClient(ctx, clientID, req.ClientSecret); err != nil {
		return accounts.TokenPair{}, err
	}
	if req.GrantType == GrantAuthorizationCode {
		return s.accounts.ExchangeCode(ctx, clientID, req.Code, req.RedirectURI, req.CodeVerifier)
	}
	return s.accounts.Refresh(ctx, clientID, req.RefreshToken)
}

// AuthorizationRequest is the query of the authorization page.
type AuthorizationRequest struct {
	ResponseType        string
	ClientID            string
	RedirectURI         string
	State               string
	CodeChallenge       string
	CodeChallengeMethod string
}

// Client is the application an authorization request is for, as the page
// shows it.
type Client struct {
	ID   int64
	Name string
}

// RedirectError is an error of an authorization request that goes back to
// the client at its redirect URI (RFC 6749 4.1.2.1), rather than to the
// person on the page.
type RedirectError struct {
	Code        string
	Description string
	// URL is the redirect URI with error, error_description and state.
	URL string
}

// Error returns the OAuth 2 error code and its description.
func (e *RedirectError) Error() string { return e.Code + ": " + e.Description }

// Check checks an authorization request before the page asks anyone to
// sign in. An unknown client or a redirect URI that is not registered
// exactly is an error shown on the page, never a redirect, so that the page
// cannot send anyone to an address the client did not register. Any other
// fault (response type, PKCE parameters) is a *RedirectError. Errors:
// NotFound (client), Invalid (redirect URI), *RedirectError.
func (s *Service) Check(ctx context.Context, req AuthorizationRequest) (Client, error) {
	if req.ClientID == "" {
		return Client{}, errs.Invalidf("The parameter [client_id] is required")
	}
	clientID, err := strconv.ParseInt(req.ClientID, 10, 64)
	if err != nil || clientID <= 0 {
		return Client{}, errs.NotFoundf("Unknown client_id: %s", truncate(req.ClientID, 50))
	}
	app, err := s.notify.AuthorizeRedirect(ctx, clientID, req.RedirectURI)
	if err != nil {
		return Client{}, err
	}
	if req.ResponseType != "code" {
		return Client{}, redirectError(req, "unsupported_response_type", "The response_type must be code")
	}
	if _, err := accounts.CheckChallenge(req.CodeChallenge, req.CodeChallengeMethod); err != nil {
		return Client{}, redirectError(req, "invalid_request", errs.As(err).Message)
	}
	return Client{ID: app.ID, Name: app.Name}, nil
}

// Deny is the redirect of a person who refused the request (RFC 6749
// 4.1.2.1 access_denied). Errors: as Check.
func (s *Service) Deny(ctx context.Context, req AuthorizationRequest) (string, error) {
	if _, err := s.Check(ctx, req); err != nil {
		return "", err
	}
	return redirectError(req, "access_denied", "The user denied the authorization").URL, nil
}

// Grant records that user grants req and returns where the browser goes:
// the redirect URI with the new code and the state. Errors: as Check, and
// NotFound (user).
func (s *Service) Grant(ctx context.Context, req AuthorizationRequest, user int64) (string, error) {
	if _, err := s.Check(ctx, req); err != nil {
		return "", err
	}
	clientID, _ := strconv.ParseInt(req.ClientID, 10, 64)
	code, err := s.accounts.IssueCode(ctx, accounts.Authorization{ClientID: clientID, UserID: user,
		RedirectURI: req.RedirectURI, CodeChallenge: req.CodeChallenge, CodeChallengeMethod: req.CodeChallengeMethod})
	if err != nil {
		return "", err
	}
	return withQuery(req.RedirectURI, "code", code, "state", req.State), nil
}

// OperatorGrant is the input of Authorize: what a person's grant on the
// page does, for automated tests.
type OperatorGrant struct {
	ClientID            int64  `json:"client_id"`
	UserID              int64  `json:"user_id"`
	RedirectURI         string `json:"redirect_uri"`
	CodeChallenge       string `json:"code_challenge"`
	CodeChallengeMethod string `json:"code_challenge_method"`
}

// Authorize issues the code that user g.UserID's grant on the page would.
// Errors: Invalid (fields, redirect URI, PKCE), NotFound (client, user).
func (s *Service) Authorize(ctx context.Context, g OperatorGrant) (string, error) {
	if g.ClientID <= 0 {
		return "", errs.Invalidf("The fields [client_id] are required for requested call")
	}
	if g.UserID <= 0 {
		return "", errs.Invalidf("The fields [user_id] are required for requested call")
	}
	if g.RedirectURI == "" {
		return "", errs.Invalidf("The fields [redirect_uri] are required for requested call")
	}
	if _, err := s.notify.AuthorizeRedirect(ctx, g.ClientID, g.RedirectURI); err != nil {
		return "", err
	}
	code, err := s.accounts.IssueCode(ctx, accounts.Authorization{ClientID: g.ClientID, UserID: g.UserID,
		RedirectURI: g.RedirectURI, CodeChallenge: g.CodeChallenge, CodeChallengeMethod: g.CodeChallengeMethod})
	if err != nil {
		if e := errs.As(err); e != nil && e.Kind == errs.Invalid {
			// The operator's route answers in the usual error shape.
			return "", errs.Invalidf("%s", e.Message)
		}
		return "", err
	}
	return code, nil
}

func redirectError(req AuthorizationRequest, code, description string) *RedirectError {
	return &RedirectError{Code: code, Description: description,
		URL: withQuery(req.RedirectURI, "error", code, "error_description", description, "state", req.State)}
}

// withQuery adds the pairs of kv to raw's query, keeping what is there
// (RFC 6749 3.1.2: the redirect URI's own query is kept). An empty value
// (a state not sent) is left out.
func withQuery(raw string, kv ...string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	q := u.Query()
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
