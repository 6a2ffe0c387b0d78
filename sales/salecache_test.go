package sales_test

import (
	"reflect"
	"testing"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/sales"
	"github.com/marketplace/marketplace/storage"
)

func TestSaleOfRead_IsWhatSaleOfReadsAfterEveryChange(t *testing.T) {
	e := newEnv(t)
	_, item := e.mustPlainItem(5)
	buyer := e.mustUser("BUYER")
	o := e.mustOrder(sales.NewOrder{BuyerID: buyer, ItemID: item.ID, Quantity: 1, Status: sales.StatusPaymentRequired})
	check := func(when string) {
		t.Helper()
		err := e.store.View(ctx, func(tx storage.Tx) error {
			want, err := e.sales.SaleOf(tx, o.ID)
			if err != nil {
				return err
			}
			for range 2 {
				got, err := e.sales.SaleOfRead(tx, o.ID)
				if err != nil {
					return err
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: SaleOfRead = %+v\nSaleOf = %+v", when, got, want)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	check("placed")
	if _, err := e.sales.Pay(ctx, o.ID, sales.PaymentInput{Status: "approved"}); err != nil {
		t.Fatal(err)
	}
	check("paid")
	if _, err := e.sales.MoveShipment(ctx, *o.Shipping.ID, sales.ShipmentMove{Status: sales.ShipmentShipped}); err != nil {
		t.Fatal(err)
	}
	check("shipped")
	err := e.store.View(ctx, func(tx storage.Tx) error {
		_, err := e.sales.SaleOfRead(tx, 1)
		wantErr(t, err, errs.NotFound, "Order does not exist")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
