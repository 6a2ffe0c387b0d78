package accounts

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/storage"
)

// tokenBytes is the token's randomness: 256 bits.
const tokenBytes = 32

// minTokenLength keeps hand-chosen tokens (the demo accounts') from being
// trivially guessable.
const minTokenLength = 16

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	var out [2 * sha256.Size]byte
	hex.Encode(out[:], sum[:])
	return string(out[:])
}

// IssueToken creates a new random access token for user id. The token is
// returned once; only its hash is stored. Errors: NotFound.
func (s *Service) IssueToken(ctx context.Context, userID int64) (string, error) {
	token, err := randomToken()
	if err != nil {
		return "", err
	}
	return token, s.AddToken(ctx, userID, token)
}

// randomToken is a new access token as IssueToken makes them.
func randomToken() (string, error) {
	var raw [tokenBytes]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", errs.Internalf(err, "random token")
	}
	return "APP_USR-" + hex.EncodeToString(raw[:]), nil
}

// AddToken registers a token chosen by the operator (such as the documented
// demo tokens) for user id. Adding a token the user already has is a no-op.
// Errors: NotFound, Invalid (too short, or owned by another user).
func (s *Service) AddToken(ctx context.Context, userID int64, token string) error {
	if err := checkChosenToken(token); err != nil {
		return err
	}
	h := hashToken(token)
	now := s.clock.Now()
	return s.store.Update(ctx, func(tx storage.Tx) error {
		if _, err := GetUser(tx, userID); err != nil {
			return err
		}
		return putToken(tx, userID, h, now)
	})
}

// checkChosenToken refuses a token chosen by hand that is short enough to
// guess, or that a header could not carry.
func checkChosenToken(token string) error {
	if len(token) < minTokenLength || strings.ContainsAny(token, " \t\r\n") {
		return errs.Invalidf("A token must be at least %d characters without spaces", minTokenLength)
	}
	return nil
}

// putToken gives the token with hash h to user userID in tx, unless the
// user has it already. Errors: Invalid (owned by another user).
func putToken(tx storage.Tx, userID int64, h string, now time.Time) error {
	rec, err := getTokenRecord(tx, h)
	if err == nil {
		if rec.UserID == userID {
			return nil
		}
		return errs.Invalidf("The token belongs to another user")
	}
	if !errors.Is(err, storage.ErrNotFound) {
		return err
	}
	if err := tx.Set(tokenKey(h), encodeTokenRecord(tokenRecord{UserID: userID, Created: now})); err != nil {
		return err
	}
	return tx.Set(userTokenKey(userID, h), nil)
}

// Authenticate returns the user id that token belongs to. Errors:
// Unauthorized for an unknown, revoked or expired token.
func (s *Service) Authenticate(ctx context.Context, token string) (int64, error) {
	if token == "" {
		return 0, errs.Unauthorizedf("Invalid access token")
	}
	h := hashToken(token)
	rec, remembered, generation := tokenRecord{}, false, uint64(0)
	if s.tokens != nil {
		rec, remembered, generation = s.tokens.get(h)
	}
	if !remembered {
		// Every authenticated request reads its token: one key, outside
		// a transaction where the store allows it.
		b, err := storage.GetOne(ctx, s.store, tokenKey(h))
		if err == nil {
			rec, err = decodeTokenRecord(b)
		}
		if errors.Is(err, storage.ErrNotFound) {
			return 0, errs.Unauthorizedf("Invalid access token")
		}
		if err != nil {
			return 0, errs.Internalf(err, "authenticate")
		}
		if s.tokens != nil {
			s.tokens.put(h, rec, generation)
		}
	}
	if !rec.Expires.IsZero() && !s.clock.Now().Before(rec.Expires) {
		return 0, errs.Unauthorizedf("Expired access token")
	}
	return rec.UserID, nil
}

// RevokeToken makes token unusable. Revoking an unknown token is not an
// error.
func (s *Service) RevokeToken(ctx context.Context, token string) error {
	h := hashToken(token)
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		rec, err := getTokenRecord(tx, h)
		if errors.Is(err, storage.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := tx.Delete(tokenKey(h)); err != nil {
			return err
		}
		storage.Announce(tx, TokensTopic)
		return tx.Delete(userTokenKey(rec.UserID, h))
	})
	if err == nil {
		s.tokens.forget()
	}
	return err
}

// RevokeAllTokens revokes every token of user id, the refresh tokens of
// its grants included.
func (s *Service) RevokeAllTokens(ctx context.Context, userID int64) error {
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		if err := revokeGrants(tx, userID); err != nil {
			return err
		}
		prefix := userTokenPrefix(userID)
		var hashes []string
		it := tx.Iterate(storage.Prefix(prefix))
		for ; it.Valid(); it.Next() {
			hashes = append(hashes, keycodec.Read(it.Key()[len(prefix):]).Str())
		}
		it.Close()
		for _, h := range hashes {
			if err := tx.Delete(tokenKey(h)); err != nil {
				return err
			}
			if err := tx.Delete(userTokenKey(userID, h)); err != nil {
				return err
			}
		}
		storage.Announce(tx, TokensTopic)
		return nil
	})
	if err == nil {
		s.tokens.forget()
	}
	return err
}
