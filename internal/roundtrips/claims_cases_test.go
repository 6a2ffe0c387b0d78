package roundtrips

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"sync"
)

// The cases of claims and returns run last, after the reset, on records of
// their own (made at the first case that needs them): the claims they open
// are not in the state the snapshot, fixtures and reset cases copy or
// clear.
func init() {
	cases = append(cases, claimsCases...)
	for k, v := range claimsBounds {
		bounds[k] = v
	}
}

// claimsBounds are the bounds of claims and returns (see bounds).
var claimsBounds = map[string]float64{
	"GET /post-purchase/v1/claims/search":                                              4.5,
	"GET /post-purchase/v1/claims/:claim_id":                                           1.5,
	"GET /post-purchase/v1/claims/:claim_id/detail":                                    1.5,
	"GET /post-purchase/v1/claims/reasons/:reason_id":                                  0.5,
	"GET /post-purchase/v1/claims/:claim_id/messages":                                  2.5,
	"POST /post-purchase/v1/claims/:claim_id/messages":                                 0.5,
	"POST /post-purchase/v1/claims/:claim_id/actions/send-message":                     3.5,
	"POST /post-purchase/v1/claims/:claim_id/attachments":                              2.5,
	"GET /post-purchase/v1/claims/:claim_id/attachments":                               0.5,
	"GET /post-purchase/v1/claims/:claim_id/attachments/:filename":                     1.5,
	"GET /post-purchase/v1/claims/:claim_id/attachments/:filename/download":            1.5,
	"POST /post-purchase/v1/claims/:claim_id/actions/open-dispute":                     3.5,
	"GET /post-purchase/v1/claims/:claim_id/expected-resolutions":                      1.5,
	"GET /post-purchase/v1/claims/:claim_id/partial-refund/available-offers":           2.5,
	"POST /post-purchase/v1/claims/:claim_id/expected-resolutions/partial-refund":      3.5,
	"POST /post-purchase/v1/claims/:claim_id/expected-resolutions/refund":              3.5,
	"POST /post-purchase/v1/claims/:claim_id/expected-resolutions/allow-return":        4.5,
	"POST /post-purchase/v1/claims/:claim_id/expected-resolutions/allow-replace":       3.5,
	"GET /post-purchase/v1/claims/:claim_id/evidences":                                 1.5,
	"POST /post-purchase/v1/claims/:claim_id/actions/evidences":                        3.5,
	"POST /post-purchase/v1/claims/:claim_id/evidences":                                3.5,
	"POST /post-purchase/v1/claims/:claim_id/attachments-evidences":                    2.5,
	"GET /post-purchase/v1/claims/:claim_id/attachments-evidences/:file_name":          1.5,
	"GET /post-purchase/v1/claims/:claim_id/attachments-evidences/:file_name/download": 1.5,
	"GET /post-purchase/v1/claims/:claim_id/actions-history":                           2.5,
	"GET /post-purchase/v1/claims/:claim_id/status-history":                            1.5,
	"GET /post-purchase/v1/claims/:claim_id/history":                                   1.5,
	"GET /post-purchase/v1/claims/:claim_id/status_history":                            1.5,
	"GET /post-purchase/v1/claims/:claim_id/affects-reputation":                        1.5,
	"GET /post-purchase/v1/claims/:claim_id/changes":                                   1.5,
	"GET /post-purchase/v1/claims/:claim_id/charges/return-cost":                       4.5,
	"GET /post-purchase/v2/claims/:claim_id/returns":                                   1.5,
	"GET /post-purchase/v1/returns/:return_id/reviews":                                 2.5,
	"POST /post-purchase/v1/returns/:return_id/return-review":                          8.5,
	"GET /post-purchase/v1/returns/reasons":                                            2.5,
	"POST /post-purchase/v1/claims/:claim_id/returns/attachments":                      2.5,
	"POST /operator/claims":                                                            5.5,
	"POST /operator/claims/:claim_id/actions":                                          3.5,
	"PUT /operator/returns/:return_id/status":                                          4.5,
}

// clmFixtures are what the claims' cases read, made once per world: a
// seller with an item, a buyer, an opened claim of a damaged product with
// a message and its file, a claim of a product not received with an
// evidence file, and a claim whose return the seller received and
// reviewed.
type clmFixtures struct {
	seller, buyer user
	item          string
	open, pnr     string
	done, ret     string
	file, evFile  string
}

var clmState sync.Map // *world -> *clmFixtures

// clm returns the claims' fixtures, made at its first call.
func (w *world) clm() *clmFixtures {
	w.t.Helper()
	if f, ok := clmState.Load(w); ok {
		return f.(*clmFixtures)
	}
	f := &clmFixtures{seller: w.mustUser("normal"), buyer: w.mustUser("normal")}
	f.item = w.must(201, "POST", "/items", f.seller.Token, plainItemBody()).obj()["id"].(string)
	clmState.Store(w, f)
	f.open = f.newClaim(w, "PDD9549", true)
	f.file = w.claimUpload(f.seller, "/post-purchase/v1/claims/"+f.open+"/attachments", "caja.jpg")["filename"].(string)
	w.must(201, "POST", "/post-purchase/v1/claims/"+f.open+"/actions/send-message", f.seller.Token,
		map[string]any{"receiver_role": "complainant", "message": "Hola", "attachments": []string{f.file}})
	f.pnr = f.newClaim(w, "PNR3430", false)
	f.evFile = w.claimUpload(f.seller, "/post-purchase/v1/claims/"+f.pnr+"/attachments-evidences", "guia.pdf")["file_name"].(string)
	f.done = f.newClaim(w, "PDD9939", true)
	f.ret = f.deliveredReturn(w, f.done)
	w.must(200, "POST", "/post-purchase/v1/returns/"+f.ret+"/return-review", f.seller.Token, map[string]any{})
	return f
}

// newClaim is a claim of reason on a new sale of the fixtures' item to
// their buyer, delivered first when delivered.
func (f *clmFixtures) newClaim(w *world, reason string, delivered bool) string {
	w.t.Helper()
	s := w.mustSale(map[string]any{"buyer_id": f.buyer.ID, "item_id": f.item, "quantity": 1})
	if delivered {
		for _, st := range []string{"shipped", "delivered"} {
			w.must(200, "PUT", "/operator/shipments/"+s.shipment+"/status", operatorToken, map[string]any{"status": st})
		}
	}
	c := w.must(201, "POST", "/operator/claims", operatorToken, map[string]any{"order_id": json.Number(s.id), "reason_id": reason})
	return idString(c.obj()["id"])
}

// deliveredReturn allows the return of claim id and moves it to
// delivered; it returns the return's id.
func (f *clmFixtures) deliveredReturn(w *world, id string) string {
	w.t.Helper()
	w.must(200, "POST", "/post-purchase/v1/claims/"+id+"/expected-resolutions/allow-return", f.seller.Token, nil)
	ret := idString(w.must(200, "GET", "/post-purchase/v2/claims/"+id+"/returns", f.seller.Token, nil).obj()["id"])
	for _, st := range []string{"shipped", "delivered"} {
		w.must(200, "PUT", "/operator/returns/"+ret+"/status", operatorToken, map[string]any{"status": st})
	}
	return ret
}

// claimFile is a multipart form with a file named name.
func claimFile(name string) (string, string) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	fw, _ := mw.CreateFormFile("file", name)
	_, _ = fw.Write([]byte("file bytes"))
	_ = mw.Close()
	return b.String(), mw.FormDataContentType()
}

func claimUploadRequest(u user, target, name string) request {
	body, ct := claimFile(name)
	return request{method: "POST", target: target, token: u.Token, body: body, headers: map[string]string{"Content-Type": ct}}
}

// claimUpload uploads a file to target and returns the answer.
func (w *world) claimUpload(u user, target, name string) map[string]any {
	w.t.Helper()
	res := w.serve(claimUploadRequest(u, target, name))
	if res.status != 201 {
		w.t.Fatalf("upload to %s: %d %s", target, res.status, res.raw)
	}
	return res.obj()
}

func (w *world) claimGet(path string) request {
	return get("/post-purchase/v1/claims/"+w.clm().open+path, w.clm().seller.Token)
}

var claimsCases = []routeCase{
	{method: "GET", path: "/post-purchase/v1/claims/search", req: fixed(func(w *world) request {
		return get(fmt.Sprintf("/post-purchase/v1/claims/search?players.role=respondent&players.user_id=%d&status=opened", w.clm().seller.ID), w.clm().seller.Token)
	})},
	{method: "GET", path: "/post-purchase/v1/claims/:claim_id", req: fixed(func(w *world) request { return w.claimGet("") })},
	{method: "GET", path: "/post-purchase/v1/claims/:claim_id/detail", req: fixed(func(w *world) request { return w.claimGet("/detail") })},
	{method: "GET", path: "/post-purchase/v1/claims/reasons/:reason_id", req: fixed(func(w *world) request {
		return get("/post-purchase/v1/claims/reasons/PDD9939", w.clm().seller.Token)
	})},
	{method: "GET", path: "/post-purchase/v1/claims/:claim_id/messages", req: fixed(func(w *world) request { return w.claimGet("/messages") })},
	{method: "POST", path: "/post-purchase/v1/claims/:claim_id/messages", status: 405, req: fixed(func(w *world) request {
		return byUser("POST", "/post-purchase/v1/claims/"+w.clm().open+"/messages", w.clm().seller, map[string]any{"message": "x"})
	})},
	{method: "POST", path: "/post-purchase/v1/claims/:claim_id/actions/send-message", status: 201, req: func(w *world, i int) request {
		return byUser("POST", "/post-purchase/v1/claims/"+w.clm().open+"/actions/send-message", w.clm().seller,
			map[string]any{"receiver_role": "complainant", "message": fmt.Sprintf("Mensaje %d", i)})
	}},
	{method: "POST", path: "/post-purchase/v1/claims/:claim_id/attachments", status: 201, req: func(w *world, i int) request {
		return claimUploadRequest(w.clm().seller, "/post-purchase/v1/claims/"+w.clm().open+"/attachments", fmt.Sprintf("foto-%d.png", i))
	}},
	{method: "GET", path: "/post-purchase/v1/claims/:claim_id/attachments", status: 405, req: fixed(func(w *world) request { return w.claimGet("/attachments") })},
	{method: "GET", path: "/post-purchase/v1/claims/:claim_id/attachments/:filename", req: fixed(func(w *world) request {
		return w.claimGet("/attachments/" + w.clm().file)
	})},
	{method: "GET", path: "/post-purchase/v1/claims/:claim_id/attachments/:filename/download", req: fixed(func(w *world) request {
		return w.claimGet("/attachments/" + w.clm().file + "/download")
	})},
	{method: "POST", path: "/post-purchase/v1/claims/:claim_id/actions/open-dispute", req: func(w *world, _ int) request {
		return byUser("POST", "/post-purchase/v1/claims/"+w.clm().newClaim(w, "PNR3430", false)+"/actions/open-dispute", w.clm().seller, nil)
	}},
	{method: "GET", path: "/post-purchase/v1/claims/:claim_id/expected-resolutions", req: fixed(func(w *world) request { return w.claimGet("/expected-resolutions") })},
	{method: "GET", path: "/post-purchase/v1/claims/:claim_id/partial-refund/available-offers", req: fixed(func(w *world) request {
		return w.claimGet("/partial-refund/available-offers")
	})},
	{method: "POST", path: "/post-purchase/v1/claims/:claim_id/expected-resolutions/partial-refund", req: func(w *world, _ int) request {
		return byUser("POST", "/post-purchase/v1/claims/"+w.clm().newClaim(w, "PDD9549", true)+"/expected-resolutions/partial-refund",
			w.clm().seller, map[string]any{"percentage": 50})
	}},
	{method: "POST", path: "/post-purchase/v1/claims/:claim_id/expected-resolutions/refund", req: func(w *world, _ int) request {
		return byUser("POST", "/post-purchase/v1/claims/"+w.clm().newClaim(w, "PNR3430", false)+"/expected-resolutions/refund", w.clm().seller, nil)
	}},
	{method: "POST", path: "/post-purchase/v1/claims/:claim_id/expected-resolutions/allow-return", req: func(w *world, _ int) request {
		return byUser("POST", "/post-purchase/v1/claims/"+w.clm().newClaim(w, "PDD9939", true)+"/expected-resolutions/allow-return", w.clm().seller, nil)
	}},
	// Only a fulfillment sale's product is replaced: a refusal.
	{method: "POST", path: "/post-purchase/v1/claims/:claim_id/expected-resolutions/allow-replace", status: 400, req: fixed(func(w *world) request {
		return byUser("POST", "/post-purchase/v1/claims/"+w.clm().open+"/expected-resolutions/allow-replace", w.clm().seller, nil)
	})},
	{method: "GET", path: "/post-purchase/v1/claims/:claim_id/evidences", req: fixed(func(w *world) request {
		return get("/post-purchase/v1/claims/"+w.clm().pnr+"/evidences", w.clm().seller.Token)
	})},
	{method: "POST", path: "/post-purchase/v1/claims/:claim_id/actions/evidences", req: func(w *world, _ int) request {
		return byUser("POST", "/post-purchase/v1/claims/"+w.clm().newClaim(w, "PNR3430", false)+"/actions/evidences", w.clm().seller,
			map[string]any{"type": "shipping_evidence", "shipping_method": "mail", "shipping_company_name": "Correo", "date_shipped": "2026-03-01"})
	}},
	{method: "POST", path: "/post-purchase/v1/claims/:claim_id/evidences", req: func(w *world, _ int) request {
		return byUser("POST", "/post-purchase/v1/claims/"+w.clm().newClaim(w, "PNR3430", false)+"/evidences", w.clm().seller,
			map[string]any{"type": "handling_shipping_evidence", "handling_date": "2026-03-06"})
	}},
	{method: "POST", path: "/post-purchase/v1/claims/:claim_id/attachments-evidences", status: 201, req: func(w *world, i int) request {
		return claimUploadRequest(w.clm().seller, "/post-purchase/v1/claims/"+w.clm().pnr+"/attachments-evidences", fmt.Sprintf("guia-%d.pdf", i))
	}},
	{method: "GET", path: "/post-purchase/v1/claims/:claim_id/attachments-evidences/:file_name", req: fixed(func(w *world) request {
		return get("/post-purchase/v1/claims/"+w.clm().pnr+"/attachments-evidences/"+w.clm().evFile, w.clm().seller.Token)
	})},
	{method: "GET", path: "/post-purchase/v1/claims/:claim_id/attachments-evidences/:file_name/download", req: fixed(func(w *world) request {
		return get("/post-purchase/v1/claims/"+w.clm().pnr+"/attachments-evidences/"+w.clm().evFile+"/download", w.clm().seller.Token)
	})},
	{method: "GET", path: "/post-purchase/v1/claims/:claim_id/actions-history", req: fixed(func(w *world) request { return w.claimGet("/actions-history") })},
	{method: "GET", path: "/post-purchase/v1/claims/:claim_id/status-history", req: fixed(func(w *world) request { return w.claimGet("/status-history") })},
	{method: "GET", path: "/post-purchase/v1/claims/:claim_id/history", req: fixed(func(w *world) request { return w.claimGet("/history") })},
	{method: "GET", path: "/post-purchase/v1/claims/:claim_id/status_history", req: fixed(func(w *world) request { return w.claimGet("/status_history") })},
	{method: "GET", path: "/post-purchase/v1/claims/:claim_id/affects-reputation", req: fixed(func(w *world) request { return w.claimGet("/affects-reputation") })},
	{method: "GET", path: "/post-purchase/v1/claims/:claim_id/changes", status: 404, req: fixed(func(w *world) request { return w.claimGet("/changes") })},
	{method: "GET", path: "/post-purchase/v1/claims/:claim_id/charges/return-cost", req: fixed(func(w *world) request {
		return get("/post-purchase/v1/claims/"+w.clm().done+"/charges/return-cost?calculate_amount_usd=true", w.clm().seller.Token)
	})},
	{method: "GET", path: "/post-purchase/v2/claims/:claim_id/returns", req: fixed(func(w *world) request {
		return get("/post-purchase/v2/claims/"+w.clm().done+"/returns", w.clm().buyer.Token)
	})},
	{method: "GET", path: "/post-purchase/v1/returns/:return_id/reviews", req: fixed(func(w *world) request {
		return get("/post-purchase/v1/returns/"+w.clm().ret+"/reviews", w.clm().seller.Token)
	})},
	{method: "POST", path: "/post-purchase/v1/returns/:return_id/return-review", req: func(w *world, _ int) request {
		f := w.clm()
		return byUser("POST", "/post-purchase/v1/returns/"+f.deliveredReturn(w, f.newClaim(w, "PDD9549", true))+"/return-review", f.seller, map[string]any{})
	}},
	{method: "GET", path: "/post-purchase/v1/returns/reasons", req: fixed(func(w *world) request {
		return get("/post-purchase/v1/returns/reasons?flow=seller_return_failed&claim_id="+w.clm().done, w.clm().seller.Token)
	})},
	{method: "POST", path: "/post-purchase/v1/claims/:claim_id/returns/attachments", status: 201, req: func(w *world, i int) request {
		return claimUploadRequest(w.clm().seller, "/post-purchase/v1/claims/"+w.clm().done+"/returns/attachments", fmt.Sprintf("roto-%d.png", i))
	}},
	{method: "POST", path: "/operator/claims", status: 201, req: func(w *world, _ int) request {
		f := w.clm()
		s := w.mustSale(map[string]any{"buyer_id": f.buyer.ID, "item_id": f.item, "quantity": 1})
		return op("POST", "/operator/claims", map[string]any{"order_id": json.Number(s.id), "reason_id": "PNR3430"})
	}},
	{method: "POST", path: "/operator/claims/:claim_id/actions", req: func(w *world, _ int) request {
		return op("POST", "/operator/claims/"+w.clm().newClaim(w, "PNR3430", false)+"/actions", map[string]any{"role": "complainant", "action": "open_dispute"})
	}},
	{method: "PUT", path: "/operator/returns/:return_id/status", req: func(w *world, _ int) request {
		f := w.clm()
		id := f.newClaim(w, "PDD9939", true)
		w.must(200, "POST", "/post-purchase/v1/claims/"+id+"/expected-resolutions/allow-return", f.seller.Token, nil)
		ret := idString(w.must(200, "GET", "/post-purchase/v2/claims/"+id+"/returns", f.seller.Token, nil).obj()["id"])
		return op("PUT", "/operator/returns/"+ret+"/status", map[string]any{"status": "shipped"})
	}},
}
