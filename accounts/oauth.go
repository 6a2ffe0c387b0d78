package accounts

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
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

// CheckChallenge checks a PKCE challenge (RFC 7636 4.2: 43 to 128
// unreserved characters) and returns its method, plain when none is given
// (RFC 7636 4.3). No challenge at all is allowed: the client then sends no
// verifier.
func CheckChallenge(challenge, method string) (string, error) {
	if challenge == "" {
		if method != "" {
			return "", ErrInvalidRequest("The parameter [code_challenge] is required when [code_challenge_method] is sent")
		}
		return "", nil
	}
	if !pkceString(challenge) {
		return "", ErrInvalidRequest("Invalid code_challenge: it must be 43 to 128 characters of A-Z, a-z, 0-9, '-', '.', '_', '~'")
	}
	switch method {
	case "":
		return MethodPlain, nil
	case MethodS256, MethodPlain:
		return method, nil
	}
	return "", ErrInvalidRequest("Invalid code_challenge_method: " + method + ". Valid values are: S256, plain")
}

// pkceString reports whether v is a valid code verifier or challenge.
func pkceString(v string) bool {
	if len(v) < 43 || len(v) > 128 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	return true
}

// verifies reports whether verifier answers the challenge of rec.
func (rec codeRecord) verifies(verifier string) bool {
	if rec.CodeChallenge == "" {
		// A verifier for a code issued without a challenge is refused:
		// accepting it would let a downgrade pass for PKCE (RFC 9700 2.1.1).
		return verifier == ""
	}
	if !pkceString(verifier) {
		return false
	}
	want := verifier
	if rec.CodeChallengeMethod == MethodS256 {
		sum := sha256.Sum256([]byte(verifier))
		want = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	return subtle.ConstantTimeCompare([]byte(want), []byte(rec.CodeChallenge)) == 1
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

// issue is a token pair about to be written: its random parts are drawn
// before the transaction, which may run more than once.
type issue struct {
	clientID int64
	now      time.Time
	access   string
	refresh  string
}

func newIssue(clientID int64, now time.Time) (issue, error) {
	a, err := randomHex()
	if err != nil {
		return issue{}, err
	}
	r, err := randomHex()
	if err != nil {
		return issue{}, err
	}
	return issue{clientID: clientID, now: now, access: a, refresh: r}, nil
}

// put writes the pair for user in tx: the access token, the refresh token,
// and the grant key naming the refresh token as the latest, whose
// predecessor is deleted.
func (is issue) put(tx storage.Tx, user int64) (TokenPair, error) {
	uid := strconv.FormatInt(user, 10)
	// The public API's shape: APP_USR-<client_id>-<MMddHH>-<random>-<user_id>,
	// the hour stamp from the service's clock, in UTC.
	access := "APP_USR-" + strconv.FormatInt(is.clientID, 10) + "-" + is.now.UTC().Format("010215") + "-" + is.access + "-" + uid
	refresh := "TG-" + is.refresh + "-" + uid
	ah, rh := hashToken(access), hashToken(refresh)
	rec := tokenRecord{UserID: user, Created: is.now, Expires: is.now.Add(AccessTokenLifetime), ClientID: is.clientID}
	if err := tx.Set(tokenKey(ah), encodeTokenRecordV3(rec)); err != nil {
		return TokenPair{}, err
	}
	if err := tx.Set(userTokenKey(user, ah), nil); err != nil {
		return TokenPair{}, err
	}
	gk := grantKey(user, is.clientID)
	old, err := tx.Get(gk)
	switch {
	case err == nil:
		if err := tx.Delete(refreshKey(string(old))); err != nil {
			return TokenPair{}, err
		}
	case !errors.Is(err, storage.ErrNotFound):
		return TokenPair{}, err
	}
	rr := refreshRecord{ClientID: is.clientID, UserID: user, Expires: is.now.AddDate(0, RefreshTokenMonths, 0)}
	if err := kv.SetJSON(tx, refreshKey(rh), rr); err != nil {
		return TokenPair{}, err
	}
	if err := tx.Set(gk, []byte(rh)); err != nil {
		return TokenPair{}, err
	}
	return TokenPair{AccessToken: access, TokenType: "Bearer", ExpiresIn: int64(AccessTokenLifetime / time.Second),
		Scope: Scope, UserID: user, RefreshToken: refresh}, nil
}

// revokeGrants deletes the refresh tokens of every grant of user, and the
// keys naming them.
func revokeGrants(tx storage.Tx, user int64) error {
	prefix := grantPrefix(user)
	var keys, hashes [][]byte
	it := tx.Iterate(storage.Prefix(prefix))
	for ; it.Valid(); it.Next() {
		keys = append(keys, append([]byte(nil), it.Key()...))
		v, err := it.Value()
		if err != nil {
			it.Close()
			return err
		}
		hashes = append(hashes, append([]byte(nil), v...))
	}
	it.Close()
	for i, k := range keys {
		if err := tx.Delete(refreshKey(string(hashes[i]))); err != nil {
			return err
		}
		if err := tx.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// tokenRecordV3 tags the binary form of a token issued by a grant: the
// tag, the user id, the creation and expiry instants in Unix nanoseconds and
// the client id, each 8 bytes big-endian. Records of form 2 (operator
// tokens) stay as they are and never expire.
const tokenRecordV3 = 3

const tokenRecordV3Len = 1 + 8 + 8 + 8 + 8

func encodeTokenRecordV3(rec tokenRecord) []byte {
	b := make([]byte, tokenRecordV3Len)
	b[0] = tokenRecordV3
	binary.BigEndian.PutUint64(b[1:], uint64(rec.UserID))
	binary.BigEndian.PutUint64(b[9:], uint64(rec.Created.UnixNano()))
	binary.BigEndian.PutUint64(b[17:], uint64(rec.Expires.UnixNano()))
	binary.BigEndian.PutUint64(b[25:], uint64(rec.ClientID))
	return b
}

func decodeTokenRecordV3(b []byte) tokenRecord {
	return tokenRecord{
		UserID:   int64(binary.BigEndian.Uint64(b[1:])),
		Created:  time.Unix(0, int64(binary.BigEndian.Uint64(b[9:]))).UTC(),
		Expires:  time.Unix(0, int64(binary.BigEndian.Uint64(b[17:]))).UTC(),
		ClientID: int64(binary.BigEndian.Uint64(b[25:])),
	}
}

// randomHex returns 128 random bits in hex: the random part of codes and
// tokens, whose user and client parts are public.
func randomHex() (string, error) {
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", errs.Internalf(err, "random token")
	}
	return hex.EncodeToString(raw[:]), nil
}

// wrapInternal gives a storage failure the Internal kind and context, and
// passes domain errors through.
func wrapInternal(err error, what string) error {
	if err == nil || errs.As(err) != nil {
		return err
	}
	return errs.Internalf(err, "%s", what)
}
