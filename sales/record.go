package sales

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/marketplace/marketplace/internal/binrec"
	"github.com/marketplace/marketplace/stock"
)

// Order records are stored in a compact binary form: a search page reads
// fifty of them, and decoding their JSON was nearly all of its cost.
// Records written as JSON before it are rewritten by RecordsMigration
// (migrate.go); the package reads the binary form only.
//
// Layout: orderRecordV1, then every field of orderRecord in declaration
// order, nested structs field by field: integers as varints, strings and
// json.Numbers as uvarint length and bytes, optional values with a flag
// byte (binrec.AppendStringPtr, AppendInt64Ptr), slices and maps as
// binrec.AppendLen (nil apart from empty, as JSON writes null apart from
// []; a map's entries by key), booleans as one byte. An item's variation_attributes, free JSON,
// are kept as their JSON text.
const orderRecordV1 = 1

var errCorruptOrder = errors.New("corrupt order record")

func encodeOrderRecord(r orderRecord) ([]byte, error) {
	b := make([]byte, 0, 1024)
	b = append(b, orderRecordV1)
	o := &r.Order
	b = binary.AppendVarint(b, o.ID)
	b = binrec.AppendString(b, o.Status)
	if o.StatusDetail == nil {
		b = append(b, 0)
	} else {
		b = append(b, 1)
		b = binrec.AppendString(b, o.StatusDetail.Code)
		b = binrec.AppendString(b, o.StatusDetail.Description)
	}
	b = binrec.AppendString(b, o.DateCreated)
	b = binrec.AppendStringPtr(b, o.DateClosed)
	b = binrec.AppendString(b, o.LastUpdated)
	b = binary.AppendVarint(b, o.PackID)
	b = binrec.AppendString(b, o.BuyingMode)
	b = binrec.AppendString(b, string(o.TotalAmount))
	b = binrec.AppendString(b, string(o.PaidAmount))
	b = binrec.AppendString(b, o.CurrencyID)
	b = binrec.AppendLen(b, len(o.OrderItems), o.OrderItems == nil)
	for _, it := range o.OrderItems {
		var err error
		if b, err = appendOrderItem(b, it); err != nil {
			return nil, err
		}
	}
	b = binrec.AppendLen(b, len(o.Payments), o.Payments == nil)
	for _, p := range o.Payments {
		b = appendPayment(b, p)
	}
	b = binrec.AppendInt64Ptr(b, o.Shipping.ID)
	b = appendParty(b, o.Buyer)
	b = appendParty(b, o.Seller)
	b = appendStrings(b, o.Tags)
	for _, id := range []*int64{o.Feedback.Seller, o.Feedback.Buyer, o.Feedback.Sale, o.Feedback.Purchase} {
		b = binrec.AppendInt64Ptr(b, id)
	}
	b = binrec.AppendString(b, o.Context.Channel)
	b = binrec.AppendString(b, o.Context.Site)
	b = appendStrings(b, o.Context.Flows)
	switch {
	case o.Fulfilled == nil:
		b = append(b, 0)
	case *o.Fulfilled:
		b = append(b, 2)
	default:
		b = append(b, 1)
	}
	b = binrec.AppendLen(b, len(o.Mediations), o.Mediations == nil)
	for _, m := range o.Mediations {
		b = binary.AppendVarint(b, m.ID)
	}
	b = binrec.AppendStringPtr(b, (*string)(o.Taxes.Amount))
	b = binrec.AppendStringPtr(b, o.Taxes.CurrencyID)
	b = binrec.AppendStringPtr(b, o.Taxes.ID)
	if c := o.CancelDetail; c == nil {
		b = append(b, 0)
	} else {
		b = append(b, 1)
		for _, s := range []string{c.Group, c.Code, c.Description, c.RequestedBy, c.Date} {
			b = binrec.AppendString(b, s)
		}
		b = binrec.AppendInt64Ptr(b, c.ApplicationID)
	}
	b = binrec.AppendStringPtr(b, (*string)(o.ShippingCost))

	b = binrec.AppendString(b, r.Store)
	if r.Taken == nil {
		b = append(b, 0)
	} else {
		b = append(b, 1)
		b = appendSource(b, *r.Taken)
	}
	b = appendBool(b, r.Returned)
	b = binary.AppendVarint(b, r.ReturnedUnits)
	b = binrec.AppendLen(b, len(r.MediationStatuses), r.MediationStatuses == nil)
	for _, id := range slices.Sorted(maps.Keys(r.MediationStatuses)) { // the same record, the same bytes
		b = binary.AppendVarint(b, id)
		b = binrec.AppendString(b, r.MediationStatuses[id])
	}
	b = binary.AppendVarint(b, r.CreatedMs)
	b = binary.AppendVarint(b, r.ClosedMs)
	b = binary.AppendVarint(b, r.UpdatedMs)
	return b, nil
}

func appendOrderItem(b []byte, it OrderItem) ([]byte, error) {
	i := &it.Item
	b = binrec.AppendString(b, i.ID)
	b = binrec.AppendString(b, i.Title)
	b = binrec.AppendString(b, i.CategoryID)
	b = binrec.AppendInt64Ptr(b, i.VariationID)
	b = binrec.AppendStringPtr(b, i.SellerCustomField)
	switch {
	case i.VariationAttributes == nil:
		b = append(b, 0)
	case len(i.VariationAttributes) == 0:
		b = append(b, 1)
	default:
		raw, err := json.Marshal(i.VariationAttributes)
		if err != nil {
			return nil, fmt.Errorf("encode variation attributes of %s: %w", i.ID, err)
		}
		b = binrec.AppendString(append(b, 2), string(raw))
	}
	b = binrec.AppendString(b, i.Condition)
	b = binrec.AppendStringPtr(b, i.SellerSKU)
	b = binrec.AppendString(b, i.UserProductID)
	b = binrec.AppendStringPtr(b, i.Warranty)
	b = binrec.AppendStringPtr(b, i.ParentItemID)
	b = binary.AppendVarint(b, it.Quantity)
	b = binrec.AppendString(b, it.RequestedQuantity.Measure)
	b = binary.AppendVarint(b, it.RequestedQuantity.Value)
	b = binrec.AppendString(b, string(it.UnitPrice))
	b = binrec.AppendString(b, string(it.FullUnitPrice))
	b = binrec.AppendString(b, it.CurrencyID)
	b = binrec.AppendString(b, string(it.SaleFee))
	b = binrec.AppendString(b, it.ListingTypeID)
	b = binrec.AppendInt64Ptr(b, it.ElementID)
	b = binrec.AppendLen(b, len(it.Stock), it.Stock == nil)
	for _, src := range it.Stock {
		b = appendSource(b, src)
	}
	return b, nil
}

func appendPayment(b []byte, p Payment) []byte {
	b = binary.AppendVarint(b, p.ID)
	b = binary.AppendVarint(b, p.OrderID)
	b = binary.AppendVarint(b, p.PayerID)
	b = binary.AppendVarint(b, p.Collector.ID)
	for _, s := range []string{p.SiteID, p.PaymentMethodID, p.PaymentType, p.OperationType} {
		b = binrec.AppendString(b, s)
	}
	b = binary.AppendVarint(b, int64(p.Installments))
	for _, s := range []string{p.Status, p.StatusDetail, string(p.TransactionAmount), string(p.TransactionAmountRefunded),
		string(p.TotalPaidAmount), string(p.ShippingCost), string(p.MarketplaceFee), p.CurrencyID} {
		b = binrec.AppendString(b, s)
	}
	b = binrec.AppendStringPtr(b, p.DateApproved)
	b = binrec.AppendString(b, p.DateCreated)
	return binrec.AppendString(b, p.DateLastModified)
}

func appendParty(b []byte, p Party) []byte {
	b = binary.AppendVarint(b, p.ID)
	return binrec.AppendString(b, p.Nickname)
}

func appendSource(b []byte, s stock.Source) []byte {
	b = binrec.AppendString(b, s.StoreID)
	return binrec.AppendString(b, s.NetworkNodeID)
}

func appendStrings(b []byte, ss []string) []byte {
	b = binrec.AppendLen(b, len(ss), ss == nil)
	for _, s := range ss {
		b = binrec.AppendString(b, s)
	}
	return b
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// decodeOrderRecord reads an order record.
func decodeOrderRecord(b []byte) (orderRecord, error) {
	var r orderRecord
	if len(b) == 0 || b[0] != orderRecordV1 {
		return r, errCorruptOrder
	}
	d := orderDecoder{binrec.NewDecoder(b[1:])}
	o := &r.Order
	o.ID = d.Varint()
	o.Status = d.String()
	if d.flag() {
		o.StatusDetail = &StatusDetail{Code: d.String(), Description: d.String()}
	}
	o.DateCreated = d.String()
	o.DateClosed = d.StringPtr()
	o.LastUpdated = d.String()
	o.PackID = d.Varint()
	o.BuyingMode = d.String()
	o.TotalAmount = json.Number(d.String())
	o.PaidAmount = json.Number(d.String())
	o.CurrencyID = d.String()
	if n := d.SliceLen(); n >= 0 {
		o.OrderItems = make([]OrderItem, n)
		for i := range o.OrderItems {
			d.orderItem(&o.OrderItems[i])
		}
	}
	if n := d.SliceLen(); n >= 0 {
		o.Payments = make([]Payment, n)
		for i := range o.Payments {
			d.payment(&o.Payments[i])
		}
	}
	o.Shipping.ID = d.Int64Ptr()
	o.Buyer = d.party()
	o.Seller = d.party()
	o.Tags = d.strings()
	o.Feedback = Feedback{Seller: d.Int64Ptr(), Buyer: d.Int64Ptr(), Sale: d.Int64Ptr(), Purchase: d.Int64Ptr()}
	o.Context.Channel = d.String()
	o.Context.Site = d.String()
	o.Context.Flows = d.strings()
	switch d.Byte() {
	case 0:
	case 1:
		o.Fulfilled = new(bool)
	case 2:
		fulfilled := true
		o.Fulfilled = &fulfilled
	default:
		d.Fail()
	}
	if n := d.SliceLen(); n >= 0 {
		o.Mediations = make([]Mediation, n)
		for i := range o.Mediations {
			o.Mediations[i].ID = d.Varint()
		}
	}
	o.Taxes.Amount = d.number()
	o.Taxes.CurrencyID = d.StringPtr()
	o.Taxes.ID = d.StringPtr()
	if d.flag() {
		o.CancelDetail = &CancelDetail{Group: d.String(), Code: d.String(), Description: d.String(), RequestedBy: d.String(),
			Date: d.String(), ApplicationID: d.Int64Ptr()}
	}
	o.ShippingCost = d.number()

	r.Store = d.String()
	if d.flag() {
		src := d.source()
		r.Taken = &src
	}
	r.Returned = d.flag()
	r.ReturnedUnits = d.Varint()
	if n := d.SliceLen(); n > 0 {
		r.MediationStatuses = make(map[int64]string, n)
		for range n {
			id := d.Varint()
			r.MediationStatuses[id] = d.String()
		}
	} else if n == 0 {
		r.MediationStatuses = map[int64]string{}
	}
	r.CreatedMs = d.Varint()
	r.ClosedMs = d.Varint()
	r.UpdatedMs = d.Varint()
	if err := d.Done(); err != nil {
		return orderRecord{}, errCorruptOrder
	}
	return r, nil
}

// orderDecoder reads the parts of an order record.
type orderDecoder struct{ *binrec.Decoder }

// flag reads a byte that must be 0 (false) or 1 (true).
func (d orderDecoder) flag() bool {
	switch d.Byte() {
	case 0:
		return false
	case 1:
		return true
	}
	d.Fail()
	return false
}

func (d orderDecoder) number() *json.Number {
	return (*json.Number)(d.StringPtr())
}

func (d orderDecoder) strings() []string {
	n := d.SliceLen()
	if n < 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.String()
	}
	return out
}

func (d orderDecoder) party() Party {
	return Party{ID: d.Varint(), Nickname: d.String()}
}

func (d orderDecoder) source() stock.Source {
	return stock.Source{StoreID: d.String(), NetworkNodeID: d.String()}
}

func (d orderDecoder) orderItem(it *OrderItem) {
	i := &it.Item
	i.ID = d.String()
	i.Title = d.String()
	i.CategoryID = d.String()
	i.VariationID = d.Int64Ptr()
	i.SellerCustomField = d.StringPtr()
	switch d.Byte() {
	case 0:
	case 1:
		i.VariationAttributes = []any{}
	case 2:
		if err := json.Unmarshal([]byte(d.String()), &i.VariationAttributes); err != nil {
			d.Fail()
		}
	default:
		d.Fail()
	}
	i.Condition = d.String()
	i.SellerSKU = d.StringPtr()
	i.UserProductID = d.String()
	i.Warranty = d.StringPtr()
	i.ParentItemID = d.StringPtr()
	it.Quantity = d.Varint()
	it.RequestedQuantity = RequestedQuantity{Measure: d.String(), Value: d.Varint()}
	it.UnitPrice = json.Number(d.String())
	it.FullUnitPrice = json.Number(d.String())
	it.CurrencyID = d.String()
	it.SaleFee = json.Number(d.String())
	it.ListingTypeID = d.String()
	it.ElementID = d.Int64Ptr()
	if n := d.SliceLen(); n >= 0 {
		it.Stock = make([]stock.Source, n)
		for j := range it.Stock {
			it.Stock[j] = d.source()
		}
	}
}

func (d orderDecoder) payment(p *Payment) {
	p.ID = d.Varint()
	p.OrderID = d.Varint()
	p.PayerID = d.Varint()
	p.Collector.ID = d.Varint()
	p.SiteID = d.String()
	p.PaymentMethodID = d.String()
	p.PaymentType = d.String()
	p.OperationType = d.String()
	p.Installments = int(d.Varint())
	p.Status = d.String()
	p.StatusDetail = d.String()
	p.TransactionAmount = json.Number(d.String())
	p.TransactionAmountRefunded = json.Number(d.String())
	p.TotalPaidAmount = json.Number(d.String())
	p.ShippingCost = json.Number(d.String())
	p.MarketplaceFee = json.Number(d.String())
	p.CurrencyID = d.String()
	p.DateApproved = d.StringPtr()
	p.DateCreated = d.String()
	p.DateLastModified = d.String()
}
