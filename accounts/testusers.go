package accounts

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"strconv"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
)

// MaxTestUsers is how many test users one user may create, as the public
// API allows.
const MaxTestUsers = 10

// TagTestUser marks a test user.
const TagTestUser = "test_user"

// TestUser is the answer of CreateTestUser: the public API's test user,
// with its password, shown this once.
type TestUser struct {
	ID         int64  `json:"id"`
	Nickname   string `json:"nickname"`
	Password   string `json:"password"`
	SiteStatus string `json:"site_status"`
	Email      string `json:"email"`
}

// testUserRecord is what is stored of a test user beside its user record:
// never the password.
type testUserRecord struct {
	Owner int64  `json:"owner"`
	Salt  string `json:"salt"`
	Hash  string `json:"hash"`
}

// nicknameAlphabet and passwordAlphabet are what random nicknames (after
// "TEST") and passwords are drawn from.
const (
	nicknameAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	passwordAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
)

// CreateTestUser creates a test user of owner on site: a user like any
// other, tagged test_user, with a random nickname starting with TEST and a
// random password with which it signs in on the authorization page. An
// owner may create MaxTestUsers. Errors: Invalid (site, limit), NotFound
// (owner).
func (s *Service) CreateTestUser(ctx context.Context, owner int64, siteID string) (TestUser, error) {
	if siteID == "" {
		return TestUser{}, errs.Invalidf("The fields [site_id] are required for requested call")
	}
	nick, err := randomString(nicknameAlphabet, 10)
	if err != nil {
		return TestUser{}, err
	}
	nick = "TEST" + nick
	u, site, err := s.newUser(ctx, NewUser{Nickname: nick, SiteID: siteID, Tags: []string{"normal", TagTestUser}})
	if err != nil {
		return TestUser{}, err
	}
	password, err := randomString(passwordAlphabet, 16)
	if err != nil {
		return TestUser{}, err
	}
	salt, err := randomHex()
	if err != nil {
		return TestUser{}, err
	}
	rec := testUserRecord{Owner: owner, Salt: salt, Hash: hashPassword(salt, password)}
	now := s.clock.Now()
	userNumber := kv.NewOnceID(s.store, userSequence)
	err = s.store.Update(ctx, func(tx storage.Tx) error {
		// At network distance: the new id, the owner, its count and the
		// nickname in one round trip, then the commit.
		drawn := kv.DrawOnceLater(ctx, tx, userNumber)
		if err := storage.Prefetch(tx, userKey(owner), testCountKey(owner), testNickKey(nick)); err != nil {
			return err
		}
		if _, err := GetUser(tx, owner); err != nil {
			return err
		}
		n, err := readCount(tx, testCountKey(owner))
		if err != nil {
			return err
		}
		if n >= MaxTestUsers {
			return errs.WithCode(errs.Invalid, "bad_request", "Test user limit reached: a user may create at most "+
				strconv.Itoa(MaxTestUsers)+" test users")
		}
		if _, err := tx.Get(testNickKey(nick)); err == nil {
			// 36^10 nicknames make this all but impossible; refuse rather
			// than give two users one sign-in name.
			return errs.Conflictf("Nickname already taken: %s", nick)
		} else if !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		if err := drawn(); err != nil {
			return err
		}
		t := u
		if err := s.putNewUser(ctx, tx, &t, site, now, userNumber); err != nil {
			return err
		}
		u = t
		if err := kv.SetJSON(tx, testUserKey(u.ID), rec); err != nil {
			return err
		}
		if err := tx.Set(testNickKey(nick), []byte(strconv.FormatInt(u.ID, 10))); err != nil {
			return err
		}
		return tx.Set(testCountKey(owner), []byte(strconv.Itoa(n+1)))
	})
	if err != nil {
		return TestUser{}, wrapInternal(err, "create test user")
	}
	return TestUser{ID: u.ID, Nickname: nick, Password: password, SiteStatus: "active",
		Email: "test_user_" + strconv.FormatInt(u.ID, 10) + "@testuser.com"}, nil
}

// SignIn returns the test user whose nickname and password these are.
// Only test users have passwords. Errors: Unauthorized.
func (s *Service) SignIn(ctx context.Context, nickname, password string) (int64, error) {
	bad := errs.Unauthorizedf("Invalid nickname or password")
	if nickname == "" || password == "" {
		return 0, bad
	}
	var id int64
	var ok bool
	err := s.store.View(ctx, func(tx storage.Tx) error {
		b, err := tx.Get(testNickKey(nickname))
		if errors.Is(err, storage.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if id, err = strconv.ParseInt(string(b), 10, 64); err != nil {
			return err
		}
		var rec testUserRecord
		if err := kv.GetJSON(tx, testUserKey(id), &rec); err != nil {
			return err
		}
		ok = subtle.ConstantTimeCompare([]byte(hashPassword(rec.Salt, password)), []byte(rec.Hash)) == 1
		return nil
	})
	if err != nil {
		return 0, wrapInternal(err, "sign in")
	}
	if !ok {
		return 0, bad
	}
	return id, nil
}

// hashPassword is SHA-256 over a per-user salt and the password: the
// passwords are random (about 82 bits), so a slow hash would add little.
func hashPassword(salt, password string) string {
	sum := sha256.Sum256([]byte(salt + ":" + password))
	return hex.EncodeToString(sum[:])
}

func readCount(tx storage.Tx, key []byte) (int, error) {
	b, err := tx.Get(key)
	if errors.Is(err, storage.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(string(b))
}

// randomString draws n characters of alphabet, without modulo bias.
func randomString(alphabet string, n int) (string, error) {
	out := make([]byte, 0, n)
	var buf [32]byte
	limit := 256 - 256%len(alphabet)
	for len(out) < n {
		if _, err := rand.Read(buf[:]); err != nil {
			return "", errs.Internalf(err, "random string")
		}
		for _, b := range buf {
			if int(b) < limit && len(out) < n {
				out = append(out, alphabet[int(b)%len(alphabet)])
			}
		}
	}
	return string(out), nil
}
