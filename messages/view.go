package messages

// Message is a message in the public API's current ("updated") format.
type Message struct {
	ID          string      `json:"id"`
	SiteID      string      `json:"site_id"`
	ClientID    int64       `json:"client_id"`
	From        UserRef     `json:"from"`
	To          UserRef     `json:"to"`
	Status      string      `json:"status"`
	Subject     *string     `json:"subject"`
	Text        string      `json:"text"`
	MessageDate MessageDate `json:"message_date"`
	Moderation  Moderation  `json:"message_moderation"`
	// Attachments is null for a message without any.
	Attachments  []Attachment `json:"message_attachments"`
	Resources    []Resource   `json:"message_resources"`
	FirstMessage bool         `json:"conversation_first_message"`
}

// UserRef names the sender or the recipient of a message.
type UserRef struct {
	UserID int64 `json:"user_id"`
}

// MessageDate holds the moments of a message; each is null until it
// happens.
type MessageDate struct {
	Received  *string `json:"received"`
	Available *string `json:"available"`
	Notified  *string `json:"notified"`
	Created   *string `json:"created"`
	Read      *string `json:"read"`
}

// Moderation is a message's moderation.
type Moderation struct {
	Status string  `json:"status"`
	Reason *string `json:"reason"`
	Source string  `json:"source"`
	Date   *string `json:"moderation_date"`
}

// Attachment is a file attached to a message.
type Attachment struct {
	Filename                string `json:"filename"`
	OriginalFilename        string `json:"original_filename"`
	Type                    string `json:"type"`
	Size                    int64  `json:"size"`
	PotentialSecurityThreat bool   `json:"potential_security_threat"`
	CreationDate            string `json:"creation_date"`
}

// Resource is a resource a message belongs to (its pack, its seller).
type Resource struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// ConversationStatus says whether a conversation takes messages, and
// why not (the substatus).
type ConversationStatus struct {
	Path                string  `json:"path"`
	Status              string  `json:"status"`
	Substatus           *string `json:"substatus"`
	StatusDate          string  `json:"status_date"`
	StatusUpdateAllowed bool    `json:"status_update_allowed"`
	ClaimID             *int64  `json:"claim_id"`
	ShippingID          *int64  `json:"shipping_id"`
}

// Paging is the window of a conversation's page and its total.
type Paging struct {
	Limit  int   `json:"limit"`
	Offset int   `json:"offset"`
	Total  int64 `json:"total"`
}

// Conversation is a page of a pack's conversation (GET
// /messages/packs/{pack_id}/sellers/{seller_id}).
type Conversation struct {
	Paging             Paging             `json:"paging"`
	ConversationStatus ConversationStatus `json:"conversation_status"`
	Messages           []Message          `json:"messages"`
	SellerMaxLength    int                `json:"seller_max_message_length"`
	BuyerMaxLength     int                `json:"buyer_max_message_length"`
}

// Single is the answer of GET /messages/{message_id}: one message, with
// neither paging nor status.
type Single struct {
	Paging             *Paging             `json:"paging"`
	ConversationStatus *ConversationStatus `json:"conversation_status"`
	Messages           []Message           `json:"messages"`
}

// Unread lists a user's conversations with unread messages.
type Unread struct {
	UserID  int64           `json:"user_id"`
	Results []UnreadResults `json:"results"`
}

// UnreadResults is one conversation's unread count.
type UnreadResults struct {
	Resource string `json:"resource"`
	Count    int64  `json:"count"`
}

// Text limits of a message.
const (
	SellerMaxLength = 350
	BuyerMaxLength  = 3500
)

// view is r as the public API shows it.
func view(r record) Message {
	m := Message{ID: r.ID, SiteID: r.SiteID, ClientID: r.ClientID, From: UserRef{UserID: r.From}, To: UserRef{UserID: r.To},
		Status: StatusAvailable, Text: r.Text,
		Resources:    []Resource{{ID: itoa(r.PackID), Name: "packs"}, {ID: itoa(r.SellerID), Name: "sellers"}},
		FirstMessage: r.First}
	created := stamp(r.Created)
	m.MessageDate = MessageDate{Received: &created, Created: &created, Available: stampPtr(r.Available),
		Notified: stampPtr(r.Notified), Read: stampPtr(r.Read)}
	mod := stamp(r.Moderated)
	m.Moderation = Moderation{Status: r.Moderation, Source: "online", Date: &mod}
	if r.Moderation != ModerationClean {
		m.Status = StatusModerated
		reason := r.Reason
		m.Moderation.Reason = &reason
	}
	for _, a := range r.Attachments {
		m.Attachments = append(m.Attachments, Attachment{Filename: a.Filename, OriginalFilename: a.Original, Type: a.Type,
			Size: a.Size, CreationDate: stamp(a.Created)})
	}
	return m
}
