package claims

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
)

// ModerationHook is the word that makes the moderation reject a claim
// message (reason OUT_OF_PLACE_LANGUAGE), the same word as the post-sale
// messages' hook: a test's way to see what a moderated message does.
const ModerationHook = "MODERATE_ME"

// MaxMessageLength bounds a claim message, in characters.
const MaxMessageLength = 2000

// Message statuses.
const (
	MessageAvailable = "available"
	MessageModerated = "moderated"
)

// messageRecord is a claim message as stored.
type messageRecord struct {
	Sender   string       `json:"sender"`
	Receiver string       `json:"receiver"`
	Text     string       `json:"text"`
	AtMs     int64        `json:"at_ms"`
	Files    []fileRecord `json:"files"`
	Status   string       `json:"status"`
	Stage    string       `json:"stage"`
	Hash     string       `json:"hash"`
}

// sendActions is the action a message to each receiver needs.
var sendActions = map[string]string{
	RoleComplainant: ActionSendToComplainant,
	RoleRespondent:  ActionSendToRespondent,
	RoleMediator:    ActionSendToMediator,
}

// Messages lists the messages of claim id that caller sees, newest first:
// every available message, and the caller's own moderated ones (another
// player's moderated messages are hidden). Errors: NotFound, Forbidden.
func (s *Service) Messages(ctx context.Context, caller, id int64) ([]Message, error) {
	var out []Message
	err := s.read(ctx, caller, id, func(tx storage.Tx, r *record, _ []actionRecord) error {
		role := r.roleOf(caller)
		out = []Message{}
		it := tx.Iterate(storage.Range{Start: messageKey(id, 1), End: messageKey(id, r.Messages+1), Reverse: true})
		defer it.Close()
		for ; it.Valid(); it.Next() {
			v, err := it.Value()
			if err != nil {
				return err
			}
			var m messageRecord
			if err := json.Unmarshal(v, &m); err != nil {
				return errs.Internalf(err, "message of claim %d", id)
			}
			if m.Status != MessageAvailable && m.Sender != role {
				continue
			}
			out = append(out, s.messageView(tx, r, m))
		}
		return nil
	})
	return out, err
}

func (s *Service) messageView(tx storage.Tx, r *record, m messageRecord) Message {
	at := s.stamp(tx, r, m.AtMs)
	v := Message{SenderRole: m.Sender, ReceiverRole: m.Receiver, Message: m.Text, DateCreated: at, LastUpdated: at,
		MessageDate: at, Attachments: []MessageFile{}, Status: m.Status, Stage: m.Stage, Hash: m.Hash,
		MessageModeration: MessageModeration{Status: "clean", Source: "online"}}
	if m.Status != MessageAvailable {
		reason := "OUT_OF_PLACE_LANGUAGE"
		v.MessageModeration = MessageModeration{Status: "rejected", Reason: &reason, Source: "online", DateModerated: &at}
	}
	for _, f := range m.Files {
		v.Attachments = append(v.Attachments, MessageFile{Filename: f.Name, OriginalFilename: f.Original, Size: f.Size,
			DateCreated: s.stamp(tx, r, f.AtMs), Type: f.Type})
	}
	return v
}

// Send sends caller's message in to the player in.ReceiverRole of claim
// id. The caller's player must have the action that reaches that receiver
// (send_message_to_complainant, _to_respondent, _to_mediator): in the
// claim stage the buyer and the seller write to each other, in dispute
// both write to the mediator. The respondent's first message to the
// complainant is its mandatory action. Attachments are files the caller
// uploaded to the claim (AddFile, FileMessage). Errors: Invalid, NotFound,
// Forbidden.
func (s *Service) Send(ctx context.Context, caller, id int64, in NewMessage) error {
	if err := checkMessage(in); err != nil {
		return err
	}
	return s.write(ctx, caller, id, func(tx storage.Tx, r *record, out *outcome, nowMs int64) error {
		return s.sendAs(tx, r, out, nowMs, r.roleOf(caller), caller, in)
	})
}

// checkMessage checks a message in a fixed order: the receiver, then the
// text.
func checkMessage(in NewMessage) error {
	switch {
	case in.ReceiverRole == "":
		return errs.Invalidf("The field receiver_role is required: one of [complainant, respondent, mediator]")
	case sendActions[in.ReceiverRole] == "":
		return errs.Invalidf("Invalid receiver_role: %s. Valid values are: [complainant, respondent, mediator]", in.ReceiverRole)
	case strings.TrimSpace(in.Message) == "":
		return errs.Invalidf("The field message is required")
	case utf8.RuneCountInString(in.Message) > MaxMessageLength:
		return errs.Invalidf("The message is too long: at most %d characters", MaxMessageLength)
	}
	return nil
}

// sendAs writes the message in of role (user caller, 0 for the mediator).
func (s *Service) sendAs(tx storage.Tx, r *record, out *outcome, nowMs int64, role string, caller int64, in NewMessage) error {
	action := sendActions[in.ReceiverRole]
	if !r.can(role, action) {
		return errNotAvailable(action)
	}
	files, err := s.messageFiles(tx, r, caller, kindMessage, in.Attachments, func(name string) error {
		return errs.WithCode(errs.Invalid, "business_logic_error", fmt.Sprintf("Attachment not found [claim: %d - fileName: %s]", r.ID, name))
	})
	if err != nil {
		return err
	}
	m := messageRecord{Sender: role, Receiver: in.ReceiverRole, Text: in.Message, AtMs: nowMs, Files: files,
		Status: MessageAvailable, Stage: r.Stage, Hash: fmt.Sprintf("%d_%d_%s", r.ID, r.Messages, uuid.NewString())}
	if strings.Contains(in.Message, ModerationHook) {
		m.Status = MessageModerated
	}
	r.Messages++
	if err := kv.SetJSON(tx, messageKey(r.ID, r.Messages), m); err != nil {
		return err
	}
	// A moderated message never reaches the buyer: it answers nothing.
	if role == RoleRespondent && action == ActionSendToComplainant && m.Status == MessageAvailable {
		r.Answered = true
	}
	r.UpdatedMs = nowMs
	out.note(r, action, role, nil, nowMs)
	out.acted = true
	return nil
}
