package accounts

import (
	"context"
	"errors"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
)

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
	userNumber := kv.NewOnceID(s.store, userSequence)
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
