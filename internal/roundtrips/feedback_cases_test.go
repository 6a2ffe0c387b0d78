package roundtrips

import (
	"fmt"
	"slices"
)

// The feedback and notes routes run before the routes that replace the
// state, as every other case does.
func init() {
	at := slices.IndexFunc(cases, func(c routeCase) bool { return c.method == "GET" && c.path == "/operator/clock" })
	if at < 0 {
		at = len(cases)
	}
	cases = slices.Insert(cases, at, feedbackCases...)
	for k, v := range feedbackBounds {
		bounds[k] = v
	}
}

// freshSale sells one unit of the plain item (seller w.plain) to the
// buyer.
func (w *world) freshSale() sale {
	return w.mustSale(map[string]any{"buyer_id": w.buyer.ID, "item_id": w.plainItem, "quantity": 1})
}

// buyerFeedback is a fresh sale with the buyer's feedback on it, and the
// feedback's id.
func (w *world) buyerFeedback() (sale, string) {
	s := w.freshSale()
	f := w.must(201, "POST", "/orders/"+s.id+"/feedback", w.buyer.Token,
		map[string]any{"fulfilled": true, "rating": "positive", "message": "Perfecto"}).obj()
	return s, idString(f["id"])
}

// orderNote writes a note of the seller on the world's sale and returns
// its id.
func (w *world) orderNote(on, id string) string {
	return w.must(201, "POST", "/"+on+"/"+id+"/notes", w.plain.Token, map[string]any{"note": "nota"}).obj()["note"].(map[string]any)["id"].(string)
}

var feedbackCases = []routeCase{
	{method: "POST", path: "/orders/:order_id/feedback", status: 201, req: func(w *world, _ int) request {
		s := w.freshSale()
		return byUser("POST", "/orders/"+s.id+"/feedback", w.plain, map[string]any{"fulfilled": true, "rating": "positive", "message": "Buen comprador"})
	}},
	{method: "GET", path: "/orders/:order_id/feedback", req: fixed(func(w *world) request {
		return get("/orders/"+w.sale.id+"/feedback", w.buyer.Token)
	})},
	{method: "GET", path: "/orders/:order_id/feedback/:side", req: func(w *world, _ int) request {
		s, _ := w.buyerFeedback()
		return get("/orders/"+s.id+"/feedback/purchase", w.plain.Token)
	}},
	{method: "PUT", path: "/orders/:order_id/feedback/:side", req: func(w *world, _ int) request {
		s, _ := w.buyerFeedback()
		return byUser("PUT", "/orders/"+s.id+"/feedback/purchase", w.buyer, map[string]any{"message": "Cambiado"})
	}},
	{method: "GET", path: "/feedback/:feedback_id", req: func(w *world, _ int) request {
		_, id := w.buyerFeedback()
		return get("/feedback/"+id, w.plain.Token)
	}},
	{method: "PUT", path: "/feedback/:feedback_id", req: func(w *world, _ int) request {
		_, id := w.buyerFeedback()
		return byUser("PUT", "/feedback/"+id, w.buyer, map[string]any{"rating": "neutral"})
	}},
	{method: "POST", path: "/feedback/:feedback_id/reply", req: func(w *world, _ int) request {
		_, id := w.buyerFeedback()
		return byUser("POST", "/feedback/"+id+"/reply", w.plain, map[string]any{"reply": "Gracias"})
	}},
	{method: "POST", path: "/orders/:order_id/notes", status: 201, req: fixed(func(w *world) request {
		return byUser("POST", "/orders/"+w.sale.id+"/notes", w.plain, map[string]any{"note": "Envolver para regalo"})
	})},
	{method: "GET", path: "/orders/:order_id/notes", req: fixed(func(w *world) request {
		return get("/orders/"+w.sale.id+"/notes", w.plain.Token)
	})},
	{method: "PUT", path: "/orders/:order_id/notes/:note_id", req: func(w *world, _ int) request {
		return byUser("PUT", "/orders/"+w.sale.id+"/notes/"+w.orderNote("orders", w.sale.id), w.plain, map[string]any{"note": "otra"})
	}},
	{method: "DELETE", path: "/orders/:order_id/notes/:note_id", req: func(w *world, _ int) request {
		return byUser("DELETE", "/orders/"+w.sale.id+"/notes/"+w.orderNote("orders", w.sale.id), w.plain, nil)
	}},
	{method: "POST", path: "/packs/:pack_id/notes", status: 201, req: fixed(func(w *world) request {
		return byUser("POST", "/packs/"+w.sale.pack+"/notes", w.plain, map[string]any{"note": "from integration"})
	})},
	{method: "GET", path: "/packs/:pack_id/notes", req: fixed(func(w *world) request {
		return get("/packs/"+w.sale.pack+"/notes", w.plain.Token)
	})},
	{method: "GET", path: "/packs/:pack_id/notes/:note_id", req: func(w *world, _ int) request {
		return get(fmt.Sprintf("/packs/%s/notes/%s", w.sale.pack, w.orderNote("packs", w.sale.pack)), w.plain.Token)
	}},
	{method: "PUT", path: "/packs/:pack_id/notes/:note_id", req: func(w *world, _ int) request {
		return byUser("PUT", "/packs/"+w.sale.pack+"/notes/"+w.orderNote("packs", w.sale.pack), w.plain, map[string]any{"note": "otra"})
	}},
}

// feedbackBounds are the round trips each case may take (see bounds).
var feedbackBounds = map[string]float64{
	"POST /orders/:order_id/feedback":         3.5,
	"GET /orders/:order_id/feedback":          1.5,
	"GET /orders/:order_id/feedback/:side":    2.5,
	"PUT /orders/:order_id/feedback/:side":    3.5,
	"GET /feedback/:feedback_id":              1.5,
	"PUT /feedback/:feedback_id":              4.5,
	"POST /feedback/:feedback_id/reply":       4.5,
	"POST /orders/:order_id/notes":            3.5,
	"GET /orders/:order_id/notes":             2.5,
	"PUT /orders/:order_id/notes/:note_id":    2.5,
	"DELETE /orders/:order_id/notes/:note_id": 2.5,
	"POST /packs/:pack_id/notes":              4.5,
	"GET /packs/:pack_id/notes":               3.5,
	"GET /packs/:pack_id/notes/:note_id":      2.5,
	"PUT /packs/:pack_id/notes/:note_id":      3.5,
}
