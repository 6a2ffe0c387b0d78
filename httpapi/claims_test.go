package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func init() {
	claimPaths := []string{"/detail", "/messages", "/attachments", "/expected-resolutions", "/partial-refund/available-offers",
		"/evidences", "/actions-history", "/status-history", "/history", "/status_history", "/affects-reputation", "/changes"}
	for _, p := range claimPaths {
		allRoutes = append(allRoutes, route{"GET", "/post-purchase/v1/claims/:claim_id" + p, nil, nil})
	}
	evidence := []string{"type", "shipping_method", "shipping_company_name", "date_shipped", "date_delivered", "destination_agency",
		"receiver_email", "receiver_id", "receiver_name", "tracking_number", "handling_date", "attachments"}
	allRoutes = append(allRoutes,
		route{"GET", "/post-purchase/v1/claims/search", []string{"id", "type", "stage", "status", "resource", "resource_id", "reason_id", "site_id",
			"players.role", "players.user_id", "order_id", "pack_id", "payment_id", "parent_id", "date_created", "last_updated", "range", "sort"}, nil},
		route{"GET", "/post-purchase/v1/claims/:claim_id", nil, nil},
		route{"GET", "/post-purchase/v1/claims/reasons/:reason_id", []string{"flow", "delivered", "deep", "name"}, nil},
		route{"POST", "/post-purchase/v1/claims/:claim_id/messages", nil, []string{"message"}},
		route{"POST", "/post-purchase/v1/claims/:claim_id/actions/send-message", nil, []string{"receiver_role", "message", "attachments"}},
		route{"POST", "/post-purchase/v1/claims/:claim_id/attachments", nil, nil},
		route{"GET", "/post-purchase/v1/claims/:claim_id/attachments/:filename", nil, nil},
		route{"GET", "/post-purchase/v1/claims/:claim_id/attachments/:filename/download", nil, nil},
		route{"POST", "/post-purchase/v1/claims/:claim_id/actions/open-dispute", nil, nil},
		route{"POST", "/post-purchase/v1/claims/:claim_id/expected-resolutions/partial-refund", nil, []string{"percentage"}},
		route{"POST", "/post-purchase/v1/claims/:claim_id/expected-resolutions/refund", nil, nil},
		route{"POST", "/post-purchase/v1/claims/:claim_id/expected-resolutions/allow-return", nil, nil},
		route{"POST", "/post-purchase/v1/claims/:claim_id/expected-resolutions/allow-replace", nil, nil},
		route{"POST", "/post-purchase/v1/claims/:claim_id/actions/evidences", nil, evidence},
		route{"POST", "/post-purchase/v1/claims/:claim_id/evidences", nil, evidence},
		route{"POST", "/post-purchase/v1/claims/:claim_id/attachments-evidences", nil, nil},
		route{"GET", "/post-purchase/v1/claims/:claim_id/attachments-evidences/:file_name", nil, nil},
		route{"GET", "/post-purchase/v1/claims/:claim_id/attachments-evidences/:file_name/download", nil, nil},
		route{"GET", "/post-purchase/v1/claims/:claim_id/charges/return-cost", []string{"calculate_amount_usd"}, nil},
		route{"GET", "/post-purchase/v2/claims/:claim_id/returns", nil, nil},
		route{"GET", "/post-purchase/v1/returns/:return_id/reviews", nil, nil},
		route{"POST", "/post-purchase/v1/returns/:return_id/return-review", nil, []string{"reason", "message", "attachments", "order_id"}},
		route{"GET", "/post-purchase/v1/returns/reasons", []string{"flow", "claim_id"}, nil},
		route{"POST", "/post-purchase/v1/claims/:claim_id/returns/attachments", nil, nil},
		route{"POST", "/operator/claims", nil, []string{"order_id", "reason_id", "type", "quantity", "expected_resolution"}},
		route{"POST", "/operator/claims/:claim_id/actions", nil, []string{"role", "action", "message", "resolution", "resolution.reason", "resolution.benefited"}},
		route{"PUT", "/operator/returns/:return_id/status", nil, []string{"status"}},
	)
}

// claimWorld is a sale world whose buyer received its order, and a claim
// path builder.
type claimWorld struct {
	*saleWorld
	sale sale
}

func newClaimWorld(t *testing.T) *claimWorld {
	t.Helper()
	w := &claimWorld{saleWorld: newSaleWorld(t)}
	w.sale = w.buy(1)
	w.deliver(w.sale)
	return w
}

func (w *claimWorld) deliver(s sale) {
	w.ts.t.Helper()
	for _, st := range []string{"shipped", "delivered"} {
		if res := w.ts.operator("PUT", "/operator/shipments/"+s.shipment+"/status", map[string]any{"status": st}); res.Status != http.StatusOK {
			w.ts.t.Fatalf("move shipment to %s: %d %s", st, res.Status, res.Raw)
		}
	}
}

// open opens a claim of reason on s and returns its id as a path segment.
func (w *claimWorld) open(s sale, reason string) string {
	w.ts.t.Helper()
	res := w.ts.operator("POST", "/operator/claims", map[string]any{"order_id": json.Number(s.id), "reason_id": reason})
	if res.Status != http.StatusCreated {
		w.ts.t.Fatalf("open claim: %d %s", res.Status, res.Raw)
	}
	return idString(res.Obj()["id"])
}

// wantClaimJSON checks the status of res and that its body is the JSON want.
func wantClaimJSON(t *testing.T, res response, status int, want string) {
	t.Helper()
	if res.Status != status {
		t.Fatalf("status = %d, want %d; body %s", res.Status, status, res.Raw)
	}
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want is not JSON: %v", err)
	}
	if !reflect.DeepEqual(res.Body, w) {
		t.Fatalf("body\n %s\nwant\n %s", res.Raw, want)
	}
}

// wantReturnsError checks an error of the routes of returns (variant C).
func wantReturnsError(t *testing.T, res response, status int, code, message string) {
	t.Helper()
	wantClaimJSON(t, res, status, fmt.Sprintf(`{"code":%d,"error":%q,"message":%q,"cause":null}`, status, code, message))
}

// upload posts file as the multipart part "file" named name.
func (ts *testServer) uploadClaimFile(path, token, name string, file []byte) response {
	ts.t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	part, err := mw.CreateFormFile("file", name)
	if err != nil {
		ts.t.Fatal(err)
	}
	part.Write(file)
	mw.Close()
	return ts.do("POST", path, token, b.Bytes(), "Content-Type", mw.FormDataContentType())
}

func TestClaimRoutes_TheOperatorOpensAClaimItsPlayersRead(t *testing.T) {
	w := newClaimWorld(t)
	res := w.ts.operator("POST", "/operator/claims", map[string]any{"order_id": json.Number(w.sale.id), "reason_id": "PDD9549", "ignored": true})
	want := fmt.Sprintf(`{"id":5000000001,"resource_id":%s,"status":"opened","type":"mediations","stage":"claim","parent_id":null,
		"resource":"order","reason_id":"PDD9549","fulfilled":true,"quantity_type":"total","claimed_quantity":1,"claim_version":2.0,
		"players":[
		 {"role":"complainant","type":"buyer","user_id":%d,"available_actions":[
		  {"action":"send_message_to_respondent","mandatory":false,"due_date":null},{"action":"open_dispute","mandatory":false,"due_date":null}]},
		 {"role":"respondent","type":"seller","user_id":%d,"available_actions":[
		  {"action":"send_message_to_complainant","mandatory":true,"due_date":"2026-03-06T12:00:00.000-03:00"},
		  {"action":"refund","mandatory":false,"due_date":null},{"action":"allow_return","mandatory":false,"due_date":null},
		  {"action":"allow_partial_refund","mandatory":false,"due_date":null},{"action":"open_dispute","mandatory":false,"due_date":null}]}],
		"resolution":null,"site_id":"MLA","date_created":"2026-03-04T12:00:00.000-03:00","last_updated":"2026-03-04T12:00:00.000-03:00",
		"related_entities":[]}`, w.sale.id, w.buyer.ID, w.seller.ID)
	wantClaimJSON(t, res, http.StatusCreated, want)
	if !bytes.Contains(res.Raw, []byte(`"claim_version":2.0`)) {
		t.Errorf("claim_version is not written 2.0: %s", res.Raw)
	}
	for _, u := range []user{w.seller, w.buyer} {
		wantClaimJSON(t, w.ts.do("GET", "/post-purchase/v1/claims/5000000001", u.Token, nil), http.StatusOK, want)
	}
	wantClaimJSON(t, w.ts.do("GET", "/post-purchase/v1/claims/5000000001", w.stranger.Token, nil), http.StatusForbidden,
		`{"message":"You don't have permission to access the resource","error":"forbidden_error","status":403,"cause":[]}`)
	wantClaimJSON(t, w.ts.do("GET", "/post-purchase/v1/claims/5999999999", w.seller.Token, nil), http.StatusNotFound,
		`{"message":"Resource not found","error":"business_logic_error","status":404,"cause":[]}`)
	wantError(t, w.ts.do("GET", "/post-purchase/v1/claims/abc", w.seller.Token, nil), http.StatusBadRequest, "Invalid claim_id: abc. It must be a positive integer")
	wantError(t, w.ts.do("GET", "/post-purchase/v1/claims/5000000001", "", nil), http.StatusUnauthorized, "Missing access token: send Authorization: Bearer <token>")
	wantError(t, w.ts.operator("POST", "/operator/claims", map[string]any{"order_id": json.Number(w.sale.id), "reason_id": "PDD9549"}),
		http.StatusBadRequest, fmt.Sprintf("Order %s already has the opened claim 5000000001", w.sale.id))
	wantError(t, w.ts.operator("POST", "/operator/claims", map[string]any{"reason_id": "PDD9549"}),
		http.StatusBadRequest, "The field [order_id] is required: the id of the order claimed")
	wantError(t, w.ts.do("POST", "/operator/claims", w.seller.Token, map[string]any{"order_id": 1}), http.StatusForbidden, "Operator routes need the operator token")
	order := w.ts.do("GET", "/orders/"+w.sale.id, w.seller.Token, nil).Obj()
	if !reflect.DeepEqual(order["mediations"], []any{map[string]any{"id": float64(5000000001)}}) || !strings.Contains(fmt.Sprint(order["tags"]), "claim_opened") {
		t.Errorf("order mediations %v tags %v", order["mediations"], order["tags"])
	}
}

func TestClaimRoutes_SearchFindsTheCallersClaims(t *testing.T) {
	w := newClaimWorld(t)
	id := w.open(w.sale, "PDD9549")
	other := w.buy(1)
	w.ts.clock.Advance(time.Minute)
	id2 := w.open(other, "PNR3430")
	q := fmt.Sprintf("/post-purchase/v1/claims/search?players.role=respondent&players.user_id=%d&status=opened", w.seller.ID)
	res := w.ts.do("GET", q, w.seller.Token, nil)
	if res.Status != http.StatusOK {
		t.Fatalf("search: %d %s", res.Status, res.Raw)
	}
	if p := res.Obj()["paging"]; fmt.Sprint(p) != "map[limit:30 offset:0 total:2]" {
		t.Errorf("paging %v", p)
	}
	data := res.Obj()["data"].([]any)
	if len(data) != 2 || idString(data[0].(map[string]any)["id"]) != id2 || idString(data[1].(map[string]any)["id"]) != id {
		t.Errorf("data %s", res.Raw)
	}
	res = w.ts.do("GET", "/post-purchase/v1/claims/search?order_id="+w.sale.id+"&limit=500", w.buyer.Token, nil)
	if p := res.Obj()["paging"]; res.Status != http.StatusOK || fmt.Sprint(p) != "map[limit:100 offset:0 total:1]" {
		t.Errorf("by order: %d %v", res.Status, p)
	}
	wantClaimJSON(t, w.ts.do("GET", "/post-purchase/v1/claims/search?order_id="+w.sale.id, w.stranger.Token, nil), http.StatusOK,
		`{"paging":{"total":0,"offset":0,"limit":30},"data":[]}`)
	for _, tc := range []struct{ query, code, message string }{
		{"limit=10", "invalid_query", "at least any of these filters: id, type, stage, status, resource, resource_id, reason_id, site_id, players.role, players.user_id, order_id, pack_id, payment_id, parent_id, date_created, last_updated"},
		{"players.role=respondent", "invalid_params", "Invalid parameters. At least submit some of these filters: [resource and resource_id] [players.role and players.user_id]..."},
		{"order_id=1&pack_id=1", "invalid_params", "Invalid parameters. order_id and pack_id cannot be combined"},
		{"status=opened&offset=10000", "bad_request", "Invalid offset: 10000. The maximum is 9999"},
	} {
		res := w.ts.do("GET", "/post-purchase/v1/claims/search?"+tc.query, w.seller.Token, nil)
		wantClaimJSON(t, res, http.StatusBadRequest, fmt.Sprintf(`{"message":%q,"error":%q,"status":400,"cause":[]}`, tc.message, tc.code))
	}
}

func TestClaimRoutes_DetailReasonsHistoriesAndReputation(t *testing.T) {
	w := newClaimWorld(t)
	id := w.open(w.sale, "PDD9549")
	base := "/post-purchase/v1/claims/" + id
	wantClaimJSON(t, w.ts.do("GET", base+"/detail", w.buyer.Token, nil), http.StatusOK, `{"due_date":"2026-03-06T12:00:00.000-03:00",
		"action_responsible":"seller","title":"Reclamo abierto por producto dañado",
		"description":"Respondé antes del viernes 6 de marzo para resolverlo.","problem":"Nos dijiste que el producto llegó dañado"}`)
	res := w.ts.do("GET", "/post-purchase/v1/claims/reasons/PDD9939?flow=returns", w.seller.Token, nil)
	wantClaimJSON(t, res, http.StatusOK, `{"id":"PDD9939","flow":"post_purchase_delivered","name":"repentant_buyer",
		"detail":"Llegó lo que compré en buenas condiciones pero no lo quiero","position":10,
		"filter":{"group":["generic","fashion"],"site_id":["MLA","MLB","MLM","MLC","MCO","MLU","MPE","MEC"]},
		"settings":{"allowed_flows":["returns"],"expected_resolutions":["change_product","return_product"],"rules_engine_triage":["repentant"]},
		"parent_id":null,"children_title":null,"status":"active","date_created":"2024-01-15T18:07:42.632-04:00","last_updated":"2024-03-12T20:20:21.795-04:00"}`)
	wantError(t, w.ts.do("GET", "/post-purchase/v1/claims/reasons/XX1", w.seller.Token, nil), http.StatusNotFound, "Resource not found")
	wantClaimJSON(t, w.ts.do("GET", base+"/affects-reputation", w.seller.Token, nil), http.StatusOK,
		`{"affects_reputation":"not_affected","has_incentive":true,"due_date":"2026-03-06T12:00:00.000-03:00"}`)
	wantClaimJSON(t, w.ts.do("GET", base+"/changes", w.seller.Token, nil), http.StatusNotFound,
		`{"message":"Resource not found","error":"business_logic_error","status":404,"cause":[]}`)
	// The seller lets its due date pass: the claim is in dispute when read.
	w.ts.clock.Advance(49 * time.Hour)
	history := `[{"stage":"dispute","status":"opened","date":"2026-03-06T12:00:00.000-03:00","change_by":"mediator"},
		{"stage":"claim","status":"opened","date":"2026-03-04T12:00:00.000-03:00","change_by":"complainant"}]`
	for _, p := range []string{"/status-history", "/history", "/status_history"} {
		wantClaimJSON(t, w.ts.do("GET", base+p, w.buyer.Token, nil), http.StatusOK, history)
	}
	wantClaimJSON(t, w.ts.do("GET", base+"/actions-history", w.seller.Token, nil), http.StatusOK, `[
		{"action_name":"open_dispute","player_role":"mediator","action_reason_id":"respondent_timeout","claim_stage":"claim","claim_status":"opened","date_created":"2026-03-06T12:00:00.000-03:00"},
		{"action_name":"open_claim","player_role":"complainant","action_reason_id":null,"claim_stage":null,"claim_status":null,"date_created":"2026-03-04T12:00:00.000-03:00"}]`)
	wantClaimJSON(t, w.ts.do("GET", base+"/affects-reputation", w.seller.Token, nil), http.StatusOK,
		`{"affects_reputation":"affected","has_incentive":false,"due_date":"2026-03-06T12:00:00.000-03:00"}`)
	wantClaimJSON(t, w.ts.do("GET", base+"/detail", w.buyer.Token, nil), http.StatusOK, `{"due_date":null,"action_responsible":"mediator",
		"title":"Reclamo abierto por producto dañado","description":"Mercado Libre está revisando el reclamo para darle una solución.",
		"problem":"Nos dijiste que el producto llegó dañado"}`)
}

func TestClaimRoutes_MessagesAndTheirFiles(t *testing.T) {
	w := newClaimWorld(t)
	id := w.open(w.sale, "PDD9549")
	base := "/post-purchase/v1/claims/" + id
	up := w.ts.uploadClaimFile(base+"/attachments", w.seller.Token, "caja.jpg", []byte("\xff\xd8\xffjpeg"))
	if up.Status != http.StatusCreated || up.Obj()["user_id"] != float64(w.seller.ID) || !strings.HasSuffix(up.Obj()["filename"].(string), fmt.Sprintf("_%d.jpg", w.seller.ID)) {
		t.Fatalf("upload: %d %s", up.Status, up.Raw)
	}
	name := up.Obj()["filename"].(string)
	wantClaimJSON(t, w.ts.do("GET", base+"/attachments/"+name, w.buyer.Token, nil), http.StatusOK,
		fmt.Sprintf(`{"filename":%q,"original_filename":"caja.jpg","size":7,"date_created":"2026-03-04T12:00:00","type":"image/jpeg"}`, name))
	req, _ := http.NewRequest("GET", base+"/attachments/"+name+"/download", nil)
	req.Header.Set("Authorization", "Bearer "+w.buyer.Token)
	rec := httptest.NewRecorder()
	w.ts.handler.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "image/jpeg" || rec.Body.String() != "\xff\xd8\xffjpeg" {
		t.Errorf("download: %d %s %q", rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
	}
	wantError(t, w.ts.do("POST", base+"/attachments", w.seller.Token, map[string]any{"file": "x"}), http.StatusBadRequest, "Current request is not a multipart request")
	wantError(t, w.ts.uploadClaimFile(base+"/attachments", w.seller.Token, "caja.gif", []byte("gif")), http.StatusBadRequest, "Invalid file type: only JPG, PNG and PDF files are allowed")
	wantError(t, w.ts.uploadClaimFile(base+"/attachments", w.seller.Token, "big.pdf", make([]byte, 5<<20+1)), http.StatusBadRequest, "File attachment is bigger than 5 Mb.")
	wantError(t, w.ts.do("GET", base+"/attachments/nope.jpg", w.buyer.Token, nil), http.StatusNotFound, "Attachment not found [claim: "+id+" - fileName: nope.jpg]")
	wantError(t, w.ts.do("GET", base+"/attachments", w.buyer.Token, nil), http.StatusMethodNotAllowed, "Method GET not allowed on "+base+"/attachments")

	res := w.ts.do("POST", base+"/actions/send-message", w.seller.Token, map[string]any{"receiver_role": "complainant",
		"message": "Hola, ya te envío la etiqueta de devolución.", "attachments": []string{name}})
	if res.Status != http.StatusCreated || len(res.Raw) != 0 {
		t.Fatalf("send: %d %q; want 201 with no body", res.Status, res.Raw)
	}
	wantClaimJSON(t, w.ts.do("POST", base+"/actions/send-message", w.seller.Token, map[string]any{"receiver_role": "mediator", "message": "x"}),
		http.StatusBadRequest, `{"message":"Action send_message_to_mediator not available for player","error":"bad_request_error","status":400,"cause":[]}`)
	wantClaimJSON(t, w.ts.do("POST", base+"/actions/send-message", w.seller.Token, map[string]any{"receiver_role": "complainant", "message": "x", "attachments": []string{"zz.png"}}),
		http.StatusBadRequest, fmt.Sprintf(`{"message":"Attachment not found [claim: %s - fileName: zz.png]","error":"business_logic_error","status":400,"cause":[]}`, id))
	wantError(t, w.ts.do("POST", base+"/messages", w.seller.Token, map[string]any{"message": "x"}), http.StatusMethodNotAllowed, "Method POST not allowed on "+base+"/messages")
	res = w.ts.do("GET", base+"/messages", w.buyer.Token, nil)
	msgs := res.Arr()
	if res.Status != http.StatusOK || len(msgs) != 1 {
		t.Fatalf("messages: %d %s", res.Status, res.Raw)
	}
	m := msgs[0].(map[string]any)
	hash := m["hash"].(string)
	if !strings.HasPrefix(hash, id+"_0_") {
		t.Errorf("hash %s", hash)
	}
	wantClaimJSON(t, res, http.StatusOK, fmt.Sprintf(`[{"sender_role":"respondent","receiver_role":"complainant",
		"message":"Hola, ya te envío la etiqueta de devolución.","translated_message":null,
		"date_created":"2026-03-04T12:00:00.000-03:00","last_updated":"2026-03-04T12:00:00.000-03:00",
		"message_date":"2026-03-04T12:00:00.000-03:00","date_read":null,
		"attachments":[{"filename":%q,"original_filename":"caja.jpg","size":7,"date_created":"2026-03-04T12:00:00.000-03:00","type":"image/jpeg"}],
		"status":"available","stage":"claim","message_moderation":{"status":"clean","reason":null,"source":"online","date_moderated":null},
		"repeated":false,"hash":%q}]`, name, hash))
	// The mandatory message is sent: no due date is left.
	c := w.ts.do("GET", base, w.seller.Token, nil).Obj()
	first := c["players"].([]any)[1].(map[string]any)["available_actions"].([]any)[0].(map[string]any)
	if first["mandatory"] != false || first["due_date"] != nil {
		t.Errorf("the respondent's first action after its message: %v", first)
	}
}

func TestClaimRoutes_ResolutionsRefundAndDispute(t *testing.T) {
	w := newClaimWorld(t)
	id := w.open(w.sale, "PDD9549")
	base := "/post-purchase/v1/claims/" + id
	wantClaimJSON(t, w.ts.do("GET", base+"/expected-resolutions", w.seller.Token, nil), http.StatusOK, fmt.Sprintf(`[{"player_role":"complainant",
		"user_id":%d,"expected_resolution":"return_product","details":[],"date_created":"2026-03-04T12:00:00.000-03:00",
		"last_updated":"2026-03-04T12:00:00.000-03:00","status":"pending"}]`, w.buyer.ID))
	res := w.ts.do("GET", base+"/partial-refund/available-offers", w.seller.Token, nil)
	if res.Status != http.StatusOK || !bytes.Contains(res.Raw, []byte(`{"amount":1350.45,"percentage":90.0}`)) || len(res.Obj()["available_offers"].([]any)) != 9 {
		t.Errorf("offers: %d %s", res.Status, res.Raw)
	}
	wantClaimJSON(t, w.ts.do("POST", base+"/expected-resolutions/partial-refund", w.seller.Token, map[string]any{"percentage": 35}), http.StatusBadRequest,
		`{"message":"Percentage not found 35.0","error":"error checking configuration percentage","status":400,"cause":[]}`)
	res = w.ts.do("POST", base+"/expected-resolutions/partial-refund", w.seller.Token, map[string]any{"percentage": 40})
	if res.Status != http.StatusOK || len(res.Arr()) != 2 || !bytes.Contains(res.Raw, []byte(`"details":[{"key":"percentage","value":"40.0"},{"key":"seller_amount","value":"600.20"},{"key":"seller_currency","value":"ARS"}]`)) {
		t.Errorf("offer: %d %s", res.Status, res.Raw)
	}
	res = w.ts.do("POST", base+"/actions/open-dispute", w.seller.Token, nil)
	if res.Status != http.StatusOK || res.Obj()["stage"] != "dispute" || len(res.Obj()["players"].([]any)) != 3 {
		t.Fatalf("open dispute: %d %s", res.Status, res.Raw)
	}
	wantClaimJSON(t, w.ts.do("POST", base+"/actions/open-dispute", w.seller.Token, nil), http.StatusBadRequest,
		`{"message":"Action open_dispute not available for player","error":"bad_request_error","status":400,"cause":[]}`)
	w.wantMediationSearch("seller_dispute_opened", w.sale.id)
	w.wantMediationSearch("claim_opened")
	wantError(t, w.ts.do("POST", base+"/expected-resolutions/allow-return", w.seller.Token, nil), http.StatusBadRequest, "Action allow_return not available for player")
	wantError(t, w.ts.do("POST", base+"/expected-resolutions/allow-replace", w.seller.Token, nil), http.StatusBadRequest, "Action allow_replace not available for player")
	wantError(t, w.ts.do("GET", base+"/partial-refund/available-offers", w.seller.Token, nil), http.StatusUnprocessableEntity, "Claim "+id+" is not eligible for a partial refund")
	res = w.ts.do("POST", base+"/expected-resolutions/refund", w.seller.Token, nil)
	if res.Status != http.StatusOK || !bytes.Contains(res.Raw, []byte(`"expected_resolution":"refund","details":[],"date_created":"2026-03-04T12:00:00.000-03:00","last_updated":"2026-03-04T12:00:00.000-03:00","status":"accepted"`)) {
		t.Errorf("refund: %d %s", res.Status, res.Raw)
	}
	c := w.ts.do("GET", base, w.buyer.Token, nil).Obj()
	wantRes := map[string]any{"reason": "payment_refunded", "date_created": "2026-03-04T12:00:00.000-03:00",
		"benefited": []any{"complainant"}, "closed_by": "respondent", "applied_coverage": false}
	if c["status"] != "closed" || !reflect.DeepEqual(c["resolution"], wantRes) {
		t.Errorf("claim %v resolution %v", c["status"], c["resolution"])
	}
	p := w.ts.do("GET", "/orders/"+w.sale.id, w.seller.Token, nil).Obj()["payments"].([]any)[0].(map[string]any)
	if p["status"] != "refunded" {
		t.Errorf("payment %v", p)
	}
	w.wantMediationSearch("seller_dispute_closed", w.sale.id)
	w.wantMediationSearch("seller_dispute_opened")
	wantError(t, w.ts.do("GET", fmt.Sprintf("/orders/search?seller=%d&mediations.status=opened", w.seller.ID), w.seller.Token, nil), http.StatusBadRequest,
		"Invalid mediations.status: opened. Valid values are: [claim_opened, claim_closed, dispute_opened, dispute_closed, seller_dispute_opened, seller_dispute_closed]")
}

// wantMediationSearch checks that the seller's order search by
// mediations.status finds the orders orderIDs.
func (w *claimWorld) wantMediationSearch(status string, orderIDs ...string) {
	w.ts.t.Helper()
	res := w.ts.do("GET", fmt.Sprintf("/orders/search?seller=%d&mediations.status=%s", w.seller.ID, status), w.seller.Token, nil)
	if res.Status != http.StatusOK {
		w.ts.t.Fatalf("search by mediations.status=%s: %d %s", status, res.Status, res.Raw)
	}
	got := []string{}
	for _, o := range res.Obj()["results"].([]any) {
		got = append(got, idString(o.(map[string]any)["id"]))
	}
	if !slices.Equal(got, append([]string{}, orderIDs...)) {
		w.ts.t.Errorf("search by mediations.status=%s: orders %v; want %v", status, got, orderIDs)
	}
	filters := res.Obj()["filters"].([]any)
	if len(filters) != 1 || filters[0].(map[string]any)["id"] != "mediations.status" {
		w.ts.t.Errorf("search by mediations.status=%s: filters %v", status, filters)
	}
}

func TestClaimRoutes_EvidencesOfAProductNotReceived(t *testing.T) {
	w := newClaimWorld(t)
	s := w.buy(1)
	id := w.open(s, "PNR3430")
	base := "/post-purchase/v1/claims/" + id
	f := w.ts.uploadClaimFile(base+"/attachments-evidences", w.seller.Token, "guia.pdf", []byte("%PDF"))
	if f.Status != http.StatusCreated {
		t.Fatalf("upload: %d %s", f.Status, f.Raw)
	}
	name := f.Obj()["file_name"].(string)
	wantError(t, w.ts.uploadClaimFile(base+"/attachments-evidences", w.buyer.Token, "guia.pdf", []byte("%PDF")), http.StatusForbidden, "You don't have permission to access the resource")
	wantClaimJSON(t, w.ts.do("GET", base+"/attachments-evidences/"+name, w.buyer.Token, nil), http.StatusOK,
		fmt.Sprintf(`{"filename":%q,"original_filename":"guia.pdf","size":4,"date_created":"2026-03-04T12:00:00","type":"application/pdf"}`, name))
	wantError(t, w.ts.do("POST", base+"/actions/evidences", w.seller.Token, map[string]any{"type": "shipping_evidence", "shipping_method": "mail", "shipping_company_name": "Correo"}),
		http.StatusBadRequest, "The field date_shipped is required for the shipping_method mail")
	res := w.ts.do("POST", base+"/actions/evidences", w.seller.Token, map[string]any{"type": "shipping_evidence", "shipping_method": "mail",
		"shipping_company_name": "Correo Argentino", "date_shipped": "2026-03-03T05:00:00.000-03:00", "tracking_number": "XX123456789AR", "attachments": []string{name}})
	wantClaimJSON(t, res, http.StatusOK, fmt.Sprintf(`[{"type":"shipping_evidence","shipping_method":"mail","shipping_company_name":"Correo Argentino",
		"date_shipped":"2026-03-03T05:00:00.000-03:00","date_delivered":null,"destination_agency":null,"receiver_email":null,"receiver_id":null,
		"receiver_name":null,"tracking_number":"XX123456789AR","handling_date":null,"attachments":[%q]}]`, name))
	res = w.ts.do("POST", base+"/evidences", w.seller.Token, map[string]any{"type": "handling_shipping_evidence", "handling_date": "2026-03-06"})
	wantClaimJSON(t, res, http.StatusOK, `{"type":"handling_shipping_evidence","shipping_method":null,"shipping_company_name":null,"date_shipped":null,
		"date_delivered":null,"destination_agency":null,"receiver_email":null,"receiver_id":null,"receiver_name":null,"tracking_number":null,
		"handling_date":"2026-03-06T00:00:00.000-03:00","attachments":[]}`)
	if res := w.ts.do("GET", base+"/evidences", w.buyer.Token, nil); res.Status != http.StatusOK || len(res.Arr()) != 2 {
		t.Errorf("evidences: %d %s", res.Status, res.Raw)
	}
	wantError(t, w.ts.do("POST", base+"/evidences", w.seller.Token, map[string]any{"type": "handling_shipping_evidence", "handling_date": "2026-03-07"}),
		http.StatusBadRequest, "Action send_potential_shipping not available for player")
}

func TestClaimRoutes_AReturnFromItsLabelToTheSellersReview(t *testing.T) {
	w := newClaimWorld(t)
	_, before := w.stock()
	id := w.open(w.sale, "PDD9939")
	base := "/post-purchase/v1/claims/" + id
	wantReturnsError(t, w.ts.do("GET", "/post-purchase/v2/claims/"+id+"/returns", w.seller.Token, nil), http.StatusNotFound, "not_found_error", "return not found")
	wantReturnsError(t, w.ts.do("GET", "/post-purchase/v2/claims/5999999999/returns", w.seller.Token, nil), http.StatusNotFound, "not_found_error", "claim id: 5999999999 not found")
	wantReturnsError(t, w.ts.do("GET", "/post-purchase/v2/claims/"+id+"/returns", w.stranger.Token, nil), http.StatusBadRequest, "bad_request_error",
		fmt.Sprintf("Invalid roleId :%d in claim :%s", w.stranger.ID, id))
	wantClaimJSON(t, w.ts.do("GET", base+"/charges/return-cost", w.seller.Token, nil), http.StatusOK, `{"currency_id":"ARS","amount":0.00}`)
	res := w.ts.do("POST", base+"/expected-resolutions/allow-return", w.seller.Token, nil)
	if res.Status != http.StatusOK || len(res.Arr()) != 1 {
		t.Fatalf("allow return: %d %s", res.Status, res.Raw)
	}
	res = w.ts.do("GET", "/post-purchase/v2/claims/"+id+"/returns", w.buyer.Token, nil)
	if res.Status != http.StatusOK {
		t.Fatalf("return: %d %s", res.Status, res.Raw)
	}
	rt := res.Obj()
	retID := idString(rt["id"])
	ship := rt["shipments"].([]any)[0].(map[string]any)
	wantClaimJSON(t, res, http.StatusOK, fmt.Sprintf(`{"id":%s,"claim_id":%s,"resource_type":"order","resource_id":%s,"status":"label_generated",
		"subtype":"return_total","status_money":"retained","refund_at":"delivered",
		"shipments":[{"shipment_id":%s,"status":"ready_to_ship","tracking_number":null,"type":"return",
		  "destination":{"name":"seller_address","shipping_address":%s}}],
		"orders":[{"order_id":%s,"item_id":%q,"variation_id":null,"context_type":"total","total_quantity":"1.0","return_quantity":"1.0"}],
		"related_entities":[],"intermediate_check":false,"resources":[{"resource":"claim","resource_id":%q}],
		"date_created":"2026-03-04T15:00:00.000+00:00","last_updated":"2026-03-04T15:00:00.000+00:00","date_closed":null}`,
		retID, id, w.sale.id, idString(ship["shipment_id"]), claimJSON(t, ship["destination"].(map[string]any)["shipping_address"]), w.sale.id, w.item, id))
	wantReturnsError(t, w.ts.do("GET", "/post-purchase/v1/returns/"+retID+"/reviews", w.seller.Token, nil), http.StatusNotFound, "not_found_error", "return review not found")
	wantReturnsError(t, w.ts.do("POST", "/post-purchase/v1/returns/"+retID+"/return-review", w.seller.Token, map[string]any{}), http.StatusBadRequest,
		"bad_request_error", "Not valid action return_review_ok for player role respondent")
	wantError(t, w.ts.operator("PUT", "/operator/returns/"+retID+"/status", map[string]any{"status": "delivered"}), http.StatusBadRequest,
		"Return "+retID+" is label_generated: it cannot move to delivered. Next statuses: [scheduled, shipped, pending_cancel, cancelled, pending_expiration, expired]")
	for _, st := range []string{"shipped", "delivered"} {
		if res := w.ts.operator("PUT", "/operator/returns/"+retID+"/status", map[string]any{"status": st}); res.Status != http.StatusOK || res.Obj()["status"] != st {
			t.Fatalf("move return to %s: %d %s", st, res.Status, res.Raw)
		}
	}
	wantReturnsError(t, w.ts.do("POST", "/post-purchase/v1/returns/"+retID+"/return-review", w.seller.Token, "[]"), http.StatusBadRequest,
		"bad_request_error", "Required request body is missing or incorrect, please see the documentation.")
	wantReturnsError(t, w.ts.do("POST", "/post-purchase/v1/returns/"+retID+"/return-review", w.seller.Token, nil), http.StatusBadRequest,
		"bad_request_error", "Required request body is missing or incorrect, please see the documentation.")
	res = w.ts.do("POST", "/post-purchase/v1/returns/"+retID+"/return-review", w.seller.Token, map[string]any{})
	if res.Status != http.StatusOK || res.Obj()["status_money"] != "refunded" || fmt.Sprint(res.Obj()["related_entities"]) != "[reviews]" {
		t.Fatalf("review: %d %s", res.Status, res.Raw)
	}
	res = w.ts.do("GET", "/post-purchase/v1/returns/"+retID+"/reviews", w.buyer.Token, nil)
	wantClaimJSON(t, res, http.StatusOK, fmt.Sprintf(`{"reviews":[{"resource":"order","resource_id":%s,"method":"none","resource_reviews":[
		{"stage":"closed","status":null,"product_condition":"saleable","product_destination":"seller","reason_id":"accepted","benefited":"buyer",
		 "seller_status":"success","seller_reason":null,"benefited_type":null,"benefited_reason":null,"missing_quantity":0}],
		"date_created":"2026-03-04T15:00:00.000Z","last_updated":"2026-03-04T15:00:00.000Z"}]}`, w.sale.id))
	c := w.ts.do("GET", base, w.seller.Token, nil).Obj()
	if c["status"] != "closed" || c["resolution"].(map[string]any)["reason"] != "item_returned" {
		t.Errorf("claim %v", c)
	}
	if _, after := w.stock(); after[w.stores[0]]+after[w.stores[1]] != before[w.stores[0]]+before[w.stores[1]]+1 {
		t.Errorf("stock %v after the return; before %v", after, before)
	}
	wantClaimJSON(t, w.ts.do("GET", base+"/charges/return-cost?calculate_amount_usd=true", w.seller.Token, nil), http.StatusOK,
		fmt.Sprintf(`{"currency_id":"ARS","amount":%s,"amount_usd":%s}`, "0.00", "0"))
	wantReturnsError(t, w.ts.do("GET", base+"/charges/return-cost?calculate_amount_usd=maybe", w.seller.Token, nil), http.StatusBadRequest,
		"bad_request_error", "Invalid calculate_amount_usd: maybe. It must be true or false")
}

func TestClaimRoutes_ReturnReasonsAndReturnFiles(t *testing.T) {
	w := newClaimWorld(t)
	id := w.open(w.sale, "PDD9549")
	res := w.ts.do("GET", "/post-purchase/v1/returns/reasons?flow=seller_return_failed&claim_id="+id, w.seller.Token, nil)
	if res.Status != http.StatusOK || len(res.Arr()) != 6 || !bytes.HasPrefix(res.Raw, []byte(`[{"id":"SRF2","name":"product_damaged","detail":"El producto llegó dañado","position":1,"apply":["order"]}`)) {
		t.Errorf("reasons: %d %s", res.Status, res.Raw)
	}
	wantReturnsError(t, w.ts.do("GET", "/post-purchase/v1/returns/reasons?flow=invalid_flow&claim_id="+id, w.seller.Token, nil), http.StatusBadRequest,
		"bad_request_error", "flow: invalid_flow does not exist. claimId: "+id)
	wantReturnsError(t, w.ts.do("GET", "/post-purchase/v1/returns/reasons?flow=seller_return_failed&claim_id=5999999999", w.seller.Token, nil),
		http.StatusNotFound, "not_found_error", "claim_Not Found")
	f := w.ts.uploadClaimFile("/post-purchase/v1/claims/"+id+"/returns/attachments", w.seller.Token, "roto.png", []byte("png"))
	if f.Status != http.StatusCreated || !strings.HasPrefix(f.Obj()["file_name"].(string), fmt.Sprintf("%d_", w.seller.ID)) {
		t.Errorf("upload: %d %s", f.Status, f.Raw)
	}
	wantReturnsError(t, w.ts.uploadClaimFile("/post-purchase/v1/claims/"+id+"/returns/attachments", w.seller.Token, "roto.gif", []byte("gif")),
		http.StatusBadRequest, "bad_request_error", "Invalid mime_type")
	wantReturnsError(t, w.ts.uploadClaimFile("/post-purchase/v1/claims/"+id+"/returns/attachments", w.buyer.Token, "roto.png", []byte("png")),
		http.StatusBadRequest, "bad_request_error", fmt.Sprintf("Invalid roleId :%d in claim :%s", w.buyer.ID, id))
	wantReturnsError(t, w.ts.do("POST", "/post-purchase/v1/claims/"+id+"/returns/attachments", w.seller.Token, map[string]any{}),
		http.StatusBadRequest, "bad_request", "Current request is not a multipart request")
	wantError(t, w.ts.do("GET", "/post-purchase/v1/returns/reasons", "", nil), http.StatusUnauthorized, "Missing access token: send Authorization: Bearer <token>")
}

func TestClaimRoutes_TheBuyerAndTheMediatorActThroughTheOperator(t *testing.T) {
	w := newClaimWorld(t)
	id := w.open(w.sale, "PDD9551")
	path := "/operator/claims/" + id + "/actions"
	res := w.ts.operator("POST", path, map[string]any{"role": "complainant", "action": "send_message_to_respondent", "message": "Llegó otro modelo"})
	if res.Status != http.StatusOK || res.Obj()["id"] == nil {
		t.Fatalf("buyer's message: %d %s", res.Status, res.Raw)
	}
	res = w.ts.operator("POST", path, map[string]any{"role": "complainant", "action": "open_dispute"})
	if res.Status != http.StatusOK || res.Obj()["stage"] != "dispute" {
		t.Fatalf("buyer's dispute: %d %s", res.Status, res.Raw)
	}
	wantClaimJSON(t, w.ts.operator("POST", path, map[string]any{"role": "respondent", "action": "refund"}), http.StatusBadRequest,
		`{"message":"Invalid role: respondent. Valid values are: [complainant, mediator]; the respondent acts through the public routes","error":"bad_request","status":400,"cause":[]}`)
	res = w.ts.operator("POST", path, map[string]any{"role": "mediator", "action": "resolve", "resolution": map[string]any{"reason": "coverage_decision", "benefited": []string{"complainant"}}})
	if res.Status != http.StatusOK || res.Obj()["status"] != "closed" || res.Obj()["resolution"].(map[string]any)["applied_coverage"] != true {
		t.Fatalf("mediator: %d %s", res.Status, res.Raw)
	}
	wantError(t, w.ts.operator("POST", "/operator/claims/5999999999/actions", map[string]any{"role": "complainant", "action": "open_dispute"}),
		http.StatusNotFound, "Resource not found")
	wantError(t, w.ts.operator("PUT", "/operator/returns/1/status", map[string]any{"status": "shipped"}), http.StatusNotFound, "return not found")
	wantError(t, w.ts.operator("PUT", "/operator/returns/1/status", map[string]any{"status": "lost"}), http.StatusBadRequest,
		"Invalid status: lost. Valid values are: [pending, label_generated, scheduled, shipped, pending_delivered, delivered, not_delivered, return_to_buyer, pending_cancel, cancelled, pending_failure, failed, pending_expiration, expired]")
}

func claimJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
