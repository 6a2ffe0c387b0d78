package sales

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/stock"
)

func drawOptString(t *rapid.T, label string) *string {
	if !rapid.Bool().Draw(t, label+" set") {
		return nil
	}
	s := rapid.String().Draw(t, label)
	return &s
}

func drawOptInt(t *rapid.T, label string) *int64 {
	if !rapid.Bool().Draw(t, label+" set") {
		return nil
	}
	v := rapid.Int64().Draw(t, label)
	return &v
}

// drawStrings draws nil, empty or a few strings: JSON tells nil (null)
// from empty ([]).
func drawStrings(t *rapid.T, label string) []string {
	switch rapid.IntRange(0, 2).Draw(t, label+" shape") {
	case 0:
		return nil
	case 1:
		return []string{}
	}
	return rapid.SliceOfN(rapid.String(), 1, 3).Draw(t, label)
}

func drawNumber(t *rapid.T, label string) json.Number {
	return json.Number(rapid.SampledFrom([]string{"0", "1", "10.5", "1500", "0.01", "99999.99"}).Draw(t, label))
}

func drawSource(t *rapid.T, label string) stock.Source {
	return stock.Source{StoreID: rapid.String().Draw(t, label+" store"), NetworkNodeID: rapid.String().Draw(t, label+" node")}
}

func drawOrderRecord(t *rapid.T) orderRecord {
	var r orderRecord
	o := &r.Order
	o.ID = rapid.Int64().Draw(t, "id")
	o.Status = rapid.SampledFrom([]string{StatusPaid, StatusPaymentRequired, StatusCancelled}).Draw(t, "status")
	if rapid.Bool().Draw(t, "status detail") {
		o.StatusDetail = &StatusDetail{Code: rapid.String().Draw(t, "code"), Description: rapid.String().Draw(t, "description")}
	}
	o.DateCreated = rapid.String().Draw(t, "created")
	o.DateClosed = drawOptString(t, "closed")
	o.LastUpdated = rapid.String().Draw(t, "updated")
	o.PackID = rapid.Int64().Draw(t, "pack")
	o.BuyingMode = rapid.String().Draw(t, "buying mode")
	o.TotalAmount = drawNumber(t, "total")
	o.PaidAmount = drawNumber(t, "paid")
	o.CurrencyID = rapid.String().Draw(t, "currency")
	if n := rapid.IntRange(-1, 2).Draw(t, "items"); n >= 0 {
		o.OrderItems = make([]OrderItem, n)
		for i := range o.OrderItems {
			it := &o.OrderItems[i]
			it.Item = OrderItemItem{ID: rapid.String().Draw(t, "item"), Title: rapid.String().Draw(t, "title"),
				CategoryID: rapid.String().Draw(t, "category"), VariationID: drawOptInt(t, "variation"),
				SellerCustomField: drawOptString(t, "custom field"), Condition: rapid.String().Draw(t, "condition"),
				SellerSKU: drawOptString(t, "sku"), UserProductID: rapid.String().Draw(t, "user product"),
				Warranty: drawOptString(t, "warranty"), ParentItemID: drawOptString(t, "parent")}
			switch rapid.IntRange(0, 2).Draw(t, "attributes") {
			case 1:
				it.Item.VariationAttributes = []any{}
			case 2:
				it.Item.VariationAttributes = []any{map[string]any{"id": "COLOR", "value_name": rapid.String().Draw(t, "color")}, 3.5, nil}
			}
			it.Quantity = rapid.Int64().Draw(t, "quantity")
			it.RequestedQuantity = RequestedQuantity{Measure: "unit", Value: rapid.Int64().Draw(t, "requested")}
			it.UnitPrice, it.FullUnitPrice, it.SaleFee = drawNumber(t, "unit price"), drawNumber(t, "full price"), drawNumber(t, "fee")
			it.CurrencyID = rapid.String().Draw(t, "item currency")
			it.ListingTypeID = rapid.String().Draw(t, "listing type")
			it.ElementID = drawOptInt(t, "element")
			if n := rapid.IntRange(-1, 2).Draw(t, "sources"); n >= 0 {
				it.Stock = make([]stock.Source, n)
				for j := range it.Stock {
					it.Stock[j] = drawSource(t, "source")
				}
			}
		}
	}
	if n := rapid.IntRange(-1, 2).Draw(t, "payments"); n >= 0 {
		o.Payments = make([]Payment, n)
		for i := range o.Payments {
			o.Payments[i] = Payment{ID: rapid.Int64().Draw(t, "payment"), OrderID: o.ID, PayerID: rapid.Int64().Draw(t, "payer"),
				Collector: IDRef{ID: rapid.Int64().Draw(t, "collector")}, SiteID: rapid.String().Draw(t, "site"),
				PaymentMethodID: rapid.String().Draw(t, "method"), PaymentType: rapid.String().Draw(t, "type"),
				OperationType: rapid.String().Draw(t, "operation"), Installments: rapid.IntRange(-5, 48).Draw(t, "installments"),
				Status: rapid.String().Draw(t, "payment status"), StatusDetail: rapid.String().Draw(t, "payment detail"),
				TransactionAmount: drawNumber(t, "amount"), TransactionAmountRefunded: drawNumber(t, "refunded"),
				TotalPaidAmount: drawNumber(t, "total paid"), ShippingCost: drawNumber(t, "shipping cost"),
				MarketplaceFee: drawNumber(t, "marketplace fee"), CurrencyID: rapid.String().Draw(t, "payment currency"),
				DateApproved: drawOptString(t, "approved"), DateCreated: rapid.String().Draw(t, "payment created"),
				DateLastModified: rapid.String().Draw(t, "modified")}
		}
	}
	o.Shipping.ID = drawOptInt(t, "shipment")
	o.Buyer = Party{ID: rapid.Int64().Draw(t, "buyer"), Nickname: rapid.String().Draw(t, "buyer nickname")}
	o.Seller = Party{ID: rapid.Int64().Draw(t, "seller"), Nickname: rapid.String().Draw(t, "seller nickname")}
	o.Tags = drawStrings(t, "tags")
	o.Feedback = Feedback{Seller: drawOptInt(t, "fb seller"), Buyer: drawOptInt(t, "fb buyer"), Sale: drawOptInt(t, "fb sale"),
		Purchase: drawOptInt(t, "fb purchase")}
	o.Context = OrderContext{Channel: rapid.String().Draw(t, "channel"), Site: rapid.String().Draw(t, "context site"),
		Flows: drawStrings(t, "flows")}
	if rapid.Bool().Draw(t, "fulfilled set") {
		v := rapid.Bool().Draw(t, "fulfilled")
		o.Fulfilled = &v
	}
	if n := rapid.IntRange(-1, 2).Draw(t, "mediations"); n >= 0 {
		o.Mediations = make([]Mediation, n)
		for i := range o.Mediations {
			o.Mediations[i].ID = rapid.Int64().Draw(t, "mediation")
		}
	}
	if rapid.Bool().Draw(t, "tax amount") {
		n := drawNumber(t, "tax")
		o.Taxes.Amount = &n
	}
	o.Taxes.CurrencyID = drawOptString(t, "tax currency")
	o.Taxes.ID = drawOptString(t, "tax id")
	if rapid.Bool().Draw(t, "cancelled") {
		o.CancelDetail = &CancelDetail{Group: rapid.String().Draw(t, "group"), Code: rapid.String().Draw(t, "cancel code"),
			Description: rapid.String().Draw(t, "cancel description"), RequestedBy: rapid.String().Draw(t, "requested by"),
			Date: rapid.String().Draw(t, "cancel date"), ApplicationID: drawOptInt(t, "application")}
	}
	if rapid.Bool().Draw(t, "shipping cost set") {
		n := drawNumber(t, "order shipping cost")
		o.ShippingCost = &n
	}
	r.Store = rapid.String().Draw(t, "store")
	if rapid.Bool().Draw(t, "taken") {
		src := drawSource(t, "taken")
		r.Taken = &src
	}
	r.Returned = rapid.Bool().Draw(t, "returned")
	r.ReturnedUnits = rapid.Int64().Draw(t, "returned units")
	if rapid.Bool().Draw(t, "mediation statuses") {
		r.MediationStatuses = rapid.MapOf(rapid.Int64(), rapid.String()).Draw(t, "statuses")
	}
	r.CreatedMs = rapid.Int64().Draw(t, "created ms")
	r.ClosedMs = rapid.Int64().Draw(t, "closed ms")
	r.UpdatedMs = rapid.Int64().Draw(t, "updated ms")
	return r
}

// sameOrderRecord compares two records as the engine uses them: equal
// values and the same JSON answer (variation attributes, free JSON, are
// compared as JSON).
func sameOrderRecord(t *rapid.T, got, want orderRecord) {
	gj, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	wj, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gj, wj) {
		t.Fatalf("the record reads back as\n%s\nwant\n%s", gj, wj)
	}
	strip := func(r orderRecord) orderRecord {
		r.Order.OrderItems = append([]OrderItem(nil), r.Order.OrderItems...)
		for i := range r.Order.OrderItems {
			r.Order.OrderItems[i].Item.VariationAttributes = nil
		}
		if len(r.MediationStatuses) == 0 {
			r.MediationStatuses = nil
		}
		return r
	}
	if g, w := strip(got), strip(want); !reflect.DeepEqual(g, w) {
		t.Fatalf("the record reads back as\n%+v\nwant\n%+v", g, w)
	}
}

func TestOrderRecord_ReadsBackWhatWasWritten(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		want := drawOrderRecord(t)
		b, err := encodeOrderRecord(want)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeOrderRecord(b)
		if err != nil {
			t.Fatal(err)
		}
		sameOrderRecord(t, got, want)
	})
}

// pinnedOrderRecord sets every field of a record, for the layout's test.
func pinnedOrderRecord() orderRecord {
	s := func(v string) *string { return &v }
	n := func(v int64) *int64 { return &v }
	num := json.Number("12.5")
	fulfilled := true
	return orderRecord{
		Order: Order{ID: 2000001, Status: StatusCancelled, StatusDetail: &StatusDetail{Code: "c", Description: "d"},
			DateCreated: "2026-03-04T12:00:00.000-03:00", DateClosed: s("2026-03-04T12:00:00.000-03:00"), LastUpdated: "u",
			PackID: 2000001, BuyingMode: "buy_equals_pay", TotalAmount: "25", PaidAmount: "0", CurrencyID: "ARS",
			OrderItems: []OrderItem{{Item: OrderItemItem{ID: "MLA1", Title: "T", CategoryID: "MLA5", VariationID: n(3),
				SellerCustomField: s("f"), VariationAttributes: []any{}, Condition: "new", SellerSKU: s("k"),
				UserProductID: "MLAU1", Warranty: s("w"), ParentItemID: s("p")}, Quantity: 2,
				RequestedQuantity: RequestedQuantity{Measure: "unit", Value: 2}, UnitPrice: "12.5", FullUnitPrice: "12.5",
				CurrencyID: "ARS", SaleFee: "1.5", ListingTypeID: "gold_special", ElementID: n(4),
				Stock: []stock.Source{{StoreID: "s", NetworkNodeID: "nn"}}}},
			Payments: []Payment{{ID: 9, OrderID: 2000001, PayerID: 7, Collector: IDRef{ID: 8}, SiteID: "MLA", PaymentMethodID: "m",
				PaymentType: "t", OperationType: "o", Installments: 1, Status: "approved", StatusDetail: "accredited",
				TransactionAmount: "25", TransactionAmountRefunded: "0", TotalPaidAmount: "25", ShippingCost: "0",
				MarketplaceFee: "3", CurrencyID: "ARS", DateApproved: s("a"), DateCreated: "c", DateLastModified: "l"}},
			Shipping: Shipping{ID: n(5)}, Buyer: Party{ID: 7, Nickname: "B"}, Seller: Party{ID: 8, Nickname: "S"},
			Tags: []string{"paid"}, Feedback: Feedback{Seller: n(10), Purchase: n(11)},
			Context: OrderContext{Channel: "marketplace", Site: "MLA", Flows: []string{}}, Fulfilled: &fulfilled,
			Mediations: []Mediation{{ID: 12}}, Taxes: Taxes{Amount: &num, CurrencyID: s("ARS"), ID: s("x")},
			CancelDetail: &CancelDetail{Group: "g", Code: "c", Description: "d", RequestedBy: "r", Date: "t", ApplicationID: n(13)},
			ShippingCost: &num},
		Store: "s", Taken: &stock.Source{StoreID: "s", NetworkNodeID: "nn"}, Returned: true, ReturnedUnits: 1,
		MediationStatuses: map[int64]string{14: MediationClaimClosed, 12: MediationClaimOpened},
		CreatedMs:         1772636400000, ClosedMs: 1772636400001, UpdatedMs: 1772636400002,
	}
}

// pinnedOrderRecordForm1 is pinnedOrderRecord in form 1.
const pinnedOrderRecordForm1 = "018292f4010963616e63656c6c656401016301641d323032362d30332d30345431323a30303a30302e3030302d30333a3030011d323032362d30332d30345431323a30303a30302e3030302d30333a303001758292f4010e6275795f657175616c735f70617902323501300341525302044d4c41310154044d4c4135010601016601036e657701016b054d4c4155310101770101700404756e6974040431322e350431322e350341525303312e350c676f6c645f7370656369616c0108020173026e6e02128292f4010e10034d4c41016d0174016f0208617070726f7665640a61636372656469746564023235013002323501300133034152530101610163016c010a0e01421001530204706169640114000001160b6d61726b6574706c616365034d4c4101020218010431322e3501034152530101780101670163016401720174011a010431322e350173010173026e6e010203180c636c61696d5f6f70656e65641c0c636c61696d5f636c6f73656480a6e795976782a6e795976784a6e7959767"

// TestOrderRecord_Form1LayoutIsPinned: records in form 1 are on disk, and
// RecordsMigration writes form 1 with the package's encoder (migrate.go).
// A change of these bytes is a new form, with its migration.
func TestOrderRecord_Form1LayoutIsPinned(t *testing.T) {
	b, err := encodeOrderRecord(pinnedOrderRecord())
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(b); got != pinnedOrderRecordForm1 {
		t.Fatalf("form 1 of the pinned record is now\n%s\nwas\n%s", got, pinnedOrderRecordForm1)
	}
	got, err := decodeOrderRecord(b)
	if err != nil || !reflect.DeepEqual(got, pinnedOrderRecord()) {
		t.Fatalf("the pinned record reads back as %+v (%v)", got, err)
	}
}

func TestOrderRecord_CorruptBytesFailWithoutPanicking(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b, err := encodeOrderRecord(drawOrderRecord(t))
		if err != nil {
			t.Fatal(err)
		}
		damage := rapid.IntRange(0, 2).Draw(t, "damage")
		switch damage {
		case 0: // cut short
			b = b[:rapid.IntRange(0, len(b)-1).Draw(t, "cut")]
		case 1: // a byte changed
			i := rapid.IntRange(0, len(b)-1).Draw(t, "at")
			b[i] ^= rapid.ByteRange(1, 255).Draw(t, "xor")
		case 2: // bytes left over
			b = append(b, rapid.SliceOfN(rapid.Byte(), 1, 4).Draw(t, "extra")...)
		}
		// A changed byte may still decode (a different id); it must not
		// panic. A record cut short or with bytes left over must fail.
		if _, err := decodeOrderRecord(b); err == nil && damage != 1 {
			t.Fatalf("damage %d decoded", damage)
		}
	})
	for _, b := range [][]byte{nil, {}, {0}, {2}, {orderRecordV1}} {
		if _, err := decodeOrderRecord(b); err == nil {
			t.Fatalf("%v decoded", b)
		}
	}
}
