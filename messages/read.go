package messages

import (
	"context"
	"fmt"
	"net/url"
	"strconv"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/storage"
)

// Paging of a conversation.
const (
	// DefaultLimit is a page's size when the query gives none (the
	// public example's).
	DefaultLimit = 10
	// MaxLimit bounds a page; the public API states none.
	MaxLimit = 100
)

// ConversationQuery is the query of GET /messages/packs/{pack_id}/sellers/{seller_id}.
type ConversationQuery struct {
	Limit, Offset int
	// MarkAsRead marks read the caller's unread messages (the default).
	MarkAsRead bool
}

// ParseConversationQuery reads a conversation's query: limit (default
// 10, from 1 to MaxLimit), offset (default 0) and mark_as_read (false
// leaves the messages unread; anything else marks them). Errors: Invalid.
func ParseConversationQuery(v url.Values) (ConversationQuery, error) {
	q := ConversationQuery{Limit: DefaultLimit, MarkAsRead: v.Get("mark_as_read") != "false"}
	if raw := v.Get("limit"); raw != "" {
		n, err := strconv.Atoi(raw)
		switch {
		case err != nil || n > MaxLimit:
			return q, invalid("Invalid limit param")
		case n <= 0:
			return q, invalid("The limit param must be greater than 0")
		}
		q.Limit = n
	}
	if raw := v.Get("offset"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 0 {
			return q, invalid("Invalid offset param")
		}
		q.Offset = n
	}
	return q, nil
}

// Conversation returns a page of the conversation of pack id (or of an
// order's id) whose seller is sellerID, newest first, to a party of it,
// with its status. The other party's moderated messages are not in it,
// nor any message of a conversation expired. Unless q.MarkAsRead is false
// it marks read every message the caller received and had not read, and
// writes a read notification to the sender of each. Errors: NotFound (no
// such pack), Forbidden (sellerID is not its seller, or caller not a
// party).
func (s *Service) Conversation(ctx context.Context, caller, id, sellerID int64, q ConversationQuery) (Conversation, error) {
	out, unread, err := s.page(ctx, caller, id, sellerID, q)
	if err != nil || unread == 0 || !q.MarkAsRead {
		return out, err
	}
	if err := s.markAll(ctx, id, caller); err != nil {
		return Conversation{}, err
	}
	out, _, err = s.page(ctx, caller, id, sellerID, q)
	return out, err
}

// page reads a page of the conversation and the caller's unread count in
// it (0 when its messages are hidden).
func (s *Service) page(ctx context.Context, caller, id, sellerID int64, q ConversationQuery) (Conversation, int64, error) {
	now := s.clock.Now()
	out := Conversation{Paging: Paging{Limit: q.Limit, Offset: q.Offset}, Messages: []Message{},
		SellerMaxLength: SellerMaxLength, BuyerMaxLength: BuyerMaxLength}
	var unread int64
	err := s.store.View(ctx, func(tx storage.Tx) error {
		p, err := s.readPack(tx, id, func(_, packID int64) [][]byte {
			return [][]byte{userUnreadKey(caller, roleSeller, packID), userUnreadKey(caller, roleBuyer, packID)}
		})
		if err != nil {
			return err
		}
		role := p.roleOf(caller)
		if sellerID != p.sale.sellerID || role == "" {
			return errTokenForResource(itoa(id))
		}
		st := p.state(now)
		out.ConversationStatus = shown(st, p.sale, p.conv, role).view(p.sale, p.claim)
		if hidesMessages(st) {
			return nil
		}
		out.Paging.Total = p.conv.total(role)
		u, err := readUserUnread(tx, caller, role, p.sale.packID)
		if err != nil {
			return err
		}
		unread = u.count
		it := tx.Iterate(storage.Range{Start: pagePrefix(p.sale.packID, role), End: storage.PrefixEnd(pagePrefix(p.sale.packID, role)), Reverse: true})
		defer it.Close()
		for skipped := 0; it.Valid() && skipped < q.Offset; it.Next() {
			skipped++
		}
		for ; it.Valid() && len(out.Messages) < q.Limit; it.Next() {
			v, err := it.Value()
			if err != nil {
				return err
			}
			var r record
			if err := unmarshal(v, &r); err != nil {
				return err
			}
			out.Messages = append(out.Messages, view(r))
		}
		return nil
	})
	return out, unread, err
}

// Message returns message id to a party of its conversation that sees it.
// It marks nothing read. Errors: Invalid ("The specified message id does
// not exists": no such message, or one hidden from caller), Forbidden.
func (s *Service) Message(ctx context.Context, caller int64, id string) (Single, error) {
	notFound := invalid("The specified message id does not exists")
	if !IsMessageID(id) {
		return Single{}, notFound
	}
	now := s.clock.Now()
	var out Single
	err := s.store.View(ctx, func(tx storage.Tx) error {
		// The message's record with its pack's first keys (prefetchRecords).
		if err := prefetchRecords(tx, []string{id}); err != nil {
			return err
		}
		r, ok, err := getRecord(tx, id)
		if err != nil {
			return err
		}
		if !ok {
			return notFound
		}
		p, err := s.readPack(tx, r.PackID, nil)
		if err != nil {
			return err
		}
		role := p.roleOf(caller)
		if role == "" {
			return errs.WithCode(errs.Forbidden, "forbidden", fmt.Sprintf("Access denied for user %d to message with id %s", caller, id))
		}
		if !r.seenBy(role) || hidesMessages(p.state(now)) {
			return notFound
		}
		out.Messages = []Message{view(r)}
		return nil
	})
	return out, err
}
