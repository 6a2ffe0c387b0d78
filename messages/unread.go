package messages

import (
	"context"
	"errors"
	"time"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/storage"
)

// MaxUnreadResults bounds the conversations GET /messages/unread lists.
const MaxUnreadResults = 500

// Roles a user reads its unread messages as.
const (
	RoleSeller = "seller"
	RoleBuyer  = "buyer"
)

func roleKey(role string) string {
	if role == RoleBuyer {
		return roleBuyer
	}
	return roleSeller
}

// userUnread is a user's unread count in one conversation.
type userUnread struct {
	count, sellerID int64
}

func readUserUnread(tx storage.Tx, user int64, role string, packID int64) (userUnread, error) {
	b, err := tx.Get(userUnreadKey(user, role, packID))
	if errors.Is(err, storage.ErrNotFound) {
		return userUnread{}, nil
	}
	if err != nil {
		return userUnread{}, errs.Internalf(err, "read unread count")
	}
	return decodeUserUnread(b)
}

func decodeUserUnread(b []byte) (userUnread, error) {
	r := keycodec.Read(b)
	u := userUnread{count: r.Int(), sellerID: r.Int()}
	if err := r.Err(); err != nil {
		return userUnread{}, errs.Internalf(err, "decode unread count")
	}
	return u, nil
}

// addUnread changes user's unread count in the conversation by delta; a
// count of zero is no key.
func addUnread(tx storage.Tx, user int64, role string, packID, sellerID, delta int64) error {
	u, err := readUserUnread(tx, user, role, packID)
	if err != nil {
		return err
	}
	u.count += delta
	k := userUnreadKey(user, role, packID)
	if u.count <= 0 {
		return tx.Delete(k)
	}
	return tx.Set(k, keycodec.Raw().Int(u.count).Int(sellerID))
}

// markBatch bounds the messages one transaction marks read, so that a
// conversation with thousands of unread messages is marked in
// transactions of a size every backend commits.
const markBatch = 200

// markRead marks read, at now, up to markBatch of the messages of p that
// the party of role has not read, writes a read notification to each
// sender, and returns how many it marked.
func (s *Service) markRead(ctx context.Context, tx storage.Tx, p pack, role string, now time.Time) (int, error) {
	prefix := unreadPrefix(p.sale.packID, role)
	type place struct {
		ms  int64
		seq uint64
	}
	var places []place
	it := tx.Iterate(storage.Prefix(prefix))
	for ; it.Valid() && len(places) < markBatch; it.Next() {
		r := keycodec.Read(it.Key()[len(prefix):])
		pl := place{ms: r.Int(), seq: r.Uint()}
		if err := r.Err(); err != nil {
			it.Close()
			return 0, errs.Internalf(err, "decode unread key")
		}
		places = append(places, pl)
	}
	it.Close()
	if len(places) == 0 {
		return 0, nil
	}
	sender := roleSeller
	if role == roleSeller {
		sender = roleBuyer
	}
	keys := make([][]byte, 0, len(places))
	for _, pl := range places {
		keys = append(keys, pageKey(p.sale.packID, sender, pl.ms, pl.seq))
	}
	if err := storage.Prefetch(tx, keys...); err != nil {
		return 0, err
	}
	for i, pl := range places {
		var r record
		if err := getJSON(tx, keys[i], &r); err != nil {
			return 0, err
		}
		t := now
		r.Read = &t
		if err := putRecord(tx, r); err != nil {
			return 0, err
		}
		if err := tx.Delete(unreadKey(p.sale.packID, role, pl.ms, pl.seq)); err != nil {
			return 0, err
		}
		if err := s.announce(ctx, tx, 0, r.From, r.ID, "read", now); err != nil {
			return 0, err
		}
	}
	reader := p.counterpart(sender)
	return len(places), addUnread(tx, reader, role, p.sale.packID, p.sale.sellerID, -int64(len(places)))
}

// markAll marks read every unread message of the conversation of id that
// caller received, in transactions of markBatch.
func (s *Service) markAll(ctx context.Context, id, caller int64) error {
	for {
		now := s.clock.Now()
		n := 0
		err := s.store.Update(ctx, func(tx storage.Tx) error {
			p, err := s.readPack(tx, id, nil)
			if err != nil {
				return err
			}
			role := p.roleOf(caller)
			if role == "" {
				return nil
			}
			n, err = s.markRead(ctx, tx, p, role, now)
			return err
		})
		if err != nil || n < markBatch {
			return err
		}
	}
}

// Unread lists the conversations in which caller, as role ("seller",
// the default, or "buyer"; another value is read as seller), has unread
// messages, with their counts: at most MaxUnreadResults, by pack id.
func (s *Service) Unread(ctx context.Context, caller int64, role string) (Unread, error) {
	out := Unread{UserID: caller, Results: []UnreadResults{}}
	rk := roleKey(role)
	prefix := userUnreadPrefix(caller, rk)
	err := s.store.View(ctx, func(tx storage.Tx) error {
		it := tx.Iterate(storage.Prefix(prefix))
		defer it.Close()
		for ; it.Valid() && len(out.Results) < MaxUnreadResults; it.Next() {
			packID := keycodec.Read(it.Key()[len(prefix):]).Int()
			v, err := it.Value()
			if err != nil {
				return err
			}
			u, err := decodeUserUnread(v)
			if err != nil {
				return err
			}
			out.Results = append(out.Results, UnreadResults{Resource: resourcePath(packID, u.sellerID), Count: u.count})
		}
		return nil
	})
	return out, err
}

// UnreadOf is caller's unread count in the conversation of pack id with
// seller sellerID: a list of at most one result. Errors: NotFound (no
// such pack), Forbidden (sellerID is not its seller, caller not a party).
func (s *Service) UnreadOf(ctx context.Context, caller, id, sellerID int64) (Unread, error) {
	out := Unread{UserID: caller, Results: []UnreadResults{}}
	err := s.store.View(ctx, func(tx storage.Tx) error {
		p, err := s.readPack(tx, id, nil)
		if err != nil {
			return err
		}
		role := p.roleOf(caller)
		if sellerID != p.sale.sellerID || role == "" {
			return errTokenForResource(itoa(id))
		}
		u, err := readUserUnread(tx, caller, role, p.sale.packID)
		if err != nil {
			return err
		}
		if u.count > 0 {
			out.Results = append(out.Results, UnreadResults{Resource: resourcePath(p.sale.packID, p.sale.sellerID), Count: u.count})
		}
		return nil
	})
	return out, err
}
