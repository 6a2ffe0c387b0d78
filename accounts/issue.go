package accounts

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
	"time"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
)

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

// randomHex returns 128 random bits in hex: the random part of codes and
// tokens, whose user and client parts are public.
func randomHex() (string, error) {
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", errs.Internalf(err, "random token")
	}
	return hex.EncodeToString(raw[:]), nil
}
