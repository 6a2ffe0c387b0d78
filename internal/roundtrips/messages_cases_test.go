package roundtrips

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"sync"
)

// The post-sale messages' cases run last, after the reset, on records of
// their own: the messages they write are not in the state the snapshot,
// fixtures and reset cases copy or clear, whose figures grow with it.
func init() {
	cases = append(cases, messagesCases...)
	for k, v := range messagesBounds {
		bounds[k] = v
	}
}

// messagesBounds are the post-sale messages' bounds (see bounds).
var messagesBounds = map[string]float64{
	"GET /messages/packs/:pack_id/sellers/:user_id":            3.5,
	"POST /messages/packs/:pack_id/sellers/:user_id":           4.5,
	"GET /messages/:message_id":                                3.5,
	"GET /messages/unread":                                     1.5,
	"GET /messages/unread/packs/:pack_id/sellers/:user_id":     3.5,
	"POST /messages/attachments":                               6.5,
	"GET /messages/attachments/:attachment_id":                 3.5,
	"GET /messages/action_guide/packs/:pack_id":                2.5,
	"GET /messages/action_guide/packs/:pack_id/caps_available": 2.5,
	"POST /messages/action_guide/packs/:pack_id/option":        5.5,
	"PUT /messages/mark_as_read/:message_ids":                  4.5,
	"GET /messages/orders/:order_id":                           1.5,
	"PUT /operator/messages/:message_id/moderation":            4.5,
}

// msgFixtures are what the messages' cases read, made once per world:
// a seller with an item, a buyer, a sale between them with a message of
// the buyer (read once by the seller), and an attachment of the buyer.
type msgFixtures struct {
	seller, buyer user
	item          string
	sale          sale
	message       string
	attachment    string
}

var msgState sync.Map // *world -> *msgFixtures

// msg returns the messages' fixtures, made at its first call.
func (w *world) msg() *msgFixtures {
	w.t.Helper()
	if f, ok := msgState.Load(w); ok {
		return f.(*msgFixtures)
	}
	f := &msgFixtures{seller: w.mustUser("normal"), buyer: w.mustUser("normal")}
	f.item = w.must(201, "POST", "/items", f.seller.Token, plainItemBody()).obj()["id"].(string)
	msgState.Store(w, f)
	f.sale = f.newSale(w)
	f.message = w.mustMessage(f.sale, "¿Cuándo llega?")
	w.must(200, "GET", w.convPath(f.sale, ""), f.seller.Token, nil)
	body, ct := uploadBody("foto.jpg", []byte("jpeg bytes"))
	res := w.serve(request{method: "POST", target: "/messages/attachments?tag=post_sale&site_id=MLA", token: f.buyer.Token,
		body: body, headers: map[string]string{"Content-Type": ct}})
	if res.status != 201 {
		w.t.Fatalf("upload: %d %s", res.status, res.raw)
	}
	f.attachment = res.obj()["id"].(string)
	return f
}

// newSale is a paid sale of the fixtures' item to their buyer.
func (f *msgFixtures) newSale(w *world) sale {
	w.t.Helper()
	return w.mustSale(map[string]any{"buyer_id": f.buyer.ID, "item_id": f.item, "quantity": 1})
}

func (w *world) convPath(s sale, extra string) string {
	return fmt.Sprintf("/messages/packs/%s/sellers/%d?tag=post_sale%s", s.pack, w.msg().seller.ID, extra)
}

func (w *world) buyerMessage(text string) map[string]any {
	f := w.msg()
	return map[string]any{"from": map[string]any{"user_id": f.buyer.ID}, "to": map[string]any{"user_id": f.seller.ID}, "text": text}
}

// mustMessage sends a message of the buyer in the conversation of s.
func (w *world) mustMessage(s sale, text string) string {
	w.t.Helper()
	return w.must(201, "POST", w.convPath(s, ""), w.msg().buyer.Token, w.buyerMessage(text)).obj()["id"].(string)
}

// uploadBody is a multipart form with the file data named name.
func uploadBody(name string, data []byte) (string, string) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	fw, _ := mw.CreateFormFile("file", name)
	_, _ = fw.Write(data)
	_ = mw.Close()
	return b.String(), mw.FormDataContentType()
}

var messagesCases = []routeCase{
	{method: "GET", path: "/messages/packs/:pack_id/sellers/:user_id", req: fixed(func(w *world) request {
		return get(w.convPath(w.msg().sale, ""), w.msg().seller.Token)
	})},
	{method: "POST", path: "/messages/packs/:pack_id/sellers/:user_id", req: func(w *world, i int) request {
		return byUser("POST", w.convPath(w.msg().sale, ""), w.msg().buyer, w.buyerMessage(fmt.Sprintf("¿Y el envío? (%d)", i)))
	}},
	{method: "GET", path: "/messages/:message_id", req: fixed(func(w *world) request {
		return get("/messages/"+w.msg().message+"?tag=post_sale", w.msg().seller.Token)
	})},
	{method: "GET", path: "/messages/unread", req: fixed(func(w *world) request {
		return get("/messages/unread?role=seller&tag=post_sale", w.msg().seller.Token)
	})},
	{method: "GET", path: "/messages/unread/packs/:pack_id/sellers/:user_id", req: fixed(func(w *world) request {
		return get(fmt.Sprintf("/messages/unread/packs/%s/sellers/%d?tag=post_sale", w.msg().sale.pack, w.msg().seller.ID), w.msg().seller.Token)
	})},
	{method: "POST", path: "/messages/attachments", req: func(w *world, i int) request {
		body, ct := uploadBody(fmt.Sprintf("foto-%d.png", i), []byte("png bytes"))
		return request{method: "POST", target: "/messages/attachments?tag=post_sale&site_id=MLA", token: w.msg().buyer.Token, body: body,
			headers: map[string]string{"Content-Type": ct}}
	}},
	{method: "GET", path: "/messages/attachments/:attachment_id", req: fixed(func(w *world) request {
		return get("/messages/attachments/"+w.msg().attachment+"?tag=post_sale&site_id=MLA", w.msg().buyer.Token)
	})},
	{method: "GET", path: "/messages/action_guide/packs/:pack_id", req: fixed(func(w *world) request {
		return get("/messages/action_guide/packs/"+w.msg().sale.pack+"?tag=post_sale", w.msg().seller.Token)
	})},
	{method: "GET", path: "/messages/action_guide/packs/:pack_id/caps_available", req: fixed(func(w *world) request {
		return get("/messages/action_guide/packs/"+w.msg().sale.pack+"/caps_available?tag=post_sale", w.msg().seller.Token)
	})},
	{method: "POST", path: "/messages/action_guide/packs/:pack_id/option", req: func(w *world, _ int) request {
		// An option sends once: each request is on a new sale.
		s := w.msg().newSale(w)
		return byUser("POST", "/messages/action_guide/packs/"+s.pack+"/option?tag=post_sale", w.msg().seller,
			map[string]any{"option_id": "REQUEST_BILLING_INFO", "template_id": "TEMPLATE___REQUEST_BILLING_INFO___1"})
	}},
	{method: "PUT", path: "/messages/mark_as_read/:message_ids", req: func(w *world, i int) request {
		id := w.mustMessage(w.msg().sale, fmt.Sprintf("¿Me leés? (%d)", i))
		return byUser("PUT", "/messages/mark_as_read/"+id, w.msg().seller, nil)
	}},
	{method: "GET", path: "/messages/orders/:order_id", status: 404, req: fixed(func(w *world) request {
		return get("/messages/orders/"+w.msg().sale.id, w.msg().seller.Token)
	})},
	{method: "PUT", path: "/operator/messages/:message_id/moderation", req: func(w *world, i int) request {
		id := w.mustMessage(w.msg().sale, fmt.Sprintf("Moderame (%d)", i))
		return op("PUT", "/operator/messages/"+id+"/moderation", map[string]any{"status": "rejected", "reason": "PERSONAL_DATA"})
	}},
}
