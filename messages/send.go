package messages

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/storage"
)

// MaxAttachments bounds the attachments of one message.
const MaxAttachments = 25

// SendBody is the body of POST /messages/packs/{pack_id}/sellers/{seller_id}.
type SendBody struct {
	// From and To are the sender's and the recipient's user ids (a
	// number or a string of digits in the JSON).
	From, To int64
	Text     string
	// Attachments are ids of uploaded attachments.
	Attachments []string
	// ToResource and ToSiteID are fields of the older body, checked when
	// they are sent.
	ToResource, ToSiteID *string
}

// Messages of the send rules.
const (
	msgBodyRequired = "A JSON body is required"
	msgFromRequired = "The field 'from' is required"
	msgToRequired   = "The field 'to.user_id' is required"
	msgToInvalid    = "Invalid 'to' user id"
	msgFromInvalid  = "Invalid 'from' user id"
	msgSameParty    = "Sender and received must not be equals"
	msgTooMany      = "The message exceeds the allowed number of attachments: 25"
)

// objectBody reads b as one JSON object's members: an empty body (or
// null) is errEmpty, anything else that is not an object a malformed body.
func objectBody(b []byte, errEmpty error) (map[string]json.RawMessage, error) {
	t := bytes.TrimSpace(b)
	if len(t) == 0 || string(t) == "null" {
		return nil, errEmpty
	}
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(t))
	if err := dec.Decode(&m); err != nil || dec.More() || t[0] != '{' {
		return nil, errs.Invalidf("Malformed JSON body: a JSON object is expected")
	}
	return m, nil
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null"
}

// userID reads a user id written as a number or as a string of digits.
func userID(raw json.RawMessage) (int64, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		return n, err == nil && n > 0
	}
	var n json.Number
	if json.Unmarshal(raw, &n) != nil {
		return 0, false
	}
	v, err := strconv.ParseInt(n.String(), 10, 64)
	return v, err == nil && v > 0
}

// party reads the {user_id} object of field; missing says it is absent.
func party(m map[string]json.RawMessage, field string) (user json.RawMessage, rest map[string]json.RawMessage, missing bool) {
	raw, ok := m[field]
	if !ok || isNull(raw) {
		return nil, nil, true
	}
	if err := json.Unmarshal(raw, &rest); err != nil || rest == nil {
		return nil, nil, true
	}
	u, ok := rest["user_id"]
	if !ok || isNull(u) {
		return nil, rest, true
	}
	return u, rest, false
}

// ParseSendBody reads the body of a message sent by POST. Errors: Invalid
// (the spec's messages for a missing body, sender, recipient or text),
// Error (422, attachments that are not a list of ids).
func ParseSendBody(b []byte) (SendBody, error) {
	m, err := objectBody(b, invalid(msgBodyRequired))
	if err != nil {
		return SendBody{}, err
	}
	var out SendBody
	from, _, missing := party(m, "from")
	if missing {
		return SendBody{}, invalid(msgFromRequired)
	}
	var ok bool
	if out.From, ok = userID(from); !ok {
		return SendBody{}, invalid(msgFromInvalid)
	}
	to, rest, missing := party(m, "to")
	if missing {
		return SendBody{}, invalid(msgToRequired)
	}
	if out.To, ok = userID(to); !ok {
		return SendBody{}, invalid(msgToInvalid)
	}
	for _, f := range []struct {
		name string
		to   **string
	}{{"resource", &out.ToResource}, {"site_id", &out.ToSiteID}} {
		raw, ok := rest[f.name]
		if !ok || isNull(raw) {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			s = string(raw)
		}
		*f.to = &s
	}
	if raw, ok := m["text"]; !ok || isNull(raw) || json.Unmarshal(raw, &out.Text) != nil {
		return SendBody{}, invalid(msgTextRequired)
	}
	if raw, ok := m["attachments"]; ok && !isNull(raw) {
		if json.Unmarshal(raw, &out.Attachments) != nil {
			return SendBody{}, errUnprocessableAttachment()
		}
	}
	return out, nil
}

// Send writes a message of caller in the conversation of pack id (or of
// an order's id) whose seller is sellerID: the seller to the buyer, or the
// buyer to the seller. clientID is the application that sends it.
//
// The buyer may always write, but through the blocks that end the
// conversation (spec 3.10: a cancellation, a payment, a fulfillment not
// delivered, a mediation, the 18 months); a buyer's message ends the
// blocks of time and of a refund. The seller may write once the buyer has,
// outside every block; on an ME2 sale the seller starts a conversation
// only through the action guide. The text is moderated: a rejected message
// is kept and shown to its sender only, and its recipient is not told.
//
// Errors: Invalid (the spec's messages of 3.4), NotFound (no such pack),
// Forbidden (a sender or a recipient that is not the sale's party, a
// blocked conversation: an *Error of ShapeStatusCode, or the spec's own
// messages for a fulfillment not delivered and, in Brazil, a mediation),
// *Error unprocessable (an attachment id unknown, of another user, or
// expired).
func (s *Service) Send(ctx context.Context, caller, clientID, id, sellerID int64, in SendBody) (Message, error) {
	if in.From == in.To {
		return Message{}, invalid(msgSameParty)
	}
	if len(in.Attachments) > MaxAttachments {
		return Message{}, invalid(msgTooMany)
	}
	reason := moderate(in.Text)
	seq, eventSeq := kv.NewOnceID(s.store, messageSequence), kv.NewOnceID(s.store, notify.OutboxSequence)
	if err := kv.DrawOnce(ctx, seq, eventSeq); err != nil {
		return Message{}, err
	}
	n, _ := seq.Get(ctx)
	evSeq, _ := eventSeq.Get(ctx)
	now := s.clock.Now()
	var out Message
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		p, err := s.readPack(tx, id, func(_, packID int64) [][]byte {
			return [][]byte{userUnreadKey(in.To, roleSeller, packID), userUnreadKey(in.To, roleBuyer, packID)}
		})
		if err != nil {
			return err
		}
		if sellerID != p.sale.sellerID {
			return errTokenForResource(itoa(id))
		}
		role := p.roleOf(caller)
		if in.From != caller || role == "" {
			return errs.WithCode(errs.Forbidden, "forbidden", fmt.Sprintf("Access denied for user %d to order %d", in.From, p.sale.orderID))
		}
		if in.To != p.counterpart(role) {
			return errs.WithCode(errs.Forbidden, "forbidden", fmt.Sprintf("Receiver does not belong to order %d", p.sale.orderID))
		}
		if err := checkLegacyTo(in, p); err != nil {
			return err
		}
		max := BuyerMaxLength
		if role == roleSeller {
			max = SellerMaxLength
		}
		if err := checkText(in.Text, max); err != nil {
			return err
		}
		st := p.state(now)
		reopens := false
		switch {
		case role == roleBuyer && st.blocked && reopenedByBuyer(st):
			reopens = true
		case st.blocked:
			return errSendBlocked(st, p.sale)
		case role == roleSeller && p.conv.LastBuyer.IsZero() && p.sale.me2():
			return errBlocked()
		}
		atts, err := s.linkAttachments(tx, caller, p.sale.packID, in.Attachments, now)
		if err != nil {
			return err
		}
		r := record{ID: messageID(n), Seq: n, PackID: p.sale.packID, SellerID: p.sale.sellerID, SiteID: p.sale.siteID,
			ClientID: clientID, From: caller, To: in.To, BySeller: role == roleSeller, Text: in.Text, Created: now,
			Attachments: atts}
		if reopens {
			p.conv.Reopened = now
		}
		out, err = s.write(ctx, tx, p, r, reason, evSeq, now)
		return err
	})
	return out, err
}

// checkLegacyTo checks the fields of the older body that name the
// conversation, when they are sent.
func checkLegacyTo(in SendBody, p pack) error {
	if in.ToResource != nil && *in.ToResource != "packs" && *in.ToResource != "orders" {
		return invalid("Invalid field 'to.resource'")
	}
	if in.ToSiteID != nil && *in.ToSiteID != p.sale.siteID {
		return invalid("The field 'to.site_id' has an invalid value")
	}
	return nil
}

// errSendBlocked refuses a message to a blocked conversation: with the
// spec's own messages for a fulfillment not delivered and, in Brazil
// where the spec documents it, a mediation; with the messaging body
// (variant B) otherwise.
func errSendBlocked(st state, sale saleFacts) error {
	switch {
	case st.substatus == SubstatusFulfillment:
		return errs.WithCode(errs.Forbidden, "forbidden",
			"You can not send the message because the purchase is Mercado Envíos Full and has not been yet delivered")
	case (st.substatus == SubstatusMediation || st.substatus == SubstatusMediationFBM) && sale.siteID == "MLB":
		return errs.WithCode(errs.Forbidden, "forbidden", "You can not send the message because a mediation is in process")
	}
	return errBlocked()
}

// write stores the new message r of conversation p, moderated (reason ""
// is clean), with its counts, its unread entry and its notification.
func (s *Service) write(ctx context.Context, tx storage.Tx, p pack, r record, reason string, evSeq uint64, now time.Time) (Message, error) {
	r.First = !p.conv.exists()
	r.Moderation, r.Moderated = ModerationClean, now
	if reason != "" {
		r.Moderation, r.Reason = ModerationRejected, reason
	} else {
		t := now
		r.Available, r.Notified = &t, &t
	}
	if err := putRecord(tx, r); err != nil {
		return Message{}, err
	}
	ptr := encodePointer(pointer{packID: r.PackID, sender: r.senderRole(), createdMs: r.createdMs(), seq: r.Seq})
	if err := tx.Set(idKey(r.ID), ptr); err != nil {
		return Message{}, err
	}
	c := &p.conv
	if r.First {
		c.OrderID, c.SellerID, c.BuyerID, c.SiteID, c.ShipmentID = p.sale.orderID, p.sale.sellerID, p.sale.buyerID, p.sale.siteID, p.sale.shipmentID
		c.First = now
	}
	c.Messages++
	c.Last = now
	if !r.BySeller {
		c.LastBuyer = now
	}
	if r.Option != "" {
		if c.Used == nil {
			c.Used = map[string]int{}
		}
		c.Used[r.Option]++
	}
	if r.visible() {
		if err := tx.Set(unreadKey(r.PackID, r.recipientRole(), r.createdMs(), r.Seq), nil); err != nil {
			return Message{}, err
		}
		if err := addUnread(tx, r.To, r.recipientRole(), r.PackID, r.SellerID, 1); err != nil {
			return Message{}, err
		}
		if err := s.announce(ctx, tx, evSeq, r.To, r.ID, "created", now); err != nil {
			return Message{}, err
		}
	} else if r.BySeller {
		c.HiddenFromBuyer++
	} else {
		c.HiddenFromSeller++
	}
	if err := kv.SetJSON(tx, convKey(p.sale.packID), p.conv); err != nil {
		return Message{}, err
	}
	return view(r), nil
}
