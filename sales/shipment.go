package sales

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/stock"
	"github.com/marketplace/marketplace/storage"
)

// Shipment statuses.
const (
	ShipmentPending      = "pending"
	ShipmentHandling     = "handling"
	ShipmentReadyToShip  = "ready_to_ship"
	ShipmentShipped      = "shipped"
	ShipmentDelivered    = "delivered"
	ShipmentNotDelivered = "not_delivered"
	ShipmentCancelled    = "cancelled"
)

// ShipmentStatus is a status with its substatuses, as GET
// /shipment_statuses lists them.
type ShipmentStatus struct {
	ID          string              `json:"id"`
	Substatuses []ShipmentSubstatus `json:"substatuses"`
	// Next are the statuses a shipment in this one may move to
	// (MoveShipment); empty for a final status.
	Next []string `json:"next_statuses"`
}

// ShipmentSubstatus is one substatus of a status.
type ShipmentSubstatus struct {
	ID string `json:"id"`
}

// shipmentFlow is every status, in the order a shipment goes through them,
// with its substatuses and the statuses it may move to. A shipment is
// cancelled before it ships, never after; delivered, not_delivered and
// cancelled are final.
var shipmentFlow = []struct {
	status      string
	substatuses []string
	next        []string
}{
	{ShipmentPending, []string{"buffered", "waiting_for_payment", "shipment_paid", "manufacturing", "creating_route"},
		[]string{ShipmentHandling, ShipmentReadyToShip, ShipmentCancelled}},
	{ShipmentHandling, []string{"waiting_for_label_generation", "invoice_pending", "regenerating", "waiting_for_carrier_authorization"},
		[]string{ShipmentReadyToShip, ShipmentCancelled}},
	{ShipmentReadyToShip, []string{"ready_to_print", "printed", "ready_for_pickup", "ready_for_dropoff", "picked_up", "dropped_off", "in_hub", "in_transit", "authorized_by_carrier"},
		[]string{ShipmentShipped, ShipmentCancelled}},
	{ShipmentShipped, []string{"out_for_delivery", "soon_deliver", "receiver_absent", "bad_address", "delayed", "waiting_for_withdrawal", "at_customs"},
		[]string{ShipmentDelivered, ShipmentNotDelivered}},
	{ShipmentDelivered, []string{"inferred", "fulfilled_feedback", "damaged", "no_action_taken", "double_refund"}, nil},
	{ShipmentNotDelivered, []string{"returning_to_sender", "returned", "lost", "stolen", "damaged", "claimed_me", "returning_to_hub", "returned_to_hub"}, nil},
	{ShipmentCancelled, []string{"label_expired", "cancelled_manually", "fraudulent", "closed_by_user", "time_expired", "pack_splitted", "return_expired"}, nil},
}

// ShipmentStatuses lists every shipment status with its substatuses and
// the statuses it may move to.
func ShipmentStatuses() []ShipmentStatus {
	out := make([]ShipmentStatus, 0, len(shipmentFlow))
	for _, f := range shipmentFlow {
		st := ShipmentStatus{ID: f.status, Substatuses: []ShipmentSubstatus{}, Next: slices.Clone(f.next)}
		if st.Next == nil {
			st.Next = []string{}
		}
		for _, sub := range f.substatuses {
			st.Substatuses = append(st.Substatuses, ShipmentSubstatus{ID: sub})
		}
		out = append(out, st)
	}
	return out
}

func flowOf(status string) (substatuses, next []string, ok bool) {
	for _, f := range shipmentFlow {
		if f.status == status {
			return f.substatuses, f.next, true
		}
	}
	return nil, nil, false
}

func statusNames() string {
	names := make([]string, len(shipmentFlow))
	for i, f := range shipmentFlow {
		names[i] = f.status
	}
	return "[" + strings.Join(names, ", ") + "]"
}

// Shipment is a shipment in the public API's new shape (the x-format-new:
// true header).
type Shipment struct {
	ID             int64       `json:"id"`
	OrderID        int64       `json:"order_id"`
	Status         string      `json:"status"`
	Substatus      *string     `json:"substatus"`
	DateCreated    string      `json:"date_created"`
	LastUpdated    string      `json:"last_updated"`
	TrackingNumber *string     `json:"tracking_number"`
	TrackingMethod *string     `json:"tracking_method"`
	DeclaredValue  json.Number `json:"declared_value"`
	Tags           []string    `json:"tags"`
	Logistic       Logistic    `json:"logistic"`
	Origin         Origin      `json:"origin"`
	Destination    Destination `json:"destination"`
	Source         Source      `json:"source"`
	LeadTime       LeadTime    `json:"lead_time"`
	Dimensions     *Dimensions `json:"dimensions"`
}

// Logistic is how the shipment travels.
type Logistic struct {
	Mode      string `json:"mode"`
	Type      string `json:"type"`
	Direction string `json:"direction"`
}

// Origin is where the units leave from: for multi-origin stock, the store
// they left from.
type Origin struct {
	Type            string          `json:"type"`
	SenderID        int64           `json:"sender_id"`
	ShippingAddress ShippingAddress `json:"shipping_address"`
}

// Destination is where the units go. The buyer's address is hidden (null)
// until the order is paid; the engine keeps no buyer's address, so it stays
// null after, as for a buyer without one.
type Destination struct {
	ReceiverID      int64            `json:"receiver_id"`
	ReceiverName    string           `json:"receiver_name"`
	Type            string           `json:"type"`
	ShippingAddress *ShippingAddress `json:"shipping_address"`
}

// ShippingAddress is an address of a shipment.
type ShippingAddress struct {
	AddressID    *int64   `json:"address_id"`
	AddressLine  string   `json:"address_line"`
	StreetName   string   `json:"street_name"`
	StreetNumber string   `json:"street_number"`
	ZipCode      string   `json:"zip_code"`
	City         Named    `json:"city"`
	State        Named    `json:"state"`
	Country      Named    `json:"country"`
	Latitude     *float64 `json:"latitude"`
	Longitude    *float64 `json:"longitude"`
	Node         *Node    `json:"node"`
}

// Named is a place by id and name; the id is null where the engine knows
// only the name.
type Named struct {
	ID   *string `json:"id"`
	Name string  `json:"name"`
}

// Node is the logistics network's node of a store.
type Node struct {
	NodeID string `json:"node_id"`
}

// Source is the site the shipment belongs to.
type Source struct {
	SiteID      string `json:"site_id"`
	MarketPlace string `json:"market_place"`
}

// LeadTime is the shipment's cost and method.
type LeadTime struct {
	Cost                  json.Number    `json:"cost"`
	CostType              string         `json:"cost_type"`
	CurrencyID            string         `json:"currency_id"`
	ShippingMethod        ShippingMethod `json:"shipping_method"`
	EstimatedDeliveryTime EstimatedTime  `json:"estimated_delivery_time"`
}

// ShippingMethod names the method.
type ShippingMethod struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// EstimatedTime is the delivery estimate; the engine gives none.
type EstimatedTime struct {
	Type string  `json:"type"`
	Date *string `json:"date"`
}

// Dimensions of the package; the engine knows none.
type Dimensions struct {
	Height float64 `json:"height"`
	Width  float64 `json:"width"`
	Length float64 `json:"length"`
	Weight float64 `json:"weight"`
}

// HistoryEntry is one move of a shipment.
type HistoryEntry struct {
	Status    string  `json:"status"`
	Substatus *string `json:"substatus"`
	Date      string  `json:"date"`
}

// shipmentRecord is a shipment as stored, with its history.
type shipmentRecord struct {
	Shipment Shipment       `json:"shipment"`
	History  []HistoryEntry `json:"history"`
	SellerID int64          `json:"seller_id"`
	BuyerID  int64          `json:"buyer_id"`
}

// newShipment is the shipment of a new order: pending until the order is
// paid (pay moves it to ready_to_ship), leaving from the store the units
// will leave from.
func newShipment(id int64, rec orderRecord, seller, buyer accounts.User, item stock.Item, stamp string) shipmentRecord {
	sub := "waiting_for_payment"
	sh := Shipment{
		ID: id, OrderID: rec.Order.ID, Status: ShipmentPending, Substatus: &sub, DateCreated: stamp, LastUpdated: stamp,
		DeclaredValue: rec.Order.TotalAmount, Tags: []string{},
		Logistic: Logistic{Mode: "me2", Type: "drop_off", Direction: "forward"},
		Origin:   Origin{Type: "selling_address", SenderID: seller.ID, ShippingAddress: ShippingAddress{Country: Named{Name: seller.CountryID}}},
		Destination: Destination{ReceiverID: buyer.ID, ReceiverName: strings.TrimSpace(buyer.FirstName + " " + buyer.LastName),
			Type: "buyer_address"},
		Source: Source{SiteID: item.SiteID, MarketPlace: "MELI"},
		LeadTime: LeadTime{Cost: "0", CostType: "free", CurrencyID: item.CurrencyID,
			ShippingMethod:        ShippingMethod{ID: 515282, Name: "Normal a domicilio"},
			EstimatedDeliveryTime: EstimatedTime{Type: "known_frame"}},
	}
	if sh.Destination.ReceiverName == "" {
		sh.Destination.ReceiverName = buyer.Nickname
	}
	country := seller.CountryID
	sh.Origin.ShippingAddress.Country = Named{ID: &country, Name: country}
	return shipmentRecord{Shipment: sh, History: []HistoryEntry{{Status: sh.Status, Substatus: sh.Substatus, Date: stamp}},
		SellerID: seller.ID, BuyerID: buyer.ID}
}

// originFrom fills the shipment's origin with the store the units left
// from.
func originFrom(tx storage.Tx, sh *shipmentRecord, src stock.Source) error {
	if src.StoreID == "" {
		return nil
	}
	st, err := accounts.GetStore(tx, src.StoreID)
	if err != nil {
		return err
	}
	loc := st.Location
	addr := ShippingAddress{AddressLine: loc.AddressLine, StreetName: loc.StreetName, ZipCode: loc.ZipCode,
		City: Named{Name: loc.City}, State: Named{Name: loc.State}, Country: Named{Name: loc.Country},
		Node: &Node{NodeID: src.NetworkNodeID}}
	if loc.StreetNumber != 0 {
		addr.StreetNumber = strconv.FormatInt(loc.StreetNumber, 10)
	}
	if loc.AddressID != 0 {
		id := loc.AddressID
		addr.AddressID = &id
	}
	// A store created without a position has 0, 0: unknown, not the Gulf
	// of Guinea.
	if loc.Latitude != 0 || loc.Longitude != 0 {
		lat, lng := loc.Latitude, loc.Longitude
		addr.Latitude, addr.Longitude = &lat, &lng
	}
	sh.Shipment.Origin.Type = "seller_warehouse"
	sh.Shipment.Origin.ShippingAddress = addr
	return nil
}

// moveShipment sets the shipment's status and appends the move to its
// history.
func moveShipment(sh *shipmentRecord, status, substatus, stamp string) {
	var sub *string
	if substatus != "" {
		sub = &substatus
	}
	sh.Shipment.Status, sh.Shipment.Substatus, sh.Shipment.LastUpdated = status, sub, stamp
	sh.History = append(slices.Clone(sh.History), HistoryEntry{Status: status, Substatus: sub, Date: stamp})
}

// ShipmentMove is a status change the operator makes.
type ShipmentMove struct {
	Status    string `json:"status"`
	Substatus string `json:"substatus"`
}

// MoveShipment moves a shipment to in.Status (with in.Substatus, which must
// be one of that status's), along the flow ShipmentStatuses lists; the move
// is appended to its history at the engine's time. A shipment waits for its
// order's payment before it leaves pending. Delivered and not_delivered
// tag the order. Errors: Invalid (an unknown status or substatus, a move
// the flow does not allow: the cause names the allowed next statuses),
// NotFound.
func (s *Service) MoveShipment(ctx context.Context, id int64, in ShipmentMove) (Shipment, error) {
	if in.Status == "" {
		return Shipment{}, errs.Invalidf("The field [status] is required: the status to move the shipment to")
	}
	subs, _, ok := flowOf(in.Status)
	if !ok {
		return Shipment{}, errs.Invalidf("Invalid status: %s. Valid values are: %s", in.Status, statusNames())
	}
	if in.Substatus != "" && !slices.Contains(subs, in.Substatus) {
		return Shipment{}, errs.Invalidf("Invalid substatus: %s. Valid values for status %s are: [%s]", in.Substatus, in.Status, strings.Join(subs, ", "))
	}
	now := s.clock.Now()
	var out Shipment
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		sh, err := getShipment(tx, id)
		if err != nil {
			return err
		}
		rec, err := getOrder(tx, sh.Shipment.OrderID)
		if err != nil {
			return err
		}
		if rec.Order.Status == StatusPaymentRequired {
			// Its order is cancelled instead, which cancels it.
			return errs.Invalidf("Shipment %d waits for the payment of order %d", id, rec.Order.ID)
		}
		_, next, _ := flowOf(sh.Shipment.Status)
		// A new substatus within the status is a move too (ready_to_print
		// to printed), except in a final status.
		within := in.Status == sh.Shipment.Status && len(next) > 0 && in.Substatus != "" &&
			(sh.Shipment.Substatus == nil || *sh.Shipment.Substatus != in.Substatus)
		if !within && !slices.Contains(next, in.Status) {
			causes := make([]errs.Cause, 0, len(next))
			for _, n := range next {
				causes = append(causes, errs.Cause{Code: "allowed_next_status", Message: n})
			}
			return errs.Invalidf("Shipment %d cannot move from %s to %s", id, sh.Shipment.Status, in.Status).WithCauses(causes...)
		}
		stamp := s.siteTime(tx, sh.Shipment.Source.SiteID, now)
		moveShipment(&sh, in.Status, in.Substatus, stamp)
		if err := s.saveShipment(ctx, tx, sh, sh.SellerID, now); err != nil {
			return err
		}
		tag := map[string]string{ShipmentDelivered: TagDelivered, ShipmentNotDelivered: TagNotDelivered}[in.Status]
		if tag != "" {
			before := rec
			rec.Order.Tags = append(slices.Clone(rec.Order.Tags), tag)
			touch(&rec, now, stamp)
			if err := s.saveOrder(ctx, tx, &before, rec, "shipment_"+in.Status, now); err != nil {
				return err
			}
		}
		out = sh.Shipment
		return nil
	})
	if err != nil {
		return Shipment{}, err
	}
	return out, nil
}
