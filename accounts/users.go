package accounts

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/internal/textcheck"
	"github.com/marketplace/marketplace/storage"
)

// TimeLayout is how registration dates are written: the spec's ISO 8601 with
// milliseconds and offset.
const TimeLayout = "2006-01-02T15:04:05.000-07:00"

// User is a marketplace user. Every field of the spec's User table, plus the
// site the user sells on.
type User struct {
	ID               int64    `json:"id"`
	Nickname         string   `json:"nickname"`
	RegistrationDate string   `json:"registration_date"`
	FirstName        string   `json:"first_name"`
	LastName         string   `json:"last_name"`
	Gender           string   `json:"gender"`
	CountryID        string   `json:"country_id"`
	SiteID           string   `json:"site_id"`
	Tags             []string `json:"tags"`
}

// HasTag reports whether u carries tag.
func (u User) HasTag(tag string) bool { return slices.Contains(u.Tags, tag) }

// PublicUser is what another user sees of a user record: no personal data
// (names and gender are left out).
type PublicUser struct {
	ID               int64    `json:"id"`
	Nickname         string   `json:"nickname"`
	RegistrationDate string   `json:"registration_date"`
	CountryID        string   `json:"country_id"`
	SiteID           string   `json:"site_id"`
	Tags             []string `json:"tags"`
}

// Public returns the public subset of u.
func (u User) Public() PublicUser {
	return PublicUser{ID: u.ID, Nickname: u.Nickname, RegistrationDate: u.RegistrationDate,
		CountryID: u.CountryID, SiteID: u.SiteID, Tags: u.Tags}
}

// NewUser is the input of CreateUser.
type NewUser struct {
	Nickname  string   `json:"nickname"`
	SiteID    string   `json:"site_id"`
	CountryID string   `json:"country_id"`
	FirstName string   `json:"first_name"`
	LastName  string   `json:"last_name"`
	Gender    string   `json:"gender"`
	Tags      []string `json:"tags"`
}

const maxNameLength = 100

// CreateUser registers a user. Nickname and site_id are required; country_id
// defaults to the site's country and must match it when given. Errors:
// Invalid.
func (s *Service) CreateUser(ctx context.Context, in NewUser) (User, error) {
	u, site, err := s.newUser(ctx, in)
	if err != nil {
		return User{}, err
	}
	now := s.clock.Now()
	userNumber := kv.NewOnceID(s.store, userSequence)
	err = s.store.Update(ctx, func(tx storage.Tx) error {
		return s.putNewUser(ctx, tx, &u, site, now, userNumber)
	})
	if err != nil {
		return User{}, errs.Internalf(err, "create user")
	}
	return u, nil
}

// CreateUserWithToken is CreateUser and IssueToken in one transaction:
// the user and a new access token of its own, both written or neither.
// At network distance the user's id is drawn with the token's read, and
// the commit follows. Errors: as CreateUser.
func (s *Service) CreateUserWithToken(ctx context.Context, in NewUser) (User, string, error) {
	u, site, err := s.newUser(ctx, in)
	if err != nil {
		return User{}, "", err
	}
	token, err := randomToken()
	if err != nil {
		return User{}, "", err
	}
	h := hashToken(token)
	now := s.clock.Now()
	userNumber := kv.NewOnceID(s.store, userSequence)
	err = s.store.Update(ctx, func(tx storage.Tx) error {
		drawn := kv.DrawOnceLater(ctx, tx, userNumber)
		if err := storage.Prefetch(tx, tokenKey(h)); err != nil {
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
		return putToken(tx, u.ID, h, now)
	})
	if err != nil {
		return User{}, "", errs.Internalf(err, "create user")
	}
	return u, token, nil
}

// newUser checks in and returns the user it describes, without an id, and
// its site. Errors: Invalid.
func (s *Service) newUser(ctx context.Context, in NewUser) (User, geo.Site, error) {
	in.Nickname = strings.TrimSpace(in.Nickname)
	if in.Nickname == "" {
		return User{}, geo.Site{}, errs.Invalidf("The fields [nickname] are required for requested call")
	}
	if in.SiteID == "" {
		return User{}, geo.Site{}, errs.Invalidf("The fields [site_id] are required for requested call")
	}
	// A slice, not a map: the first field at fault is named, the same one
	// on every call.
	for _, f := range []struct{ name, value string }{
		{"nickname", in.Nickname}, {"first_name", in.FirstName}, {"last_name", in.LastName}, {"gender", in.Gender},
	} {
		if utf8.RuneCountInString(f.value) > maxNameLength {
			return User{}, geo.Site{}, errs.Invalidf("The field [%s] must be at most %d characters", f.name, maxNameLength)
		}
		if err := textcheck.Line(f.name, f.value); err != nil {
			return User{}, geo.Site{}, err
		}
	}
	site, err := s.geo.Site(ctx, in.SiteID)
	if err != nil {
		if errs.Is(err, errs.NotFound) {
			return User{}, geo.Site{}, errs.Invalidf("Invalid site_id: %s", in.SiteID)
		}
		return User{}, geo.Site{}, err
	}
	if in.CountryID == "" {
		in.CountryID = site.CountryID
	} else if in.CountryID != site.CountryID {
		return User{}, geo.Site{}, errs.Invalidf("country_id %s does not match site %s (country %s)", in.CountryID, site.ID, site.CountryID)
	}
	tags, err := cleanTags(in.Tags)
	if err != nil {
		return User{}, geo.Site{}, err
	}
	if len(tags) == 0 {
		tags = []string{"normal"}
	}
	return User{
		Nickname: in.Nickname, FirstName: in.FirstName, LastName: in.LastName, Gender: in.Gender,
		CountryID: in.CountryID, SiteID: site.ID, Tags: tags,
	}, site, nil
}

// putNewUser gives u its id and registration date and writes it in tx.
func (s *Service) putNewUser(ctx context.Context, tx storage.Tx, u *User, site geo.Site, now time.Time, number *kv.OnceID) error {
	n, err := number.Get(ctx)
	if err != nil {
		return err
	}
	u.ID = firstUserID - 1 + int64(n)
	u.RegistrationDate = s.siteTime(site, now).Format(TimeLayout)
	return tx.Set(userKey(u.ID), encodeUser(*u))
}

func (s *Service) siteTime(site geo.Site, t time.Time) time.Time {
	if loc, err := time.LoadLocation(site.TimeZone); err == nil {
		return t.In(loc)
	}
	return t
}

func cleanTags(tags []string) ([]string, error) {
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		t = strings.TrimSpace(t)
		if t == "" || len(t) > 64 {
			return nil, errs.Invalidf("Invalid tag: %q", t)
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// User returns the user with id. Errors: NotFound.
func (s *Service) User(ctx context.Context, id int64) (User, error) {
	var u User
	err := s.store.View(ctx, func(tx storage.Tx) error {
		var err error
		u, err = GetUser(tx, id)
		return err
	})
	return u, err
}

// GetUser reads a user inside a transaction of another package, so that a
// rule that depends on the user is checked in the same snapshot as the write
// it guards. Errors: NotFound.
func GetUser(tx storage.Tx, id int64) (User, error) {
	b, err := tx.Get(userKey(id))
	if errors.Is(err, storage.ErrNotFound) {
		return User{}, errs.NotFoundf("User not found: %d", id)
	}
	if err != nil {
		return User{}, errs.Internalf(err, "read user %d", id)
	}
	u, err := decodeUser(b)
	if err != nil {
		return User{}, errs.Internalf(err, "decode user %d", id)
	}
	return u, nil
}

// UserView is a user record as a given caller may see it: the full record
// for the user itself, the public subset for anyone else.
type UserView any

// UserFor returns user id as caller may see it. Errors: NotFound.
func (s *Service) UserFor(ctx context.Context, caller, id int64) (UserView, error) {
	u, err := s.User(ctx, id)
	if err != nil {
		return nil, err
	}
	if caller == id {
		return u, nil
	}
	return u.Public(), nil
}

// SetTags replaces the tags of a user. Errors: NotFound, Invalid.
func (s *Service) SetTags(ctx context.Context, id int64, tags []string) (User, error) {
	clean, err := cleanTags(tags)
	if err != nil {
		return User{}, err
	}
	var u User
	err = s.store.Update(ctx, func(tx storage.Tx) error {
		var err error
		if u, err = GetUser(tx, id); err != nil {
			return err
		}
		u.Tags = clean
		return tx.Set(userKey(id), encodeUser(u))
	})
	return u, err
}
