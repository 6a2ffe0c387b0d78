package sales

import (
	"encoding/json"

	"github.com/marketplace/marketplace/stock"
)

// Order statuses. The public API lists confirmed, payment_in_process,
// partially_paid and invalid too; no route of the engine leads to them, but
// the search filter accepts them.
const (
	StatusPaymentRequired  = "payment_required"
	StatusPaymentInProcess = "payment_in_process"
	StatusPartiallyPaid    = "partially_paid"
	StatusPaid             = "paid"
	StatusConfirmed        = "confirmed"
	StatusCancelled        = "cancelled"
	StatusInvalid          = "invalid"
)

// OrderStatuses are the order.status filter's values, in the order of its
// available_filters, with their names.
var OrderStatuses = []struct{ ID, Name string }{
	{StatusPaid, "Order Paid"},
	{StatusConfirmed, "Order Confirmed"},
	{StatusPaymentInProcess, "Payment In Process"},
	{StatusPaymentRequired, "Payment Required"},
	{StatusCancelled, "Order Cancelled"},
	{StatusInvalid, "Order Invalid"},
}

// Order tags the engine sets.
const (
	TagPaid         = "paid"
	TagDelivered    = "delivered"
	TagNotDelivered = "not_delivered"
)

// TimeLayout is how sales dates are written: milliseconds and the offset of
// the site's time zone (2024-11-01T09:34:59.000-04:00).
const TimeLayout = "2006-01-02T15:04:05.000-07:00"

// Order is an order in the public API's shape.
type Order struct {
	ID           int64         `json:"id"`
	Status       string        `json:"status"`
	StatusDetail *StatusDetail `json:"status_detail"`
	DateCreated  string        `json:"date_created"`
	DateClosed   *string       `json:"date_closed"`
	LastUpdated  string        `json:"last_updated"`
	PackID       int64         `json:"pack_id"`
	BuyingMode   string        `json:"buying_mode"`
	TotalAmount  json.Number   `json:"total_amount"`
	PaidAmount   json.Number   `json:"paid_amount"`
	CurrencyID   string        `json:"currency_id"`
	OrderItems   []OrderItem   `json:"order_items"`
	Payments     []Payment     `json:"payments"`
	Shipping     Shipping      `json:"shipping"`
	Buyer        Party         `json:"buyer"`
	Seller       Party         `json:"seller"`
	Tags         []string      `json:"tags"`
	Feedback     Feedback      `json:"feedback"`
	Context      OrderContext  `json:"context"`
	Fulfilled    *bool         `json:"fulfilled"`
	Mediations   []Mediation   `json:"mediations"`
	Taxes        Taxes         `json:"taxes"`
	CancelDetail *CancelDetail `json:"cancel_detail"`
	ShippingCost *json.Number  `json:"shipping_cost"`
}

// StatusDetail explains a status; the engine sets none.
type StatusDetail struct {
	Code        string `json:"code"`
	Description string `json:"description"`
}

// OrderItem is one line of an order.
type OrderItem struct {
	Item              OrderItemItem     `json:"item"`
	Quantity          int64             `json:"quantity"`
	RequestedQuantity RequestedQuantity `json:"requested_quantity"`
	UnitPrice         json.Number       `json:"unit_price"`
	FullUnitPrice     json.Number       `json:"full_unit_price"`
	CurrencyID        string            `json:"currency_id"`
	SaleFee           json.Number       `json:"sale_fee"`
	ListingTypeID     string            `json:"listing_type_id"`
	ElementID         *int64            `json:"element_id"`
	// Stock is the store the units left from ([] for a single-origin item,
	// and until a payment_required order is paid).
	Stock []stock.Source `json:"stock"`
}

// OrderItemItem is the item as it was sold.
type OrderItemItem struct {
	ID                  string  `json:"id"`
	Title               string  `json:"title"`
	CategoryID          string  `json:"category_id"`
	VariationID         *int64  `json:"variation_id"`
	SellerCustomField   *string `json:"seller_custom_field"`
	VariationAttributes []any   `json:"variation_attributes"`
	Condition           string  `json:"condition"`
	SellerSKU           *string `json:"seller_sku"`
	UserProductID       string  `json:"user_product_id"`
	Warranty            *string `json:"warranty"`
	ParentItemID        *string `json:"parent_item_id"`
}

// RequestedQuantity is the quantity the buyer asked for, in units.
type RequestedQuantity struct {
	Measure string `json:"measure"`
	Value   int64  `json:"value"`
}

// Payment is a payment of an order.
type Payment struct {
	ID                        int64       `json:"id"`
	OrderID                   int64       `json:"order_id"`
	PayerID                   int64       `json:"payer_id"`
	Collector                 IDRef       `json:"collector"`
	SiteID                    string      `json:"site_id"`
	PaymentMethodID           string      `json:"payment_method_id"`
	PaymentType               string      `json:"payment_type"`
	OperationType             string      `json:"operation_type"`
	Installments              int         `json:"installments"`
	Status                    string      `json:"status"`
	StatusDetail              string      `json:"status_detail"`
	TransactionAmount         json.Number `json:"transaction_amount"`
	TransactionAmountRefunded json.Number `json:"transaction_amount_refunded"`
	TotalPaidAmount           json.Number `json:"total_paid_amount"`
	ShippingCost              json.Number `json:"shipping_cost"`
	MarketplaceFee            json.Number `json:"marketplace_fee"`
	CurrencyID                string      `json:"currency_id"`
	DateApproved              *string     `json:"date_approved"`
	DateCreated               string      `json:"date_created"`
	DateLastModified          string      `json:"date_last_modified"`
}

// IDRef is an object that names another by id.
type IDRef struct {
	ID int64 `json:"id"`
}

// Shipping names the order's shipment.
type Shipping struct {
	ID *int64 `json:"id"`
}

// Party is the buyer or the seller of an order.
type Party struct {
	ID       int64  `json:"id"`
	Nickname string `json:"nickname"`
}

// Feedback names the feedback each party gave on the order (package
// feedback), by id: what the seller wrote is the sale's (seller, sale),
// what the buyer wrote the purchase's (buyer, purchase). The order search
// of the public API says seller and buyer, its feedback routes sale and
// purchase: an order without feedback is {seller: null, buyer: null} as
// the sales routes show it, and once either party gave feedback both
// namings are sent.
type Feedback struct {
	Seller   *int64 `json:"seller"`
	Buyer    *int64 `json:"buyer"`
	Sale     *int64 `json:"sale"`
	Purchase *int64 `json:"purchase"`
}

// MarshalJSON leaves sale and purchase out while no feedback exists.
func (f Feedback) MarshalJSON() ([]byte, error) {
	if f.Seller == nil && f.Buyer == nil {
		return []byte(`{"seller":null,"buyer":null}`), nil
	}
	type plain Feedback
	return json.Marshal(plain(f))
}

// Mediation names a claim opened on the order (package claims).
type Mediation struct {
	ID int64 `json:"id"`
}

// Where a claim stands, as the order search's mediations.status filter
// names it: opened or closed, in the claim stage or after a dispute, which
// the seller (seller_dispute_*) or the buyer or the mediator (dispute_*)
// opened.
const (
	MediationClaimOpened         = "claim_opened"
	MediationClaimClosed         = "claim_closed"
	MediationDisputeOpened       = "dispute_opened"
	MediationDisputeClosed       = "dispute_closed"
	MediationSellerDisputeOpened = "seller_dispute_opened"
	MediationSellerDisputeClosed = "seller_dispute_closed"
)

// MediationStatuses are the values of the mediations.status filter.
var MediationStatuses = []string{MediationClaimOpened, MediationClaimClosed, MediationDisputeOpened,
	MediationDisputeClosed, MediationSellerDisputeOpened, MediationSellerDisputeClosed}

// OrderContext is where the order was made.
type OrderContext struct {
	Channel string   `json:"channel"`
	Site    string   `json:"site"`
	Flows   []string `json:"flows"`
}

// Taxes of the order; the engine charges none.
type Taxes struct {
	Amount     *json.Number `json:"amount"`
	CurrencyID *string      `json:"currency_id"`
	ID         *string      `json:"id"`
}

// CancelDetail says why and when an order was cancelled.
type CancelDetail struct {
	Group       string `json:"group"`
	Code        string `json:"code"`
	Description string `json:"description"`
	RequestedBy string `json:"requested_by"`
	Date        string `json:"date"`
	// ApplicationID is the application that asked; the operator is none.
	ApplicationID *int64 `json:"application_id"`
}

// orderRecord is an order as stored: the public shape plus what the
// engine needs to know of it.
type orderRecord struct {
	Order Order `json:"order"`
	// Store is the store named at creation ("" to let the rule pick one
	// when the order is paid).
	Store string `json:"store,omitempty"`
	// Taken is where the units came from, set when they were taken (the
	// order was paid) and kept after a cancellation gave them back.
	Taken *stock.Source `json:"taken,omitempty"`
	// Returned: every unit went back to the store (a cancellation, or
	// returns of them all); ReturnedUnits counts those a partial return
	// gave back before.
	Returned      bool  `json:"returned,omitempty"`
	ReturnedUnits int64 `json:"returned_units,omitempty"`
	// MediationStatuses is where each claim of the order stands, as the
	// order search's mediations.status filter names it, by claim id.
	MediationStatuses map[int64]string `json:"mediation_statuses,omitempty"`
	// CreatedMs is date_created in Unix milliseconds, the order's place
	// in the search lists.
	CreatedMs int64 `json:"created_ms"`
	// Closed and Updated are date_closed and last_updated in Unix
	// milliseconds (0: no date_closed), for the search's ranges.
	ClosedMs  int64 `json:"closed_ms,omitempty"`
	UpdatedMs int64 `json:"updated_ms"`
}

// Pack is a pack in the public API's shape: every order is alone in its
// own pack.
type Pack struct {
	ID           int64         `json:"id"`
	Status       string        `json:"status"`
	StatusDetail *StatusDetail `json:"status_detail"`
	Buyer        IDRef         `json:"buyer"`
	Shipment     IDRef         `json:"shipment"`
	Orders       []IDRef       `json:"orders"`
	DateCreated  string        `json:"date_created"`
	LastUpdated  string        `json:"last_updated"`
}

// Pack statuses.
const (
	PackReleased  = "released"
	PackCancelled = "cancelled"
)
