package httpapi_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/notify"
)

func init() {
	allRoutes = append(allRoutes,
		route{"GET", "/messages/packs/:pack_id/sellers/:user_id", []string{"tag", "limit", "offset", "mark_as_read"}, nil},
		route{"POST", "/messages/packs/:pack_id/sellers/:user_id", []string{"tag"}, []string{"from", "from.user_id", "to", "to.user_id", "to.resource", "to.site_id", "text", "attachments"}},
		route{"GET", "/messages/:message_id", []string{"tag"}, nil},
		route{"GET", "/messages/unread", []string{"tag", "role"}, nil},
		route{"GET", "/messages/unread/packs/:pack_id/sellers/:user_id", []string{"tag"}, nil},
		route{"POST", "/messages/attachments", []string{"tag", "site_id"}, nil},
		route{"GET", "/messages/attachments/:attachment_id", []string{"tag", "site_id"}, nil},
		route{"GET", "/messages/action_guide/packs/:pack_id", []string{"tag"}, nil},
		route{"GET", "/messages/action_guide/packs/:pack_id/caps_available", []string{"tag"}, nil},
		route{"POST", "/messages/action_guide/packs/:pack_id/option", []string{"tag"}, []string{"option_id", "template_id", "text", "vars", "vars.id", "vars.value"}},
		route{"PUT", "/messages/mark_as_read/:message_ids", nil, nil},
		route{"GET", "/messages/orders/:order_id", []string{"tag"}, nil},
		route{"PUT", "/operator/messages/:message_id/moderation", nil, []string{"status", "reason"}},
	)
}

// msgWorld is a seller with an item, a buyer who bought it once, and a
// user who is neither.
type msgWorld struct {
	*testServer
	seller, buyer, stranger user
	item                    string
	sale                    sale
}

func newMsgWorldOn(t *testing.T, ts *testServer) *msgWorld {
	t.Helper()
	w := &msgWorld{testServer: ts, seller: ts.mustUser("MLA"), buyer: ts.mustUser("MLA"), stranger: ts.mustUser("MLA")}
	w.item = ts.mustPlainItem(w.seller.Token, "Mate de calabaza", 900, 100)
	w.sale = w.buy()
	return w
}

func newMsgWorld(t *testing.T) *msgWorld { return newMsgWorldOn(t, newTestServer(t)) }

func (w *msgWorld) buy(extra ...any) sale {
	w.t.Helper()
	return w.mustSale(with(map[string]any{"buyer_id": w.buyer.ID, "item_id": w.item, "quantity": 1}, extra...))
}

// conv is the path of a sale's conversation, with the tag.
func (w *msgWorld) conv(s sale, extra string) string {
	return fmt.Sprintf("/messages/packs/%s/sellers/%d?tag=post_sale%s", s.pack, w.seller.ID, extra)
}

func (w *msgWorld) sendBody(from, to user, text string) map[string]any {
	return map[string]any{"from": map[string]any{"user_id": fmt.Sprint(from.ID)}, "to": map[string]any{"user_id": to.ID}, "text": text}
}

// mustSend posts text from one party to the other and returns the message.
func (w *msgWorld) mustSend(s sale, from, to user, text string) map[string]any {
	w.t.Helper()
	res := w.do("POST", w.conv(s, ""), from.Token, w.sendBody(from, to, text))
	if res.Status != http.StatusCreated {
		w.t.Fatalf("send: %d %s", res.Status, res.Raw)
	}
	return res.Obj()
}

func wantJSON(t testing.TB, res response, status int, body any) {
	t.Helper()
	if res.Status != status || !reflect.DeepEqual(res.Body, body) {
		t.Fatalf("got %d %s\nwant %d %v", res.Status, res.Raw, status, body)
	}
}

func TestMessagesRoutes_WithoutTagPostSaleTheAnswerIs404(t *testing.T) {
	w := newMsgWorld(t)
	want := map[string]any{"message": "Resource not found: the query parameter tag=post_sale is required", "error": "not_found",
		"status": float64(404), "cause": []any{}}
	for _, c := range []struct{ method, path string }{
		{"GET", fmt.Sprintf("/messages/packs/%s/sellers/%d", w.sale.pack, w.seller.ID)},
		{"POST", fmt.Sprintf("/messages/packs/%s/sellers/%d", w.sale.pack, w.seller.ID)},
		{"GET", "/messages/" + strings.Repeat("a", 32)},
		{"GET", "/messages/unread?role=seller"},
		{"GET", fmt.Sprintf("/messages/unread/packs/%s/sellers/%d?tag=sale", w.sale.pack, w.seller.ID)},
		{"POST", "/messages/attachments?site_id=MLA"},
		{"GET", "/messages/attachments/1_x.jpg?site_id=MLA"},
		{"GET", "/messages/action_guide/packs/" + w.sale.pack},
		{"GET", "/messages/action_guide/packs/" + w.sale.pack + "/caps_available"},
		{"POST", "/messages/action_guide/packs/" + w.sale.pack + "/option"},
	} {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			wantJSON(t, w.do(c.method, c.path, w.seller.Token, map[string]any{}), 404, want)
		})
	}
}

func TestPostMessage_TheBuyerWritesAndTheSellerReadsTheConversation(t *testing.T) {
	is := is.New(t)
	w := newMsgWorld(t)
	res := w.do("POST", w.conv(w.sale, ""), w.buyer.Token, w.sendBody(w.buyer, w.seller, "¿Cuándo llega mi compra?"))
	is.Equal(res.Status, http.StatusCreated)
	m := res.Obj()
	id := m["id"].(string)
	is.Equal(len(id), 32)
	at := "2026-03-04T15:00:00.000Z"
	wantJSON(t, res, 201, map[string]any{
		"id": id, "site_id": "MLA", "client_id": float64(0),
		"from": map[string]any{"user_id": float64(w.buyer.ID)}, "to": map[string]any{"user_id": float64(w.seller.ID)},
		"status": "available", "subject": nil, "text": "¿Cuándo llega mi compra?",
		"message_date":        map[string]any{"received": at, "available": at, "notified": at, "created": at, "read": nil},
		"message_moderation":  map[string]any{"status": "clean", "reason": nil, "source": "online", "moderation_date": at},
		"message_attachments": nil,
		"message_resources": []any{map[string]any{"id": w.sale.pack, "name": "packs"},
			map[string]any{"id": fmt.Sprint(w.seller.ID), "name": "sellers"}},
		"conversation_first_message": true,
	})
	w.clock.Advance(time.Minute)
	read := w.do("GET", w.conv(w.sale, ""), w.seller.Token, nil)
	is.Equal(read.Status, 200)
	c := read.Obj()
	is.Equal(c["paging"], map[string]any{"limit": float64(10), "offset": float64(0), "total": float64(1)})
	is.Equal(c["conversation_status"], map[string]any{"path": fmt.Sprintf("/packs/%s/sellers/%d", w.sale.pack, w.seller.ID),
		"status": "active", "substatus": nil, "status_date": at, "status_update_allowed": false, "claim_id": nil,
		"shipping_id": float64(mustNum(w.sale.shipment))})
	is.Equal(c["seller_max_message_length"], float64(350))
	is.Equal(c["buyer_max_message_length"], float64(3500))
	msgs := c["messages"].([]any)
	is.Equal(len(msgs), 1)
	is.Equal(msgs[0].(map[string]any)["message_date"].(map[string]any)["read"], "2026-03-04T15:01:00.000Z") // marked read
	// The seller now replies, by the order's id in the pack's place.
	reply := w.do("POST", fmt.Sprintf("/messages/packs/%s/sellers/%d?tag=post_sale", w.sale.id, w.seller.ID), w.seller.Token,
		map[string]any{"from": map[string]any{"user_id": w.seller.ID}, "to": map[string]any{"user_id": fmt.Sprint(w.buyer.ID)}, "text": "Mañana"})
	is.Equal(reply.Status, 201)
	is.Equal(reply.Obj()["conversation_first_message"], false)
	one := w.do("GET", "/messages/"+id+"?tag=post_sale", w.buyer.Token, nil)
	is.Equal(one.Status, 200)
	is.Equal(one.Obj()["paging"], nil)
	is.Equal(one.Obj()["conversation_status"], nil)
	is.Equal(one.Obj()["messages"].([]any)[0].(map[string]any)["id"], id)
}

func mustNum(s string) int64 {
	var n int64
	_, _ = fmt.Sscan(s, &n)
	return n
}

func TestPostMessage_ASellerStartingAnME2ConversationGetsTheMessagingBody(t *testing.T) {
	w := newMsgWorld(t)
	blocked := map[string]any{"status_code": float64(403), "code": "forbidden", "message": "blocked_conversation_send_message_forbidden"}
	wantJSON(t, w.do("POST", w.conv(w.sale, ""), w.seller.Token, w.sendBody(w.seller, w.buyer, "Hola")), 403, blocked)
	st := w.do("GET", w.conv(w.sale, "&mark_as_read=false"), w.seller.Token, nil).Obj()["conversation_status"].(map[string]any)
	if st["status"] != "blocked" || st["substatus"] != "blocked_by_conversation_initiated_by_seller_limited" {
		t.Fatalf("status = %v", st)
	}
	unpaid := w.buy("status", "payment_required")
	wantJSON(t, w.do("POST", w.conv(unpaid, ""), w.buyer.Token, w.sendBody(w.buyer, w.seller, "¿Pago?")), 403, blocked)
}

func TestPostMessage_TheSpecsErrors(t *testing.T) {
	w := newMsgWorld(t)
	path := w.conv(w.sale, "")
	long := strings.Repeat("a", 3501)
	for _, c := range []struct {
		name, path, token string
		body              any
		status            int
		code, message     string
	}{
		{"NoBody", path, w.buyer.Token, "", 400, "bad_request", "A JSON body is required"},
		{"NotAnObject", path, w.buyer.Token, "[1]", 400, "bad_request", "Malformed JSON body: a JSON object is expected"},
		{"NoFrom", path, w.buyer.Token, map[string]any{"text": "x"}, 400, "bad_request", "The field 'from' is required"},
		{"NoTo", path, w.buyer.Token, map[string]any{"from": map[string]any{"user_id": w.buyer.ID}, "text": "x"}, 400, "bad_request", "The field 'to.user_id' is required"},
		{"BadTo", path, w.buyer.Token, map[string]any{"from": map[string]any{"user_id": w.buyer.ID}, "to": map[string]any{"user_id": "me"}, "text": "x"}, 400, "bad_request", "Invalid 'to' user id"},
		{"NoText", path, w.buyer.Token, map[string]any{"from": map[string]any{"user_id": w.buyer.ID}, "to": map[string]any{"user_id": w.seller.ID}}, 400, "bad_request", "The field 'text' is required"},
		{"Same", path, w.buyer.Token, w.sendBody(w.buyer, w.buyer, "x"), 400, "bad_request", "Sender and received must not be equals"},
		{"TooLong", path, w.buyer.Token, w.sendBody(w.buyer, w.seller, long), 400, "bad_request", "The message content is too long, max characters allowed are 3500"},
		{"Unsupported", path, w.buyer.Token, w.sendBody(w.buyer, w.seller, "中文"), 400, "bad_request", "The text has character/s that is/are not supported."},
		{"FromNotCaller", path, w.buyer.Token, w.sendBody(w.stranger, w.seller, "x"), 403, "forbidden", fmt.Sprintf("Access denied for user %d to order %s", w.stranger.ID, w.sale.id)},
		{"Stranger", path, w.stranger.Token, w.sendBody(w.stranger, w.seller, "x"), 403, "forbidden", fmt.Sprintf("Access denied for user %d to order %s", w.stranger.ID, w.sale.id)},
		{"NotTheBuyer", path, w.seller.Token, w.sendBody(w.seller, w.stranger, "x"), 403, "forbidden", "Receiver does not belong to order " + w.sale.id},
		{"WrongSeller", fmt.Sprintf("/messages/packs/%s/sellers/%d?tag=post_sale", w.sale.pack, w.stranger.ID), w.buyer.Token, w.sendBody(w.buyer, w.seller, "x"), 403, "forbidden", "User access token invalid for resource " + w.sale.pack},
		{"UnknownPack", fmt.Sprintf("/messages/packs/2100000000009999/sellers/%d?tag=post_sale", w.seller.ID), w.buyer.Token, w.sendBody(w.buyer, w.seller, "x"), 404, "not_found", "The pack 2100000000009999 was not found"},
		{"BadPack", fmt.Sprintf("/messages/packs/abc/sellers/%d?tag=post_sale", w.seller.ID), w.buyer.Token, w.sendBody(w.buyer, w.seller, "x"), 400, "bad_request", "Invalid pack_id: abc. It must be a positive integer"},
		{"Attachment", path, w.buyer.Token, with(w.sendBody(w.buyer, w.seller, "x"), "attachments", []string{"1_nope.jpg"}), 422, "unprocessable_entity", "Attachment key is invalid or not found"},
		{"NoToken", path, "", w.sendBody(w.buyer, w.seller, "x"), 401, "unauthorized", msgNoToken},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantBody(t, w.do("POST", c.path, c.token, c.body), c.status, c.code, c.message, nil)
		})
	}
}

func TestPostMessage_AKeyedRetryGetsTheFirstAnswerAndWritesOnce(t *testing.T) {
	is := is.New(t)
	w := newMsgWorld(t)
	body := w.sendBody(w.buyer, w.seller, "hola")
	first := w.do("POST", w.conv(w.sale, ""), w.buyer.Token, body, "X-Idempotency-Key", "msg-1")
	again := w.do("POST", w.conv(w.sale, ""), w.buyer.Token, body, "X-Idempotency-Key", "msg-1")
	is.Equal(first.Status, 201)
	is.Equal(again.Raw, first.Raw)
	c := w.do("GET", w.conv(w.sale, "&mark_as_read=false"), w.seller.Token, nil).Obj()
	is.Equal(c["paging"].(map[string]any)["total"], float64(1))
}

func TestGetConversation_TheSpecsErrors(t *testing.T) {
	w := newMsgWorld(t)
	for _, c := range []struct {
		name, path, token string
		status            int
		code, message     string
	}{
		{"LimitZero", w.conv(w.sale, "&limit=0"), w.seller.Token, 400, "bad_request", "The limit param must be greater than 0"},
		{"LimitText", w.conv(w.sale, "&limit=ten"), w.seller.Token, 400, "bad_request", "Invalid limit param"},
		{"Offset", w.conv(w.sale, "&offset=-1"), w.seller.Token, 400, "bad_request", "Invalid offset param"},
		{"Stranger", w.conv(w.sale, ""), w.stranger.Token, 403, "forbidden", "User access token invalid for resource " + w.sale.pack},
		{"UnknownPack", fmt.Sprintf("/messages/packs/42/sellers/%d?tag=post_sale", w.seller.ID), w.seller.Token, 404, "not_found", "The pack 42 was not found"},
		{"BadSeller", fmt.Sprintf("/messages/packs/%s/sellers/x?tag=post_sale", w.sale.pack), w.seller.Token, 400, "bad_request", "Invalid seller_id: x. It must be a positive integer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantBody(t, w.do("GET", c.path, c.token, nil), c.status, c.code, c.message, nil)
		})
	}
}

func TestGetMessage_OnlyThePartiesReadIt(t *testing.T) {
	w := newMsgWorld(t)
	id := w.mustSend(w.sale, w.buyer, w.seller, "hola")["id"].(string)
	wantBody(t, w.do("GET", "/messages/"+id+"?tag=post_sale", w.stranger.Token, nil), 403, "forbidden",
		fmt.Sprintf("Access denied for user %d to message with id %s", w.stranger.ID, id), nil)
	badRequest(t, w.do("GET", "/messages/"+strings.Repeat("0", 32)+"?tag=post_sale", w.seller.Token, nil), "The specified message id does not exists")
	badRequest(t, w.do("GET", "/messages/nope?tag=post_sale", w.seller.Token, nil), "The specified message id does not exists")
}

func TestUnread_TheCallersConversationsWithUnreadMessages(t *testing.T) {
	w := newMsgWorld(t)
	other := w.buy()
	w.mustSend(w.sale, w.buyer, w.seller, "a")
	w.mustSend(w.sale, w.buyer, w.seller, "b")
	w.mustSend(other, w.buyer, w.seller, "c")
	res := func(s sale) string { return fmt.Sprintf("/packs/%s/sellers/%d", s.pack, w.seller.ID) }
	wantJSON(t, w.do("GET", "/messages/unread?role=seller&tag=post_sale", w.seller.Token, nil), 200, map[string]any{
		"user_id": float64(w.seller.ID), "results": []any{
			map[string]any{"resource": res(w.sale), "count": float64(2)}, map[string]any{"resource": res(other), "count": float64(1)}}})
	wantJSON(t, w.do("GET", "/messages/unread?role=buyer&tag=post_sale", w.buyer.Token, nil), 200, map[string]any{
		"user_id": float64(w.buyer.ID), "results": []any{}})
	path := fmt.Sprintf("/messages/unread/packs/%s/sellers/%d?tag=post_sale", other.pack, w.seller.ID)
	wantJSON(t, w.do("GET", path, w.seller.Token, nil), 200, map[string]any{
		"user_id": float64(w.seller.ID), "results": []any{map[string]any{"resource": res(other), "count": float64(1)}}})
	wantBody(t, w.do("GET", path, w.stranger.Token, nil), 403, "forbidden", "User access token invalid for resource "+other.pack, nil)
	// Reading the conversation empties its count.
	w.do("GET", w.conv(other, ""), w.seller.Token, nil)
	wantJSON(t, w.do("GET", path, w.seller.Token, nil), 200, map[string]any{"user_id": float64(w.seller.ID), "results": []any{}})
}

// multipartUpload is a multipart body with a part "file" named name.
func multipartUpload(t testing.TB, field, name, contentType string, data []byte) (*bytes.Buffer, string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename=%q`, field, name))
	if contentType != "" {
		h.Set("Content-Type", contentType)
	}
	pw, err := mw.CreatePart(h)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = pw.Write(data)
	_ = mw.Close()
	return &b, mw.FormDataContentType()
}

func (w *msgWorld) upload(token, query, field, name, contentType string, data []byte) response {
	w.t.Helper()
	body, ct := multipartUpload(w.t, field, name, contentType, data)
	return w.do("POST", "/messages/attachments?tag=post_sale"+query, token, body.Bytes(), "Content-Type", ct)
}

func TestAttachments_AnUploadIsReadBackWithItsBytesAndType(t *testing.T) {
	is := is.New(t)
	w := newMsgWorld(t)
	data := bytes.Repeat([]byte("%PDF-1.4 factura "), 40000) // 680 KB: three chunks
	res := w.upload(w.buyer.Token, "&site_id=MLA", "file", "Factura.pdf", "application/pdf", data)
	is.Equal(res.Status, 201)
	id := res.Obj()["id"].(string)
	is.True(strings.HasPrefix(id, fmt.Sprint(w.buyer.ID)+"_") && strings.HasSuffix(id, ".pdf"))
	req := httptest.NewRequest("GET", "/messages/attachments/"+id+"?tag=post_sale&site_id=MLA", nil)
	req.Header.Set("Authorization", "Bearer "+w.buyer.Token)
	rec := httptest.NewRecorder()
	w.handler.ServeHTTP(rec, req)
	is.Equal(rec.Code, 200)
	is.Equal(rec.Header().Get("Content-Type"), "application/pdf")
	is.Equal(rec.Header().Get("Content-Length"), fmt.Sprint(len(data)))
	is.Equal(sha256.Sum256(rec.Body.Bytes()), sha256.Sum256(data))
	// Linked to a message, the seller reads it too.
	sent := w.do("POST", w.conv(w.sale, ""), w.buyer.Token, with(w.sendBody(w.buyer, w.seller, "la factura"), "attachments", []string{id}))
	is.Equal(sent.Status, 201)
	att := sent.Obj()["message_attachments"].([]any)[0].(map[string]any)
	is.Equal(att, map[string]any{"filename": id, "original_filename": "Factura.pdf", "type": "application/pdf",
		"size": float64(len(data)), "potential_security_threat": false, "creation_date": "2026-03-04T15:00:00.000Z"})
	req.Header.Set("Authorization", "Bearer "+w.seller.Token)
	rec = httptest.NewRecorder()
	w.handler.ServeHTTP(rec, req)
	is.Equal(rec.Code, 200)
	got, _ := io.ReadAll(rec.Body)
	is.Equal(len(got), len(data))
	wantBody(t, w.do("GET", "/messages/attachments/"+id+"?tag=post_sale&site_id=MLA", w.stranger.Token, nil), 404, "not_found",
		"The attachment "+id+" was not found", nil)
}

func TestAttachments_TheSpecsErrors(t *testing.T) {
	w := newMsgWorld(t)
	for _, c := range []struct {
		name, query, field, file string
		data                     []byte
		message                  string
	}{
		{"NoSite", "", "file", "a.jpg", []byte("x"), "The queryparam 'site_id' is required"},
		{"UnknownSite", "&site_id=XYZ", "file", "a.jpg", []byte("x"), "Invalid site_id: 'XYZ' is not a recognized site"},
		{"Empty", "&site_id=MLA", "file", "a.jpg", nil, "File attached is empty"},
		{"NoFilePart", "&site_id=MLA", "photo", "a.jpg", []byte("x"), "File attached is empty"},
		{"Slash", "&site_id=MLA", "file", "dir/a.jpg", []byte("x"), `File name cannot include characters like /, \`},
		{"LongName", "&site_id=MLA", "file", strings.Repeat("a", 201) + ".jpg", []byte("x"), "The original_filename exceeded 200 character limit"},
		{"Format", "&site_id=MLA", "file", "a.gif", []byte("x"), "The file format is not supported: the formats allowed are JPG, PNG, PDF and TXT"},
	} {
		t.Run(c.name, func(t *testing.T) {
			badRequest(t, w.upload(w.buyer.Token, c.query, c.field, c.file, "", c.data), c.message)
		})
	}
	badRequest(t, w.do("POST", "/messages/attachments?tag=post_sale&site_id=MLA", w.buyer.Token, map[string]any{"file": "x"}), "File attached is empty")
	wantBody(t, w.do("GET", "/messages/attachments/1_x.jpg?tag=post_sale", w.buyer.Token, nil), 400, "bad_request", "The queryparam 'site_id' is required", nil)
	wantBody(t, w.do("GET", "/messages/attachments/1_x.jpg?tag=post_sale&site_id=MLA", w.buyer.Token, nil), 404, "not_found", "The attachment 1_x.jpg was not found", nil)
}

func TestActionGuide_OptionsCapsAndTheOptionsMessage(t *testing.T) {
	is := is.New(t)
	w := newMsgWorld(t)
	guide := "/messages/action_guide/packs/" + w.sale.pack
	res := w.do("GET", guide+"?tag=post_sale", w.seller.Token, nil)
	is.Equal(res.Status, 200)
	opts := res.Obj()["options"].([]any)
	is.Equal(len(opts), 4)
	is.Equal(opts[0], map[string]any{"id": "REQUEST_VARIANTS", "internal_description": "Ask variant data", "enabled": true, "type": "template",
		"templates": []any{map[string]any{"id": "TEMPLATE___REQUEST_VARIANTS___1", "vars": nil, "texts": map[string]any{"mla": map[string]any{
			"html": "Hola, necesitamos que nos confirmes las características del producto que compraste (color, talle o modelo) para preparar tu envío."}}}},
		"actionable": true, "char_limit": nil, "child_options": nil, "cap_available": float64(1)})
	is.Equal(opts[3], map[string]any{"id": "OTHER", "internal_description": "Free text", "enabled": true, "type": "free_text",
		"templates": nil, "actionable": true, "char_limit": float64(350), "child_options": nil, "cap_available": float64(1)})
	sent := w.do("POST", guide+"/option?tag=post_sale", w.seller.Token, map[string]any{"option_id": "OTHER", "text": "¡Gracias por tu compra!"})
	is.Equal(sent.Status, 201)
	at := "2026-03-04T15:00:00.000Z"
	wantJSON(t, sent, 201, map[string]any{"id": sent.Obj()["id"], "to": map[string]any{"user_id": float64(w.buyer.ID), "name": "Test User"},
		"status": "available", "text": "¡Gracias por tu compra!",
		"message_date":       map[string]any{"received": at, "available": at, "notified": at, "created": at, "read": nil},
		"message_moderation": map[string]any{"status": "clean", "reason": nil, "source": "online", "moderation_date": at}})
	caps := w.do("GET", guide+"/caps_available?tag=post_sale", w.seller.Token, nil)
	wantJSON(t, caps, 200, []any{
		map[string]any{"option_id": "REQUEST_VARIANTS", "cap_available": float64(1)}, map[string]any{"option_id": "REQUEST_BILLING_INFO", "cap_available": float64(1)},
		map[string]any{"option_id": "SEND_INVOICE_LINK", "cap_available": float64(1)}, map[string]any{"option_id": "OTHER", "cap_available": float64(0)}})
	wantJSON(t, w.do("POST", guide+"/option?tag=post_sale", w.seller.Token, map[string]any{"option_id": "OTHER", "text": "otra vez"}), 403,
		map[string]any{"cause": "bad_request", "error": "bad_request", "message": "You are not allowed to execute the option OTHER again", "status_code": float64(403)})
	wantJSON(t, w.do("POST", guide+"/option?tag=post_sale", w.seller.Token, map[string]any{"option_id": "NOPE"}), 404,
		map[string]any{"cause": "not_found", "error": "not_found", "message": "The option selected is not valid", "status_code": float64(404)})
	wantJSON(t, w.do("POST", guide+"/option?tag=post_sale", w.seller.Token, map[string]any{"option_id": "SEND_INVOICE_LINK", "text": strings.Repeat("a", 351)}), 400,
		map[string]any{"cause": "limit_exceeded", "error": "limit_exceeded", "message": "The text is invalid", "status_code": float64(400)})
	wantJSON(t, w.do("POST", guide+"/option?tag=post_sale", w.seller.Token, map[string]any{"option_id": "REQUEST_BILLING_INFO", "template_id": "X"}), 400,
		map[string]any{"cause": "bad_request", "error": "bad_request", "message": "The template X is invalid", "status_code": float64(400)})
	wantJSON(t, w.do("GET", guide+"?tag=post_sale", w.buyer.Token, nil), 403,
		map[string]any{"cause": "forbidden", "error": "forbidden", "message": "You are not allowed to access the information of the pack " + w.sale.pack, "status_code": float64(403)})
	w.mustSend(w.sale, w.buyer, w.seller, "Hola")
	wantJSON(t, w.do("POST", guide+"/option?tag=post_sale", w.seller.Token, map[string]any{"option_id": "REQUEST_BILLING_INFO", "template_id": "TEMPLATE___REQUEST_BILLING_INFO___1"}), 403,
		map[string]any{"cause": "blocked_by_conversation_use_message_api", "error": "forbidden",
			"message": "This package has the conversation blocked, please check blocked messages", "status_code": float64(403)})
	unpaid := w.buy("status", "payment_required")
	wantJSON(t, w.do("POST", "/messages/action_guide/packs/"+unpaid.pack+"/option?tag=post_sale", w.seller.Token, map[string]any{"option_id": "OTHER", "text": "x"}), 403,
		map[string]any{"cause": "blocked_by_payment", "error": "forbidden", "message": "The conversation is blocked", "status_code": float64(403)})
	wantBody(t, w.do("GET", "/messages/action_guide/packs/42?tag=post_sale", w.seller.Token, nil), 404, "not_found", "The pack 42 was not found", nil)
}

func TestMarkAsRead_TheOlderRouteMarksTheCallersMessages(t *testing.T) {
	w := newMsgWorld(t)
	a := w.mustSend(w.sale, w.buyer, w.seller, "a")["id"].(string)
	b := w.mustSend(w.sale, w.buyer, w.seller, "b")["id"].(string)
	wantJSON(t, w.do("PUT", "/messages/mark_as_read/"+a+","+b, w.seller.Token, nil), 200, map[string]any{})
	wantJSON(t, w.do("GET", "/messages/unread?tag=post_sale", w.seller.Token, nil), 200, map[string]any{"user_id": float64(w.seller.ID), "results": []any{}})
	other := w.mustSend(w.buy(), w.buyer, w.seller, "c")["id"].(string)
	badRequest(t, w.do("PUT", "/messages/mark_as_read/"+a+","+other, w.seller.Token, nil), "Not allowed messages from multiple orders")
	badRequest(t, w.do("PUT", "/messages/mark_as_read/x,y", w.seller.Token, nil), "Messages id empty or invalid")
	missing := strings.Repeat("e", 32)
	badRequest(t, w.do("PUT", "/messages/mark_as_read/"+missing, w.seller.Token, nil), "The specified message id: "+missing+" does not exists")
	wantBody(t, w.do("PUT", "/messages/mark_as_read/"+a, w.stranger.Token, nil), 403, "forbidden",
		fmt.Sprintf("Access denied for user %d to message with id %s", w.stranger.ID, a), nil)
}

func TestRemovedOrderMessages_AnswerResourceNotFound(t *testing.T) {
	w := newMsgWorld(t)
	wantBody(t, w.do("GET", "/messages/orders/"+w.sale.id+"?tag=post_sale", w.seller.Token, nil), 404, "not_found", "Resource not found.", nil)
	wantBody(t, w.do("GET", "/messages/orders/"+w.sale.id, w.seller.Token, nil), 404, "not_found", "Resource not found.", nil)
}

func TestOperatorModeration_TheVerdictShowsOrHidesAMessage(t *testing.T) {
	is := is.New(t)
	w := newMsgWorld(t)
	m := w.mustSend(w.sale, w.buyer, w.seller, "hola MODERATE_ME")
	id := m["id"].(string)
	is.Equal(m["status"], "moderated")
	is.Equal(m["message_moderation"].(map[string]any)["reason"], "OUT_OF_PLACE_LANGUAGE")
	is.Equal(m["message_date"].(map[string]any)["available"], nil)
	path := "/operator/messages/" + id + "/moderation"
	seen := func() float64 {
		return w.do("GET", w.conv(w.sale, "&mark_as_read=false"), w.seller.Token, nil).Obj()["paging"].(map[string]any)["total"].(float64)
	}
	is.Equal(seen(), float64(0))
	res := w.operator("PUT", path, map[string]any{"status": "clean"})
	is.Equal(res.Status, 200)
	is.Equal(res.Obj()["status"], "available")
	is.Equal(seen(), float64(1))
	res = w.operator("PUT", path, map[string]any{"status": "rejected", "reason": "SOCIAL_NETWORK_LINK"})
	is.Equal(res.Obj()["message_moderation"].(map[string]any)["reason"], "SOCIAL_NETWORK_LINK")
	is.Equal(seen(), float64(0))
	badRequest(t, w.operator("PUT", path, map[string]any{"status": "spam"}), "Invalid status: spam. Valid values are: [clean, rejected]")
	badRequest(t, w.operator("PUT", path, map[string]any{}), "The field [status] is required: clean or rejected")
	wantBody(t, w.operator("PUT", "/operator/messages/"+strings.Repeat("b", 32)+"/moderation", map[string]any{"status": "clean"}), 404,
		"not_found", "Message "+strings.Repeat("b", 32)+" not found", nil)
	wantBody(t, w.do("PUT", path, w.seller.Token, map[string]any{"status": "clean"}), 403, "forbidden", "Operator routes need the operator token", nil)
}

func TestMessagesNotifications_CreatedGoesToTheRecipientAndReadToTheSender(t *testing.T) {
	is := is.New(t)
	w := newMsgWorldOn(t, newNotifyServer(t))
	sellerRcv, buyerRcv := newRecorder(t), newRecorder(t)
	for _, s := range []struct {
		owner user
		rc    *recorder
	}{{w.seller, sellerRcv}, {w.buyer, buyerRcv}} {
		res := w.do("POST", "/operator/applications", testOperatorToken, map[string]any{"name": "Messages app", "owner_user_id": s.owner.ID,
			"callback_url": s.rc.srv.URL + "/notifications", "topics": []string{notify.TopicMessages}})
		is.Equal(res.Status, 201)
	}
	id := w.mustSend(w.sale, w.buyer, w.seller, "hola")["id"].(string)
	w.deliver()
	got := sellerRcv.take()
	is.Equal(len(got), 1)
	is.Equal(got[0].Body["topic"], "messages")
	is.Equal(got[0].Body["resource"], id)
	is.Equal(got[0].Body["user_id"], float64(w.seller.ID))
	is.Equal(got[0].Body["actions"], []any{"created"})
	is.Equal(len(buyerRcv.take()), 0)
	w.do("GET", w.conv(w.sale, ""), w.seller.Token, nil)
	w.deliver()
	got = buyerRcv.take()
	is.Equal(len(got), 1)
	is.Equal(got[0].Body["resource"], id)
	is.Equal(got[0].Body["actions"], []any{"read"})
	is.Equal(got[0].Body["user_id"], float64(w.buyer.ID))
}
