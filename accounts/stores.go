package accounts

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/internal/textcheck"
	"github.com/marketplace/marketplace/storage"
)

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
	if err := textcheck.Line("description", in.Description); err != nil {
		return Store{}, err
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
	if err := kv.SetJSON(tx, storeKey(st.ID), *st); err != nil {
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
	err := kv.GetJSON(tx, storeKey(id), &st)
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

// userStores reads every store of user id, in the order SearchStores
// lists them.
func userStores(tx storage.Tx, id int64) ([]Store, error) {
	var out []Store
	prefix := userStorePrefix(id)
	it := tx.Iterate(storage.Prefix(prefix))
	defer it.Close()
	for ; it.Valid(); it.Next() {
		st, err := GetStore(tx, keycodec.Read(it.Key()[len(prefix):]).Str())
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}
