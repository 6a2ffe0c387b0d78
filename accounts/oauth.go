package accounts

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
)

// The grants of OAuth 2 (RFC 6749 4.1, with PKCE, RFC 7636) as the public
// API gives them: an authorization code for one client, user and redirect
// URI, exchanged once for an access token that expires and a refresh token
// that works once. Which clients exist and what their secrets and redirect
// URIs are is the applications' business (notify); the token endpoint's
// protocol is package oauth's.

// Lifetimes of what the grants issue, on the service's clock.
const (
	CodeLifetime        = 10 * time.Minute
	AccessTokenLifetime = 6 * time.Hour
	// RefreshTokenMonths is the refresh token's lifetime in calendar months.
	RefreshTokenMonths = 6
)

// Scope is what every token issued by a grant may do: the public API's
// scopes for an application with offline access.
const Scope = "offline_access read write"

// PKCE methods (RFC 7636 4.2).
const (
	MethodS256  = "S256"
	MethodPlain = "plain"
)

// Authorization is what a person (or the operator for them) grants: user
// UserID lets client ClientID act for them, the code going to RedirectURI.
type Authorization struct {
	ClientID            int64
	UserID              int64
	RedirectURI         string
	CodeChallenge       string
	CodeChallengeMethod string
}

// TokenPair is the answer of a grant: the public API's token response.
type TokenPair struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
	Scope        string `json:"scope"`
	UserID       int64  `json:"user_id"`
	RefreshToken string `json:"refresh_token"`
}

// invalidGrantMessage is the public token endpoint's text for a code or
// refresh token that is unknown, expired, used, or not this client's.
const invalidGrantMessage = "Error validating grant. Your authorization code or refresh token may be expired or it was already used"

// ErrInvalidGrant returns the invalid_grant error of the token endpoint.
func ErrInvalidGrant() *errs.Error {
	return errs.WithCode(errs.Invalid, "invalid_grant", invalidGrantMessage).WithDescription(invalidGrantMessage)
}

// ErrInvalidRequest returns an invalid_request error of the token endpoint
// with message as both its message and its description.
func ErrInvalidRequest(message string) *errs.Error {
	return errs.WithCode(errs.Invalid, "invalid_request", message).WithDescription(message)
}

// codeRecord is what is stored for an authorization code: never the code.
type codeRecord struct {
	ClientID            int64     `json:"client_id"`
	UserID              int64     `json:"user_id"`
	RedirectURI         string    `json:"redirect_uri"`
	CodeChallenge       string    `json:"code_challenge,omitempty"`
	CodeChallengeMethod string    `json:"code_challenge_method,omitempty"`
	Expires             time.Time `json:"expires"`
}

// refreshRecord is what is stored for a refresh token.
type refreshRecord struct {
	ClientID int64     `json:"client_id"`
	UserID   int64     `json:"user_id"`
	Expires  time.Time `json:"expires"`
}

// IssueCode returns a new authorization code for a: single use, valid for
// CodeLifetime. The client and its redirect URI must have been checked by
// the caller (they belong to the applications). Errors: Invalid (a bad
// code challenge or method), NotFound (user).
func (s *Service) IssueCode(ctx context.Context, a Authorization) (string, error) {
	method, err := CheckChallenge(a.CodeChallenge, a.CodeChallengeMethod)
	if err != nil {
		return "", err
	}
	rnd, err := randomHex()
	if err != nil {
		return "", err
	}
	code := "TG-" + rnd + "-" + strconv.FormatInt(a.UserID, 10)
	rec := codeRecord{ClientID: a.ClientID, UserID: a.UserID, RedirectURI: a.RedirectURI,
		CodeChallenge: a.CodeChallenge, CodeChallengeMethod: method, Expires: s.clock.Now().Add(CodeLifetime)}
	err = s.store.Update(ctx, func(tx storage.Tx) error {
		if _, err := GetUser(tx, a.UserID); err != nil {
			return err
		}
		return kv.SetJSON(tx, codeKey(hashToken(code)), rec)
	})
	if err != nil {
		return "", wrapInternal(err, "issue authorization code")
	}
	return code, nil
}

// ExchangeCode trades an authorization code for a token pair. The code
// must be client's, unexpired, unused, issued for redirectURI, and answer
// its PKCE challenge with verifier; it is spent by the first exchange,
// whatever its outcome, so that a guessed verifier cannot be retried. The
// new refresh token is the only one of that user and client that works.
// The client must have been authenticated by the caller. Errors: Invalid
// (invalid_grant).
func (s *Service) ExchangeCode(ctx context.Context, clientID int64, code, redirectURI, verifier string) (TokenPair, error) {
	now := s.clock.Now()
	h := hashToken(code)
	issue, err := newIssue(clientID, now)
	if err != nil {
		return TokenPair{}, err
	}
	var pair TokenPair
	var refused bool
	err = s.store.Update(ctx, func(tx storage.Tx) error {
		refused = false
		var rec codeRecord
		err := kv.GetJSON(tx, codeKey(h), &rec)
		if errors.Is(err, storage.ErrNotFound) {
			refused = true
			return nil
		}
		if err != nil {
			return err
		}
		if err := tx.Delete(codeKey(h)); err != nil {
			return err
		}
		if rec.ClientID != clientID || !now.Before(rec.Expires) || rec.RedirectURI != redirectURI || !rec.verifies(verifier) {
			refused = true
			return nil
		}
		// The user and the grant the pair replaces (issue.put) in one
		// round trip.
		if err := storage.Prefetch(tx, userKey(rec.UserID), grantKey(rec.UserID, clientID)); err != nil {
			return err
		}
		if _, err := GetUser(tx, rec.UserID); err != nil {
			if errs.Is(err, errs.NotFound) {
				refused = true
				return nil
			}
			return err
		}
		pair, err = issue.put(tx, rec.UserID)
		return err
	})
	if err != nil {
		return TokenPair{}, wrapInternal(err, "exchange authorization code")
	}
	if refused {
		return TokenPair{}, ErrInvalidGrant()
	}
	return pair, nil
}

// Refresh trades a refresh token for a new token pair. The refresh token
// must be client's, unexpired, and the latest one issued to its user and
// client; it works once. Of concurrent refreshes with one token exactly one
// succeeds: each reads and deletes the token's record in its transaction, so
// the store lets one commit and retries the others, which then find it gone.
// The client must have been authenticated by the caller. Errors: Invalid
// (invalid_grant).
func (s *Service) Refresh(ctx context.Context, clientID int64, refreshToken string) (TokenPair, error) {
	now := s.clock.Now()
	h := hashToken(refreshToken)
	issue, err := newIssue(clientID, now)
	if err != nil {
		return TokenPair{}, err
	}
	var pair TokenPair
	var refused bool
	err = s.store.Update(ctx, func(tx storage.Tx) error {
		refused = false
		var rec refreshRecord
		err := kv.GetJSON(tx, refreshKey(h), &rec)
		if errors.Is(err, storage.ErrNotFound) {
			refused = true
			return nil
		}
		if err != nil {
			return err
		}
		latest, err := tx.Get(grantKey(rec.UserID, rec.ClientID))
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		if rec.ClientID != clientID || !now.Before(rec.Expires) || string(latest) != h {
			refused = true
			return nil
		}
		pair, err = issue.put(tx, rec.UserID)
		return err
	})
	if err != nil {
		return TokenPair{}, wrapInternal(err, "refresh token")
	}
	if refused {
		return TokenPair{}, ErrInvalidGrant()
	}
	return pair, nil
}
