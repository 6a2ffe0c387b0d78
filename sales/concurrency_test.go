package sales_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/sales"
	"github.com/marketplace/marketplace/stock"
)

// race runs n purchases at once, in(i) the i-th, and returns the orders
// made; every refused purchase must be Invalid.
func race(t *testing.T, e *env, n int, in func(i int) sales.NewOrder) []sales.Order {
	t.Helper()
	var (
		mu     sync.Mutex
		orders []sales.Order
	)
	together(t, n, func(i int) error {
		o, err := e.sales.PlaceOrder(ctx, in(i))
		if err == nil {
			mu.Lock()
			orders = append(orders, o)
			mu.Unlock()
		}
		return err
	})
	return orders
}

// soldOut checks that item sold exactly sold units, has none left, is
// paused as out_of_stock, and that its stock moved once per sale.
func soldOut(t *testing.T, e *env, seller int64, item stock.Published, sold int64, orders []sales.Order) {
	t.Helper()
	if int64(len(orders)) != sold {
		t.Fatalf("%d purchases succeeded, want %d", len(orders), sold)
	}
	it := e.mustItem(item.ID)
	if it.AvailableQuantity != 0 || it.SoldQuantity != sold || it.Status != stock.StatusPaused ||
		!slices.Equal(it.SubStatus, []string{stock.SubStatusOutOfStock}) {
		t.Fatalf("item: %d available, %d sold, %s %v", it.AvailableQuantity, it.SoldQuantity, it.Status, it.SubStatus)
	}
	if st := e.mustStock(seller, item.UserProductID); st.Version != 1+sold {
		t.Fatalf("stock version %d, want %d (one per sale)", st.Version, 1+sold)
	}
	res, err := e.sales.Search(ctx, seller, sales.SearchQuery{Seller: seller, Limit: 50})
	if err != nil || res.Paging.Total != int(sold) || len(res.Results) != int(sold) {
		t.Fatalf("the seller's orders: %+v %v", res.Paging, err)
	}
}

func TestPlaceOrder_TwoBuyersOfTheLastUnitGetOneOrder(t *testing.T) {
	e := newEnv(t)
	seller, item := e.mustPlainItem(1)
	buyers := []int64{e.mustUser("BUYER"), e.mustUser("BUYER")}
	orders := race(t, e, 2, func(i int) sales.NewOrder {
		return sales.NewOrder{BuyerID: buyers[i], ItemID: item.ID, Quantity: 1}
	})
	soldOut(t, e, seller, item, 1, orders)
}

func TestPlaceOrder_ConcurrentBuyersSellEachUnitOnce(t *testing.T) {
	const buyersN = 8
	t.Run("Plain", func(t *testing.T) {
		e := newEnv(t)
		seller, item := e.mustPlainItem(3)
		var buyers []int64
		for range buyersN {
			buyers = append(buyers, e.mustUser("BUYER"))
		}
		orders := race(t, e, buyersN, func(i int) sales.NewOrder {
			return sales.NewOrder{BuyerID: buyers[i], ItemID: item.ID, Quantity: 1}
		})
		soldOut(t, e, seller, item, 3, orders)
	})
	t.Run("MultiOrigin", func(t *testing.T) {
		e := newEnv(t)
		seller, stores, item := e.mustMultiItem(2, 1)
		var buyers []int64
		for range buyersN {
			buyers = append(buyers, e.mustUser("BUYER"))
		}
		// Half the buyers name a store, the others let the rule pick.
		orders := race(t, e, buyersN, func(i int) sales.NewOrder {
			in := sales.NewOrder{BuyerID: buyers[i], ItemID: item.ID, Quantity: 1}
			if i%2 == 1 {
				in.StoreID = stores[i/2%2]
			}
			return in
		})
		soldOut(t, e, seller, item, 3, orders)
		from := map[string]int{}
		for _, o := range orders {
			from[o.OrderItems[0].Stock[0].StoreID]++
		}
		if from[stores[0]] != 2 || from[stores[1]] != 1 {
			t.Fatalf("units taken per store %v, want 2 and 1", from)
		}
		if q := quantities(e.mustStock(seller, item.UserProductID)); q[stores[0]] != 0 || q[stores[1]] != 0 {
			t.Fatalf("stock %v", q)
		}
	})
	t.Run("PaymentsOfUnpaidOrders", func(t *testing.T) {
		e := newEnv(t)
		seller, item := e.mustPlainItem(3)
		// Eight unpaid orders of one unit each: all fit the 3 units when
		// made, only three payments can take them.
		var unpaid []int64
		for range buyersN {
			unpaid = append(unpaid, e.mustOrder(sales.NewOrder{BuyerID: e.mustUser("BUYER"), ItemID: item.ID, Quantity: 1,
				Status: sales.StatusPaymentRequired}).ID)
		}
		paid := together(t, buyersN, func(i int) error {
			_, err := e.sales.Pay(ctx, unpaid[i], sales.PaymentInput{Status: "approved"})
			return err
		})
		if paid != 3 {
			t.Fatalf("%d payments succeeded, want 3", paid)
		}
		it := e.mustItem(item.ID)
		if it.AvailableQuantity != 0 || it.SoldQuantity != 3 || it.Status != stock.StatusPaused {
			t.Fatalf("item: %d available, %d sold, %s", it.AvailableQuantity, it.SoldQuantity, it.Status)
		}
		if st := e.mustStock(seller, item.UserProductID); st.Version != 4 {
			t.Fatalf("stock version %d, want 4", st.Version)
		}
	})
}

// together runs fn(i) for i in [0, n) at once and returns how many calls
// succeeded; a refused call must be Invalid.
func together(t *testing.T, n int, fn func(i int) error) int {
	t.Helper()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		ok    int
		errc  = make(chan error, n)
		start = make(chan struct{})
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			err := fn(i)
			switch {
			case err == nil:
				mu.Lock()
				ok++
				mu.Unlock()
			case !errs.Is(err, errs.Invalid):
				errc <- fmt.Errorf("call %d: %v; want success or Invalid", i, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	return ok
}

func TestCancel_ConcurrentCancellationsGiveTheUnitsBackOnce(t *testing.T) {
	e := newEnv(t)
	seller, stores, item := e.mustMultiItem(3, 1)
	o := e.mustOrder(sales.NewOrder{BuyerID: e.mustUser("BUYER"), ItemID: item.ID, Quantity: 2})
	if n := together(t, 8, func(int) error { _, err := e.sales.Cancel(ctx, o.ID); return err }); n != 1 {
		t.Fatalf("%d cancellations succeeded, want 1", n)
	}
	st := e.mustStock(seller, item.UserProductID)
	if q := quantities(st); q[stores[0]] != 3 || q[stores[1]] != 1 || st.Version != 3 {
		t.Fatalf("stock %v version %d, want the units back once (version 3)", q, st.Version)
	}
	if it := e.mustItem(item.ID); it.SoldQuantity != 0 || it.AvailableQuantity != 4 {
		t.Fatalf("item sold %d available %d", it.SoldQuantity, it.AvailableQuantity)
	}
	hist, _ := e.sales.ShipmentHistory(ctx, seller, *o.Shipping.ID)
	if len(hist) != 3 {
		t.Fatalf("shipment history %+v, want one cancellation", hist)
	}
}

func TestPay_ConcurrentPaymentsOfOneOrderTakeTheUnitsOnce(t *testing.T) {
	e := newEnv(t)
	seller, item := e.mustPlainItem(5)
	o := e.mustOrder(sales.NewOrder{BuyerID: e.mustUser("BUYER"), ItemID: item.ID, Quantity: 2, Status: sales.StatusPaymentRequired})
	if n := together(t, 8, func(int) error {
		_, err := e.sales.Pay(ctx, o.ID, sales.PaymentInput{Status: "approved"})
		return err
	}); n != 1 {
		t.Fatalf("%d payments succeeded, want 1", n)
	}
	if got := e.mustReadOrder(o.ID); len(got.Payments) != 1 || got.Status != sales.StatusPaid {
		t.Fatalf("order %s with %d payments", got.Status, len(got.Payments))
	}
	if it := e.mustItem(item.ID); it.SoldQuantity != 2 || it.AvailableQuantity != 3 {
		t.Fatalf("item sold %d available %d", it.SoldQuantity, it.AvailableQuantity)
	}
	if st := e.mustStock(seller, item.UserProductID); st.Version != 2 {
		t.Fatalf("stock version %d, want 2", st.Version)
	}
}
