package messages

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/storage"
)

// ModerationInput is the operator's verdict on a message.
type ModerationInput struct {
	// Status is clean or rejected.
	Status string `json:"status"`
	// Reason is why a message is rejected, one of ModerationReasons
	// (OUT_OF_PLACE_LANGUAGE when none is given); a clean message has
	// none.
	Reason *string `json:"reason"`
}

// Moderate sets the moderation of message id, as the operator decides: a
// clean message is available to its recipient, unread until read, and its
// recipient is notified (messages, created) if it was rejected before; a
// rejected one is hidden from its recipient and leaves its unread counts.
// A verdict equal to the message's changes nothing. Errors: Invalid (a
// status or a reason that is not one of the lists), NotFound.
func (s *Service) Moderate(ctx context.Context, id string, in ModerationInput) (Message, error) {
	reason := ""
	switch in.Status {
	case "":
		return Message{}, errs.Invalidf("The field [status] is required: clean or rejected")
	case ModerationClean:
		if in.Reason != nil && *in.Reason != "" {
			return Message{}, errs.Invalidf("A clean message has no reason: leave reason out")
		}
	case ModerationRejected:
		reason = "OUT_OF_PLACE_LANGUAGE"
		if in.Reason != nil && *in.Reason != "" {
			reason = strings.ToUpper(*in.Reason)
			if !slices.Contains(ModerationReasons, reason) {
				return Message{}, errs.Invalidf("Invalid reason: %s. Valid values are: [%s]", *in.Reason, strings.Join(ModerationReasons, ", "))
			}
		}
	default:
		return Message{}, errs.Invalidf("Invalid status: %s. Valid values are: [clean, rejected]", in.Status)
	}
	notFound := errs.NotFoundf("Message %s not found", id)
	if !IsMessageID(id) {
		return Message{}, notFound
	}
	now := s.clock.Now()
	var out Message
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		// The message's pointer with the number of the event it may
		// write, then its record with its conversation.
		ctx := notify.DrawEventNumbers(ctx, tx, 1)
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
		if r.Moderation == in.Status && r.Reason == reason {
			out = view(r)
			return nil
		}
		c, err := getConversation(tx, r.PackID)
		if err != nil {
			return err
		}
		wasVisible := r.visible()
		r.Moderation, r.Reason, r.Moderated = in.Status, reason, now
		if r.visible() == wasVisible {
			// Another reason for a rejection.
			out = view(r)
			return putRecord(tx, r)
		}
		hidden := &c.HiddenFromSeller
		if r.BySeller {
			hidden = &c.HiddenFromBuyer
		}
		delta := int64(1)
		if r.visible() {
			t := now
			r.Available, r.Notified = &t, &t
			*hidden--
			if err := s.announce(ctx, tx, 0, r.To, r.ID, "created", now); err != nil {
				return err
			}
		} else {
			r.Available = nil
			*hidden++
			delta = -1
		}
		if r.Read == nil {
			uk := unreadKey(r.PackID, r.recipientRole(), r.createdMs(), r.Seq)
			if delta > 0 {
				err = tx.Set(uk, nil)
			} else {
				err = tx.Delete(uk)
			}
			if err != nil {
				return err
			}
			if err := addUnread(tx, r.To, r.recipientRole(), r.PackID, r.SellerID, delta); err != nil {
				return err
			}
		}
		if err := putRecord(tx, r); err != nil {
			return err
		}
		if err := kv.SetJSON(tx, convKey(r.PackID), c); err != nil {
			return err
		}
		out = view(r)
		return nil
	})
	return out, err
}

// MaxMarkIDs bounds the ids of one PUT /messages/mark_as_read.
const MaxMarkIDs = 100

// ParseMessageIDs reads the comma-separated ids of PUT
// /messages/mark_as_read/{ids}. Errors: Invalid.
func ParseMessageIDs(raw string) ([]string, error) {
	bad := invalid("Messages id empty or invalid")
	var ids []string
	for _, p := range strings.Split(raw, ",") {
		p = strings.TrimSpace(p)
		if !IsMessageID(p) {
			return nil, bad
		}
		if !slices.Contains(ids, p) {
			ids = append(ids, p)
		}
	}
	if len(ids) == 0 || len(ids) > MaxMarkIDs {
		return nil, bad
	}
	return ids, nil
}

// maxNumbersDrawnAhead bounds the event numbers a batch draws before it
// knows how many events it writes: past it, each event draws its own.
const maxNumbersDrawnAhead = 50

// MarkAsRead marks read the messages ids that caller received and had not
// read (the older route, PUT /messages/mark_as_read/{ids}); the caller's
// own messages are left as they are. They must belong to one
// conversation. Errors: Invalid (an unknown id, messages of several
// conversations), Forbidden (caller is not a party).
func (s *Service) MarkAsRead(ctx context.Context, caller int64, ids []string) error {
	now := s.clock.Now()
	return s.store.Update(ctx, func(tx storage.Tx) error {
		// The numbers of the read notifications go with the first round
		// trip; the records and their pack with the next.
		ctx := notify.DrawEventNumbers(ctx, tx, min(len(ids), maxNumbersDrawnAhead))
		if err := prefetchRecords(tx, ids); err != nil {
			return err
		}
		var recs []record
		for _, id := range ids {
			r, ok, err := getRecord(tx, id)
			if err != nil {
				return err
			}
			if !ok {
				return invalid(fmt.Sprintf("The specified message id: %s does not exists", id))
			}
			if len(recs) > 0 && recs[0].PackID != r.PackID {
				return invalid("Not allowed messages from multiple orders")
			}
			recs = append(recs, r)
		}
		// The caller's unread count in either role, with the order.
		p, err := s.readPack(tx, recs[0].PackID, func(_, packID int64) [][]byte {
			return [][]byte{userUnreadKey(caller, roleBuyer, packID), userUnreadKey(caller, roleSeller, packID)}
		})
		if err != nil {
			return err
		}
		role := p.roleOf(caller)
		if role == "" {
			return errs.WithCode(errs.Forbidden, "forbidden", fmt.Sprintf("Access denied for user %d to message with id %s", caller, recs[0].ID))
		}
		marked := int64(0)
		for _, r := range recs {
			if r.To != caller || r.Read != nil || !r.visible() {
				continue
			}
			t := now
			r.Read = &t
			if err := putRecord(tx, r); err != nil {
				return err
			}
			if err := tx.Delete(unreadKey(r.PackID, role, r.createdMs(), r.Seq)); err != nil {
				return err
			}
			if err := s.announce(ctx, tx, 0, r.From, r.ID, "read", now); err != nil {
				return err
			}
			marked++
		}
		return addUnread(tx, caller, role, p.sale.packID, p.sale.sellerID, -marked)
	})
}
