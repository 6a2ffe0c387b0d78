package claims_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/marketplace/marketplace/claims"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/sales"
)

func TestOpen_GivesAClaimOfTenDigitsStartingWith5OpenedInTheClaimStage(t *testing.T) {
	e := newEnv(t)
	s := e.mustSale(1, false)
	c := e.mustOpen(s, "PNR3430")
	if id := fmt.Sprint(c.ID); len(id) != 10 || id[0] != '5' {
		t.Errorf("claim id %s; want ten digits starting with 5", id)
	}
	if c.Status != claims.StatusOpened || c.Stage != claims.StageClaim || c.Type != "mediations" || c.Resource != "order" ||
		c.ResourceID != s.order.ID || c.Fulfilled || c.QuantityType != "total" || c.ClaimedQuantity != 1 || c.SiteID != "MLA" {
		t.Errorf("claim %+v", c)
	}
	if c.DateCreated != e.stamp(start) || c.DateCreated != "2026-03-04T12:00:00.000-03:00" {
		t.Errorf("date_created %s; want the site's local time %s", c.DateCreated, e.stamp(start))
	}
	if c.Resolution != nil || len(c.RelatedEntities) != 0 || len(c.Players) != 2 {
		t.Errorf("resolution %v, related %v, players %d", c.Resolution, c.RelatedEntities, len(c.Players))
	}
	second := e.mustOpen(e.mustSale(1, false), "PNR3430")
	if second.ID != c.ID+1 {
		t.Errorf("second claim %d after %d", second.ID, c.ID)
	}
}

func TestOpen_TheRespondentMustMessageTheComplainantWithin48Hours(t *testing.T) {
	e := newEnv(t)
	pnr := e.mustOpen(e.mustSale(1, false), "PNR3430")
	due := e.stamp(start.Add(48 * time.Hour))
	want := []string{"send_message_to_complainant!" + due, "refund", "open_dispute", "add_shipping_evidence", "send_potential_shipping"}
	if got := actions(pnr, claims.RoleRespondent); !slices.Equal(got, want) {
		t.Errorf("PNR respondent actions %v; want %v", got, want)
	}
	if got := actions(pnr, claims.RoleComplainant); !slices.Equal(got, []string{"send_message_to_respondent", "open_dispute"}) {
		t.Errorf("complainant actions %v", got)
	}
	pdd := e.mustOpen(e.mustSale(1, true), "PDD9549")
	want = []string{"send_message_to_complainant!" + due, "refund", "allow_return", "allow_partial_refund", "open_dispute"}
	if got := actions(pdd, claims.RoleRespondent); !slices.Equal(got, want) {
		t.Errorf("PDD respondent actions %v; want %v", got, want)
	}
	if !pdd.Fulfilled {
		t.Errorf("a claim on a delivered sale is not fulfilled")
	}
}

func TestOpen_TagsTheOrderNamesTheClaimInItsMediationsAndNotifies(t *testing.T) {
	e := newEnv(t)
	s := e.mustSale(1, false)
	from := e.lastEvent()
	c := e.mustOpen(s, "PNR3430")
	o := e.mustOrder(s.order.ID)
	if !slices.Contains(o.Tags, claims.TagClaimOpened) || !slices.Equal(o.Mediations, []sales.Mediation{{ID: c.ID}}) {
		t.Errorf("order tags %v, mediations %v", o.Tags, o.Mediations)
	}
	want := []string{"post_purchase claims " + claims.Resource(c.ID), fmt.Sprintf("orders_v2 claim_opened /orders/%d", s.order.ID)}
	if got := topics(e.outbox(from)); !slices.Equal(got, want) {
		t.Errorf("events %v; want %v", got, want)
	}
	for _, ev := range e.outbox(from) {
		if ev.UserID != s.seller {
			t.Errorf("event %s to user %d; want the seller %d", ev.Topic, ev.UserID, s.seller)
		}
	}
}

func TestOpen_RefusesWhatCannotBeClaimed(t *testing.T) {
	e := newEnv(t)
	s := e.mustSale(2, false)
	unpaid := e.mustSale(1, false)
	o, err := e.sales.PlaceOrder(ctx, sales.NewOrder{BuyerID: unpaid.buyer, ItemID: unpaid.item, Quantity: 1, Status: "payment_required"})
	if err != nil {
		t.Fatal(err)
	}
	cancelled := e.mustSale(1, false)
	if _, err := e.sales.Cancel(ctx, cancelled.order.ID); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		in   claims.NewClaim
		kind errs.Kind
		msg  string
	}{
		{"NoOrder", claims.NewClaim{ReasonID: "PNR3430"}, errs.Invalid, "The field [order_id] is required: the id of the order claimed"},
		{"NoReason", claims.NewClaim{OrderID: s.order.ID}, errs.Invalid, "The field [reason_id] is required: one of [PNR3430, PDD9549, PDD9550, PDD9551, PDD9939]"},
		{"UnknownReason", claims.NewClaim{OrderID: s.order.ID, ReasonID: "CS1"}, errs.Invalid, "Invalid reason_id: CS1. Valid values are: [PNR3430, PDD9549, PDD9550, PDD9551, PDD9939]"},
		{"OtherType", claims.NewClaim{OrderID: s.order.ID, ReasonID: "PNR3430", Type: "return"}, errs.Invalid, "Invalid type: return. Valid values are: [mediations]"},
		{"WrongResolution", claims.NewClaim{OrderID: s.order.ID, ReasonID: "PNR3430", ExpectedResolution: "return_product"}, errs.Invalid,
			"Invalid expected_resolution: return_product. Valid values for the reason PNR3430 are: [product, refund]"},
		{"UnknownOrder", claims.NewClaim{OrderID: 42, ReasonID: "PNR3430"}, errs.NotFound, "Order does not exist"},
		{"Unpaid", claims.NewClaim{OrderID: o.ID, ReasonID: "PNR3430"}, errs.Invalid, fmt.Sprintf("Order %d is payment_required: only a paid order takes a claim", o.ID)},
		{"Cancelled", claims.NewClaim{OrderID: cancelled.order.ID, ReasonID: "PNR3430"}, errs.Invalid, fmt.Sprintf("Order %d is cancelled: only a paid order takes a claim", cancelled.order.ID)},
		{"PDDBeforeDelivery", claims.NewClaim{OrderID: s.order.ID, ReasonID: "PDD9549"}, errs.Invalid, fmt.Sprintf("Order %d has not been delivered: the reason PDD9549 is for a product received", s.order.ID)},
		{"TooMany", claims.NewClaim{OrderID: s.order.ID, ReasonID: "PNR3430", Quantity: 3}, errs.Invalid, "Invalid quantity: 3. The order has 2 units"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.claims.Open(ctx, tc.in)
			wantErr(t, err, tc.kind, "", tc.msg)
		})
	}
	c := e.mustOpen(s, "PNR3430")
	_, err = e.claims.Open(ctx, claims.NewClaim{OrderID: s.order.ID, ReasonID: "PNR3430"})
	wantErr(t, err, errs.Invalid, "", fmt.Sprintf("Order %d already has the opened claim %d", s.order.ID, c.ID))
	if _, err := e.claims.Refund(ctx, s.seller, c.ID); err != nil {
		t.Fatal(err)
	}
	_, err = e.claims.Open(ctx, claims.NewClaim{OrderID: s.order.ID, ReasonID: "PNR3430"})
	wantErr(t, err, errs.Invalid, "", fmt.Sprintf("Order %d was refunded: it takes no claim", s.order.ID))
}

func TestClaim_OnlyItsPlayersSeeIt(t *testing.T) {
	e := newEnv(t)
	s := e.mustSale(1, false)
	c := e.mustOpen(s, "PNR3430")
	for _, who := range []int64{s.seller, s.buyer} {
		if _, err := e.claims.Claim(ctx, who, c.ID); err != nil {
			t.Errorf("player %d: %v", who, err)
		}
	}
	stranger := e.mustUser("STRANGER")
	_, err := e.claims.Claim(ctx, stranger, c.ID)
	wantErr(t, err, errs.Forbidden, "forbidden_error", "You don't have permission to access the resource")
	_, err = e.claims.Claim(ctx, s.seller, 5999999999)
	wantErr(t, err, errs.NotFound, "business_logic_error", "Resource not found")
}

func TestTimeout_AnUnansweredClaimReadsInDisputeFromItsDueDate(t *testing.T) {
	e := newEnv(t)
	s := e.mustSale(1, false)
	c := e.mustOpen(s, "PNR3430")
	e.advance(48*time.Hour - time.Millisecond)
	if got := e.mustClaim(c.ID); got.Stage != claims.StageClaim {
		t.Fatalf("stage %s a millisecond before the due date", got.Stage)
	}
	from := e.lastEvent()
	e.advance(time.Millisecond + time.Hour)
	got := e.mustClaim(c.ID)
	due := e.stamp(start.Add(48 * time.Hour))
	if got.Stage != claims.StageDispute || got.Status != claims.StatusOpened || got.LastUpdated != due {
		t.Errorf("stage %s status %s last_updated %s; want dispute opened %s", got.Stage, got.Status, got.LastUpdated, due)
	}
	if len(got.Players) != 3 || got.Players[2].Role != claims.RoleMediator || got.Players[2].UserID != claims.MediatorID || got.Players[2].Type != "internal" {
		t.Errorf("players %+v; want the mediator to join", got.Players)
	}
	if a := actions(got, claims.RoleRespondent); !slices.Equal(a, []string{"send_message_to_mediator", "refund"}) {
		t.Errorf("respondent actions in dispute %v", a)
	}
	if evs := e.outbox(from); len(evs) != 0 {
		t.Errorf("a read wrote events %v", topics(evs))
	}
	h, err := e.claims.StatusHistory(ctx, s.seller, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 2 || h[0] != (claims.StatusEntry{Stage: "dispute", Status: "opened", Date: due, ChangeBy: "mediator"}) {
		t.Errorf("status history %+v", h)
	}
	a, err := e.claims.ActionsHistory(ctx, s.buyer, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 2 || a[0].ActionName != "open_dispute" || a[0].PlayerRole != "mediator" || a[0].ActionReasonID == nil ||
		*a[0].ActionReasonID != "respondent_timeout" || a[1].ActionName != "open_claim" || a[1].ClaimStage != nil {
		t.Errorf("actions history %+v", a)
	}
}

func TestExpire_WritesATimeoutAndItsNotificationsOnce(t *testing.T) {
	e := newEnv(t)
	s := e.mustSale(1, false)
	c := e.mustOpen(s, "PNR3430")
	other := e.mustOpen(e.mustSale(1, false), "PNR3430")
	e.mustSend(other.Players[1].UserID, other.ID, claims.RoleComplainant, "Ya lo despaché")
	if n, err := e.claims.Expire(ctx); err != nil || n != 0 {
		t.Fatalf("expire before the due date: %d, %v", n, err)
	}
	e.advance(49 * time.Hour)
	from := e.lastEvent()
	if n, err := e.claims.Expire(ctx); err != nil || n != 1 {
		t.Fatalf("expire: %d, %v; want the unanswered claim only", n, err)
	}
	want := []string{"post_purchase claims " + claims.Resource(c.ID), fmt.Sprintf("orders_v2 claim_dispute /orders/%d", s.order.ID)}
	if got := topics(e.outbox(from)); !slices.Equal(got, want) {
		t.Errorf("events %v; want %v", got, want)
	}
	from = e.lastEvent()
	if n, err := e.claims.Expire(ctx); err != nil || n != 0 {
		t.Errorf("second expire: %d, %v", n, err)
	}
	e.advance(1000 * time.Hour)
	if n, _ := e.claims.Expire(ctx); n != 0 || len(e.outbox(from)) != 0 {
		t.Errorf("a claim in dispute timed out again: %d", n)
	}
	a, _ := e.claims.ActionsHistory(ctx, s.seller, c.ID)
	if len(a) != 2 {
		t.Errorf("actions history after the sweep %+v; want the timeout once", a)
	}
}

func TestSend_TheRespondentsMessageClearsItsMandatoryAction(t *testing.T) {
	e := newEnv(t)
	s := e.mustSale(1, false)
	c := e.mustOpen(s, "PNR3430")
	e.advance(time.Hour)
	from := e.lastEvent()
	e.mustSend(s.seller, c.ID, claims.RoleComplainant, "Hola, ya te envío la etiqueta de devolución.")
	got := e.mustClaim(c.ID)
	if a := actions(got, claims.RoleRespondent); a[0] != "send_message_to_complainant" {
		t.Errorf("respondent actions after its message %v", a)
	}
	want := []string{"post_purchase claims_actions " + claims.Resource(c.ID)}
	if got := topics(e.outbox(from)); !slices.Equal(got, want) {
		t.Errorf("events %v; want %v", got, want)
	}
	e.advance(100 * time.Hour)
	if got := e.mustClaim(c.ID); got.Stage != claims.StageClaim {
		t.Errorf("an answered claim went to %s", got.Stage)
	}
	d, err := e.claims.Detail(ctx, s.buyer, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.DueDate != nil || d.ActionResponsible == nil || *d.ActionResponsible != "seller" {
		t.Errorf("detail %+v", d)
	}
}

func TestSend_NeedsTheActionThatReachesItsReceiver(t *testing.T) {
	e := newEnv(t)
	s := e.mustSale(1, false)
	c := e.mustOpen(s, "PNR3430")
	err := e.claims.Send(ctx, s.seller, c.ID, claims.NewMessage{ReceiverRole: "mediator", Message: "hola"})
	wantErr(t, err, errs.Invalid, "bad_request_error", "Action send_message_to_mediator not available for player")
	err = e.claims.Send(ctx, s.seller, c.ID, claims.NewMessage{ReceiverRole: "respondent", Message: "hola"})
	wantErr(t, err, errs.Invalid, "bad_request_error", "Action send_message_to_respondent not available for player")
	err = e.claims.Send(ctx, s.seller, c.ID, claims.NewMessage{ReceiverRole: "seller", Message: "hola"})
	wantErr(t, err, errs.Invalid, "", "Invalid receiver_role: seller. Valid values are: [complainant, respondent, mediator]")
	err = e.claims.Send(ctx, s.seller, c.ID, claims.NewMessage{ReceiverRole: "complainant", Message: " "})
	wantErr(t, err, errs.Invalid, "", "The field message is required")
	err = e.claims.Send(ctx, s.seller, c.ID, claims.NewMessage{ReceiverRole: "complainant", Message: strings.Repeat("ñ", 2001)})
	wantErr(t, err, errs.Invalid, "", "The message is too long: at most 2000 characters")
	if _, err := e.claims.OpenDispute(ctx, s.seller, c.ID); err != nil {
		t.Fatal(err)
	}
	err = e.claims.Send(ctx, s.seller, c.ID, claims.NewMessage{ReceiverRole: "complainant", Message: "hola"})
	wantErr(t, err, errs.Invalid, "bad_request_error", "Action send_message_to_complainant not available for player")
	e.mustSend(s.seller, c.ID, claims.RoleMediator, "Mi descargo")
	e.mustAct(c.ID, claims.OperatorAction{Role: "mediator", Action: "send_message_to_respondent", Message: "Recibido"})
	e.mustAct(c.ID, claims.OperatorAction{Role: "complainant", Action: "send_message_to_mediator", Message: "No llegó"})
	msgs, err := e.claims.Messages(ctx, s.buyer, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range msgs {
		got = append(got, m.SenderRole+">"+m.ReceiverRole+" "+m.Stage)
	}
	if want := []string{"complainant>mediator dispute", "mediator>respondent dispute", "respondent>mediator dispute"}; !slices.Equal(got, want) {
		t.Errorf("messages %v; want %v (newest first)", got, want)
	}
	stranger := e.mustUser("STRANGER")
	err = e.claims.Send(ctx, stranger, c.ID, claims.NewMessage{ReceiverRole: "mediator", Message: "hola"})
	wantErr(t, err, errs.Forbidden, "forbidden_error", "You don't have permission to access the resource")
}

func TestMessages_HideTheOtherPlayersModeratedMessages(t *testing.T) {
	e := newEnv(t)
	s := e.mustSale(1, false)
	c := e.mustOpen(s, "PNR3430")
	e.mustSend(s.seller, c.ID, claims.RoleComplainant, "Llamame "+claims.ModerationHook)
	e.mustAct(c.ID, claims.OperatorAction{Role: "complainant", Action: "send_message_to_respondent", Message: "¿Y? " + claims.ModerationHook})
	e.mustAct(c.ID, claims.OperatorAction{Role: "complainant", Action: "send_message_to_respondent", Message: "Hola"})
	seller, _ := e.claims.Messages(ctx, s.seller, c.ID)
	buyer, _ := e.claims.Messages(ctx, s.buyer, c.ID)
	if len(seller) != 2 || seller[0].Message != "Hola" || seller[1].Status != claims.MessageModerated || seller[1].SenderRole != "respondent" {
		t.Errorf("the seller sees %+v", seller)
	}
	if seller[1].MessageModeration.Status != "rejected" || *seller[1].MessageModeration.Reason != "OUT_OF_PLACE_LANGUAGE" {
		t.Errorf("moderation %+v", seller[1].MessageModeration)
	}
	if len(buyer) != 2 || buyer[0].Message != "Hola" || buyer[1].SenderRole != "complainant" {
		t.Errorf("the buyer sees %+v", buyer)
	}
	if !strings.HasPrefix(seller[0].Hash, fmt.Sprintf("%d_2_", c.ID)) {
		t.Errorf("hash %s; want {claim}_{n}_{uuid}", seller[0].Hash)
	}
	// A moderated message is no answer: the mandatory action stays.
	if a := actions(e.mustClaim(c.ID), claims.RoleRespondent); !strings.HasPrefix(a[0], "send_message_to_complainant!") {
		t.Errorf("respondent actions %v", a)
	}
}

func TestFiles_AreStoredWholeAndReadBackByThePlayers(t *testing.T) {
	e := newEnv(t)
	s := e.mustSale(1, false)
	c := e.mustOpen(s, "PNR3430")
	data := bytes.Repeat([]byte("0123456789abcdef"), claims.MaxFileSize/16)
	up, err := e.claims.AddFile(ctx, s.seller, c.ID, claims.FileMessage, claims.Upload{Name: "caja.jpg", Data: data})
	if err != nil {
		t.Fatal(err)
	}
	if up.UserID != s.seller || !strings.HasSuffix(up.Name, fmt.Sprintf("_%d.jpg", s.seller)) || len(up.Name) != 36+1+len(fmt.Sprint(s.seller))+4 {
		t.Errorf("uploaded %+v; want {uuid}_{user}.jpg", up)
	}
	info, got, err := e.claims.FileData(ctx, s.buyer, c.ID, claims.FileMessage, up.Name)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) || info.Size != int64(len(data)) || info.Type != "image/jpeg" || info.OriginalFilename != "caja.jpg" ||
		info.DateCreated != "2026-03-04T12:00:00" {
		t.Errorf("file %+v (%d bytes back)", info, len(got))
	}
	e.mustSend(s.seller, c.ID, claims.RoleComplainant, "Foto de la caja", up.Name)
	msgs, _ := e.claims.Messages(ctx, s.buyer, c.ID)
	if len(msgs[0].Attachments) != 1 || msgs[0].Attachments[0].Filename != up.Name || msgs[0].Attachments[0].Size != int64(len(data)) {
		t.Errorf("message attachments %+v", msgs[0].Attachments)
	}
	_, err = e.claims.File(ctx, s.seller, c.ID, claims.FileMessage, "nope.jpg")
	wantErr(t, err, errs.NotFound, "", fmt.Sprintf("Attachment not found [claim: %d - fileName: nope.jpg]", c.ID))
	// The buyer cannot send the seller's file.
	err = e.claims.Send(ctx, s.buyer, c.ID, claims.NewMessage{ReceiverRole: "respondent", Message: "x", Attachments: []string{up.Name}})
	wantErr(t, err, errs.Invalid, "business_logic_error", fmt.Sprintf("Attachment not found [claim: %d - fileName: %s]", c.ID, up.Name))
	ret, err := e.claims.AddFile(ctx, s.seller, c.ID, claims.FileReturn, claims.Upload{Name: "a.png", Data: []byte("png")})
	if err != nil || !strings.HasPrefix(ret.Name, fmt.Sprintf("%d_", s.seller)) || !strings.HasSuffix(ret.Name, ".png") {
		t.Errorf("return file %+v, %v; want {user}_{uuid}.png", ret, err)
	}
}

func TestFiles_RefuseWhatAClaimDoesNotTake(t *testing.T) {
	e := newEnv(t)
	s := e.mustSale(1, false)
	c := e.mustOpen(s, "PNR3430")
	for _, tc := range []struct {
		name, file string
		kind       string
		size       int
		code, msg  string
	}{
		{"Empty", "a.jpg", claims.FileMessage, 0, "bad_request", "File attached is empty"},
		{"Name", "a b.jpg", claims.FileMessage, 1, "bad_request", "Invalid file name: it must have at most 125 characters of a-z, A-Z, 0-9, '.', '_' and '-'"},
		{"LongName", strings.Repeat("a", 122) + ".jpg", claims.FileMessage, 1, "bad_request", "Invalid file name: it must have at most 125 characters of a-z, A-Z, 0-9, '.', '_' and '-'"},
		{"Type", "a.gif", claims.FileEvidence, 1, "bad_request", "Invalid file type: only JPG, PNG and PDF files are allowed"},
		{"Size", "a.pdf", claims.FileMessage, claims.MaxFileSize + 1, "bad_request", "File attachment is bigger than 5 Mb."},
		{"ReturnType", "a.gif", claims.FileReturn, 1, "bad_request_error", "Invalid mime_type"},
		{"ReturnName", "a/b.png", claims.FileReturn, 1, "bad_request_error", "Invalid file_name: a/b.png"},
		{"ReturnEmpty", "a.png", claims.FileReturn, 0, "bad_request_error", fmt.Sprintf("Error retrieving uploaded file. claim_id: %d", c.ID)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.claims.AddFile(ctx, s.seller, c.ID, tc.kind, claims.Upload{Name: tc.file, Data: make([]byte, tc.size)})
			wantErr(t, err, errs.Invalid, tc.code, tc.msg)
		})
	}
	_, err := e.claims.AddFile(ctx, s.buyer, c.ID, claims.FileEvidence, claims.Upload{Name: "a.png", Data: []byte("x")})
	wantErr(t, err, errs.Forbidden, "forbidden_error", "You don't have permission to access the resource")
	_, err = e.claims.AddFile(ctx, s.buyer, c.ID, claims.FileReturn, claims.Upload{Name: "a.png", Data: []byte("x")})
	wantErr(t, err, errs.Invalid, "bad_request_error", fmt.Sprintf("Invalid roleId :%d in claim :%d", s.buyer, c.ID))
}

func TestOpenDispute_AddsTheMediatorAndLeavesTheSellerItsMessageToIt(t *testing.T) {
	e := newEnv(t)
	s := e.mustSale(1, true)
	c := e.mustOpen(s, "PDD9549")
	e.advance(time.Hour)
	from := e.lastEvent()
	got, err := e.claims.OpenDispute(ctx, s.seller, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Stage != claims.StageDispute || got.Status != claims.StatusOpened || len(got.Players) != 3 {
		t.Errorf("claim %+v", got)
	}
	if a := actions(got, claims.RoleRespondent); !slices.Equal(a, []string{"send_message_to_mediator", "refund"}) {
		t.Errorf("respondent actions %v", a)
	}
	if a := actions(got, claims.RoleMediator); !slices.Equal(a, []string{"send_message_to_complainant", "send_message_to_respondent"}) {
		t.Errorf("mediator actions %v", a)
	}
	want := []string{"post_purchase claims_actions " + claims.Resource(c.ID), "post_purchase claims " + claims.Resource(c.ID),
		fmt.Sprintf("orders_v2 claim_dispute /orders/%d", s.order.ID)}
	if got := topics(e.outbox(from)); !slices.Equal(got, want) {
		t.Errorf("events %v; want %v", got, want)
	}
	_, err = e.claims.OpenDispute(ctx, s.seller, c.ID)
	wantErr(t, err, errs.Invalid, "bad_request_error", "Action open_dispute not available for player")
	_, err = e.claims.AllowReturn(ctx, s.seller, c.ID)
	wantErr(t, err, errs.Invalid, "bad_request_error", "Action allow_return not available for player")
	d, _ := e.claims.Detail(ctx, s.seller, c.ID)
	if d.DueDate != nil || *d.ActionResponsible != "mediator" {
		t.Errorf("detail in dispute %+v", d)
	}
	if st := e.orderClaims(s.order.ID); !st.Mediation || !st.MediationSince.Equal(start.Add(time.Hour)) || st.ClaimID != c.ID || st.Refunded {
		t.Errorf("claim state %+v", st)
	}
}

func TestRefund_ClosesTheClaimAndRefundsThePaymentOnce(t *testing.T) {
	e := newEnv(t)
	s := e.mustSale(2, false)
	c := e.mustOpen(s, "PNR3430")
	from := e.lastEvent()
	res, err := e.claims.Refund(ctx, s.seller, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Status != "rejected" || res[1].PlayerRole != "respondent" || res[1].ExpectedResolution != "refund" || res[1].Status != "accepted" {
		t.Errorf("expected resolutions %+v", res)
	}
	got := e.mustClaim(c.ID)
	if got.Status != claims.StatusClosed || got.Resolution == nil || got.Resolution.Reason != "payment_refunded" ||
		!slices.Equal(got.Resolution.Benefited, []string{"complainant"}) || got.Resolution.ClosedBy != "respondent" {
		t.Errorf("claim %+v resolution %+v", got, got.Resolution)
	}
	o := e.mustOrder(s.order.ID)
	p := o.Payments[0]
	if p.Status != "refunded" || p.StatusDetail != "refunded" || p.TransactionAmountRefunded != "3001" {
		t.Errorf("payment %+v", p)
	}
	if !slices.Contains(o.Tags, claims.TagClaimClosed) || slices.Contains(o.Tags, claims.TagClaimOpened) {
		t.Errorf("order tags %v", o.Tags)
	}
	want := []string{"post_purchase claims_actions " + claims.Resource(c.ID), "post_purchase claims " + claims.Resource(c.ID),
		fmt.Sprintf("orders_v2 claim_closed /orders/%d", s.order.ID)}
	if got := topics(e.outbox(from)); !slices.Equal(got, want) {
		t.Errorf("events %v; want %v", got, want)
	}
	_, err = e.claims.Refund(ctx, s.seller, c.ID)
	wantErr(t, err, errs.Invalid, "bad_request_error", "Action refund not available for player")
	_, err = e.claims.Refund(ctx, s.buyer, c.ID)
	wantErr(t, err, errs.Invalid, "bad_request_error", "Action refund not available for player")
	st := e.orderClaims(s.order.ID)
	if !st.Refunded || st.ClaimID != c.ID || st.Mediation {
		t.Errorf("claim state %+v", st)
	}
}

func TestPartialRefund_OffersAreNinetyToTenPercentOfTheClaimedAmount(t *testing.T) {
	e := newEnv(t)
	s := e.mustSale(1, true)
	c := e.mustOpen(s, "PDD9549")
	offers, err := e.claims.PartialRefundOffers(ctx, s.seller, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if offers.CurrencyID != "ARS" || len(offers.AvailableOffers) != 9 || len(offers.Recommendations) != 0 || len(offers.Restrictions) != 0 {
		t.Fatalf("offers %+v", offers)
	}
	if o := offers.AvailableOffers[0]; o.Percentage != "90.0" || o.Amount != "1350.45" {
		t.Errorf("first offer %+v; want 90 %% of 1500.50", o)
	}
	if o := offers.AvailableOffers[4]; o.Percentage != "50.0" || o.Amount != "750.25" {
		t.Errorf("50 %% offer %+v; want 750.25 (750.25)", o)
	}
	pnr := e.mustOpen(e.mustSale(1, false), "PNR3430")
	_, err = e.claims.PartialRefundOffers(ctx, claims.Operator, pnr.ID)
	wantErr(t, err, errs.Invalid, claims.CodeNotEligible, fmt.Sprintf("Claim %d is not eligible for a partial refund", pnr.ID))
}

func TestPartialRefund_AcceptedByTheBuyerClosesTheClaimAndRefundsTheOffer(t *testing.T) {
	e := newEnv(t)
	s := e.mustSale(1, true)
	c := e.mustOpen(s, "PDD9549")
	pct := jsonNumber("35")
	_, err := e.claims.OfferPartialRefund(ctx, s.seller, c.ID, claims.PartialRefund{Percentage: &pct})
	wantErr(t, err, errs.Invalid, "error checking configuration percentage", "Percentage not found 35.0")
	pct = "100"
	_, err = e.claims.OfferPartialRefund(ctx, s.seller, c.ID, claims.PartialRefund{Percentage: &pct})
	wantErr(t, err, errs.Invalid, "error checking configuration percentage", "Percentage not found 100.0")
	res, err := e.claims.OfferPartialRefund(ctx, s.seller, c.ID, claims.PartialRefund{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].ExpectedResolution != "return_product" || res[0].Status != "rejected" ||
		res[1].ExpectedResolution != "partial_refund" || res[1].Status != "pending" ||
		!slices.Equal(res[1].Details, []claims.KeyValue{{"percentage", "50.0"}, {"seller_amount", "750.25"}, {"seller_currency", "ARS"}}) {
		t.Errorf("expected resolutions %+v", res)
	}
	_, err = e.claims.OfferPartialRefund(ctx, s.seller, c.ID, claims.PartialRefund{})
	wantErr(t, err, errs.Invalid, "bad_request_error", "Action allow_partial_refund not available for player")
	got := e.mustAct(c.ID, claims.OperatorAction{Role: "complainant", Action: "accept_partial_refund"})
	if got.Status != claims.StatusClosed || got.Resolution.Reason != "partial_refunded" {
		t.Errorf("claim %+v", got)
	}
	p := e.mustOrder(s.order.ID).Payments[0]
	if p.Status != "refunded" || p.StatusDetail != "partially_refunded" || p.TransactionAmountRefunded != "750.25" {
		t.Errorf("payment %+v", p)
	}
}

func TestPartialRefund_RejectedLetsTheBuyerOpenADispute(t *testing.T) {
	e := newEnv(t)
	s := e.mustSale(1, true)
	c := e.mustOpen(s, "PDD9551")
	pct := jsonNumber("90")
	if _, err := e.claims.OfferPartialRefund(ctx, s.seller, c.ID, claims.PartialRefund{Percentage: &pct}); err != nil {
		t.Fatal(err)
	}
	e.mustAct(c.ID, claims.OperatorAction{Role: "complainant", Action: "reject_partial_refund"})
	_, err := e.claims.Act(ctx, c.ID, claims.OperatorAction{Role: "complainant", Action: "accept_partial_refund"})
	wantErr(t, err, errs.Invalid, "bad_request_error", "Action accept_partial_refund not available for player")
	got := e.mustAct(c.ID, claims.OperatorAction{Role: "complainant", Action: "open_dispute"})
	if got.Stage != claims.StageDispute {
		t.Errorf("stage %s", got.Stage)
	}
	res, _ := e.claims.ExpectedResolutions(ctx, s.buyer, c.ID)
	if res[1].Status != "rejected" {
		t.Errorf("the offer is %s after the buyer's rejection", res[1].Status)
	}
	if p := e.mustOrder(s.order.ID).Payments[0]; p.Status != "approved" {
		t.Errorf("payment %s after a rejected offer", p.Status)
	}
	got = e.mustAct(c.ID, claims.OperatorAction{Role: "mediator", Action: "resolve",
		Resolution: &claims.OperatorResolution{Reason: "coverage_decision", Benefited: []string{"complainant"}}})
	if got.Status != claims.StatusClosed || !got.Resolution.AppliedCoverage || got.Resolution.ClosedBy != "mediator" {
		t.Errorf("claim %+v resolution %+v", got, got.Resolution)
	}
	if p := e.mustOrder(s.order.ID).Payments[0]; p.Status != "refunded" || p.TransactionAmountRefunded != "1500.5" {
		t.Errorf("payment %+v after the mediator's decision for the buyer", p)
	}
	rep, _ := e.claims.AffectsReputation(ctx, s.seller, c.ID)
	if rep.AffectsReputation != "affected" {
		t.Errorf("reputation %+v after a decision for the buyer alone", rep)
	}
}

func TestAllowReturn_CreatesAReturnWithItsLabel(t *testing.T) {
	e := newEnv(t)
	s := e.mustSale(1, true)
	c := e.mustOpen(s, "PDD9939")
	e.advance(time.Hour)
	from := e.lastEvent()
	res, err := e.claims.AllowReturn(ctx, s.seller, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].ExpectedResolution != "return_product" || res[0].Status != "pending" {
		t.Errorf("expected resolutions %+v", res)
	}
	got := e.mustClaim(c.ID)
	if !slices.Equal(got.RelatedEntities, []string{"return"}) || slices.Contains(actions(got, claims.RoleRespondent), "allow_return") {
		t.Errorf("claim related %v, actions %v", got.RelatedEntities, actions(got, claims.RoleRespondent))
	}
	rt, err := e.claims.ClaimReturn(ctx, s.buyer, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(fmt.Sprint(rt.ID)) != 8 || rt.ClaimID != c.ID || rt.Status != "label_generated" || rt.StatusMoney != "retained" ||
		rt.Subtype != "return_total" || rt.RefundAt != "delivered" || rt.ResourceID != s.order.ID ||
		rt.DateCreated != "2026-03-04T16:00:00.000+00:00" || rt.DateClosed != nil {
		t.Errorf("return %+v", rt)
	}
	if sh := rt.Shipments[0]; sh.Status != "ready_to_ship" || sh.Type != "return" || sh.Destination.Name != "seller_address" {
		t.Errorf("return shipment %+v", sh)
	}
	if o := rt.Orders[0]; o.ItemID != s.item || o.TotalQuantity != "1.0" || o.ReturnQuantity != "1.0" || o.ContextType != "total" {
		t.Errorf("return order %+v", o)
	}
	want := []string{"post_purchase claims_actions " + claims.Resource(c.ID)}
	if got := topics(e.outbox(from)); !slices.Equal(got, want) {
		t.Errorf("events %v; want %v", got, want)
	}
	h, _ := e.claims.ActionsHistory(ctx, s.seller, c.ID)
	if h[0].ActionName != "generate_return" || h[1].ActionName != "allow_return" || *h[1].ClaimStage != "claim" {
		t.Errorf("actions history %+v", h)
	}
	_, err = e.claims.ClaimReturn(ctx, s.seller, 5999999999)
	wantErr(t, err, errs.NotFound, "not_found_error", "claim id: 5999999999 not found")
	other := e.mustOpen(e.mustSale(1, false), "PNR3430")
	_, err = e.claims.ClaimReturn(ctx, claims.Operator, other.ID)
	wantErr(t, err, errs.NotFound, "not_found_error", "return not found")
	_, err = e.claims.ClaimReturn(ctx, s.buyer, other.ID)
	wantErr(t, err, errs.Invalid, "bad_request_error", fmt.Sprintf("Invalid roleId :%d in claim :%d", s.buyer, other.ID))
}

func TestReturn_ReviewOKRefundsClosesTheClaimAndRestocksTheUnitsOnce(t *testing.T) {
	e := newEnv(t)
	s := e.mustSale(2, true)
	before := e.stockAt(s)
	c := e.mustOpen(s, "PDD9549")
	rt := e.mustDeliveredReturn(s, c.ID)
	got := e.mustClaim(c.ID)
	due := e.stamp(start.Add(72 * time.Hour))
	if a := actions(got, claims.RoleRespondent); !slices.Contains(a, "return_review_ok!"+due) || !slices.Contains(a, "return_review_fail!"+due) {
		t.Errorf("respondent actions %v; want the mandatory reviews due %s", a, due)
	}
	_, err := e.claims.ReviewReturn(ctx, s.buyer, rt.ID, nil)
	wantErr(t, err, errs.Invalid, "bad_request_error", "Not valid action return_review_ok for player role complainant")
	rt, err = e.claims.ReviewReturn(ctx, s.seller, rt.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rt.StatusMoney != "refunded" || !slices.Equal(rt.RelatedEntities, []string{"reviews"}) {
		t.Errorf("return %+v", rt)
	}
	got = e.mustClaim(c.ID)
	if got.Status != claims.StatusClosed || got.Resolution.Reason != "item_returned" {
		t.Errorf("claim %+v", got)
	}
	if after := e.stockAt(s); after != before+2 {
		t.Errorf("stock %d after the return; want %d", after, before+2)
	}
	p := e.mustOrder(s.order.ID).Payments[0]
	if p.Status != "refunded" || p.TransactionAmountRefunded != "3001" {
		t.Errorf("payment %+v", p)
	}
	rv, err := e.claims.ReturnReviews(ctx, s.seller, rt.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r := rv.Reviews[0].ResourceReviews[0]; *r.SellerStatus != "success" || *r.Benefited != "buyer" || r.Stage != "closed" {
		t.Errorf("review %+v", r)
	}
	_, err = e.claims.ReviewReturn(ctx, s.seller, rt.ID, nil)
	wantErr(t, err, errs.Invalid, "bad_request_error", "Not valid action return_review_ok for player role respondent")
	if after := e.stockAt(s); after != before+2 {
		t.Errorf("stock %d after a second review; want %d", after, before+2)
	}
}

func TestReturn_APartialReturnGivesBackItsOwnUnitsOnly(t *testing.T) {
	e := newEnv(t)
	s := e.mustSale(3, true)
	before := e.stockAt(s)
	c, err := e.claims.Open(ctx, claims.NewClaim{OrderID: s.order.ID, ReasonID: "PDD9549", Quantity: 2})
	if err != nil {
		t.Fatal(err)
	}
	rt := e.mustDeliveredReturn(s, c.ID)
	if rt.Subtype != "return_partial" {
		t.Errorf("subtype %s; want return_partial", rt.Subtype)
	}
	if _, err := e.claims.ReviewReturn(ctx, s.seller, rt.ID, nil); err != nil {
		t.Fatal(err)
	}
	if after := e.stockAt(s); after != before+2 {
		t.Errorf("stock %d after a return of 2 of 3 units; want %d", after, before+2)
	}
	if p := e.mustOrder(s.order.ID).Payments[0]; p.TransactionAmountRefunded != "3001" {
		t.Errorf("refunded %s; want the 2 units' 3001", p.TransactionAmountRefunded)
	}
}

func TestReturn_ReviewFailedTakesTheClaimToTheMediator(t *testing.T) {
	e := newEnv(t)
	s := e.mustSale(1, true)
	before := e.stockAt(s)
	c := e.mustOpen(s, "PDD9549")
	rt := e.mustDeliveredReturn(s, c.ID)
	_, err := e.claims.ReviewReturn(ctx, s.seller, rt.ID, []claims.ReviewFailure{{Reason: "SRF2", Message: "Llegó roto"}})
	wantErr(t, err, errs.Invalid, "bad_request_error", "Required request body is missing or incorrect, please see the documentation.")
	_, err = e.claims.ReviewReturn(ctx, s.seller, rt.ID, []claims.ReviewFailure{{Reason: "SRF2", Message: "Llegó roto", Attachments: []string{"x.png"}}})
	wantErr(t, err, errs.Invalid, "bad_request_error", "Invalid file_name: x.png")
	f, err := e.claims.AddFile(ctx, s.seller, c.ID, claims.FileReturn, claims.Upload{Name: "roto.png", Data: []byte("png")})
	if err != nil {
		t.Fatal(err)
	}
	rt, err = e.claims.ReviewReturn(ctx, s.seller, rt.ID, []claims.ReviewFailure{{Reason: "SRF2", Message: "Llegó roto", Attachments: []string{f.Name}}})
	if err != nil {
		t.Fatal(err)
	}
	if rt.StatusMoney != "retained" || !slices.Equal(rt.RelatedEntities, []string{"reviews"}) {
		t.Errorf("return %+v", rt)
	}
	got := e.mustClaim(c.ID)
	if got.Stage != claims.StageDispute || got.Status != claims.StatusOpened {
		t.Errorf("claim %s %s", got.Stage, got.Status)
	}
	rv, _ := e.claims.ReturnReviews(ctx, s.buyer, rt.ID)
	if r := rv.Reviews[0].ResourceReviews[0]; *r.SellerStatus != "claimed" || *r.SellerReason != "SRF2" {
		t.Errorf("review %+v", r)
	}
	got = e.mustAct(c.ID, claims.OperatorAction{Role: "mediator", Action: "resolve",
		Resolution: &claims.OperatorResolution{Reason: "warehouse_decision", Benefited: []string{"respondent"}}})
	if got.Status != claims.StatusClosed {
		t.Errorf("claim %+v", got)
	}
	rt, _ = e.claims.ClaimReturn(ctx, s.seller, c.ID)
	if rt.StatusMoney != "available" || e.stockAt(s) != before || e.mustOrder(s.order.ID).Payments[0].Status != "approved" {
		t.Errorf("return money %s, stock %d, payment %s after a decision for the seller", rt.StatusMoney, e.stockAt(s), e.mustOrder(s.order.ID).Payments[0].Status)
	}
}

func TestReturn_UnreviewedForThreeDaysRefundsTheBuyer(t *testing.T) {
	e := newEnv(t)
	s := e.mustSale(1, true)
	before := e.stockAt(s)
	c := e.mustOpen(s, "PDD9549")
	e.mustSend(s.seller, c.ID, claims.RoleComplainant, "Devolvelo")
	rt := e.mustDeliveredReturn(s, c.ID)
	e.advance(72 * time.Hour)
	got := e.mustClaim(c.ID)
	if got.Status != claims.StatusClosed || got.Resolution.Reason != "item_returned" || got.Resolution.ClosedBy != "mediator" {
		t.Fatalf("claim read after the window %+v", got)
	}
	if p := e.mustOrder(s.order.ID).Payments[0]; p.Status != "approved" {
		t.Errorf("a read refunded the payment: %s", p.Status)
	}
	from := e.lastEvent()
	if n, err := e.claims.Expire(ctx); err != nil || n != 1 {
		t.Fatalf("expire: %d %v", n, err)
	}
	if p := e.mustOrder(s.order.ID).Payments[0]; p.Status != "refunded" {
		t.Errorf("payment %s after the sweep", p.Status)
	}
	if e.stockAt(s) != before+1 {
		t.Errorf("stock %d; want %d", e.stockAt(s), before+1)
	}
	// The units back in stock change the item and its stock too.
	want := []string{"post_purchase claims_actions " + claims.Resource(c.ID), "post_purchase claims " + claims.Resource(c.ID),
		"items updated /items/" + s.item, "stock-location updated /user-products/" + s.userProduct + "/stock",
		fmt.Sprintf("orders_v2 claim_closed /orders/%d", s.order.ID)}
	if got := topics(e.outbox(from)); !slices.Equal(got, want) {
		t.Errorf("events %v; want %v", got, want)
	}
	rv, _ := e.claims.ReturnReviews(ctx, s.seller, rt.ID)
	if r := rv.Reviews[0].ResourceReviews[0]; r.Stage != "timeout" {
		t.Errorf("review %+v", r)
	}
}

func TestReturn_CancelledClosesTheClaimAndGivesTheMoneyToTheSeller(t *testing.T) {
	e := newEnv(t)
	s := e.mustSale(1, true)
	c := e.mustOpen(s, "PDD9939")
	if _, err := e.claims.AllowReturn(ctx, s.seller, c.ID); err != nil {
		t.Fatal(err)
	}
	rt, _ := e.claims.ClaimReturn(ctx, s.seller, c.ID)
	_, err := e.claims.MoveReturn(ctx, rt.ID, claims.ReturnMove{Status: "delivered"})
	wantErr(t, err, errs.Invalid, "", fmt.Sprintf("Return %d is label_generated: it cannot move to delivered. Next statuses: [scheduled, shipped, pending_cancel, cancelled, pending_expiration, expired]", rt.ID))
	_, err = e.claims.MoveReturn(ctx, rt.ID, claims.ReturnMove{Status: "lost"})
	wantErr(t, err, errs.Invalid, "", "Invalid status: lost. Valid values are: [pending, label_generated, scheduled, shipped, pending_delivered, delivered, not_delivered, return_to_buyer, pending_cancel, cancelled, pending_failure, failed, pending_expiration, expired]")
	_, err = e.claims.MoveReturn(ctx, 1, claims.ReturnMove{Status: "shipped"})
	wantErr(t, err, errs.NotFound, "not_found_error", "return not found")
	rt, err = e.claims.MoveReturn(ctx, rt.ID, claims.ReturnMove{Status: "pending_cancel"})
	if err != nil || rt.StatusMoney != "available" || rt.Shipments[0].Status != "cancelled" {
		t.Fatalf("return %+v, %v", rt, err)
	}
	if got := e.mustClaim(c.ID); got.Status != claims.StatusOpened {
		t.Errorf("claim closed before the return is cancelled")
	}
	rt, err = e.claims.MoveReturn(ctx, rt.ID, claims.ReturnMove{Status: "cancelled"})
	if err != nil || rt.DateClosed == nil {
		t.Fatalf("return %+v, %v", rt, err)
	}
	got := e.mustClaim(c.ID)
	if got.Status != claims.StatusClosed || got.Resolution.Reason != "return_canceled" || !slices.Equal(got.Resolution.Benefited, []string{"respondent"}) {
		t.Errorf("claim %+v", got.Resolution)
	}
	_, err = e.claims.MoveReturn(ctx, rt.ID, claims.ReturnMove{Status: "shipped"})
	wantErr(t, err, errs.Invalid, "", fmt.Sprintf("Return %d is cancelled: it moves no more", rt.ID))
}

func TestEvidence_EachMethodRequiresItsFieldsAndIsSentOnce(t *testing.T) {
	e := newEnv(t)
	s := e.mustSale(1, false)
	c := e.mustOpen(s, "PNR3430")
	for _, tc := range []struct {
		name string
		in   claims.NewEvidence
		msg  string
	}{
		{"NoType", claims.NewEvidence{}, "The field type is required: shipping_evidence"},
		{"NoMethod", claims.NewEvidence{Type: "shipping_evidence"}, "The field shipping_method is required: one of [mail, entrusted, personal_delivery, email]"},
		{"BadMethod", claims.NewEvidence{Type: "shipping_evidence", ShippingMethod: "pigeon"}, "Invalid shipping_method: pigeon. Valid values are: [mail, entrusted, personal_delivery, email]"},
		{"Mail", claims.NewEvidence{Type: "shipping_evidence", ShippingMethod: "mail", ShippingCompanyName: "Correo"}, "The field date_shipped is required for the shipping_method mail"},
		{"Entrusted", claims.NewEvidence{Type: "shipping_evidence", ShippingMethod: "entrusted", ShippingCompanyName: "Andreani", DateShipped: "2026-03-01"}, "The field destination_agency is required for the shipping_method entrusted"},
		{"Email", claims.NewEvidence{Type: "shipping_evidence", ShippingMethod: "email", DateShipped: "2026-03-01"}, "The field receiver_email is required for the shipping_method email"},
		{"NotTaken", claims.NewEvidence{Type: "shipping_evidence", ShippingMethod: "personal_delivery", TrackingNumber: "X1"}, "The field tracking_number is not taken for the shipping_method personal_delivery"},
		{"BadDate", claims.NewEvidence{Type: "shipping_evidence", ShippingMethod: "mail", ShippingCompanyName: "Correo", DateShipped: "ayer"}, "Invalid date_shipped: ayer. It must be a date (2024-03-10) or a date and time (2024-03-10T05:00:00.000-03:00)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.claims.AddEvidence(ctx, s.seller, c.ID, tc.in)
			wantErr(t, err, errs.Invalid, "bad_request", tc.msg)
		})
	}
	ev, err := e.claims.AddEvidence(ctx, s.seller, c.ID, claims.NewEvidence{Type: "shipping_evidence", ShippingMethod: "mail",
		ShippingCompanyName: "Correo Argentino", DateShipped: "2026-03-01T05:00:00.000-03:00", TrackingNumber: "XX123456789AR"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ev) != 1 || *ev[0].DateShipped != "2026-03-01T05:00:00.000-03:00" || ev[0].DateDelivered != nil || *ev[0].TrackingNumber != "XX123456789AR" {
		t.Errorf("evidences %+v", ev)
	}
	_, err = e.claims.AddEvidence(ctx, s.seller, c.ID, claims.NewEvidence{Type: "shipping_evidence", ShippingMethod: "personal_delivery"})
	wantErr(t, err, errs.Invalid, "bad_request_error", "Action add_shipping_evidence not available for player")
	h, err := e.claims.AddHandlingEvidence(ctx, s.seller, c.ID, claims.NewEvidence{Type: "handling_shipping_evidence", HandlingDate: "2026-03-06"})
	if err != nil || *h.HandlingDate != "2026-03-06T00:00:00.000-03:00" {
		t.Errorf("handling evidence %+v, %v", h, err)
	}
	list, _ := e.claims.Evidences(ctx, s.buyer, c.ID)
	if len(list) != 2 {
		t.Errorf("evidences %+v", list)
	}
	other := e.mustOpen(e.mustSale(1, false), "PNR3430")
	if _, err := e.claims.OpenDispute(ctx, other.Players[1].UserID, other.ID); err != nil {
		t.Fatal(err)
	}
	_, err = e.claims.AddEvidence(ctx, other.Players[1].UserID, other.ID, claims.NewEvidence{Type: "shipping_evidence", ShippingMethod: "personal_delivery"})
	wantErr(t, err, errs.Invalid, "bad_request_error", "Action add_shipping_evidence not available for player")
}

func TestSearch_FindsOnlyTheCallersClaimsByItsFilters(t *testing.T) {
	e := newEnv(t)
	s := e.mustSale(1, false)
	c1 := e.mustOpen(s, "PNR3430")
	var ids []int64
	for range 3 {
		e.advance(time.Minute)
		s2 := e.mustSaleOf(s.seller, s.item, s.userProduct, s.store, 1, true)
		ids = append(ids, e.mustOpen(s2, "PDD9549").ID)
	}
	if _, err := e.claims.Refund(ctx, s.seller, ids[0]); err != nil {
		t.Fatal(err)
	}
	search := func(caller int64, query string) (claims.SearchResult, error) {
		t.Helper()
		v, err := urlValues(query)
		if err != nil {
			t.Fatal(err)
		}
		q, err := claims.ParseSearch(v)
		if err != nil {
			return claims.SearchResult{}, err
		}
		return e.claims.Search(ctx, caller, q)
	}
	got := func(r claims.SearchResult) []int64 {
		var out []int64
		for _, c := range r.Data {
			out = append(out, c.ID)
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		caller int64
		query  string
		want   []int64
		total  int
	}{
		{"AllNewestFirst", s.seller, fmt.Sprintf("players.role=respondent&players.user_id=%d", s.seller), []int64{ids[2], ids[1], ids[0], c1.ID}, 4},
		{"Opened", s.seller, fmt.Sprintf("players.role=respondent&players.user_id=%d&status=opened", s.seller), []int64{ids[2], ids[1], c1.ID}, 3},
		{"Closed", s.seller, "status=closed", []int64{ids[0]}, 1},
		{"Paged", s.seller, "status=opened&limit=2&offset=1&sort=date_created:asc", []int64{ids[1], ids[2]}, 3},
		{"AsComplainant", s.seller, fmt.Sprintf("players.role=complainant&players.user_id=%d", s.seller), nil, 0},
		{"ByReason", s.seller, "reason_id=PNR3430", []int64{c1.ID}, 1},
		{"ByStage", s.seller, "stage=claim&status=opened", []int64{ids[2], ids[1], c1.ID}, 3},
		{"ByOrder", s.seller, fmt.Sprintf("order_id=%d", s.order.ID), []int64{c1.ID}, 1},
		{"ByPack", s.buyer, fmt.Sprintf("pack_id=%d", s.order.PackID), []int64{c1.ID}, 1},
		{"ByPayment", s.seller, fmt.Sprintf("payment_id=%d", s.order.Payments[0].ID), []int64{c1.ID}, 1},
		{"ByResource", s.seller, fmt.Sprintf("resource=order&resource_id=%d", s.order.ID), []int64{c1.ID}, 1},
		{"ByID", s.buyer, fmt.Sprintf("id=%d", c1.ID), []int64{c1.ID}, 1},
		{"BuyerSeesItsOwn", s.buyer, "status=opened", []int64{c1.ID}, 1},
		{"StrangerByOrder", e.mustUser("X"), fmt.Sprintf("order_id=%d", s.order.ID), nil, 0},
		{"OtherType", s.seller, "type=return", nil, 0},
		{"ByLastUpdated", s.seller, "status=opened&sort=last_updated:asc", []int64{c1.ID, ids[1], ids[2]}, 3},
		{"ByDateRange", s.seller, "range=date_created:after:2026-03-04T12:01:00.000-0300,before:2026-03-04T12:02:00.000-0300", []int64{ids[1], ids[0]}, 2},
		{"LimitClamped", s.seller, "status=opened&limit=500", []int64{ids[2], ids[1], c1.ID}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := search(tc.caller, tc.query)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got(r), tc.want) || r.Paging.Total != tc.total {
				t.Errorf("%s: %v total %d; want %v total %d", tc.query, got(r), r.Paging.Total, tc.want, tc.total)
			}
		})
	}
	r, _ := search(s.seller, "status=opened&limit=500")
	if r.Paging.Limit != 100 {
		t.Errorf("limit %d; want 500 clamped to 100", r.Paging.Limit)
	}
}

func TestParseSearch_RefusesQueriesWithoutFiltersOrHalfAPair(t *testing.T) {
	for _, tc := range []struct{ query, code, msg string }{
		{"limit=10&sort=date_created:desc", "invalid_query", "at least any of these filters: id, type, stage, status, resource, resource_id, reason_id, site_id, players.role, players.user_id, order_id, pack_id, payment_id, parent_id, date_created, last_updated"},
		{"players.role=respondent", "invalid_params", "Invalid parameters. At least submit some of these filters: [resource and resource_id] [players.role and players.user_id]..."},
		{"resource_id=1", "invalid_params", "Invalid parameters. At least submit some of these filters: [resource and resource_id] [players.role and players.user_id]..."},
		{"order_id=1&pack_id=2", "invalid_params", "Invalid parameters. order_id and pack_id cannot be combined"},
		{"status=resolved", "invalid_params", "Invalid parameters. status: resolved is not a valid value"},
		{"order_id=abc", "invalid_params", "Invalid parameters. order_id: abc is not a valid id"},
		{"status=opened&offset=10000", "bad_request", "Invalid offset: 10000. The maximum is 9999"},
		{"status=opened&limit=0", "bad_request", "Invalid limit: 0. It must be a positive integer"},
		{"status=opened&limit=x", "bad_request", "Invalid limit: x. It must be a non-negative integer"},
		{"status=opened&sort=id:asc", "bad_request", "Invalid sort: id:asc. Valid values are: [date_created:asc, date_created:desc, last_updated:asc, last_updated:desc]"},
		{"range=price:after:1", "invalid_params", "Invalid parameters. range: price:after:1 names no date field (date_created, last_updated)"},
	} {
		v, err := urlValues(tc.query)
		if err != nil {
			t.Fatal(err)
		}
		_, err = claims.ParseSearch(v)
		wantErr(t, err, errs.Invalid, tc.code, tc.msg)
	}
}

func TestDetail_NamesTheDueDateInTheSitesWords(t *testing.T) {
	e := newEnv(t)
	s := e.mustSale(1, true)
	c := e.mustOpen(s, "PDD9549")
	d, err := e.claims.Detail(ctx, s.buyer, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	due := "2026-03-06T12:00:00.000-03:00"
	want := claims.Detail{DueDate: &due, ActionResponsible: ptr("seller"), Title: "Reclamo abierto por producto dañado",
		Description: "Respondé antes del viernes 6 de marzo para resolverlo.", Problem: "Nos dijiste que el producto llegó dañado"}
	if *d.DueDate != *want.DueDate || *d.ActionResponsible != *want.ActionResponsible || d.Title != want.Title ||
		d.Description != want.Description || d.Problem != want.Problem {
		t.Errorf("detail %+v; want %+v", d, want)
	}
	rep, _ := e.claims.AffectsReputation(ctx, s.seller, c.ID)
	if rep != (claims.Reputation{AffectsReputation: "not_affected", HasIncentive: true, DueDate: due}) {
		t.Errorf("reputation %+v", rep)
	}
	e.advance(49 * time.Hour)
	rep, _ = e.claims.AffectsReputation(ctx, s.seller, c.ID)
	if rep.AffectsReputation != "affected" || rep.HasIncentive {
		t.Errorf("reputation after the timeout %+v", rep)
	}
	wantErr(t, e.claims.Changes(ctx, s.seller, c.ID), errs.NotFound, "business_logic_error", "Resource not found")
}

func TestReasons_TheCatalogueHasTheSeededReasons(t *testing.T) {
	for _, id := range []string{"PNR3430", "PDD9549", "PDD9939", "PDD9551"} {
		r, err := claims.GetReason(id)
		if err != nil || r.ID != id || r.Status != "active" {
			t.Errorf("reason %s: %+v, %v", id, r, err)
		}
	}
	_, err := claims.GetReason("PDD0000")
	wantErr(t, err, errs.NotFound, "business_logic_error", "Resource not found")
	var ids []string
	for _, r := range claims.ReturnReasons() {
		ids = append(ids, r.ID)
	}
	if !slices.Equal(ids, []string{"SRF2", "SRF3", "SRF4", "SRF5", "SRF6", "SRF7"}) {
		t.Errorf("return reasons %v", ids)
	}
}

func TestCloseByTheBuyer_BenefitsTheSellerAndCancelsAReturnOnItsWay(t *testing.T) {
	e := newEnv(t)
	s := e.mustSale(1, true)
	c := e.mustOpen(s, "PDD9939")
	if _, err := e.claims.AllowReturn(ctx, s.seller, c.ID); err != nil {
		t.Fatal(err)
	}
	_, err := e.claims.Act(ctx, c.ID, claims.OperatorAction{Role: "complainant", Action: "close_claim", Resolution: &claims.OperatorResolution{Reason: "timeout"}})
	wantErr(t, err, errs.Invalid, "", "Invalid resolution.reason: timeout. Valid values for the complainant are: [worked_out_with_seller, opened_claim_by_mistake, prefered_to_keep_product]")
	got := e.mustAct(c.ID, claims.OperatorAction{Role: "complainant", Action: "close_claim"})
	if got.Resolution.Reason != "worked_out_with_seller" || got.Resolution.ClosedBy != "complainant" || !slices.Equal(got.Resolution.Benefited, []string{"respondent"}) {
		t.Errorf("resolution %+v", got.Resolution)
	}
	rt, _ := e.claims.ClaimReturn(ctx, s.seller, c.ID)
	if rt.Status != "cancelled" || rt.StatusMoney != "available" {
		t.Errorf("return %s %s", rt.Status, rt.StatusMoney)
	}
	_, err = e.claims.Act(ctx, c.ID, claims.OperatorAction{Role: "mediator", Action: "resolve", Resolution: &claims.OperatorResolution{Reason: "rep_resolution", Benefited: []string{"complainant"}}})
	wantErr(t, err, errs.Invalid, "bad_request_error", "Action resolve not available for player")
}

func TestOperatorActions_AreCheckedInOrder(t *testing.T) {
	e := newEnv(t)
	c := e.mustOpen(e.mustSale(1, false), "PNR3430")
	for _, tc := range []struct {
		in  claims.OperatorAction
		msg string
	}{
		{claims.OperatorAction{}, "The field [role] is required: complainant or mediator"},
		{claims.OperatorAction{Role: "respondent"}, "Invalid role: respondent. Valid values are: [complainant, mediator]; the respondent acts through the public routes"},
		{claims.OperatorAction{Role: "mediator"}, "The field [action] is required: one of [send_message_to_complainant, send_message_to_respondent, resolve]"},
		{claims.OperatorAction{Role: "mediator", Action: "refund"}, "Invalid action: refund. Valid values for the mediator are: [send_message_to_complainant, send_message_to_respondent, resolve]"},
		{claims.OperatorAction{Role: "mediator", Action: "resolve"}, "The field [resolution.reason] is required: one of [coverage_decision, rep_resolution, warehouse_decision, item_returned, not_delivered, product_delivered, seller_sent_product, seller_did_not_help, already_shipped, no_bpp, reimbursed]"},
		{claims.OperatorAction{Role: "mediator", Action: "resolve", Resolution: &claims.OperatorResolution{Reason: "rep_resolution"}}, "The field [resolution.benefited] is required: complainant and/or respondent"},
		{claims.OperatorAction{Role: "complainant", Action: "send_message_to_respondent"}, "The field message is required"},
		{claims.OperatorAction{Role: "mediator", Action: "send_message_to_complainant", Message: "hola"}, "Action send_message_to_complainant not available for player"},
	} {
		_, err := e.claims.Act(ctx, c.ID, tc.in)
		wantErr(t, err, errs.Invalid, "", tc.msg)
	}
	_, err := e.claims.Act(ctx, 5999999999, claims.OperatorAction{Role: "complainant", Action: "open_dispute"})
	wantErr(t, err, errs.NotFound, "business_logic_error", "Resource not found")
}

func TestAllowReplace_OnlyAFulfillmentSalesProductIsReplaced(t *testing.T) {
	e := newEnv(t)
	s := e.mustSale(1, true)
	c := e.mustOpen(s, "PDD9549")
	_, err := e.claims.AllowReplace(ctx, s.seller, c.ID)
	wantErr(t, err, errs.Invalid, "bad_request_error", "Action allow_replace not available for player")
}

func TestOrderSearch_MediationsStatusFollowsTheStageTheStatusAndWhoOpenedTheDispute(t *testing.T) {
	e := newEnv(t)
	seller := e.mustSale(1, false)
	newSale := func() sale {
		return e.mustSaleOf(seller.seller, seller.item, seller.userProduct, seller.store, 1, false)
	}
	resolve := claims.OperatorAction{Role: "mediator", Action: "resolve",
		Resolution: &claims.OperatorResolution{Reason: "rep_resolution", Benefited: []string{"complainant"}}}

	opened := e.mustOpen(seller, "PNR3430")
	closedSale := newSale()
	closed := e.mustOpen(closedSale, "PNR3430")
	if _, err := e.claims.Refund(ctx, seller.seller, closed.ID); err != nil {
		t.Fatal(err)
	}
	bySellerSale := newSale()
	bySeller := e.mustOpen(bySellerSale, "PNR3430")
	if _, err := e.claims.OpenDispute(ctx, seller.seller, bySeller.ID); err != nil {
		t.Fatal(err)
	}
	bySellerClosedSale := newSale()
	bySellerClosed := e.mustOpen(bySellerClosedSale, "PNR3430")
	if _, err := e.claims.OpenDispute(ctx, seller.seller, bySellerClosed.ID); err != nil {
		t.Fatal(err)
	}
	e.mustAct(bySellerClosed.ID, resolve)
	byBuyerSale := newSale()
	byBuyer := e.mustOpen(byBuyerSale, "PNR3430")
	e.mustAct(byBuyer.ID, claims.OperatorAction{Role: "complainant", Action: "open_dispute"})
	// The seller answers the first claim in time; the last one is left
	// unanswered past its due date: the mediator opens the dispute.
	e.mustSend(seller.seller, opened.ID, claims.RoleComplainant, "Ya lo despaché")
	timedOutSale := newSale()
	e.mustOpen(timedOutSale, "PNR3430")
	e.advance(49 * time.Hour)
	if _, err := e.claims.Expire(ctx); err != nil {
		t.Fatal(err)
	}
	timedOutClosedSale := newSale()
	timedOutClosed := e.mustOpen(timedOutClosedSale, "PNR3430")
	e.advance(49 * time.Hour)
	if _, err := e.claims.Expire(ctx); err != nil {
		t.Fatal(err)
	}
	// The seller refunds during the dispute: the dispute stays the
	// mediator's.
	if _, err := e.claims.Refund(ctx, seller.seller, timedOutClosed.ID); err != nil {
		t.Fatal(err)
	}
	for status, want := range map[string][]int64{
		sales.MediationClaimOpened:         {seller.order.ID},
		sales.MediationClaimClosed:         {closedSale.order.ID},
		sales.MediationSellerDisputeOpened: {bySellerSale.order.ID},
		sales.MediationSellerDisputeClosed: {bySellerClosedSale.order.ID},
		sales.MediationDisputeOpened:       {byBuyerSale.order.ID, timedOutSale.order.ID},
		sales.MediationDisputeClosed:       {timedOutClosedSale.order.ID},
	} {
		res, err := e.sales.Search(ctx, seller.seller, sales.SearchQuery{Seller: seller.seller, MediationStatus: status, Limit: 50})
		if err != nil {
			t.Fatalf("%s: %v", status, err)
		}
		var got []int64
		for _, o := range res.Results {
			got = append(got, o.ID)
		}
		if !slices.Equal(got, want) || res.Paging.Total != len(want) {
			t.Errorf("mediations.status=%s: orders %v (total %d); want %v", status, got, res.Paging.Total, want)
		}
		if len(res.Filters) != 1 || res.Filters[0].ID != "mediations.status" || res.Filters[0].Values[0].ID != status {
			t.Errorf("mediations.status=%s: applied filters %+v", status, res.Filters)
		}
	}
	_, err := e.sales.Search(ctx, seller.seller, sales.SearchQuery{Seller: seller.seller, MediationStatus: "mediation_opened", Limit: 50})
	wantErr(t, err, errs.Invalid, "", "Invalid mediations.status: mediation_opened. Valid values are: [claim_opened, claim_closed, dispute_opened, dispute_closed, seller_dispute_opened, seller_dispute_closed]")
}
