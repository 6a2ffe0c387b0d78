package messages

import (
	"github.com/marketplace/marketplace/internal/keycodec"
)

// Key layout of messages. Every key starts with "msg".
//
//	msg/conv/<pack_id>                               -> conversation (JSON): parties, dates, counts, options used
//	msg/page/<pack_id>/<viewer>/<created ms>/<seq>   -> record (JSON): a message, once per party that sees it
//	msg/id/<message_id>                              -> pointer (keycodec): pack id, sender's role, created ms, seq
//	msg/unread/<pack_id>/<recipient>/<created ms>/<seq> -> empty: a message its recipient has not read
//	msg/ur/<user_id>/<role>/<pack_id>                -> unread (keycodec Int count, Int seller id), absent at 0
//	msg/att/<attachment_id>                          -> attachment (JSON): owner, name, type, size, dates, links
//	msg/attc/<attachment_id>/<n>                     -> chunk n of the attachment's bytes (chunkSize each, the last shorter)
//	msg/attexp/<expires ms>/<attachment_id>          -> empty: an attachment no message links yet, by expiry
//
// <viewer>, <recipient> and <role> are "s" (the seller) or "b" (the
// buyer). A conversation is keyed by its pack; an order named by its own
// id in the pack's place is read as its pack's conversation.
//
// A conversation's page is a range of msg/page/<pack>/<viewer>, newest
// first (a reverse walk): each party has its own list, in which the
// messages hidden from it (the other party's moderated ones) are not, so
// that the page is the range's first keys whatever is hidden, and the
// list's total is kept beside it in the conversation. A message stands
// in the list of each party that sees it, its record whole, so that a page
// is one range read; the sender always sees its own, so the sender's list
// holds every message and msg/id points there.
//
// The unread counts are per user, role and conversation (msg/ur), each
// written only by that conversation's changes: no key is shared by the
// writers of different conversations, and a user's list of conversations
// with unread messages is one range. msg/unread lists a recipient's unread
// messages of one conversation, which a read marks and removes without
// walking the rest.
//
// Ids: a message's id is 32 lowercase hex characters derived from a number
// of the messageSequence; an attachment's is {user_id}_{uuid}.{ext}, the
// uuid derived from a number of the attachmentSequence.
const (
	messageSequence    = "messages"
	attachmentSequence = "message_attachments"
)

// Roles of a party in the keys.
const (
	roleSeller = "s"
	roleBuyer  = "b"
)

func convKey(packID int64) []byte { return keycodec.New("msg/conv").Int(packID) }

func pagePrefix(packID int64, viewer string) []byte {
	return keycodec.New("msg/page").Int(packID).Str(viewer)
}

func pageKey(packID int64, viewer string, createdMs int64, seq uint64) []byte {
	return keycodec.Key(pagePrefix(packID, viewer)).Int(createdMs).Uint(seq)
}

func idKey(id string) []byte { return keycodec.New("msg/id").Str(id) }

func unreadPrefix(packID int64, recipient string) []byte {
	return keycodec.New("msg/unread").Int(packID).Str(recipient)
}

func unreadKey(packID int64, recipient string, createdMs int64, seq uint64) []byte {
	return keycodec.Key(unreadPrefix(packID, recipient)).Int(createdMs).Uint(seq)
}

func userUnreadPrefix(userID int64, role string) []byte {
	return keycodec.New("msg/ur").Int(userID).Str(role)
}

func userUnreadKey(userID int64, role string, packID int64) []byte {
	return keycodec.Key(userUnreadPrefix(userID, role)).Int(packID)
}

func attachmentKey(id string) []byte { return keycodec.New("msg/att").Str(id) }

func chunkPrefix(id string) []byte { return keycodec.New("msg/attc").Str(id) }

func chunkKey(id string, n int) []byte { return keycodec.Key(chunkPrefix(id)).Uint(uint64(n)) }

func expiryPrefix() []byte { return keycodec.New("msg/attexp") }

func expiryKey(expiresMs int64, id string) []byte {
	return keycodec.Key(expiryPrefix()).Int(expiresMs).Str(id)
}
