// Package accounts holds users, their stores (warehouses) and their access
// tokens, with the rules about them: who may see which part of a user record,
// which stores are stock locations, and how tokens are issued, checked and
// revoked.
package accounts

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"marketplace/clock"
	"marketplace/errs"
	"marketplace/geo"
	"marketplace/paging"
	"marketplace/storage"
)

// Tags with a meaning to the rules.
const (
	// TagWarehouseManagement marks a seller with multi-origin stock.
	TagWarehouseManagement = "warehouse_management"
	// TagStockLocation marks a store usable as a stock location.
	TagStockLocation = "stock_location"
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

// Location is a store's address.
type Location struct {
	AddressID    int64   `json:"address_id"`
	AddressLine  string  `json:"address_line"`
	StreetName   string  `json:"street_name"`
	StreetNumber int64   `json:"street_number"`
	Latitude     float64 `json:"latitude"`
	Longitude    float64 `json:"longitude"`
	City         string  `json:"city"`
	State        string  `json:"state"`
	Country      string  `json:"country"`
	ZipCode      string  `json:"zip_code"`
}

// Store is a seller's store (warehouse). Every field of the spec's Store table.
type Store struct {
	ID            string   `json:"id"`
	UserID        string   `json:"user_id"`
	Description   string   `json:"description"`
	Status        string   `json:"status"`
	Location      Location `json:"location"`
	Tags          []string `json:"tags"`
	NetworkNodeID string   `json:"network_node_id"`
}

// HasTag reports whether s carries tag.
func (s Store) HasTag(tag string) bool { return slices.Contains(s.Tags, tag) }

// IsStockLocation reports whether s may hold multi-origin stock.
func (s Store) IsStockLocation() bool { return s.HasTag(TagStockLocation) }

// OwnerID returns the owner's user id as an integer.
func (s Store) OwnerID() int64 {
	id, _ := strconv.ParseInt(s.UserID, 10, 64)
	return id
}

// Service manages users, stores and tokens.
type Service struct {
	store storage.Store
	clock clock.Clock
	geo   *geo.Service
}

// New returns the accounts service.
func New(store storage.Store, clk clock.Clock, g *geo.Service) *Service {
	return &Service{store: store, clock: clk, geo: g}
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
	userNumber := storage.NewOnceID(s.store, userSequence)
	err = s.store.Update(ctx, func(tx storage.Tx) error {
		return s.putNewUser(ctx, tx, &u, site, now, userNumber)
	})
	if err != nil {
		return User{}, errs.Internalf(err, "create user")
	}
	return u, nil
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
func (s *Service) putNewUser(ctx context.Context, tx storage.Tx, u *User, site geo.Site, now time.Time, number *storage.OnceID) error {
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

// NewStore is the input of CreateStore.
type NewStore struct {
	ID            string   `json:"id"`
	Description   string   `json:"description"`
	Status        string   `json:"status"`
	Location      Location `json:"location"`
	Tags          []string `json:"tags"`
	NetworkNodeID string   `json:"network_node_id"`
}

// StoreStatusActive is the only store status the spec shows.
const StoreStatusActive = "active"

// CreateStore adds a store to a user. Stores are created by the operator only
// (the spec: sellers create them in their panel). Status defaults to active;
// id and network_node_id are assigned when absent. Errors: NotFound (user),
// Invalid, Conflict (id taken).
func (s *Service) CreateStore(ctx context.Context, userID int64, in NewStore) (Store, error) {
	given, err := newStore(in)
	if err != nil {
		return Store{}, err
	}
	storeNumbers, err := s.store.Sequence(storeSequence)
	if err != nil {
		return Store{}, errs.Internalf(err, "create store")
	}
	var st Store
	err = s.store.Update(ctx, func(tx storage.Tx) error {
		st = given
		if _, err := GetUser(tx, userID); err != nil {
			return err
		}
		return putNewStore(ctx, tx, userID, &st, storeNumbers)
	})
	if err != nil {
		if errs.As(err) != nil {
			return Store{}, err
		}
		return Store{}, errs.Internalf(err, "create store")
	}
	return st, nil
}

// newStore checks in and returns the store it describes, without an owner.
// Errors: Invalid.
func newStore(in NewStore) (Store, error) {
	if in.Status == "" {
		in.Status = StoreStatusActive
	}
	if in.Status != StoreStatusActive && in.Status != "inactive" {
		return Store{}, errs.Invalidf("Invalid store status: %s. Valid values are: [active, inactive]", in.Status)
	}
	if in.ID != "" && !isDigits(in.ID) {
		return Store{}, errs.Invalidf("Invalid store id: %s. A store id is a string of at most 19 digits", in.ID)
	}
	if utf8.RuneCountInString(in.Description) > 500 {
		return Store{}, errs.Invalidf("The field [description] must be at most 500 characters")
	}
	if err := validateStoreFields(in); err != nil {
		return Store{}, err
	}
	tags, err := cleanTags(in.Tags)
	if err != nil {
		return Store{}, err
	}
	return Store{ID: in.ID, Description: in.Description,
		Status: in.Status, Location: in.Location, Tags: tags, NetworkNodeID: in.NetworkNodeID}, nil
}

// putNewStore writes st in tx as a store of user userID, with an id from
// numbers when it has none. Errors: Conflict (id taken).
func putNewStore(ctx context.Context, tx storage.Tx, userID int64, st *Store, numbers storage.Sequence) error {
	st.UserID = strconv.FormatInt(userID, 10)
	if st.ID == "" {
		// Ids may have been given by hand; skip those already taken.
		for {
			n, err := numbers.Next(ctx)
			if err != nil {
				return err
			}
			st.ID = strconv.FormatUint(firstStoreID-1+n, 10)
			if _, err := tx.Get(storeKey(st.ID)); errors.Is(err, storage.ErrNotFound) {
				break
			} else if err != nil {
				return err
			}
		}
	} else if _, err := tx.Get(storeKey(st.ID)); err == nil {
		return errs.Conflictf("Store already exists: %s", st.ID)
	}
	if st.NetworkNodeID == "" {
		st.NetworkNodeID = st.ID + "01"
	}
	if err := storage.SetJSON(tx, storeKey(st.ID), *st); err != nil {
		return err
	}
	return tx.Set(userStoreKey(userID, st.ID), nil)
}

// maxStoreText bounds the free-text fields of a store and its location, so
// that a record (and an error that quotes it) stays small.
const maxStoreText = 200

// validateStoreFields checks what the Store table implies: coordinates on
// the globe, a street number and an address id that are not negative, and
// short texts.
func validateStoreFields(in NewStore) error {
	loc := in.Location
	if loc.Latitude < -90 || loc.Latitude > 90 {
		return errs.Invalidf("Invalid location.latitude: %v. It must be between -90 and 90", loc.Latitude)
	}
	if loc.Longitude < -180 || loc.Longitude > 180 {
		return errs.Invalidf("Invalid location.longitude: %v. It must be between -180 and 180", loc.Longitude)
	}
	if loc.StreetNumber < 0 {
		return errs.Invalidf("Invalid location.street_number: %d. It must not be negative", loc.StreetNumber)
	}
	if loc.AddressID < 0 {
		return errs.Invalidf("Invalid location.address_id: %d. It must not be negative", loc.AddressID)
	}
	for _, f := range []struct{ name, value string }{
		{"network_node_id", in.NetworkNodeID}, {"location.address_line", loc.AddressLine},
		{"location.street_name", loc.StreetName}, {"location.city", loc.City}, {"location.state", loc.State},
		{"location.country", loc.Country}, {"location.zip_code", loc.ZipCode},
	} {
		if utf8.RuneCountInString(f.value) > maxStoreText {
			return errs.Invalidf("The field [%s] must be at most %d characters", f.name, maxStoreText)
		}
	}
	return nil
}

func isDigits(s string) bool {
	if s == "" || len(s) > 19 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// GetStore reads a store inside another package's transaction. Errors:
// NotFound with the spec's message "Store not found: <id>".
func GetStore(tx storage.Tx, id string) (Store, error) {
	var st Store
	err := storage.GetJSON(tx, storeKey(id), &st)
	if errors.Is(err, storage.ErrNotFound) {
		return Store{}, errs.NotFoundf("Store not found: %s", id)
	}
	if err != nil {
		return Store{}, errs.Internalf(err, "read store %s", id)
	}
	return st, nil
}

// Store returns one store. Errors: NotFound.
func (s *Service) Store(ctx context.Context, id string) (Store, error) {
	var st Store
	err := s.store.View(ctx, func(tx storage.Tx) error {
		var err error
		st, err = GetStore(tx, id)
		return err
	})
	return st, err
}

// StoreQuery selects a user's stores.
type StoreQuery struct {
	// Tags keeps the stores that carry every one of these tags.
	Tags   []string
	Offset int
	Limit  int
}

// SearchStores lists the stores of owner that match q, for caller. Only the
// owner may list its stores. Returns the page and the total number of matches.
// Errors: Forbidden, NotFound.
func (s *Service) SearchStores(ctx context.Context, caller, owner int64, q StoreQuery) ([]Store, int, error) {
	if err := paging.Check(q.Offset, q.Limit); err != nil {
		return nil, 0, err
	}
	if caller != owner {
		return nil, 0, errs.Forbiddenf("The caller is not allowed to list the stores of user %d", owner)
	}
	page := []Store{}
	total := 0
	err := s.store.View(ctx, func(tx storage.Tx) error {
		if _, err := GetUser(tx, owner); err != nil {
			return err
		}
		it := tx.Iterate(storage.Prefix(userStorePrefix(owner)))
		defer it.Close()
		prefixLen := len(userStorePrefix(owner))
		for ; it.Valid(); it.Next() {
			id := storage.ReadKey(it.Key()[prefixLen:]).Str()
			st, err := GetStore(tx, id)
			if err != nil {
				return err
			}
			if !hasAll(st.Tags, q.Tags) {
				continue
			}
			if total >= q.Offset && len(page) < q.Limit {
				page = append(page, st)
			}
			total++
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return page, total, nil
}

func hasAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// tokenRecord is what is stored for a token: never the token itself.
type tokenRecord struct {
	UserID  int64
	Created time.Time
	// Expires is when a token issued by a grant stops working (record form
	// 3); zero for the operator's tokens, which never expire.
	Expires time.Time
	// ClientID is the application a grant issued the token to.
	ClientID int64
}

// tokenRecordV2 tags the binary form of a token record: the tag, the user id
// and the creation instant in Unix nanoseconds, both big-endian. Every
// authenticated request reads one, and a JSON decode cost more than the rest
// of the lookup; records written as JSON before are rewritten by
// RecordsMigration (migrate.go).
const tokenRecordV2 = 2

const tokenRecordV2Len = 1 + 8 + 8

func encodeTokenRecord(rec tokenRecord) []byte {
	b := make([]byte, tokenRecordV2Len)
	b[0] = tokenRecordV2
	binary.BigEndian.PutUint64(b[1:], uint64(rec.UserID))
	binary.BigEndian.PutUint64(b[9:], uint64(rec.Created.UnixNano()))
	return b
}

func decodeTokenRecord(b []byte) (tokenRecord, error) {
	if len(b) == tokenRecordV2Len && b[0] == tokenRecordV2 {
		return tokenRecord{
			UserID:  int64(binary.BigEndian.Uint64(b[1:])),
			Created: time.Unix(0, int64(binary.BigEndian.Uint64(b[9:]))).UTC(),
		}, nil
	}
	if len(b) == tokenRecordV3Len && b[0] == tokenRecordV3 {
		return decodeTokenRecordV3(b), nil
	}
	return tokenRecord{}, errors.New("corrupt token record")
}

// getTokenRecord reads the record of the token with hash h; a missing one is
// storage.ErrNotFound.
func getTokenRecord(tx storage.Tx, h string) (tokenRecord, error) {
	b, err := tx.Get(tokenKey(h))
	if err != nil {
		return tokenRecord{}, err
	}
	return decodeTokenRecord(b)
}

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
	var raw [tokenBytes]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", errs.Internalf(err, "random token")
	}
	token := "APP_USR-" + hex.EncodeToString(raw[:])
	return token, s.AddToken(ctx, userID, token)
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

// EnsureUser returns the user that token authenticates and its stores.
// When no user has the token, it creates the user in (as CreateUser) with
// that token (as AddToken); when the user has no store, it creates stores
// (as CreateStore). All of it is one transaction, so that processes that
// ensure the same user at once, such as servers starting together on one
// database, create it once: the others find it. Errors: Invalid.
func (s *Service) EnsureUser(ctx context.Context, token string, in NewUser, stores []NewStore) (User, []Store, error) {
	if err := checkChosenToken(token); err != nil {
		return User{}, nil, err
	}
	fresh, site, err := s.newUser(ctx, in)
	if err != nil {
		return User{}, nil, err
	}
	givenStores := make([]Store, len(stores))
	for i, in := range stores {
		if givenStores[i], err = newStore(in); err != nil {
			return User{}, nil, err
		}
	}
	storeNumbers, err := s.store.Sequence(storeSequence)
	if err != nil {
		return User{}, nil, errs.Internalf(err, "ensure user")
	}
	h := hashToken(token)
	now := s.clock.Now()
	userNumber := storage.NewOnceID(s.store, userSequence)
	var u User
	var have []Store
	err = s.store.Update(ctx, func(tx storage.Tx) error {
		have = nil
		rec, err := getTokenRecord(tx, h)
		switch {
		case err == nil:
			if u, err = GetUser(tx, rec.UserID); err != nil {
				return err
			}
		case errors.Is(err, storage.ErrNotFound):
			u = fresh
			if err := s.putNewUser(ctx, tx, &u, site, now, userNumber); err != nil {
				return err
			}
			if err := putToken(tx, u.ID, h, now); err != nil {
				return err
			}
		default:
			return err
		}
		if have, err = userStores(tx, u.ID); err != nil || len(have) > 0 {
			return err
		}
		for _, st := range givenStores {
			if err := putNewStore(ctx, tx, u.ID, &st, storeNumbers); err != nil {
				return err
			}
			have = append(have, st)
		}
		return nil
	})
	if err != nil {
		if errs.As(err) != nil {
			return User{}, nil, err
		}
		return User{}, nil, errs.Internalf(err, "ensure user")
	}
	return u, have, nil
}

// userStores reads every store of user id, in the order SearchStores
// lists them.
func userStores(tx storage.Tx, id int64) ([]Store, error) {
	var out []Store
	prefix := userStorePrefix(id)
	it := tx.Iterate(storage.Prefix(prefix))
	defer it.Close()
	for ; it.Valid(); it.Next() {
		st, err := GetStore(tx, storage.ReadKey(it.Key()[len(prefix):]).Str())
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// Authenticate returns the user id that token belongs to. Errors:
// Unauthorized for an unknown, revoked or expired token.
func (s *Service) Authenticate(ctx context.Context, token string) (int64, error) {
	if token == "" {
		return 0, errs.Unauthorizedf("Invalid access token")
	}
	// Every authenticated request reads its token: one key, outside a
	// transaction where the store allows it.
	b, err := storage.GetOne(ctx, s.store, tokenKey(hashToken(token)))
	var rec tokenRecord
	if err == nil {
		rec, err = decodeTokenRecord(b)
	}
	if errors.Is(err, storage.ErrNotFound) {
		return 0, errs.Unauthorizedf("Invalid access token")
	}
	if err != nil {
		return 0, errs.Internalf(err, "authenticate")
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
	return s.store.Update(ctx, func(tx storage.Tx) error {
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
		return tx.Delete(userTokenKey(rec.UserID, h))
	})
}

// RevokeAllTokens revokes every token of user id, the refresh tokens of
// its grants included.
func (s *Service) RevokeAllTokens(ctx context.Context, userID int64) error {
	return s.store.Update(ctx, func(tx storage.Tx) error {
		if err := revokeGrants(tx, userID); err != nil {
			return err
		}
		prefix := userTokenPrefix(userID)
		var hashes []string
		it := tx.Iterate(storage.Prefix(prefix))
		for ; it.Valid(); it.Next() {
			hashes = append(hashes, storage.ReadKey(it.Key()[len(prefix):]).Str())
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
		return nil
	})
}
