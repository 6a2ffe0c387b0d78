package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/sales"
)

// salesTopics are the topics a sale, a stock change or an item change is
// announced on.
var salesTopics = []string{notify.TopicOrders, notify.TopicShipments, notify.TopicItems, notify.TopicStockLocation}

// salesWorld is a warehouse seller with two stores and a buyer; the seller
// has one application per sales topic, each with its own receiver, and one
// subscribed to questions only; the buyer has one subscribed to every
// topic. Sales are made through the engine (no public route makes one);
// the notifications reach the receivers over HTTP.
type salesWorld struct {
	*testServer
	seller, buyer user
	stores        []string
	apps          map[string]map[string]any // by topic
	rcvs          map[string]*recorder      // by topic
	questionsRcv  *recorder
	buyerRcv      *recorder
}

func newSalesWorld(t *testing.T) *salesWorld {
	t.Helper()
	ts := newNotifyServer(t)
	w := &salesWorld{testServer: ts, apps: map[string]map[string]any{}, rcvs: map[string]*recorder{}}
	w.seller, w.stores = ts.mustSeller(2)
	w.buyer = ts.mustUser("MLA")
	for _, topic := range salesTopics {
		w.rcvs[topic] = newRecorder(t)
		w.apps[topic] = w.subscribe(w.seller.ID, w.rcvs[topic], topic)
	}
	w.questionsRcv, w.buyerRcv = newRecorder(t), newRecorder(t)
	w.subscribe(w.seller.ID, w.questionsRcv, notify.TopicQuestions)
	w.subscribe(w.buyer.ID, w.buyerRcv, notify.Topics...)
	return w
}

// subscribe registers an application of owner, POSTing to rc, subscribed
// to topics.
func (w *salesWorld) subscribe(owner int64, rc *recorder, topics ...string) map[string]any {
	w.t.Helper()
	res := w.do("POST", "/operator/applications", testOperatorToken, map[string]any{
		"name": "Sales app", "owner_user_id": owner, "callback_url": rc.srv.URL + "/notifications", "topics": topics,
	})
	if res.Status != http.StatusCreated {
		w.t.Fatalf("create application: %d %s", res.Status, res.Raw)
	}
	return res.Obj()
}

func TestNotifySales_EachChangeNotifiesTheApplicationsSubscribedToItsTopicsOnly(t *testing.T) {
	w := newSalesWorld(t)
	ctx := context.Background()
	var (
		item, up   string
		sale, late sales.Order
	)
	itemR := func() string { return "/items/" + item }
	stockR := func() string { return "/user-products/" + up + "/stock" }
	orderR := func(o sales.Order) string { return fmt.Sprintf("/orders/%d", o.ID) }
	shipR := func(o sales.Order) string { return fmt.Sprintf("/shipments/%d", *o.Shipping.ID) }
	must := func(t *testing.T, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		name string
		act  func(t *testing.T)
		// want gives, by topic, the resources announced; a topic not
		// named gets nothing.
		want func() map[string][]string
	}{
		{"ItemCreated", func(t *testing.T) {
			item, up = w.mustMultiItem(w.seller.Token, w.stores[0], 2, w.stores[1], 1)
		}, func() map[string][]string {
			return map[string][]string{notify.TopicItems: {itemR()}}
		}},
		{"StockPut", func(t *testing.T) {
			res := w.do("PUT", stockR()+"/type/seller_warehouse", w.seller.Token, map[string]any{
				"locations": []any{map[string]any{"store_id": w.stores[0], "quantity": 5}}}, "x-version", "1")
			if res.Status != http.StatusOK {
				t.Fatalf("stock PUT: %d %s", res.Status, res.Raw)
			}
		}, func() map[string][]string {
			// The store's quantity, and the item's available_quantity.
			return map[string][]string{notify.TopicStockLocation: {stockR()}, notify.TopicItems: {itemR()}}
		}},
		{"PaidSale", func(t *testing.T) {
			var err error
			sale, err = w.m.Sales.PlaceOrder(ctx, sales.NewOrder{BuyerID: w.buyer.ID, ItemID: item, Quantity: 1, StoreID: w.stores[0]})
			must(t, err)
		}, func() map[string][]string {
			return map[string][]string{
				notify.TopicOrders: {orderR(sale)}, notify.TopicShipments: {shipR(sale)},
				notify.TopicItems: {itemR()}, notify.TopicStockLocation: {stockR()},
			}
		}},
		{"Shipped", func(t *testing.T) {
			_, err := w.m.Sales.MoveShipment(ctx, *sale.Shipping.ID, sales.ShipmentMove{Status: sales.ShipmentShipped})
			must(t, err)
		}, func() map[string][]string {
			return map[string][]string{notify.TopicShipments: {shipR(sale)}}
		}},
		{"Delivered", func(t *testing.T) {
			_, err := w.m.Sales.MoveShipment(ctx, *sale.Shipping.ID, sales.ShipmentMove{Status: sales.ShipmentDelivered})
			must(t, err)
		}, func() map[string][]string {
			return map[string][]string{notify.TopicShipments: {shipR(sale)}, notify.TopicOrders: {orderR(sale)}}
		}},
		{"PaymentRequiredSale", func(t *testing.T) {
			var err error
			late, err = w.m.Sales.PlaceOrder(ctx, sales.NewOrder{BuyerID: w.buyer.ID, ItemID: item, Quantity: 2, Status: sales.StatusPaymentRequired})
			must(t, err)
		}, func() map[string][]string {
			// No unit leaves stock before the payment.
			return map[string][]string{notify.TopicOrders: {orderR(late)}, notify.TopicShipments: {shipR(late)}}
		}},
		{"Paid", func(t *testing.T) {
			_, err := w.m.Sales.Pay(ctx, late.ID, sales.PaymentInput{Status: "approved"})
			must(t, err)
		}, func() map[string][]string {
			return map[string][]string{
				notify.TopicOrders: {orderR(late)}, notify.TopicShipments: {shipR(late)},
				notify.TopicItems: {itemR()}, notify.TopicStockLocation: {stockR()},
			}
		}},
		{"Cancelled", func(t *testing.T) {
			_, err := w.m.Sales.Cancel(ctx, late.ID)
			must(t, err)
		}, func() map[string][]string {
			// The units go back; the shipment, not shipped yet, is cancelled.
			return map[string][]string{
				notify.TopicOrders: {orderR(late)}, notify.TopicShipments: {shipR(late)},
				notify.TopicItems: {itemR()}, notify.TopicStockLocation: {stockR()},
			}
		}},
		{"PriceChanged", func(t *testing.T) {
			res := w.do("PUT", itemR(), w.seller.Token, map[string]any{"price": 2000})
			if res.Status != http.StatusOK {
				t.Fatalf("item PUT: %d %s", res.Status, res.Raw)
			}
		}, func() map[string][]string {
			return map[string][]string{notify.TopicItems: {itemR()}}
		}},
		{"Paused", func(t *testing.T) {
			res := w.do("PUT", itemR(), w.seller.Token, map[string]any{"status": "paused"})
			if res.Status != http.StatusOK {
				t.Fatalf("item PUT: %d %s", res.Status, res.Raw)
			}
		}, func() map[string][]string {
			return map[string][]string{notify.TopicItems: {itemR()}}
		}},
	}
	seen := map[string]bool{}
	for i, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			is := is.New(t)
			changed := w.clock.Now()
			step.act(t)
			if err := w.clock.Advance(time.Duration(i+1) * time.Second); err != nil {
				t.Fatal(err)
			}
			sentAt := w.clock.Now()
			w.deliver()

			want := step.want()
			for _, topic := range salesTopics {
				got := w.rcvs[topic].take()
				var resources []string
				for _, p := range got {
					resources = append(resources, p.Body["resource"].(string))
					is.Equal(p.Body, map[string]any{
						"_id":            p.Body["_id"],
						"resource":       p.Body["resource"],
						"user_id":        float64(w.seller.ID), // the seller's, also for what the buyer did
						"topic":          topic,
						"application_id": w.apps[topic]["id"],
						"attempts":       float64(1),
						"received":       changed.UTC().Format("2006-01-02T15:04:05.000Z"),
						"sent":           sentAt.UTC().Format("2006-01-02T15:04:05.000Z"),
					})
					id, _ := p.Body["_id"].(string)
					is.True(id != "" && !seen[id]) // each notification its own _id
					seen[id] = true
					is.True(notify.Verify(w.apps[topic]["secret"].(string), p.Raw, p.Header.Get(notify.SignatureHeader))) // signed with its app's secret
				}
				slices.Sort(resources)
				if !slices.Equal(resources, want[topic]) {
					t.Errorf("%s: the application received %v; want %v", topic, resources, want[topic])
				}
			}
			for name, rc := range map[string]*recorder{"seller's questions-only": w.questionsRcv, "buyer's": w.buyerRcv} {
				if got := rc.take(); len(got) != 0 {
					t.Errorf("the %s application was notified: %s", name, got[0].Raw)
				}
			}
		})
	}
}

func TestNotifySales_AReceiverThatFailsFindsTheOrderAndItsShipmentInMissedFeeds(t *testing.T) {
	is := is.New(t)
	ts := newNotifyServer(t)
	rcv, posts := countingReceiver(t, http.StatusInternalServerError)
	seller, stores := ts.mustSeller(1)
	buyer := ts.mustUser("MLA")
	res := ts.do("POST", "/operator/applications", testOperatorToken, map[string]any{
		"name": "Orders", "owner_user_id": seller.ID, "callback_url": rcv.URL + "/cb",
		"topics": []string{notify.TopicOrders, notify.TopicShipments},
	})
	is.Equal(res.Status, http.StatusCreated)
	appID := res.Obj()["id"].(float64)
	item, _ := ts.mustMultiItem(seller.Token, stores[0], 3)
	o, err := ts.m.Sales.PlaceOrder(context.Background(), sales.NewOrder{BuyerID: buyer.ID, ItemID: item, Quantity: 1})
	is.NoErr(err)
	ts.missAll()
	is.Equal(posts.Load(), int64(2*notify.MaxAttempts)) // the order's and the shipment's, every attempt

	feed := func(query string) []map[string]any {
		t.Helper()
		res := ts.do("GET", fmt.Sprintf("/missed_feeds?app_id=%.0f%s", appID, query), seller.Token, nil)
		is.Equal(res.Status, http.StatusOK)
		var out []map[string]any
		for _, m := range res.Obj()["messages"].([]any) {
			out = append(out, m.(map[string]any))
		}
		return out
	}
	for _, c := range []struct{ topic, resource string }{
		{notify.TopicOrders, fmt.Sprintf("/orders/%d", o.ID)},
		{notify.TopicShipments, fmt.Sprintf("/shipments/%d", *o.Shipping.ID)},
	} {
		msgs := feed("&topic=" + c.topic)
		is.Equal(len(msgs), 1) // one missed notification of the topic
		m := msgs[0]
		is.Equal(m["topic"], c.topic)
		is.Equal(m["resource"], c.resource)
		is.Equal(m["user_id"], float64(seller.ID))
		is.Equal(m["application_id"], appID)
		is.Equal(m["attempts"], float64(notify.MaxAttempts))
		is.Equal(m["received"], testStart.UTC().Format("2006-01-02T15:04:05.000Z"))
		is.Equal(m["request"].(map[string]any)["data"].(map[string]any)["resource"], c.resource) // the body sent
		is.Equal(m["response"].(map[string]any)["http_code"], float64(500))
	}
	is.Equal(len(feed("")), 2)                                  // both without a topic
	is.Equal(len(feed("&topic="+notify.TopicStockLocation)), 0) // a topic the application missed nothing of
}

func TestNotifySales_AnItemWithoutStockPerStoreIsNeverAnnouncedOnStockLocation(t *testing.T) {
	is := is.New(t)
	ts := newNotifyServer(t)
	seller, buyer := ts.mustUser("MLA", "normal"), ts.mustUser("MLA")
	w := &salesWorld{testServer: ts}
	items, stock := newRecorder(t), newRecorder(t)
	w.subscribe(seller.ID, items, notify.TopicItems)
	w.subscribe(seller.ID, stock, notify.TopicStockLocation)
	item := ts.mustPlainItem(seller.Token, "Bici", 1000, 3)

	res := ts.do("PUT", "/items/"+item, seller.Token, map[string]any{"available_quantity": 5})
	is.Equal(res.Status, http.StatusOK)
	o, err := ts.m.Sales.PlaceOrder(context.Background(), sales.NewOrder{BuyerID: buyer.ID, ItemID: item, Quantity: 2})
	is.NoErr(err)
	_, err = ts.m.Sales.Cancel(context.Background(), o.ID)
	is.NoErr(err)
	ts.deliver()

	is.Equal(len(items.take()), 4) // created, its quantity put, sold, given back
	is.Equal(len(stock.take()), 0) // no store holds its units
}
