package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"
)

func init() {
	allRoutes = append(allRoutes,
		route{"POST", "/orders/:order_id/feedback", nil, []string{"fulfilled", "rating", "message", "reason", "restock_item", "has_seller_refunded_money"}},
		route{"GET", "/orders/:order_id/feedback", nil, nil},
		route{"GET", "/orders/:order_id/feedback/:side", nil, nil},
		route{"PUT", "/orders/:order_id/feedback/:side", nil, []string{"fulfilled", "rating", "message", "reason"}},
		route{"GET", "/feedback/:feedback_id", nil, nil},
		route{"PUT", "/feedback/:feedback_id", nil, []string{"fulfilled", "rating", "message", "reason", "restock_item"}},
		route{"POST", "/feedback/:feedback_id/reply", nil, []string{"reply"}},
		route{"POST", "/orders/:order_id/notes", nil, []string{"note"}},
		route{"GET", "/orders/:order_id/notes", nil, nil},
		route{"PUT", "/orders/:order_id/notes/:note_id", nil, []string{"note"}},
		route{"DELETE", "/orders/:order_id/notes/:note_id", nil, nil},
		route{"POST", "/packs/:pack_id/notes", nil, []string{"note"}},
		route{"GET", "/packs/:pack_id/notes", nil, nil},
		route{"GET", "/packs/:pack_id/notes/:note_id", nil, nil},
		route{"PUT", "/packs/:pack_id/notes/:note_id", nil, []string{"note"}},
	)
}

func TestFeedbackRoutes_EachSideRatesOnceAndTheOrderShowsTheIDs(t *testing.T) {
	is := is.New(t)
	w := newSaleWorld(t)
	s := w.buy(1)
	res := w.ts.do("POST", "/orders/"+s.id+"/feedback", w.seller.Token, map[string]any{
		"fulfilled": true, "rating": "positive", "message": "Excelente comprador"})
	is.Equal(res.Status, http.StatusCreated)
	sale := res.Obj()
	is.Equal(sale["role"], "seller")
	is.Equal(sale["fulfilled"], true)
	is.Equal(sale["status"], "active")
	is.Equal(sale["modified"], false)
	is.Equal(sale["from"].(map[string]any)["id"], float64(w.seller.ID))
	is.Equal(sale["to"].(map[string]any)["id"], float64(w.buyer.ID))
	is.Equal(sale["item"].(map[string]any)["id"], w.item)

	again := w.ts.do("POST", "/orders/"+s.id+"/feedback", w.seller.Token, map[string]any{
		"fulfilled": true, "rating": "positive", "message": "twice"})
	wantError(t, again, http.StatusBadRequest, "Feedback already exists for this order")
	is.Equal(again.Obj()["error"], "feedback_already_exists")

	res = w.ts.do("POST", "/orders/"+s.id+"/feedback", w.buyer.Token, map[string]any{
		"fulfilled": true, "rating": "positive", "message": "Llegó perfecto"})
	is.Equal(res.Status, http.StatusCreated)
	purchase := res.Obj()

	order := w.ts.do("GET", "/orders/"+s.id, w.seller.Token, nil).Obj()
	fb := order["feedback"].(map[string]any)
	is.Equal(fb["sale"], sale["id"])
	is.Equal(fb["seller"], sale["id"])
	is.Equal(fb["purchase"], purchase["id"])
	is.Equal(fb["buyer"], purchase["id"])

	both := w.ts.do("GET", "/orders/"+s.id+"/feedback", w.buyer.Token, nil)
	is.Equal(both.Status, http.StatusOK)
	is.Equal(both.Obj()["sale"].(map[string]any)["id"], sale["id"])
	is.Equal(both.Obj()["purchase"].(map[string]any)["id"], purchase["id"])
	side := w.ts.do("GET", "/orders/"+s.id+"/feedback/purchase", w.seller.Token, nil)
	is.Equal(side.Status, http.StatusOK)
	is.Equal(side.Obj()["id"], purchase["id"])

	one := w.ts.do("GET", fmt.Sprintf("/feedback/%.0f", sale["id"]), w.seller.Token, nil)
	is.Equal(one.Status, http.StatusOK)
	is.Equal(one.Obj()["adult_content"], false)
	_, hasApp := one.Obj()["app_id"]
	is.True(!hasApp)
}

func TestFeedbackRoutes_AnOrderWithoutFeedbackShowsSellerAndBuyerNull(t *testing.T) {
	is := is.New(t)
	w := newSaleWorld(t)
	s := w.buy(1)
	fb := w.ts.do("GET", "/orders/"+s.id, w.seller.Token, nil).Obj()["feedback"].(map[string]any)
	is.Equal(len(fb), 2)
	is.Equal(fb["seller"], nil)
	is.Equal(fb["buyer"], nil)
	both := w.ts.do("GET", "/orders/"+s.id+"/feedback", w.seller.Token, nil)
	is.Equal(string(both.Raw), "{\"sale\":null,\"purchase\":null}\n")
	wantError(t, w.ts.do("GET", "/orders/"+s.id+"/feedback/sale", w.seller.Token, nil), http.StatusNotFound,
		"Order "+s.id+" has no seller feedback")
}

func TestFeedbackRoutes_BadInputIsA400ThatChangesNothing(t *testing.T) {
	w := newSaleWorld(t)
	s := w.buy(1)
	for _, c := range []struct {
		name string
		body any
		want string
	}{
		{"PositiveNotFulfilled", map[string]any{"fulfilled": false, "rating": "positive", "message": "m", "reason": "OUT_OF_STOCK"}, "A positive rating needs fulfilled: true"},
		{"NoReason", map[string]any{"fulfilled": false, "rating": "negative", "message": "m"}, "The field 'reason' is required when fulfilled is false"},
		{"LongMessage", map[string]any{"fulfilled": true, "rating": "positive", "message": strings.Repeat("x", 161)}, "The message must have at most 160 characters"},
		{"NoRating", map[string]any{"fulfilled": true, "message": "m"}, "The field 'rating' is required"},
		{"NotJSON", "fulfilled=true", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, w.ts.do("POST", "/orders/"+s.id+"/feedback", w.seller.Token, c.body), http.StatusBadRequest, c.want)
		})
	}
	is := is.New(t)
	is.Equal(string(w.ts.do("GET", "/orders/"+s.id+"/feedback", w.seller.Token, nil).Raw), "{\"sale\":null,\"purchase\":null}\n")
	wantError(t, w.ts.do("POST", "/orders/"+s.id+"/feedback", w.stranger.Token, map[string]any{
		"fulfilled": true, "rating": "positive", "message": "m"}), http.StatusForbidden, "")
	wantError(t, w.ts.do("GET", "/orders/1/feedback", w.seller.Token, nil), http.StatusNotFound, "Order does not exist")
}

func TestFeedbackRoutes_TheAuthorChangesItAndTheOtherPartyRepliesOnce(t *testing.T) {
	is := is.New(t)
	w := newSaleWorld(t)
	s := w.buy(1)
	f := w.ts.do("POST", "/orders/"+s.id+"/feedback", w.buyer.Token, map[string]any{
		"fulfilled": true, "rating": "neutral", "message": "Tardó"}).Obj()
	id := fmt.Sprintf("%.0f", f["id"])
	wantError(t, w.ts.do("PUT", "/feedback/"+id, w.seller.Token, map[string]any{"rating": "negative"}), http.StatusForbidden,
		"Only the author of feedback "+id+" may change it")
	changed := w.ts.do("PUT", "/feedback/"+id, w.buyer.Token, map[string]any{"fulfilled": true, "rating": "positive", "message": "It's ok."})
	is.Equal(changed.Status, http.StatusOK)
	is.Equal(changed.Obj()["modified"], true)
	is.Equal(changed.Obj()["rating"], "positive")
	legacy := w.ts.do("PUT", "/orders/"+s.id+"/feedback/purchase", w.buyer.Token, map[string]any{"message": "Again"})
	is.Equal(legacy.Status, http.StatusOK)
	is.Equal(legacy.Obj()["message"], "Again")

	wantError(t, w.ts.do("POST", "/feedback/"+id+"/reply", w.buyer.Token, map[string]any{"reply": "x"}), http.StatusForbidden, "")
	reply := w.ts.do("POST", "/feedback/"+id+"/reply", w.seller.Token, map[string]any{"reply": "Muchas gracias"})
	is.Equal(reply.Status, http.StatusOK)
	is.Equal(reply.Obj()["reply"], "Muchas gracias")
	wantError(t, w.ts.do("POST", "/feedback/"+id+"/reply", w.seller.Token, map[string]any{"reply": "again"}), http.StatusBadRequest,
		"The feedback already has a reply")
}

func TestFeedbackRoutes_ANotFulfilledFeedbackWithRestockGivesTheUnitsBack(t *testing.T) {
	is := is.New(t)
	w := newSaleWorld(t)
	s := w.buy(2)
	before := w.ts.do("GET", "/items/"+w.item, w.seller.Token, nil).Obj()["available_quantity"]
	res := w.ts.do("POST", "/orders/"+s.id+"/feedback", w.seller.Token, map[string]any{
		"fulfilled": false, "rating": "neutral", "message": "Sin stock", "reason": "OUT_OF_STOCK", "restock_item": true})
	is.Equal(res.Status, http.StatusCreated)
	after := w.ts.do("GET", "/items/"+w.item, w.seller.Token, nil).Obj()["available_quantity"]
	is.Equal(after.(float64), before.(float64)+2)
}

func TestNotesRoutes_TheSellerWritesListsChangesAndDeletesNotes(t *testing.T) {
	is := is.New(t)
	w := newSaleWorld(t)
	s := w.buy(1)
	res := w.ts.do("POST", "/orders/"+s.id+"/notes", w.seller.Token, map[string]any{"note": "Cliente pidió envolver para regalo"})
	is.Equal(res.Status, http.StatusCreated)
	n := res.Obj()["note"].(map[string]any)
	is.Equal(n["note"], "Cliente pidió envolver para regalo")
	is.Equal(n["date_created"], "2026-03-04T15:00:00Z")
	is.Equal(len(n["id"].(string)), 24)
	id := n["id"].(string)

	list := w.ts.do("GET", "/orders/"+s.id+"/notes", w.seller.Token, nil)
	is.Equal(list.Status, http.StatusOK)
	entry := list.Arr()[0].(map[string]any)
	is.Equal(entry["order_id"], s.id)
	is.Equal(len(entry["results"].([]any)), 1)

	up := w.ts.do("PUT", "/orders/"+s.id+"/notes/"+id, w.seller.Token, map[string]any{"note": "changed"})
	is.Equal(up.Status, http.StatusOK)
	is.Equal(up.Obj()["note"].(map[string]any)["note"], "changed")
	del := w.ts.do("DELETE", "/orders/"+s.id+"/notes/"+id, w.seller.Token, nil)
	is.Equal(del.Status, http.StatusOK)
	is.Equal(string(del.Raw), "{}\n")
	is.Equal(len(w.ts.do("GET", "/orders/"+s.id+"/notes", w.seller.Token, nil).Arr()[0].(map[string]any)["results"].([]any)), 0)

	pack := w.ts.do("POST", "/packs/"+s.pack+"/notes", w.seller.Token, map[string]any{"note": "from integration"})
	is.Equal(pack.Status, http.StatusCreated)
	pn := pack.Obj()["note"].(map[string]any)
	is.Equal(pn["source_bu"], "integrator")
	is.Equal(pn["seller_id"], float64(w.seller.ID))
	one := w.ts.do("GET", "/packs/"+s.pack+"/notes/"+pn["id"].(string), w.seller.Token, nil)
	is.Equal(one.Status, http.StatusOK)
	is.Equal(one.Obj()["note"], "from integration")
	plist := w.ts.do("GET", "/packs/"+s.pack+"/notes", w.seller.Token, nil).Arr()[0].(map[string]any)
	is.Equal(idString(plist["pack_id"]), s.pack)
}

func TestNotesRoutes_TheBuyerAndOthersNeverSeeNotesAndBadNotesAreRefused(t *testing.T) {
	w := newSaleWorld(t)
	s := w.buy(1)
	w.ts.do("POST", "/orders/"+s.id+"/notes", w.seller.Token, map[string]any{"note": "privada"})
	for _, who := range []user{w.buyer, w.stranger} {
		wantError(t, w.ts.do("GET", "/orders/"+s.id+"/notes", who.Token, nil), http.StatusForbidden, "")
		wantError(t, w.ts.do("POST", "/packs/"+s.pack+"/notes", who.Token, map[string]any{"note": "x"}), http.StatusForbidden, "")
	}
	wantError(t, w.ts.do("POST", "/orders/"+s.id+"/notes", w.seller.Token, map[string]any{"note": strings.Repeat("n", 301)}),
		http.StatusBadRequest, "Note exceeds 300 characters")
	wantError(t, w.ts.do("POST", "/orders/"+s.id+"/notes", w.seller.Token, map[string]any{}), http.StatusBadRequest, "Note exceeds 300 characters")
	wantError(t, w.ts.do("PUT", "/orders/"+s.id+"/notes/ffffffffffffffffffffffff", w.seller.Token, map[string]any{"note": "x"}),
		http.StatusNotFound, "Note ffffffffffffffffffffffff not found")
	wantError(t, w.ts.do("GET", "/packs/1/notes", w.seller.Token, nil), http.StatusNotFound, "Pack 1 not found")
}
