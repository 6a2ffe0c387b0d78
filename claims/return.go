package claims

import (
	"slices"
	"strconv"
)

// Return statuses (5.2, 8.5).
const (
	ReturnPending           = "pending"
	ReturnLabelGenerated    = "label_generated"
	ReturnScheduled         = "scheduled"
	ReturnShipped           = "shipped"
	ReturnPendingDelivered  = "pending_delivered"
	ReturnDelivered         = "delivered"
	ReturnNotDelivered      = "not_delivered"
	ReturnToBuyer           = "return_to_buyer"
	ReturnPendingCancel     = "pending_cancel"
	ReturnCancelled         = "cancelled"
	ReturnPendingFailure    = "pending_failure"
	ReturnFailed            = "failed"
	ReturnPendingExpiration = "pending_expiration"
	ReturnExpired           = "expired"
)

// What becomes of the money a return holds (status_money).
const (
	MoneyRetained  = "retained"
	MoneyRefunded  = "refunded"
	MoneyAvailable = "available"
)

// Return subtypes: the whole order's units travel back, or part of them.
const (
	SubtypeTotal   = "return_total"
	SubtypePartial = "return_partial"
)

// returnFlow is every return status with those it may move to, in the
// order of 8.5. A pending_* status is the way to the status it names; the
// operator may also move straight to that status.
var returnFlow = []struct {
	status string
	next   []string
}{
	{ReturnPending, []string{ReturnLabelGenerated, ReturnPendingFailure, ReturnFailed, ReturnPendingCancel, ReturnCancelled}},
	{ReturnLabelGenerated, []string{ReturnScheduled, ReturnShipped, ReturnPendingCancel, ReturnCancelled, ReturnPendingExpiration, ReturnExpired}},
	{ReturnScheduled, []string{ReturnShipped}},
	{ReturnShipped, []string{ReturnPendingDelivered, ReturnDelivered, ReturnNotDelivered}},
	{ReturnPendingDelivered, []string{ReturnDelivered}},
	{ReturnDelivered, nil},
	{ReturnNotDelivered, []string{ReturnToBuyer}},
	{ReturnToBuyer, nil},
	{ReturnPendingCancel, []string{ReturnCancelled}},
	{ReturnCancelled, nil},
	{ReturnPendingFailure, []string{ReturnFailed}},
	{ReturnFailed, nil},
	{ReturnPendingExpiration, []string{ReturnExpired}},
	{ReturnExpired, nil},
}

// ReturnStatuses lists every return status, in the order of the flow.
func ReturnStatuses() []string {
	out := make([]string, len(returnFlow))
	for i, f := range returnFlow {
		out[i] = f.status
	}
	return out
}

// nextReturn lists the statuses a return in status may move to; ok is
// false for an unknown status.
func nextReturn(status string) (next []string, ok bool) {
	for _, f := range returnFlow {
		if f.status == status {
			return f.next, true
		}
	}
	return nil, false
}

// finalReturn reports whether a return in status moves no more.
func finalReturn(status string) bool {
	next, _ := nextReturn(status)
	return len(next) == 0
}

// returnShipmentStatus is the status of the return's shipment for each
// status of the return: pending, ready_to_ship, shipped, delivered, with
// not_delivered and cancelled beside them.
func returnShipmentStatus(status string) string {
	switch status {
	case ReturnPending:
		return "pending"
	case ReturnLabelGenerated, ReturnScheduled:
		return "ready_to_ship"
	case ReturnShipped, ReturnPendingDelivered:
		return "shipped"
	case ReturnDelivered:
		return "delivered"
	case ReturnNotDelivered, ReturnToBuyer:
		return "not_delivered"
	default:
		return "cancelled"
	}
}

// returnRecord is a return as kept in its claim's record.
type returnRecord struct {
	ID          int64  `json:"id"`
	ShipmentID  int64  `json:"shipment_id"`
	Status      string `json:"status"`
	Subtype     string `json:"subtype"`
	StatusMoney string `json:"status_money"`
	CreatedMs   int64  `json:"created_ms"`
	UpdatedMs   int64  `json:"updated_ms"`
	ClosedMs    int64  `json:"closed_ms,omitempty"`
	DeliveredMs int64  `json:"delivered_ms,omitempty"`
	// Restocked: the returned units went back to their store.
	Restocked bool           `json:"restocked,omitempty"`
	Reviews   []reviewRecord `json:"reviews,omitempty"`
}

// reviewRecord is a review of a return: the seller's, or the one its
// window's end stands for.
type reviewRecord struct {
	// Stage is closed for the seller's review, timeout for the window's
	// end.
	Stage        string          `json:"stage"`
	SellerStatus string          `json:"seller_status"`
	Benefited    string          `json:"benefited,omitempty"`
	Failures     []ReviewFailure `json:"failures,omitempty"`
	AtMs         int64           `json:"at_ms"`
}

// move moves the return to status at ms.
func (rt *returnRecord) move(status string, ms int64) {
	rt.Status, rt.UpdatedMs = status, ms
	if finalReturn(status) {
		rt.ClosedMs = ms
	}
	if status == ReturnDelivered {
		rt.DeliveredMs = ms
	}
	switch status {
	case ReturnPendingCancel, ReturnCancelled, ReturnPendingFailure, ReturnFailed, ReturnPendingExpiration, ReturnExpired:
		rt.StatusMoney = MoneyAvailable
	}
}

// Return is a return in the public API's shape (5.2).
type Return struct {
	ID                int64            `json:"id"`
	ClaimID           int64            `json:"claim_id"`
	ResourceType      string           `json:"resource_type"`
	ResourceID        int64            `json:"resource_id"`
	Status            string           `json:"status"`
	Subtype           string           `json:"subtype"`
	StatusMoney       string           `json:"status_money"`
	RefundAt          string           `json:"refund_at"`
	Shipments         []ReturnShipment `json:"shipments"`
	Orders            []ReturnOrder    `json:"orders"`
	RelatedEntities   []string         `json:"related_entities"`
	IntermediateCheck bool             `json:"intermediate_check"`
	Resources         []ReturnResource `json:"resources"`
	DateCreated       string           `json:"date_created"`
	LastUpdated       string           `json:"last_updated"`
	DateClosed        *string          `json:"date_closed"`
}

// ReturnShipment is the shipment that carries a return to the seller.
type ReturnShipment struct {
	ShipmentID     int64             `json:"shipment_id"`
	Status         string            `json:"status"`
	TrackingNumber *string           `json:"tracking_number"`
	Type           string            `json:"type"`
	Destination    ReturnDestination `json:"destination"`
}

// ReturnDestination is where a return goes.
type ReturnDestination struct {
	Name            string        `json:"name"`
	ShippingAddress ReturnAddress `json:"shipping_address"`
}

// ReturnAddress is the seller's address a return travels to: the store
// the units left from.
type ReturnAddress struct {
	AddressID    *int64  `json:"address_id"`
	AddressLine  string  `json:"address_line"`
	StreetName   string  `json:"street_name"`
	StreetNumber string  `json:"street_number"`
	Comment      *string `json:"comment"`
	ZipCode      string  `json:"zip_code"`
	City         Place   `json:"city"`
	State        Place   `json:"state"`
	Country      Place   `json:"country"`
	Neighborhood Place   `json:"neighborhood"`
	Municipality Place   `json:"municipality"`
}

// Place is a place of an address by id and name; either may be unknown.
type Place struct {
	ID   *string `json:"id"`
	Name *string `json:"name"`
}

// ReturnOrder is an order a return covers; the quantities are decimal
// strings ("1.0").
type ReturnOrder struct {
	OrderID        int64  `json:"order_id"`
	ItemID         string `json:"item_id"`
	VariationID    *int64 `json:"variation_id"`
	ContextType    string `json:"context_type"`
	TotalQuantity  string `json:"total_quantity"`
	ReturnQuantity string `json:"return_quantity"`
}

// ReturnResource is a claim a return is linked to.
type ReturnResource struct {
	Resource   string `json:"resource"`
	ResourceID string `json:"resource_id"`
}

// Reviews are the reviews of a return (GET .../returns/{id}/reviews).
type Reviews struct {
	Reviews []Review `json:"reviews"`
}

// Review is one review of a return.
type Review struct {
	Resource        string           `json:"resource"`
	ResourceID      int64            `json:"resource_id"`
	Method          string           `json:"method"`
	ResourceReviews []ResourceReview `json:"resource_reviews"`
	DateCreated     string           `json:"date_created"`
	LastUpdated     string           `json:"last_updated"`
}

// ResourceReview is the outcome of a review.
type ResourceReview struct {
	Stage              string  `json:"stage"`
	Status             *string `json:"status"`
	ProductCondition   *string `json:"product_condition"`
	ProductDestination *string `json:"product_destination"`
	ReasonID           *string `json:"reason_id"`
	Benefited          *string `json:"benefited"`
	SellerStatus       *string `json:"seller_status"`
	SellerReason       *string `json:"seller_reason"`
	BenefitedType      *string `json:"benefited_type"`
	BenefitedReason    *string `json:"benefited_reason"`
	MissingQuantity    *int64  `json:"missing_quantity"`
}

// ReviewFailure is one reason of a failed seller review.
type ReviewFailure struct {
	Reason      string   `json:"reason"`
	Message     string   `json:"message"`
	Attachments []string `json:"attachments"`
	OrderID     *int64   `json:"order_id"`
}

// ReturnReason is a reason a seller may give for a failed review.
type ReturnReason struct {
	ID       string   `json:"id"`
	Name     string   `json:"name"`
	Detail   string   `json:"detail"`
	Position int      `json:"position"`
	Apply    []string `json:"apply"`
}

// returnReasons are the reasons of the seller_return_failed flow.
var returnReasons = []ReturnReason{
	{"SRF2", "product_damaged", "El producto llegó dañado", 1, []string{"order"}},
	{"SRF3", "return_incomplete", "La devolución está incompleta", 2, []string{"order"}},
	{"SRF4", "returned_product_different", "Devolvieron un producto distinto", 3, []string{"order"}},
	{"SRF5", "product_not_in_package", "El producto no está en el paquete", 4, []string{"order", "package"}},
	{"SRF6", "another_failure_with_product", "Otra falla en el producto", 5, []string{"order"}},
	{"SRF7", "return_has_not_arrived", "Aún no me llegó", 6, []string{"package"}},
}

// reviewReasonsWithFiles are the failure reasons that need attachments.
var reviewReasonsWithFiles = []string{"SRF2", "SRF4"}

func returnReason(id string) (ReturnReason, bool) {
	i := slices.IndexFunc(returnReasons, func(r ReturnReason) bool { return r.ID == id })
	if i < 0 {
		return ReturnReason{}, false
	}
	return returnReasons[i], true
}

// quantity writes a number of units as the return does: "1.0".
func quantity(n int64) string { return strconv.FormatInt(n, 10) + ".0" }
