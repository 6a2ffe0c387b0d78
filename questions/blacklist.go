package questions

import (
	"context"
	"errors"
	"time"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/paging"
	"github.com/marketplace/marketplace/storage"
)

// BlacklistEntry is one user blocked from asking a seller's questions.
type BlacklistEntry struct {
	UserID int64 `json:"user_id"`
}

type blacklistRecord struct {
	UserID  int64     `json:"user_id"`
	Created time.Time `json:"created"`
}

func checkOwnBlacklist(caller, seller int64) error {
	if caller != seller {
		return errs.Forbiddenf("Only user %d can manage its questions blacklist", seller)
	}
	return nil
}

// Block adds user to seller's questions blacklist: the user can no longer
// ask on any of the seller's items. Only the seller itself may; blocking a
// user already blocked changes nothing and reports added false. Errors:
// Forbidden, Invalid (self), NotFound (user).
func (s *Service) Block(ctx context.Context, caller, seller, user int64) (added bool, err error) {
	if user <= 0 {
		return false, errs.Invalidf("Invalid user_id: %d. It must be a positive integer", user)
	}
	if err := checkOwnBlacklist(caller, seller); err != nil {
		return false, err
	}
	if user == seller {
		return false, errs.Invalidf("A seller cannot block itself")
	}
	now := s.clock.Now()
	err = s.store.Update(ctx, func(tx storage.Tx) error {
		added = false
		if _, err := accounts.GetUser(tx, user); err != nil {
			return err
		}
		if _, err := tx.Get(blacklistKey(seller, user)); err == nil {
			return nil
		} else if !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		added = true
		if err := blacklistCounter(seller).Add(tx, 1); err != nil {
			return err
		}
		return kv.SetJSON(tx, blacklistKey(seller, user), blacklistRecord{UserID: user, Created: now})
	})
	return added, wrap(err, "block user")
}

// Unblock removes user from seller's questions blacklist, so that the user
// may ask again. Errors: Invalid (user not positive, checked first),
// Forbidden, NotFound (not blocked).
func (s *Service) Unblock(ctx context.Context, caller, seller, user int64) error {
	if user <= 0 {
		return errs.Invalidf("Invalid user_id: %d. It must be a positive integer", user)
	}
	if err := checkOwnBlacklist(caller, seller); err != nil {
		return err
	}
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		if _, err := tx.Get(blacklistKey(seller, user)); errors.Is(err, storage.ErrNotFound) {
			return errs.NotFoundf("User %d is not in the questions blacklist of user %d", user, seller)
		} else if err != nil {
			return err
		}
		if err := blacklistCounter(seller).Add(tx, -1); err != nil {
			return err
		}
		return tx.Delete(blacklistKey(seller, user))
	})
	return wrap(err, "unblock user")
}

// Blacklist lists a page of seller's blocked users, by user id, and their
// total, kept in a count beside the entries: the page reads the keys up to
// its end. Errors: Forbidden.
func (s *Service) Blacklist(ctx context.Context, caller, seller int64, offset, limit int) ([]BlacklistEntry, int, error) {
	if err := paging.Check(offset, limit); err != nil {
		return nil, 0, err
	}
	if err := checkOwnBlacklist(caller, seller); err != nil {
		return nil, 0, err
	}
	page := []BlacklistEntry{}
	total := 0
	err := s.store.View(ctx, func(tx storage.Tx) error {
		n, err := blacklistCounter(seller).Read(tx)
		if err != nil {
			return err
		}
		total = int(n)
		if limit == 0 || offset >= total {
			return nil
		}
		it := tx.Iterate(storage.Prefix(blacklistPrefix(seller)))
		defer it.Close()
		for seen := 0; it.Valid() && len(page) < limit; it.Next() {
			if seen >= offset {
				page = append(page, BlacklistEntry{UserID: readTrailingID(it.Key())})
			}
			seen++
		}
		return nil
	})
	if err != nil {
		return nil, 0, wrap(err, "list blacklist")
	}
	return page, total, nil
}
