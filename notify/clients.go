package notify

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net/url"
	"slices"
	"strings"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/storage"
)

// Applications are the OAuth 2 clients of the public API: the client id is
// the application id, the client secret is checked against a stored hash,
// and a redirect URI must equal one of the application's exactly (RFC 6749
// 3.1.2.3, no prefix or pattern matching).

// maxRedirectURIs bounds the redirect URIs of one application.
const maxRedirectURIs = 10

// maxRedirectURILength bounds one redirect URI.
const maxRedirectURILength = 2000

// clientSecretKey holds the SHA-256 (hex) of application id's client
// secret. Secrets are 256 random bits, so a fast hash is as strong as a slow
// one. Applications created before they were clients have none until the
// operator rotates one in.
func clientSecretKey(id int64) []byte { return keycodec.New("ntf/csecret").Int(id) }

func hashSecret(secret string) []byte {
	sum := sha256.Sum256([]byte(secret))
	out := make([]byte, hex.EncodedLen(len(sum)))
	hex.Encode(out, sum[:])
	return out
}

func putClientSecret(tx storage.Tx, id int64, secret string) error {
	return tx.Set(clientSecretKey(id), hashSecret(secret))
}

// RotateClientSecret gives application id a new client secret, returned
// this once in the answer; the old one stops working. Errors: NotFound.
func (s *Service) RotateClientSecret(ctx context.Context, id int64) (Application, error) {
	secret, err := newSecret()
	if err != nil {
		return Application{}, errs.Internalf(err, "generate client secret")
	}
	var app Application
	err = s.store.Update(ctx, func(tx storage.Tx) error {
		var err error
		if app, err = getApp(tx, id); err != nil {
			return err
		}
		return putClientSecret(tx, id, secret)
	})
	if err != nil {
		return Application{}, wrapInternal(err, "rotate client secret")
	}
	app.ClientSecret = secret
	return app, nil
}

// invalidClientMessage is the one answer to any failed client
// authentication: which part failed is not told.
const invalidClientMessage = "Invalid client_id or client_secret"

// ErrInvalidClient returns the token endpoint's invalid_client error (401,
// RFC 6749 5.2).
func ErrInvalidClient() *errs.Error {
	return errs.WithCode(errs.Unauthorized, "invalid_client", invalidClientMessage).WithDescription(invalidClientMessage)
}

// AuthenticateClient returns the application whose client id and client
// secret these are. Errors: Unauthorized (invalid_client).
func (s *Service) AuthenticateClient(ctx context.Context, clientID int64, secret string) (Application, error) {
	if clientID <= 0 || secret == "" {
		return Application{}, ErrInvalidClient()
	}
	var app Application
	var ok bool
	err := s.store.View(ctx, func(tx storage.Tx) error {
		// The application and its secret in one round trip.
		if err := storage.Prefetch(tx, appKey(clientID), clientSecretKey(clientID)); err != nil {
			return err
		}
		var err error
		if app, err = getApp(tx, clientID); err != nil {
			if errs.Is(err, errs.NotFound) {
				return nil
			}
			return err
		}
		want, err := tx.Get(clientSecretKey(clientID))
		if errors.Is(err, storage.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		ok = subtle.ConstantTimeCompare(hashSecret(secret), want) == 1
		return nil
	})
	if err != nil {
		return Application{}, wrapInternal(err, "authenticate client")
	}
	if !ok {
		return Application{}, ErrInvalidClient()
	}
	return app, nil
}

// AuthorizeRedirect returns application clientID when redirectURI is one
// of its redirect URIs, exactly. Errors: NotFound (no such client), Invalid
// (a redirect URI not registered, or none given).
func (s *Service) AuthorizeRedirect(ctx context.Context, clientID int64, redirectURI string) (Application, error) {
	app, err := s.Application(ctx, clientID)
	if err != nil {
		if errs.Is(err, errs.NotFound) {
			return Application{}, errs.NotFoundf("Unknown client_id: %d", clientID)
		}
		return Application{}, err
	}
	if redirectURI == "" {
		return Application{}, errs.Invalidf("The parameter [redirect_uri] is required")
	}
	if !slices.Contains(app.RedirectURIs, redirectURI) {
		return Application{}, errs.Invalidf("The redirect_uri does not match any redirect URI registered for the application %d", clientID)
	}
	return app, nil
}

// cleanRedirectURIs checks redirect URIs: absolute http or https (or a
// private-use scheme of a native app, RFC 8252 7.1), no fragment (RFC 6749
// 3.1.2). Duplicates are removed, order kept. Errors: Invalid.
func cleanRedirectURIs(in []string) ([]string, error) {
	if len(in) > maxRedirectURIs {
		return nil, errs.Invalidf("An application may have at most %d redirect URIs", maxRedirectURIs)
	}
	out := []string{}
	for _, raw := range in {
		if err := checkRedirectURI(raw); err != nil {
			return nil, err
		}
		if !slices.Contains(out, raw) {
			out = append(out, raw)
		}
	}
	return out, nil
}

func checkRedirectURI(raw string) error {
	bad := errs.Invalidf("Invalid redirect_uri: %q. It must be an absolute URL without a fragment", truncate(raw, 100))
	if raw == "" || len(raw) > maxRedirectURILength || strings.ContainsAny(raw, " \t\r\n") {
		return bad
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Fragment != "" || strings.Contains(raw, "#") {
		return bad
	}
	if (u.Scheme == "http" || u.Scheme == "https") && u.Host == "" {
		return bad
	}
	if u.Scheme == "javascript" || u.Scheme == "data" || u.Scheme == "vbscript" || u.Scheme == "file" {
		return bad
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
