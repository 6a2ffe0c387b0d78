package messages

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/sales"
	"github.com/marketplace/marketplace/storage"
)

// TimeLayout is how messages write their dates: UTC with milliseconds and
// a Z (2020-12-05T20:01:46.000Z).
const TimeLayout = "2006-01-02T15:04:05.000Z"

func stamp(t time.Time) string { return t.UTC().Format(TimeLayout) }

func stampPtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := stamp(*t)
	return &s
}

// Message statuses and moderation statuses.
const (
	StatusAvailable = "available"
	StatusModerated = "moderated"

	ModerationClean    = "clean"
	ModerationRejected = "rejected"
)

// Moderation reasons (spec 3.11).
var ModerationReasons = []string{"OUT_OF_PLACE_LANGUAGE", "SOCIAL_NETWORK_LINK", "LINK_SHORT_URL", "AUTOMATIC_MESSAGE",
	"PERSONAL_DATA", "LINK_MERCADOPAGO", "ML_LINKS_PAYPAL", "EVASION_CLAIM_SELLER"}

// record is a message as stored.
type record struct {
	ID       string `json:"id"`
	Seq      uint64 `json:"seq"`
	PackID   int64  `json:"pack_id"`
	SellerID int64  `json:"seller_id"`
	SiteID   string `json:"site_id"`
	ClientID int64  `json:"client_id"`
	From     int64  `json:"from"`
	To       int64  `json:"to"`
	// BySeller: the seller sent it (the buyer received it).
	BySeller  bool       `json:"by_seller"`
	Text      string     `json:"text"`
	Created   time.Time  `json:"created"`
	Available *time.Time `json:"available,omitempty"`
	Notified  *time.Time `json:"notified,omitempty"`
	Read      *time.Time `json:"read,omitempty"`
	// Moderation is clean or rejected, Reason why it was rejected, at
	// Moderated.
	Moderation  string          `json:"moderation"`
	Reason      string          `json:"reason,omitempty"`
	Moderated   time.Time       `json:"moderated"`
	Attachments []attachmentRef `json:"attachments,omitempty"`
	First       bool            `json:"first,omitempty"`
	// Option is the action guide's option it was sent with.
	Option string `json:"option,omitempty"`
}

func (r record) createdMs() int64 { return r.Created.UnixMilli() }

func (r record) senderRole() string {
	if r.BySeller {
		return roleSeller
	}
	return roleBuyer
}

func (r record) recipientRole() string {
	if r.BySeller {
		return roleBuyer
	}
	return roleSeller
}

// visible says whether the message is available: a moderated one is seen
// by its sender only.
func (r record) visible() bool { return r.Moderation == ModerationClean }

// seenBy says whether the party of role sees the message.
func (r record) seenBy(role string) bool { return role == r.senderRole() || r.visible() }

// attachmentRef is an attachment of a message as the message shows it.
type attachmentRef struct {
	Filename string    `json:"filename"`
	Original string    `json:"original_filename"`
	Type     string    `json:"type"`
	Size     int64     `json:"size"`
	Created  time.Time `json:"created"`
}

// conversation is a pack's conversation as stored: what its rules read
// and the counts its pages show.
type conversation struct {
	PackID   int64  `json:"pack_id"`
	OrderID  int64  `json:"order_id"`
	SellerID int64  `json:"seller_id"`
	BuyerID  int64  `json:"buyer_id"`
	SiteID   string `json:"site_id"`
	// ShipmentID is the sale's shipment, read with the order.
	ShipmentID int64 `json:"shipment_id"`
	// First and Last are the first and the latest message's dates;
	// LastBuyer the latest of the buyer's.
	First     time.Time `json:"first"`
	Last      time.Time `json:"last"`
	LastBuyer time.Time `json:"last_buyer"`
	// Reopened is when a message of the buyer ended a block that the
	// buyer's writing ends (time, refund).
	Reopened time.Time `json:"reopened"`
	// Messages counts them all; HiddenFromSeller and HiddenFromBuyer the
	// moderated ones each party does not see (the other's).
	Messages         int64 `json:"messages"`
	HiddenFromSeller int64 `json:"hidden_from_seller,omitempty"`
	HiddenFromBuyer  int64 `json:"hidden_from_buyer,omitempty"`
	// Used counts the messages sent with each option of the action guide.
	Used map[string]int `json:"used,omitempty"`
}

func (c conversation) exists() bool { return c.Messages > 0 }

// total is the number of messages the party of role sees.
func (c conversation) total(role string) int64 {
	if role == roleSeller {
		return c.Messages - c.HiddenFromSeller
	}
	return c.Messages - c.HiddenFromBuyer
}

func getConversation(tx storage.Tx, packID int64) (conversation, error) {
	var c conversation
	err := kv.GetJSON(tx, convKey(packID), &c)
	if errors.Is(err, storage.ErrNotFound) {
		return conversation{PackID: packID}, nil
	}
	if err != nil {
		return c, errs.Internalf(err, "read conversation %d", packID)
	}
	return c, nil
}

// pointer is where a message's record is: its conversation, its sender's
// list and its place there.
type pointer struct {
	packID    int64
	sender    string
	createdMs int64
	seq       uint64
}

func encodePointer(p pointer) []byte {
	return keycodec.Raw().Int(p.packID).Str(p.sender).Int(p.createdMs).Uint(p.seq)
}

func decodePointer(b []byte) (pointer, error) {
	r := keycodec.Read(b)
	p := pointer{packID: r.Int(), sender: r.Str(), createdMs: r.Int(), seq: r.Uint()}
	return p, r.Err()
}

// prefetchRecords reads, where the store is at network distance, the
// messages of ids and the conversation of the first in two round trips:
// their pointers, then their records with the keys readPack reads first.
// getRecord and readPack then find them read. Ids without a message are
// left to getRecord to report.
func prefetchRecords(tx storage.Tx, ids []string) error {
	if _, ok := tx.(storage.Prefetcher); !ok || len(ids) == 0 {
		return nil
	}
	keys := make([][]byte, len(ids))
	for i, id := range ids {
		keys[i] = idKey(id)
	}
	if err := storage.Prefetch(tx, keys...); err != nil {
		return err
	}
	keys = keys[:0]
	packID := int64(0)
	for _, id := range ids {
		b, err := tx.Get(idKey(id))
		if errors.Is(err, storage.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		p, err := decodePointer(b)
		if err != nil {
			continue // getRecord reports it
		}
		if packID == 0 {
			packID = p.packID
			keys = append(keys, append(sales.PackKeys(packID), convKey(packID))...)
		}
		keys = append(keys, pageKey(p.packID, p.sender, p.createdMs, p.seq))
	}
	return storage.Prefetch(tx, keys...)
}

// getRecord reads message id, or reports that none has it.
func getRecord(tx storage.Tx, id string) (record, bool, error) {
	b, err := tx.Get(idKey(id))
	if errors.Is(err, storage.ErrNotFound) {
		return record{}, false, nil
	}
	if err != nil {
		return record{}, false, errs.Internalf(err, "read message %s", id)
	}
	p, err := decodePointer(b)
	if err != nil {
		return record{}, false, errs.Internalf(err, "decode message pointer %s", id)
	}
	var r record
	if err := kv.GetJSON(tx, pageKey(p.packID, p.sender, p.createdMs, p.seq), &r); err != nil {
		return record{}, false, errs.Internalf(err, "read message %s", id)
	}
	return r, true, nil
}

// putRecord writes r into the list of each party that sees it and takes
// it out of the others'.
func putRecord(tx storage.Tx, r record) error {
	b, err := jsonBytes(r)
	if err != nil {
		return err
	}
	for _, role := range []string{roleSeller, roleBuyer} {
		k := pageKey(r.PackID, role, r.createdMs(), r.Seq)
		if r.seenBy(role) {
			if err := tx.Set(k, b); err != nil {
				return err
			}
		} else if err := tx.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// messageID is the id of the message numbered n: 32 lowercase hex
// characters, as the public API's look, the same for the same number.
func messageID(n uint64) string {
	h := sha256.Sum256(binary.BigEndian.AppendUint64([]byte("marketplace/messages/"), n))
	return hex.EncodeToString(h[:16])
}

// attachmentUUID is the uuid of the attachment numbered n, in the form of
// a random (version 4) uuid.
func attachmentUUID(n uint64) string {
	h := sha256.Sum256(binary.BigEndian.AppendUint64([]byte("marketplace/attachments/"), n))
	b := h[:16]
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	x := hex.EncodeToString(b)
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

// IsMessageID reports whether s has the form of a message id.
func IsMessageID(s string) bool {
	if len(s) != 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// resourcePath is the conversation's path: /packs/{pack_id}/sellers/{seller_id}.
func resourcePath(packID, sellerID int64) string {
	return fmt.Sprintf("/packs/%d/sellers/%d", packID, sellerID)
}

func jsonBytes(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, errs.Internalf(err, "encode %T", v)
	}
	return b, nil
}

// getJSON reads the record at key, which must be there.
func getJSON(tx storage.Tx, key []byte, v any) error {
	if err := kv.GetJSON(tx, key, v); err != nil {
		return errs.Internalf(err, "read %q", key)
	}
	return nil
}

func unmarshal(b []byte, v any) error {
	if err := json.Unmarshal(b, v); err != nil {
		return errs.Internalf(err, "decode %T", v)
	}
	return nil
}
