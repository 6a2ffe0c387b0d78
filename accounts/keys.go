package accounts

import "github.com/marketplace/marketplace/internal/keycodec"

// Key layout of accounts. Every key starts with "acc".
//
//	acc/user/<id>                     -> User (binary, see record.go)
//	acc/store/<store_id>              -> Store (JSON)
//	acc/ustore/<user_id>/<store_id>   -> empty; a user's stores in id order
//	acc/token/<sha256(token)>         -> tokenRecord (binary, see tokenRecordV2)
//	acc/utoken/<user_id>/<sha256>     -> empty; a user's tokens, for revoking them all
//	acc/ocode/<sha256(code)>          -> codeRecord (JSON): an unused authorization code
//	acc/orefresh/<sha256(token)>      -> refreshRecord (JSON): a refresh token
//	acc/ogrant/<user_id>/<client_id>  -> sha256 of the latest refresh token of that user and client
//	acc/test/<user_id>                -> testUserRecord (JSON): a test user's owner and password hash
//	acc/testnick/<nickname>           -> a test user's id (decimal), for signing in by nickname
//	acc/testcount/<owner_id>          -> how many test users owner created (decimal); one key per owner,
//	                                     read and written by each creation so that the limit holds under races

// firstUserID and firstStoreID make ids look like the public API's: long
// integers, not 1, 2, 3. A user id is firstUserID - 1 + the next number of
// the store's userSequence; a store id likewise from storeSequence.
const (
	firstUserID   = 100000001
	firstStoreID  = 1000001
	userSequence  = "users"
	storeSequence = "stores"
)

func userKey(id int64) []byte { return keycodec.New("acc/user").Int(id) }

func storeKey(id string) []byte { return keycodec.New("acc/store").Str(id) }

func userStorePrefix(userID int64) []byte { return keycodec.New("acc/ustore").Int(userID) }

func userStoreKey(userID int64, storeID string) []byte {
	return keycodec.Key(userStorePrefix(userID)).Str(storeID)
}

// tokenKey is read on every authenticated request: sized at once, where
// NewKey's default would grow for the 64 hex digits.
func tokenKey(hash string) []byte {
	const ns = "acc/token"
	return keycodec.Key(make([]byte, 0, len(ns)+len(hash)+2)).Str(ns).Str(hash)
}

func userTokenPrefix(userID int64) []byte { return keycodec.New("acc/utoken").Int(userID) }

func userTokenKey(userID int64, hash string) []byte {
	return keycodec.Key(userTokenPrefix(userID)).Str(hash)
}

func codeKey(hash string) []byte      { return keycodec.New("acc/ocode").Str(hash) }
func refreshKey(hash string) []byte   { return keycodec.New("acc/orefresh").Str(hash) }
func grantPrefix(userID int64) []byte { return keycodec.New("acc/ogrant").Int(userID) }
func grantKey(userID, clientID int64) []byte {
	return keycodec.Key(grantPrefix(userID)).Int(clientID)
}
func testUserKey(id int64) []byte        { return keycodec.New("acc/test").Int(id) }
func testNickKey(nickname string) []byte { return keycodec.New("acc/testnick").Str(nickname) }
func testCountKey(owner int64) []byte    { return keycodec.New("acc/testcount").Int(owner) }

// UserKeys returns the keys GetUser reads for ids, for storage.Prefetch: a
// caller at network distance reads them with its other keys in one round
// trip.
func UserKeys(ids ...int64) [][]byte {
	keys := make([][]byte, len(ids))
	for i, id := range ids {
		keys[i] = userKey(id)
	}
	return keys
}

// StoreKeys returns the keys GetStore reads for ids, for storage.Prefetch.
func StoreKeys(ids ...string) [][]byte {
	keys := make([][]byte, 0, len(ids))
	for _, id := range ids {
		if id != "" {
			keys = append(keys, storeKey(id))
		}
	}
	return keys
}
