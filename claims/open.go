package claims

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/sales"
	"github.com/marketplace/marketplace/storage"
)

// NewClaim is a claim the buyer of an order opens (POST /operator/claims).
type NewClaim struct {
	OrderID  int64  `json:"order_id"`
	ReasonID string `json:"reason_id"`
	// Type is mediations, the only type the engine opens (the default).
	Type string `json:"type"`
	// Quantity is the units claimed: the order's quantity by default.
	Quantity int64 `json:"quantity"`
	// ExpectedResolution is what the buyer wants: by default product for
	// a product not received, return_product for a different or defective
	// one.
	ExpectedResolution string `json:"expected_resolution"`
}

// Open opens the claim of in on its order, by the order's buyer: the claim
// is opened in the claim stage, the seller has AnswerWindow to send its
// mandatory message, and the order takes the claim_opened tag and the
// claim in its mediations. A different or defective product (PDD) is
// claimed once the shipment is delivered. An order has at most one opened
// claim, and a refunded order takes none.
// Errors: Invalid (a missing or unknown field value, an order that is not
// paid, refunded or already claimed, a PDD reason before delivery),
// NotFound (the order).
func (s *Service) Open(ctx context.Context, in NewClaim) (Claim, error) {
	if err := checkNewClaim(&in); err != nil {
		return Claim{}, err
	}
	idNo := kv.NewOnceID(s.store, claimSequence)
	now := s.clock.Now()
	var out Claim
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		// The claim's id and the numbers of the events of the claim and
		// of its order go with the order's read, where the store can.
		ctx := notify.DrawEventNumbers(ctx, tx, 2)
		drawn := kv.DrawOnceLater(ctx, tx, idNo)
		sale, err := s.sales.SaleOf(tx, in.OrderID)
		if err != nil {
			return err
		}
		o := sale.Order
		if o.Status != sales.StatusPaid {
			return errs.Invalidf("Order %d is %s: only a paid order takes a claim", o.ID, o.Status)
		}
		if slices.ContainsFunc(o.Payments, func(p sales.Payment) bool { return p.Status == "refunded" }) {
			return errs.Invalidf("Order %d was refunded: it takes no claim", o.ID)
		}
		delivered := sale.Shipment.Status == sales.ShipmentDelivered
		if reasonKind(in.ReasonID) == kindPDD && !delivered {
			return errs.Invalidf("Order %d has not been delivered: the reason %s is for a product received", o.ID, in.ReasonID)
		}
		line := o.OrderItems[0]
		if in.Quantity == 0 {
			in.Quantity = line.Quantity
		}
		if in.Quantity > line.Quantity {
			return errs.Invalidf("Invalid quantity: %d. The order has %d units", in.Quantity, line.Quantity)
		}
		open, err := openedClaimOf(tx, o.ID)
		if err != nil {
			return err
		}
		if open != 0 {
			return errs.Invalidf("Order %d already has the opened claim %d", o.ID, open)
		}
		amount, err := claimAmount(string(line.UnitPrice), in.Quantity)
		if err != nil {
			return errs.Internalf(err, "unit price of order %d", o.ID)
		}
		// Where the store draws at once rather than with a read, the
		// claim is checked before anything is drawn.
		if err := drawn(); err != nil {
			return err
		}
		n, err := idNo.Get(ctx)
		if err != nil {
			return err
		}
		ms := now.UnixMilli()
		r := record{ID: int64(n) - 1 + firstClaimID, OrderID: o.ID, SellerID: o.Seller.ID, BuyerID: o.Buyer.ID,
			SiteID: o.Context.Site, ItemID: line.Item.ID, VariationID: line.Item.VariationID, CurrencyID: o.CurrencyID,
			Amount: amount.String(), ShippingCost: string(sale.Shipment.LeadTime.Cost), OrderQuantity: line.Quantity,
			Quantity: in.Quantity, ReasonID: in.ReasonID, Fulfilled: delivered, Stage: StageClaim, Status: StatusOpened,
			Logistic: sale.Shipment.Logistic.Type, CreatedMs: ms, UpdatedMs: ms, Address: returnAddress(sale.Shipment.Origin.ShippingAddress),
			Expected: []expectedRecord{{Role: RoleComplainant, Kind: in.ExpectedResolution, Details: []KeyValue{},
				CreatedMs: ms, UpdatedMs: ms, Status: ExpectedPending}},
			Statuses: []statusRecord{{Stage: StageClaim, Status: StatusOpened, AtMs: ms, By: RoleComplainant}}}
		if r.ShippingCost == "" {
			r.ShippingCost = "0"
		}
		for _, p := range o.Payments {
			r.PaymentIDs = append(r.PaymentIDs, p.ID)
			if err := tx.Set(paymentIndexKey(p.ID, r.ID), nil); err != nil {
				return err
			}
		}
		if err := tx.Set(orderIndexKey(o.ID, r.ID), nil); err != nil {
			return err
		}
		res := outcome{changed: true, order: orderChange{touched: true, addTags: []string{TagClaimOpened}, action: "claim_opened"}}
		res.actions = append(res.actions, actionRecord{Name: ActionOpenClaim, Role: RoleComplainant, AtMs: ms})
		if err := s.save(ctx, tx, "", &r, &res, now); err != nil {
			return err
		}
		out = s.view(tx, &r)
		return nil
	})
	if err != nil {
		return Claim{}, err
	}
	return out, nil
}

// checkNewClaim checks what can be checked without the order, in a fixed
// order, and fills the defaults.
func checkNewClaim(in *NewClaim) error {
	switch {
	case in.OrderID == 0:
		return errs.Invalidf("The field [order_id] is required: the id of the order claimed")
	case in.OrderID < 0:
		return errs.Invalidf("Invalid order_id: %d. It must be an order id", in.OrderID)
	case in.ReasonID == "":
		return errs.Invalidf("The field [reason_id] is required: one of [%s]", strings.Join(ReasonIDs(), ", "))
	}
	i, ok := findReason(in.ReasonID)
	if !ok {
		return errs.Invalidf("Invalid reason_id: %s. Valid values are: [%s]", in.ReasonID, strings.Join(ReasonIDs(), ", "))
	}
	if in.Type == "" {
		in.Type = TypeMediations
	}
	if in.Type != TypeMediations {
		return errs.Invalidf("Invalid type: %s. Valid values are: [mediations]", in.Type)
	}
	if in.Quantity < 0 {
		return errs.Invalidf("Invalid quantity: %d. It must be a positive integer", in.Quantity)
	}
	allowed := catalogue[i].Settings.ExpectedResolutions
	if in.ExpectedResolution == "" {
		in.ExpectedResolution = allowed[len(allowed)-1]
		if reasonKind(in.ReasonID) == kindPNR {
			in.ExpectedResolution = ResolutionProduct
		}
	}
	if !slices.Contains(allowed, in.ExpectedResolution) {
		return errs.Invalidf("Invalid expected_resolution: %s. Valid values for the reason %s are: [%s]",
			in.ExpectedResolution, in.ReasonID, strings.Join(allowed, ", "))
	}
	return nil
}

// openedClaimOf is the id of the opened claim of an order, 0 for none.
func openedClaimOf(tx storage.Tx, orderID int64) (int64, error) {
	it := tx.Iterate(storage.Prefix(orderPrefix(orderID)))
	defer it.Close()
	var ids []int64
	for ; it.Valid(); it.Next() {
		id, err := lastInt(it.Key())
		if err != nil {
			return 0, err
		}
		ids = append(ids, id)
	}
	for _, id := range ids {
		r, err := getRecord(tx, id)
		if err != nil {
			return 0, errs.Internalf(err, "order %d names claim %d", orderID, id)
		}
		if r.opened() {
			return id, nil
		}
	}
	return 0, nil
}

// returnAddress is the address of the store the units left from, where a
// return travels.
func returnAddress(a sales.ShippingAddress) ReturnAddress {
	name := func(n sales.Named) Place {
		v := n.Name
		return Place{ID: n.ID, Name: &v}
	}
	return ReturnAddress{AddressID: a.AddressID, AddressLine: a.AddressLine, StreetName: a.StreetName,
		StreetNumber: a.StreetNumber, ZipCode: a.ZipCode, City: name(a.City), State: name(a.State),
		Country: name(a.Country)}
}

// lastInt reads the integer that ends a key.
func lastInt(key []byte) (int64, error) {
	if len(key) < 8 {
		return 0, errs.Internalf(nil, "claims key %q too short", key)
	}
	r := keycodec.Read(key[len(key)-8:])
	id := r.Int()
	if err := r.Err(); err != nil {
		return 0, errs.Internalf(err, "claims key %q", key)
	}
	return id, nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
