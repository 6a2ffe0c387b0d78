package claims

import (
	"encoding/json"
)

// Claim statuses.
const (
	StatusOpened = "opened"
	StatusClosed = "closed"
)

// Claim stages the engine reaches: claim (buyer and seller) and dispute
// (the mediator joined). The public API also names recontact, stale and
// none, which the search accepts.
const (
	StageClaim   = "claim"
	StageDispute = "dispute"
)

// Player roles.
const (
	RoleComplainant = "complainant"
	RoleRespondent  = "respondent"
	RoleMediator    = "mediator"
)

// TypeMediations is the type of every claim the engine opens: the buyer
// against the seller.
const TypeMediations = "mediations"

// MediatorID is the user id of the mediator player that joins a claim in
// dispute (type internal).
const MediatorID int64 = 46622406

// Actions a player may have in available_actions, and that the actions
// history records.
const (
	ActionSendToComplainant     = "send_message_to_complainant"
	ActionSendToRespondent      = "send_message_to_respondent"
	ActionSendToMediator        = "send_message_to_mediator"
	ActionRefund                = "refund"
	ActionOpenDispute           = "open_dispute"
	ActionAllowReturn           = "allow_return"
	ActionAllowPartialRefund    = "allow_partial_refund"
	ActionAllowReplace          = "allow_replace"
	ActionAddShippingEvidence   = "add_shipping_evidence"
	ActionSendPotentialShipping = "send_potential_shipping"
	ActionReturnReviewOK        = "return_review_ok"
	ActionReturnReviewFail      = "return_review_fail"
	// The actions history also names what the players did that no
	// available action lists.
	ActionOpenClaim           = "open_claim"
	ActionGenerateReturn      = "generate_return"
	ActionAcceptPartialRefund = "accept_partial_refund"
	ActionRejectPartialRefund = "reject_partial_refund"
	ActionCloseClaim          = "close_claim"
	ActionResolve             = "resolve"
	ActionReturnStatusChanged = "return_status_changed"
)

// Claim is a claim in the public API's shape (GET
// /post-purchase/v1/claims/{id}, the items of a search).
type Claim struct {
	ID              int64       `json:"id"`
	ResourceID      int64       `json:"resource_id"`
	Status          string      `json:"status"`
	Type            string      `json:"type"`
	Stage           string      `json:"stage"`
	ParentID        *int64      `json:"parent_id"`
	Resource        string      `json:"resource"`
	ReasonID        string      `json:"reason_id"`
	Fulfilled       bool        `json:"fulfilled"`
	QuantityType    string      `json:"quantity_type"`
	ClaimedQuantity int64       `json:"claimed_quantity"`
	ClaimVersion    json.Number `json:"claim_version"`
	Players         []Player    `json:"players"`
	Resolution      *Resolution `json:"resolution"`
	SiteID          string      `json:"site_id"`
	DateCreated     string      `json:"date_created"`
	LastUpdated     string      `json:"last_updated"`
	RelatedEntities []string    `json:"related_entities"`
}

// Player is a party to a claim and what it may do now.
type Player struct {
	Role             string   `json:"role"`
	Type             string   `json:"type"`
	UserID           int64    `json:"user_id"`
	AvailableActions []Action `json:"available_actions"`
}

// Action is an action a player may take; a mandatory one has a due date,
// after which the claim moves without the player (Expire).
type Action struct {
	Action    string  `json:"action"`
	Mandatory bool    `json:"mandatory"`
	DueDate   *string `json:"due_date"`
}

// Resolution is how a closed claim ended.
type Resolution struct {
	Reason          string   `json:"reason"`
	DateCreated     string   `json:"date_created"`
	Benefited       []string `json:"benefited"`
	ClosedBy        string   `json:"closed_by"`
	AppliedCoverage bool     `json:"applied_coverage"`
}

// Detail is the readable summary of a claim (GET .../detail).
type Detail struct {
	DueDate           *string `json:"due_date"`
	ActionResponsible *string `json:"action_responsible"`
	Title             string  `json:"title"`
	Description       string  `json:"description"`
	Problem           string  `json:"problem"`
}

// ExpectedResolution is what a player wants the claim to end with.
type ExpectedResolution struct {
	PlayerRole         string     `json:"player_role"`
	UserID             int64      `json:"user_id"`
	ExpectedResolution string     `json:"expected_resolution"`
	Details            []KeyValue `json:"details"`
	DateCreated        string     `json:"date_created"`
	LastUpdated        string     `json:"last_updated"`
	Status             string     `json:"status"`
}

// KeyValue is one detail of an expected resolution.
type KeyValue struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Expected resolutions and their statuses.
const (
	ResolutionProduct       = "product"
	ResolutionRefund        = "refund"
	ResolutionChangeProduct = "change_product"
	ResolutionReturnProduct = "return_product"
	ResolutionPartialRefund = "partial_refund"

	ExpectedPending  = "pending"
	ExpectedAccepted = "accepted"
	ExpectedRejected = "rejected"
)

// Offers are the partial refunds a seller may offer (GET
// .../partial-refund/available-offers).
type Offers struct {
	CurrencyID      string           `json:"currency_id"`
	AvailableOffers []Offer          `json:"available_offers"`
	Recommendations []OfferGuideline `json:"recommendations"`
	Restrictions    []OfferGuideline `json:"restrictions"`
}

// Offer is one allowed percentage of the claimed amount.
type Offer struct {
	Amount     json.Number `json:"amount"`
	Percentage json.Number `json:"percentage"`
}

// OfferGuideline is a recommendation or a restriction on the offers.
type OfferGuideline struct {
	Percentage json.Number `json:"percentage"`
	Reason     string      `json:"reason"`
	Type       string      `json:"type"`
}

// Message is a claim message (GET .../messages).
type Message struct {
	SenderRole        string            `json:"sender_role"`
	ReceiverRole      string            `json:"receiver_role"`
	Message           string            `json:"message"`
	TranslatedMessage *string           `json:"translated_message"`
	DateCreated       string            `json:"date_created"`
	LastUpdated       string            `json:"last_updated"`
	MessageDate       string            `json:"message_date"`
	DateRead          *string           `json:"date_read"`
	Attachments       []MessageFile     `json:"attachments"`
	Status            string            `json:"status"`
	Stage             string            `json:"stage"`
	MessageModeration MessageModeration `json:"message_moderation"`
	Repeated          bool              `json:"repeated"`
	Hash              string            `json:"hash"`
}

// MessageFile is an attachment of a message.
type MessageFile struct {
	Filename         string `json:"filename"`
	OriginalFilename string `json:"original_filename"`
	Size             int64  `json:"size"`
	DateCreated      string `json:"date_created"`
	Type             string `json:"type"`
}

// MessageModeration is the moderation of a message.
type MessageModeration struct {
	Status        string  `json:"status"`
	Reason        *string `json:"reason"`
	Source        string  `json:"source"`
	DateModerated *string `json:"date_moderated"`
}

// NewMessage is a message a player sends (POST .../actions/send-message).
type NewMessage struct {
	ReceiverRole string   `json:"receiver_role"`
	Message      string   `json:"message"`
	Attachments  []string `json:"attachments"`
}

// FileInfo is an uploaded file's metadata (GET .../attachments/{name}).
type FileInfo struct {
	Filename         string `json:"filename"`
	OriginalFilename string `json:"original_filename"`
	Size             int64  `json:"size"`
	DateCreated      string `json:"date_created"`
	Type             string `json:"type"`
}

// Upload is a file a player uploads: its name on the player's machine, and
// its bytes.
type Upload struct {
	Name string
	Data []byte
}

// Evidence is a shipping evidence of the seller.
type Evidence struct {
	Type                string   `json:"type"`
	ShippingMethod      *string  `json:"shipping_method"`
	ShippingCompanyName *string  `json:"shipping_company_name"`
	DateShipped         *string  `json:"date_shipped"`
	DateDelivered       *string  `json:"date_delivered"`
	DestinationAgency   *string  `json:"destination_agency"`
	ReceiverEmail       *string  `json:"receiver_email"`
	ReceiverID          *string  `json:"receiver_id"`
	ReceiverName        *string  `json:"receiver_name"`
	TrackingNumber      *string  `json:"tracking_number"`
	HandlingDate        *string  `json:"handling_date"`
	Attachments         []string `json:"attachments"`
}

// Evidence types.
const (
	EvidenceShipping         = "shipping_evidence"
	EvidenceHandlingShipping = "handling_shipping_evidence"
)

// ActionEntry is an entry of a claim's actions history.
type ActionEntry struct {
	ActionName     string  `json:"action_name"`
	PlayerRole     string  `json:"player_role"`
	ActionReasonID *string `json:"action_reason_id"`
	ClaimStage     *string `json:"claim_stage"`
	ClaimStatus    *string `json:"claim_status"`
	DateCreated    string  `json:"date_created"`
}

// StatusEntry is an entry of a claim's stage and status history.
type StatusEntry struct {
	Stage    string `json:"stage"`
	Status   string `json:"status"`
	Date     string `json:"date"`
	ChangeBy string `json:"change_by"`
}

// Reputation says whether a claim weighs on the seller's reputation.
type Reputation struct {
	AffectsReputation string `json:"affects_reputation"`
	HasIncentive      bool   `json:"has_incentive"`
	DueDate           string `json:"due_date"`
}

// ReturnCost is what a return's shipping costs the seller.
type ReturnCost struct {
	CurrencyID string       `json:"currency_id"`
	Amount     json.Number  `json:"amount"`
	AmountUSD  *json.Number `json:"amount_usd,omitempty"`
}
