package accounts

import (
	"context"
	"strconv"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/storage"
)

// MaxMultiget is how many ids one multiget (of users, of items) may ask
// for, as in the public API.
const MaxMultiget = 20

// CheckMultiget applies the rules of a multiget's id list: at least one id
// and at most MaxMultiget. Errors: Invalid.
func CheckMultiget(ids []string) error {
	if len(ids) == 0 {
		return errs.Invalidf("The fields [ids] are required for requested call")
	}
	if len(ids) > MaxMultiget {
		return errs.Invalidf("Too many ids: %d. At most %d ids can be asked for at once", len(ids), MaxMultiget)
	}
	return nil
}

// UserResult is the answer for one id of a users multiget: the user as the
// caller may see it, or the error the by-id lookup gives for that id.
type UserResult struct {
	ID   string
	User UserView
	Err  error
}

// UsersFor returns the users of ids in the order asked, each as caller may
// see it (UserFor), from one snapshot. An id that is not a positive integer
// or names no user gets a not-found error in its place. Errors: Invalid (no
// id, or more than MaxMultiget).
func (s *Service) UsersFor(ctx context.Context, caller int64, ids []string) ([]UserResult, error) {
	if err := CheckMultiget(ids); err != nil {
		return nil, err
	}
	out := make([]UserResult, len(ids))
	err := s.store.View(ctx, func(tx storage.Tx) error {
		// Every user in one round trip where the store can.
		var keys [][]byte
		for _, raw := range ids {
			if id, err := strconv.ParseInt(raw, 10, 64); err == nil && id > 0 {
				keys = append(keys, userKey(id))
			}
		}
		if err := storage.Prefetch(tx, keys...); err != nil {
			return err
		}
		for i, raw := range ids {
			out[i] = UserResult{ID: raw}
			id, err := strconv.ParseInt(raw, 10, 64)
			if err != nil || id <= 0 {
				out[i].Err = errs.NotFoundf("User not found: %s", raw)
				continue
			}
			u, err := GetUser(tx, id)
			switch {
			case errs.Is(err, errs.NotFound):
				out[i].Err = err
			case err != nil:
				return err
			case caller == id:
				out[i].User = u
			default:
				out[i].User = u.Public()
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
