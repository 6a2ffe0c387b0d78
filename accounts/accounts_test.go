package accounts_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/internal/teststore"
	"github.com/marketplace/marketplace/storage"
)

var start = time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC)

func newService(t *testing.T) (*accounts.Service, storage.Store) {
	t.Helper()
	st := teststore.New(t)
	return accounts.New(st, clock.NewManual(start), geo.New(st, clock.NewManual(start))), st
}

func mustUser(t *testing.T, svc *accounts.Service, in accounts.NewUser) accounts.User {
	t.Helper()
	u, err := svc.CreateUser(context.Background(), in)
	if err != nil {
		t.Fatalf("create user: %v", err)
	}
	return u
}

func TestCreateUser_FillsEveryFieldOfTheUserTable(t *testing.T) {
	is := is.New(t)
	svc, _ := newService(t)
	u := mustUser(t, svc, accounts.NewUser{Nickname: "SELLER1", SiteID: "MLA", FirstName: "Ana", LastName: "Gómez", Gender: "female",
		Tags: []string{"normal", accounts.TagWarehouseManagement}})
	is.True(u.ID > 0)                                                                           // integer id
	is.Equal(u.Nickname, "SELLER1")                                                             // nickname
	is.Equal(u.CountryID, "AR")                                                                 // country from the site
	is.Equal(u.SiteID, "MLA")                                                                   // site
	is.Equal(u.RegistrationDate, "2026-03-04T12:00:00.000-03:00")                               // ISO 8601 with offset, site zone
	is.Equal(u.Tags, []string{"normal", "warehouse_management"})                                // tags kept in order
	is.True(u.HasTag(accounts.TagWarehouseManagement))                                          // tag lookup
	is.Equal([3]string{u.FirstName, u.LastName, u.Gender}, [3]string{"Ana", "Gómez", "female"}) // personal data
	got, err := svc.User(context.Background(), u.ID)
	is.NoErr(err)
	is.Equal(got, u) // stored as created
}

func TestCreateUserWithToken_TheTokenAuthenticatesTheNewUserAndBadInputWritesNeither(t *testing.T) {
	is := is.New(t)
	svc, _ := newService(t)
	ctx := context.Background()
	before := mustUser(t, svc, accounts.NewUser{Nickname: "BEFORE", SiteID: "MLA"})
	u, token, err := svc.CreateUserWithToken(ctx, accounts.NewUser{Nickname: "SELLER2", SiteID: "MLB", Tags: []string{"normal"}})
	is.NoErr(err)
	is.True(u.ID > before.ID)                     // the next id
	is.Equal(u.CountryID, "BR")                   // as CreateUser fills it
	is.True(strings.HasPrefix(token, "APP_USR-")) // an access token's shape
	got, err := svc.User(ctx, u.ID)
	is.NoErr(err)
	is.Equal(got, u) // stored as created
	id, err := svc.Authenticate(ctx, token)
	is.NoErr(err)
	is.Equal(id, u.ID) // the token is the new user's
	_, _, err = svc.CreateUserWithToken(ctx, accounts.NewUser{Nickname: "X", SiteID: "NOPE"})
	is.Equal(errs.KindOf(err), errs.Invalid)
	after := mustUser(t, svc, accounts.NewUser{Nickname: "AFTER", SiteID: "MLA"})
	is.Equal(after.ID, u.ID+1) // the refused request drew no id
}

func TestCreateUser_IdsAreDistinctIntegers(t *testing.T) {
	is := is.New(t)
	svc, _ := newService(t)
	a := mustUser(t, svc, accounts.NewUser{Nickname: "A", SiteID: "MLA"})
	b := mustUser(t, svc, accounts.NewUser{Nickname: "B", SiteID: "MLB"})
	is.True(b.ID > a.ID)                 // increasing
	is.Equal(b.CountryID, "BR")          // each site its country
	is.Equal(a.Tags, []string{"normal"}) // default tag
}

func TestCreateUser_RejectsBadInput(t *testing.T) {
	svc, st := newService(t)
	cases := []struct {
		name string
		in   accounts.NewUser
		msg  string
	}{
		{"NoNickname", accounts.NewUser{SiteID: "MLA"}, "The fields [nickname] are required for requested call"},
		{"BlankNickname", accounts.NewUser{Nickname: "  ", SiteID: "MLA"}, "The fields [nickname] are required for requested call"},
		{"NoSite", accounts.NewUser{Nickname: "X"}, "The fields [site_id] are required for requested call"},
		{"UnknownSite", accounts.NewUser{Nickname: "X", SiteID: "XXX"}, "Invalid site_id: XXX"},
		{"CountryOfAnotherSite", accounts.NewUser{Nickname: "X", SiteID: "MLA", CountryID: "BR"}, "country_id BR does not match site MLA (country AR)"},
		{"EmptyTag", accounts.NewUser{Nickname: "X", SiteID: "MLA", Tags: []string{""}}, `Invalid tag: ""`},
		{"LongName", accounts.NewUser{Nickname: "X", SiteID: "MLA", FirstName: strings.Repeat("a", 101)}, "The field [first_name] must be at most 100 characters"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			_, err := svc.CreateUser(context.Background(), c.in)
			is.True(errs.Is(err, errs.Invalid)) // invalid
			is.Equal(errs.As(err).Message, c.msg)
		})
	}
	// Nothing was written by the refused calls.
	err := st.View(context.Background(), func(tx storage.Tx) error {
		it := tx.Iterate(storage.Range{})
		defer it.Close()
		if it.Valid() {
			return errors.New("store is not empty")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestUserFor_OtherCallersSeeNoPersonalData(t *testing.T) {
	is := is.New(t)
	svc, _ := newService(t)
	ctx := context.Background()
	u := mustUser(t, svc, accounts.NewUser{Nickname: "S", SiteID: "MLA", FirstName: "Ana", LastName: "Gómez", Gender: "female"})
	other := mustUser(t, svc, accounts.NewUser{Nickname: "O", SiteID: "MLA"})
	own, err := svc.UserFor(ctx, u.ID, u.ID)
	is.NoErr(err)
	is.Equal(own, u) // the user itself sees the full record
	pub, err := svc.UserFor(ctx, other.ID, u.ID)
	is.NoErr(err)
	is.Equal(pub, u.Public()) // another user sees the public subset
	_, err = svc.UserFor(ctx, u.ID, 999)
	is.True(errs.Is(err, errs.NotFound)) // unknown user
}

func TestTokens_IssuedTokenAuthenticatesItsUser(t *testing.T) {
	is := is.New(t)
	svc, _ := newService(t)
	ctx := context.Background()
	u := mustUser(t, svc, accounts.NewUser{Nickname: "S", SiteID: "MLA"})
	tok, err := svc.IssueToken(ctx, u.ID)
	is.NoErr(err)
	is.True(strings.HasPrefix(tok, "APP_USR-"))
	is.True(len(tok) >= len("APP_USR-")+32) // at least 128 bits of randomness in hex
	id, err := svc.Authenticate(ctx, tok)
	is.NoErr(err)
	is.Equal(id, u.ID)
	tok2, err := svc.IssueToken(ctx, u.ID)
	is.NoErr(err)
	is.True(tok2 != tok) // random
	_, err = svc.Authenticate(ctx, tok+"x")
	is.True(errs.Is(err, errs.Unauthorized)) // unknown token
	_, err = svc.Authenticate(ctx, "")
	is.True(errs.Is(err, errs.Unauthorized)) // empty token
}

func TestTokens_AreStoredOnlyAsHashes(t *testing.T) {
	svc, st := newService(t)
	ctx := context.Background()
	u := mustUser(t, svc, accounts.NewUser{Nickname: "S", SiteID: "MLA"})
	tok, err := svc.IssueToken(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	secret := []byte(strings.TrimPrefix(tok, "APP_USR-"))
	err = st.View(ctx, func(tx storage.Tx) error {
		it := tx.Iterate(storage.Range{})
		defer it.Close()
		for ; it.Valid(); it.Next() {
			v, err := it.Value()
			if err != nil {
				return err
			}
			if bytes.Contains(it.Key(), secret) || bytes.Contains(v, secret) {
				t.Errorf("token stored in clear under key %q", it.Key())
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestTokens_RevokedTokenNoLongerAuthenticates(t *testing.T) {
	is := is.New(t)
	svc, _ := newService(t)
	ctx := context.Background()
	u := mustUser(t, svc, accounts.NewUser{Nickname: "S", SiteID: "MLA"})
	a, _ := svc.IssueToken(ctx, u.ID)
	b, _ := svc.IssueToken(ctx, u.ID)
	is.NoErr(svc.RevokeToken(ctx, a))
	_, err := svc.Authenticate(ctx, a)
	is.True(errs.Is(err, errs.Unauthorized)) // revoked
	_, err = svc.Authenticate(ctx, b)
	is.NoErr(err)                     // the other token still works
	is.NoErr(svc.RevokeToken(ctx, a)) // revoking twice is fine
	is.NoErr(svc.RevokeAllTokens(ctx, u.ID))
	_, err = svc.Authenticate(ctx, b)
	is.True(errs.Is(err, errs.Unauthorized)) // all revoked
}

func TestAddToken_RefusesShortTokensAndTokensOfAnotherUser(t *testing.T) {
	is := is.New(t)
	svc, _ := newService(t)
	ctx := context.Background()
	a := mustUser(t, svc, accounts.NewUser{Nickname: "A", SiteID: "MLA"})
	b := mustUser(t, svc, accounts.NewUser{Nickname: "B", SiteID: "MLA"})
	is.True(errs.Is(svc.AddToken(ctx, a.ID, "short"), errs.Invalid)) // too short
	is.NoErr(svc.AddToken(ctx, a.ID, "a-fixed-token-for-a"))
	is.NoErr(svc.AddToken(ctx, a.ID, "a-fixed-token-for-a"))                         // idempotent
	is.True(errs.Is(svc.AddToken(ctx, b.ID, "a-fixed-token-for-a"), errs.Invalid))   // owned by a
	is.True(errs.Is(svc.AddToken(ctx, 12345, "another-fixed-token"), errs.NotFound)) // unknown user
}

// ensureSeller ensures the seller of token with two stock-location stores.
func ensureSeller(svc *accounts.Service, token string) (accounts.User, []accounts.Store, error) {
	return svc.EnsureUser(context.Background(), token, accounts.NewUser{Nickname: "FIXED", SiteID: "MLA", Tags: []string{accounts.TagWarehouseManagement}},
		[]accounts.NewStore{{Description: "One", Tags: []string{accounts.TagStockLocation}}, {Description: "Two", Tags: []string{accounts.TagStockLocation}}})
}

func TestEnsureUser_CreatesTheUserWithItsTokenAndStoresOnceThenReturnsThem(t *testing.T) {
	is := is.New(t)
	svc, _ := newService(t)
	ctx := context.Background()
	const token = "a-fixed-token-of-the-seller"
	u, stores, err := ensureSeller(svc, token)
	is.NoErr(err)
	is.Equal(u.Nickname, "FIXED")                                                              // the user asked for
	is.Equal(u.Tags, []string{"warehouse_management"})                                         // with its tags
	is.Equal(len(stores), 2)                                                                   // and its stores
	is.Equal([]string{stores[0].UserID, stores[1].UserID}, []string{"100000001", "100000001"}) // owned by it
	id, err := svc.Authenticate(ctx, token)
	is.NoErr(err)
	is.Equal(id, u.ID) // the token authenticates it

	again, againStores, err := ensureSeller(svc, token)
	is.NoErr(err)
	is.Equal(again, u)            // the same user
	is.Equal(againStores, stores) // no more stores
	_, total, err := svc.SearchStores(ctx, u.ID, u.ID, accounts.StoreQuery{Limit: 10})
	is.NoErr(err)
	is.Equal(total, 2) // stored once
}

func TestEnsureUser_CallersAtOnceCreateOneUser(t *testing.T) {
	svc, _ := newService(t)
	const token = "a-fixed-token-of-the-seller"
	const n = 8
	ids := make(chan int64, n)
	errc := make(chan error, n)
	for range n {
		go func() {
			u, stores, err := ensureSeller(svc, token)
			if err == nil && len(stores) != 2 {
				err = fmt.Errorf("%d stores", len(stores))
			}
			errc <- err
			ids <- u.ID
		}()
	}
	first := int64(0)
	for range n {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
		id := <-ids
		if first == 0 {
			first = id
		}
		if id != first {
			t.Fatalf("callers at once got users %d and %d", first, id)
		}
	}
	_, total, err := svc.SearchStores(context.Background(), first, first, accounts.StoreQuery{Limit: 10})
	if err != nil || total != 2 {
		t.Fatalf("stores: %d %v; want 2", total, err)
	}
}

func TestEnsureUser_GivesStoresToTheUserOfTheTokenWhenItHasNone(t *testing.T) {
	is := is.New(t)
	svc, _ := newService(t)
	const token = "a-fixed-token-of-the-seller"
	u := mustUser(t, svc, accounts.NewUser{Nickname: "EARLIER", SiteID: "MLA"})
	is.NoErr(svc.AddToken(context.Background(), u.ID, token))
	got, stores, err := ensureSeller(svc, token)
	is.NoErr(err)
	is.Equal(got, u)         // the token's user, as it is
	is.Equal(len(stores), 2) // given its stores
}

func TestEnsureUser_RefusesBadInputBeforeWriting(t *testing.T) {
	svc, _ := newService(t)
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"ShortToken": func() error {
			_, _, err := svc.EnsureUser(ctx, "short", accounts.NewUser{Nickname: "X", SiteID: "MLA"}, nil)
			return err
		},
		"UnknownSite": func() error {
			_, _, err := svc.EnsureUser(ctx, "a-fixed-token-of-the-seller", accounts.NewUser{Nickname: "X", SiteID: "ZZZ"}, nil)
			return err
		},
		"BadStore": func() error {
			_, _, err := svc.EnsureUser(ctx, "a-fixed-token-of-the-seller", accounts.NewUser{Nickname: "X", SiteID: "MLA"},
				[]accounts.NewStore{{Status: "closed"}})
			return err
		},
	} {
		if err := call(); !errs.Is(err, errs.Invalid) {
			t.Errorf("%s: err = %v; want Invalid", name, err)
		}
	}
	if _, err := svc.Authenticate(ctx, "a-fixed-token-of-the-seller"); !errs.Is(err, errs.Unauthorized) {
		t.Fatalf("a refused call left a user behind: %v", err)
	}
}

func TestStores_CreateFillsEveryFieldOfTheStoreTable(t *testing.T) {
	is := is.New(t)
	svc, _ := newService(t)
	ctx := context.Background()
	u := mustUser(t, svc, accounts.NewUser{Nickname: "S", SiteID: "MLA"})
	loc := accounts.Location{AddressID: 7, AddressLine: "Av. Siempre Viva 742", StreetName: "Av. Siempre Viva", StreetNumber: 742,
		Latitude: -34.6, Longitude: -58.4, City: "Buenos Aires", State: "Capital Federal", Country: "Argentina", ZipCode: "1414"}
	st, err := svc.CreateStore(ctx, u.ID, accounts.NewStore{Description: "Main", Location: loc, Tags: []string{accounts.TagStockLocation}})
	is.NoErr(err)
	is.True(st.ID != "")             // id assigned
	is.Equal(st.UserID, "100000001") // owner as a string
	is.Equal(st.Status, "active")    // default status
	is.Equal(st.Location, loc)       // location kept
	is.True(st.NetworkNodeID != "")  // network node assigned
	is.True(st.IsStockLocation())    // tag
	is.Equal(st.OwnerID(), u.ID)     // owner as an integer
	got, err := svc.Store(ctx, st.ID)
	is.NoErr(err)
	is.Equal(got, st)
}

func TestStores_CreateRejectsBadInput(t *testing.T) {
	svc, _ := newService(t)
	ctx := context.Background()
	u := mustUser(t, svc, accounts.NewUser{Nickname: "S", SiteID: "MLA"})
	_, err := svc.CreateStore(ctx, u.ID, accounts.NewStore{ID: "77"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		userID int64
		in     accounts.NewStore
		kind   errs.Kind
	}{
		{"UnknownUser", 999, accounts.NewStore{}, errs.NotFound},
		{"BadStatus", u.ID, accounts.NewStore{Status: "closed"}, errs.Invalid},
		{"NonDigitID", u.ID, accounts.NewStore{ID: "abc"}, errs.Invalid},
		{"IDOfTwentyDigits", u.ID, accounts.NewStore{ID: "12345678901234567890"}, errs.Invalid},
		{"TakenID", u.ID, accounts.NewStore{ID: "77"}, errs.Conflict},
		{"LatitudeOffTheGlobe", u.ID, accounts.NewStore{Location: accounts.Location{Latitude: 1e308}}, errs.Invalid},
		{"LongitudeOffTheGlobe", u.ID, accounts.NewStore{Location: accounts.Location{Longitude: -181}}, errs.Invalid},
		{"NegativeStreetNumber", u.ID, accounts.NewStore{Location: accounts.Location{StreetNumber: -1}}, errs.Invalid},
		{"NegativeAddressID", u.ID, accounts.NewStore{Location: accounts.Location{AddressID: -1}}, errs.Invalid},
		{"HugeNetworkNode", u.ID, accounts.NewStore{NetworkNodeID: strings.Repeat("9", 201)}, errs.Invalid},
		{"HugeCity", u.ID, accounts.NewStore{Location: accounts.Location{City: strings.Repeat("a", 201)}}, errs.Invalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := svc.CreateStore(ctx, c.userID, c.in)
			if !errs.Is(err, c.kind) {
				t.Fatalf("err = %v, want kind %v", err, c.kind)
			}
		})
	}
}

func TestSearchStores_FiltersByTagsAndPages(t *testing.T) {
	is := is.New(t)
	svc, _ := newService(t)
	ctx := context.Background()
	u := mustUser(t, svc, accounts.NewUser{Nickname: "S", SiteID: "MLA"})
	var stockIDs []string
	for i := 0; i < 5; i++ {
		tags := []string{}
		if i%2 == 0 {
			tags = []string{accounts.TagStockLocation}
		}
		st, err := svc.CreateStore(ctx, u.ID, accounts.NewStore{Tags: tags})
		is.NoErr(err)
		if i%2 == 0 {
			stockIDs = append(stockIDs, st.ID)
		}
	}
	all, total, err := svc.SearchStores(ctx, u.ID, u.ID, accounts.StoreQuery{Limit: 50})
	is.NoErr(err)
	is.Equal(total, 5)
	is.Equal(len(all), 5)
	tagged, total, err := svc.SearchStores(ctx, u.ID, u.ID, accounts.StoreQuery{Tags: []string{accounts.TagStockLocation}, Limit: 50})
	is.NoErr(err)
	is.Equal(total, 3) // only stock locations
	var ids []string
	for _, s := range tagged {
		ids = append(ids, s.ID)
	}
	is.Equal(ids, stockIDs)
	page, total, err := svc.SearchStores(ctx, u.ID, u.ID, accounts.StoreQuery{Tags: []string{accounts.TagStockLocation}, Offset: 1, Limit: 1})
	is.NoErr(err)
	is.Equal(total, 3)                // total ignores paging
	is.Equal(len(page), 1)            // limit
	is.Equal(page[0].ID, stockIDs[1]) // offset
}

func TestSearchStores_OnlyTheOwnerMayList(t *testing.T) {
	svc, _ := newService(t)
	ctx := context.Background()
	u := mustUser(t, svc, accounts.NewUser{Nickname: "S", SiteID: "MLA"})
	other := mustUser(t, svc, accounts.NewUser{Nickname: "O", SiteID: "MLA"})
	_, _, err := svc.SearchStores(ctx, other.ID, u.ID, accounts.StoreQuery{Limit: 50})
	if !errs.Is(err, errs.Forbidden) {
		t.Fatalf("err = %v, want forbidden", err)
	}
}

func TestSetTags_ReplacesTags(t *testing.T) {
	is := is.New(t)
	svc, _ := newService(t)
	ctx := context.Background()
	u := mustUser(t, svc, accounts.NewUser{Nickname: "S", SiteID: "MLA"})
	got, err := svc.SetTags(ctx, u.ID, []string{"normal", accounts.TagWarehouseManagement, "normal"})
	is.NoErr(err)
	is.Equal(got.Tags, []string{"normal", "warehouse_management"}) // deduplicated
	_, err = svc.SetTags(ctx, 999, nil)
	is.True(errs.Is(err, errs.NotFound))
}

// TestValidation_TwoLongFieldsNameTheFirstOneEveryTime: user and store
// fields are checked in their documented order, so the same field is named
// on every call.
func TestValidation_TwoLongFieldsNameTheFirstOneEveryTime(t *testing.T) {
	svc, _ := newService(t)
	ctx := context.Background()
	owner := mustUser(t, svc, accounts.NewUser{Nickname: "S", SiteID: "MLA"})
	long := strings.Repeat("x", 201)
	for range 50 {
		_, err := svc.CreateUser(ctx, accounts.NewUser{Nickname: long, SiteID: "MLA", Gender: long, LastName: long})
		if !errs.Is(err, errs.Invalid) || errs.As(err).Message != "The field [nickname] must be at most 100 characters" {
			t.Fatalf("user: err = %v", err)
		}
		_, err = svc.CreateStore(ctx, owner.ID, accounts.NewStore{Description: "Main", NetworkNodeID: long,
			Location: accounts.Location{City: long, ZipCode: long}})
		if !errs.Is(err, errs.Invalid) || errs.As(err).Message != "The field [network_node_id] must be at most 200 characters" {
			t.Fatalf("store: err = %v", err)
		}
	}
}

func TestUsersFor_EachIDAsTheCallerMaySeeItWithNotFoundInPlace(t *testing.T) {
	is := is.New(t)
	svc, _ := newService(t)
	ctx := context.Background()
	u := mustUser(t, svc, accounts.NewUser{Nickname: "S", SiteID: "MLA", FirstName: "Ana"})
	other := mustUser(t, svc, accounts.NewUser{Nickname: "O", SiteID: "MLA"})
	res, err := svc.UsersFor(ctx, u.ID, []string{fmt.Sprint(u.ID), fmt.Sprint(other.ID), "999", "abc"})
	is.NoErr(err)
	is.Equal(res[0].User, u)              // the caller sees itself whole
	is.Equal(res[1].User, other.Public()) // and others' public subset
	is.True(errs.Is(res[2].Err, errs.NotFound))
	is.Equal(errs.As(res[3].Err).Message, "User not found: abc")
	anon, err := svc.UsersFor(ctx, 0, []string{fmt.Sprint(u.ID)})
	is.NoErr(err)
	is.Equal(anon[0].User, u.Public()) // an anonymous caller sees the public subset
	_, err = svc.UsersFor(ctx, 0, make([]string, accounts.MaxMultiget+1))
	is.True(errs.Is(err, errs.Invalid))
	_, err = svc.UsersFor(ctx, 0, nil)
	is.True(errs.Is(err, errs.Invalid))
}

// textRefusal is one value no text people read may hold, with the message
// (for field) and cause code that refuse it (internal/textcheck).
type textRefusal struct{ name, value, message, code string }

func textRefusals(field string) []textRefusal {
	return []textRefusal{
		{"ControlCharacter", "Ana\x00", "The field [" + field + "] must not contain control characters", "text.control_character"},
		{"Tab", "Ana\tMaría", "The field [" + field + "] must not contain control characters", "text.control_character"},
		{"C1Control", "Ana\u009b", "The field [" + field + "] must not contain control characters", "text.control_character"},
		{"BidiOverride", "\u202eanA", "The field [" + field + "] must not contain bidirectional control characters", "text.bidi_control"},
		{"BidiIsolate", "Ana\u2068", "The field [" + field + "] must not contain bidirectional control characters", "text.bidi_control"},
		{"OnlyInvisible", "\u200b\u200d", "The field [" + field + "] must have visible characters", "text.invisible_only"},
	}
}

func wantTextRefusal(t *testing.T, err error, r textRefusal) {
	t.Helper()
	e := errs.As(err)
	if e == nil || e.Kind != errs.Invalid || e.Message != r.message || len(e.Causes) != 1 || e.Causes[0].Code != r.code {
		t.Fatalf("err = %v, want Invalid %q with cause %s", err, r.message, r.code)
	}
}

func storeIsEmpty(t *testing.T, st storage.Store) {
	t.Helper()
	err := st.View(context.Background(), func(tx storage.Tx) error {
		it := tx.Iterate(storage.Range{})
		defer it.Close()
		if it.Valid() {
			return errors.New("store is not empty: " + string(it.Key()))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCreateUser_NamesWithControlBidiOrOnlyInvisibleCharactersAreRefusedAndWriteNothing(t *testing.T) {
	svc, st := newService(t)
	for _, field := range []string{"nickname", "first_name", "last_name"} {
		for _, r := range textRefusals(field) {
			t.Run(field+"/"+r.name, func(t *testing.T) {
				in := accounts.NewUser{Nickname: "ANA", SiteID: "MLA"}
				switch field {
				case "nickname":
					in.Nickname = r.value
				case "first_name":
					in.FirstName = r.value
				case "last_name":
					in.LastName = r.value
				}
				_, err := svc.CreateUser(context.Background(), in)
				wantTextRefusal(t, err, r)
			})
		}
	}
	storeIsEmpty(t, st)
	u := mustUser(t, svc, accounts.NewUser{Nickname: "ANA_MARÍA 🙂", SiteID: "MLA", FirstName: "Ana\u200dMaría"})
	if u.Nickname != "ANA_MARÍA 🙂" {
		t.Fatalf("nickname = %q", u.Nickname)
	}
}

func TestStores_DescriptionWithControlBidiOrOnlyInvisibleCharactersIsRefused(t *testing.T) {
	svc, _ := newService(t)
	ctx := context.Background()
	u := mustUser(t, svc, accounts.NewUser{Nickname: "S", SiteID: "MLA"})
	for _, r := range textRefusals("description") {
		t.Run(r.name, func(t *testing.T) {
			_, err := svc.CreateStore(ctx, u.ID, accounts.NewStore{Description: r.value})
			wantTextRefusal(t, err, r)
		})
	}
	_, total, err := svc.SearchStores(ctx, u.ID, u.ID, accounts.StoreQuery{Limit: 50})
	if err != nil || total != 0 {
		t.Fatalf("refused stores were written: %d, %v", total, err)
	}
}
