package messages_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/messages"
	"github.com/marketplace/marketplace/sales"
)

func resource(o sales.Order) string {
	return "/packs/" + itoa(o.PackID) + "/sellers/" + itoa(o.Seller.ID)
}

func TestSend_TheBuyerStartsAConversationAndTheSellerIsNotified(t *testing.T) {
	e := newEnv(t)
	o := e.paid()
	before := e.lastEvent()
	m := e.mustSend(o, e.buyer, "¿Cuándo llega mi compra?")
	if !messages.IsMessageID(m.ID) {
		t.Fatalf("id %q is not 32 lowercase hex characters", m.ID)
	}
	if m.From.UserID != e.buyer || m.To.UserID != e.seller || m.Status != "available" || !m.FirstMessage ||
		m.SiteID != "MLA" || m.Subject != nil || m.Attachments != nil {
		t.Fatalf("message = %+v", m)
	}
	at := "2026-03-04T15:00:00.000Z"
	if *m.MessageDate.Created != at || *m.MessageDate.Available != at || *m.MessageDate.Received != at || m.MessageDate.Read != nil {
		t.Fatalf("message_date = %+v", m.MessageDate)
	}
	if m.Moderation.Status != "clean" || m.Moderation.Reason != nil || m.Moderation.Source != "online" {
		t.Fatalf("moderation = %+v", m.Moderation)
	}
	if m.Resources[0] != (messages.Resource{ID: itoa(o.PackID), Name: "packs"}) || m.Resources[1] != (messages.Resource{ID: itoa(e.seller), Name: "sellers"}) {
		t.Fatalf("resources = %+v", m.Resources)
	}
	evs := e.outbox(before)
	if len(evs) != 1 || evs[0].UserID != e.seller || evs[0].Resource != m.ID || evs[0].Action != "created" {
		t.Fatalf("events = %+v, want one created for the seller", evs)
	}
	second := e.mustSend(o, e.buyer, "Hola?")
	if second.FirstMessage {
		t.Fatal("the second message is marked first")
	}
}

func TestSend_TheSellerCannotStartAnME2ConversationWithADirectMessage(t *testing.T) {
	e := newEnv(t)
	o := e.paid()
	_, err := e.send(o, e.seller, "Hola, ¿qué color querés?")
	wantShaped(t, err, messages.ShapeStatusCode, errs.Forbidden, messages.MsgBlocked)
	if st, sub := e.status(o, e.seller); st != "blocked" || sub != messages.SubstatusSellerLimited {
		t.Fatalf("seller sees %s/%s, want blocked/%s", st, sub, messages.SubstatusSellerLimited)
	}
	if st, _ := e.status(o, e.buyer); st != "active" {
		t.Fatalf("buyer sees %s, want active: the buyer may write", st)
	}
	// A message of the action guide starts the conversation; the direct
	// route still waits for the buyer.
	if _, err := e.msg.SendOption(ctx, e.seller, 0, o.PackID, messages.OptionBody{OptionID: "OTHER", Text: "Hola, ¿todo bien?"}); err != nil {
		t.Fatal(err)
	}
	if st, _ := e.status(o, e.seller); st != "active" {
		t.Fatalf("after the option the seller sees %s, want active", st)
	}
	_, err = e.send(o, e.seller, "¿Me respondés?")
	wantShaped(t, err, messages.ShapeStatusCode, errs.Forbidden, messages.MsgBlocked)
	e.mustSend(o, e.buyer, "Hola")
	e.mustSend(o, e.seller, "¡Gracias por tu compra!")
}

func TestSend_FromMustBeTheCallerAndAPartyOfTheSale(t *testing.T) {
	e := newEnv(t)
	o := e.paid()
	_, err := e.msg.Send(ctx, e.other, 0, o.PackID, e.seller, messages.SendBody{From: e.other, To: e.seller, Text: "hola"})
	wantErr(t, err, errs.Forbidden, "Access denied for user "+itoa(e.other)+" to order "+itoa(o.ID))
	_, err = e.msg.Send(ctx, e.buyer, 0, o.PackID, e.seller, messages.SendBody{From: e.other, To: e.seller, Text: "hola"})
	wantErr(t, err, errs.Forbidden, "Access denied for user "+itoa(e.other)+" to order "+itoa(o.ID))
	_, err = e.msg.Send(ctx, e.buyer, 0, o.PackID, e.other, messages.SendBody{From: e.buyer, To: e.seller, Text: "hola"})
	wantErr(t, err, errs.Forbidden, "User access token invalid for resource "+itoa(o.PackID))
	_, err = e.msg.Send(ctx, e.buyer, 0, 2100000000009999, e.seller, messages.SendBody{From: e.buyer, To: e.seller, Text: "hola"})
	wantErr(t, err, errs.NotFound, "The pack 2100000000009999 was not found")
}

func TestSend_ToMustBeTheCounterpartAndNotTheSender(t *testing.T) {
	e := newEnv(t)
	o := e.paid()
	_, err := e.msg.Send(ctx, e.buyer, 0, o.PackID, e.seller, messages.SendBody{From: e.buyer, To: e.other, Text: "hola"})
	wantErr(t, err, errs.Forbidden, "Receiver does not belong to order "+itoa(o.ID))
	_, err = e.msg.Send(ctx, e.buyer, 0, o.PackID, e.seller, messages.SendBody{From: e.buyer, To: e.buyer, Text: "hola"})
	wantErr(t, err, errs.Invalid, "Sender and received must not be equals")
}

func TestSend_AnOrderIDInThePacksPlaceNamesItsPacksConversation(t *testing.T) {
	e := newEnv(t)
	o := e.paid()
	m, err := e.msg.Send(ctx, e.buyer, 0, o.ID, e.seller, messages.SendBody{From: e.buyer, To: e.seller, Text: "por la orden"})
	if err != nil {
		t.Fatal(err)
	}
	if m.Resources[0].ID != itoa(o.PackID) {
		t.Fatalf("resources = %+v, want the pack's", m.Resources)
	}
	c, err := e.msg.Conversation(ctx, e.seller, o.ID, e.seller, messages.ConversationQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Messages) != 1 || c.ConversationStatus.Path != resource(o) {
		t.Fatalf("by the order id: %+v", c)
	}
}

func TestSend_TheSellerWritesAtMost350CharactersAndTheBuyer3500(t *testing.T) {
	e := newEnv(t)
	o := e.paid()
	_, err := e.send(o, e.buyer, strings.Repeat("a", 3501))
	wantErr(t, err, errs.Invalid, "The message content is too long, max characters allowed are 3500")
	e.mustSend(o, e.buyer, strings.Repeat("ñ", 3500))
	_, err = e.send(o, e.seller, strings.Repeat("a", 351))
	wantErr(t, err, errs.Invalid, "The message content is too long, max characters allowed are 350")
	e.mustSend(o, e.seller, strings.Repeat("é", 350))
	_, err = e.send(o, e.seller, "  ")
	wantErr(t, err, errs.Invalid, "The field 'text' is required")
}

func TestSend_TheTextIsISO88591PlusEmojiAndMayHoldALink(t *testing.T) {
	e := newEnv(t)
	o := e.paid()
	for _, ok := range []string{"¡Hola! ¿Cómo estás? Ñandú, café, 100°", "Gracias 🙂👍🏽 ❤️", "Mirá <a href=\"https://www.mercadolibre.com.ar\">acá</a>",
		"línea 1\nlínea 2\ttab", "👨‍👩‍👧"} {
		e.mustSend(o, e.buyer, ok)
	}
	for _, bad := range []string{"Precio: 10 €", "日本語", "a\u202eb", "bell\a", "\u200d", "x\u0085y"} {
		_, err := e.send(o, e.buyer, bad)
		wantErr(t, err, errs.Invalid, "The text has character/s that is/are not supported.")
	}
}

func TestSend_AtMost25Attachments(t *testing.T) {
	e := newEnv(t)
	o := e.paid()
	ids := make([]string, 26)
	for i := range ids {
		ids[i] = "x"
	}
	_, err := e.send(o, e.buyer, "fotos", ids...)
	wantErr(t, err, errs.Invalid, "The message exceeds the allowed number of attachments: 25")
}

func TestStatus_AnUnpaidOrderIsBlockedByPaymentUntilPaid(t *testing.T) {
	e := newEnv(t)
	o := e.order(sales.StatusPaymentRequired)
	_, err := e.send(o, e.buyer, "¿Ya puedo pagar?")
	wantShaped(t, err, messages.ShapeStatusCode, errs.Forbidden, messages.MsgBlocked)
	if st, sub := e.status(o, e.buyer); st != "blocked" || sub != messages.SubstatusPayment {
		t.Fatalf("status %s/%s, want blocked/%s", st, sub, messages.SubstatusPayment)
	}
	e.clock.Advance(time.Hour)
	if _, err := e.sales.Pay(ctx, o.ID, sales.PaymentInput{Status: "approved"}); err != nil {
		t.Fatal(err)
	}
	cs := e.read(o, e.buyer, false).ConversationStatus
	if cs.Status != "active" || cs.Substatus != nil || cs.StatusDate != "2026-03-04T16:00:00.000Z" {
		t.Fatalf("after paying: %+v, want active since the payment", cs)
	}
	e.mustSend(o, e.buyer, "Pagado")
}

func TestStatus_ACancelledOrderIsBlockedForGood(t *testing.T) {
	e := newEnv(t)
	o := e.paid()
	e.mustSend(o, e.buyer, "hola")
	e.clock.Advance(time.Minute)
	if _, err := e.sales.Cancel(ctx, o.ID); err != nil {
		t.Fatal(err)
	}
	for _, from := range []int64{e.buyer, e.seller} {
		_, err := e.send(o, from, "¿Y ahora?")
		wantShaped(t, err, messages.ShapeStatusCode, errs.Forbidden, messages.MsgBlocked)
	}
	cs := e.read(o, e.seller, false).ConversationStatus
	if cs.Status != "blocked" || *cs.Substatus != messages.SubstatusCancelledOrder || cs.StatusDate != "2026-03-04T15:01:00.000Z" {
		t.Fatalf("status = %+v", cs)
	}
	if len(e.read(o, e.seller, false).Messages) != 1 {
		t.Fatal("a cancelled order's conversation still shows its messages")
	}
}

func TestStatus_AFulfillmentSaleIsBlockedUntilDelivered(t *testing.T) {
	e := newEnv(t)
	o := e.paid()
	if _, err := e.sales.SetLogisticType(ctx, *o.Shipping.ID, sales.LogisticFulfillment); err != nil {
		t.Fatal(err)
	}
	_, err := e.send(o, e.buyer, "¿Dónde está?")
	wantErr(t, err, errs.Forbidden, "You can not send the message because the purchase is Mercado Envíos Full and has not been yet delivered")
	if st, sub := e.status(o, e.buyer); st != "blocked" || sub != messages.SubstatusFulfillment {
		t.Fatalf("status %s/%s", st, sub)
	}
	e.move(*o.Shipping.ID, sales.ShipmentShipped)
	e.clock.Advance(time.Hour)
	e.move(*o.Shipping.ID, sales.ShipmentDelivered)
	cs := e.read(o, e.buyer, false).ConversationStatus
	if cs.Status != "active" || cs.StatusDate != "2026-03-04T16:00:00.000Z" {
		t.Fatalf("after delivery: %+v, want active since the delivery", cs)
	}
	e.mustSend(o, e.buyer, "Llegó")
}

func TestStatus_AMediationBlocksUntilTheClaimCloses(t *testing.T) {
	e := newEnv(t)
	o := e.paid()
	e.mustSend(o, e.buyer, "hola")
	e.claims.set(o.ID, messages.ClaimState{ClaimID: 5000000001, Mediation: true, MediationSince: start.Add(time.Hour)})
	for _, from := range []int64{e.buyer, e.seller} {
		_, err := e.send(o, from, "¿Y el reclamo?")
		wantShaped(t, err, messages.ShapeStatusCode, errs.Forbidden, messages.MsgBlocked)
	}
	cs := e.read(o, e.seller, false).ConversationStatus
	if cs.Status != "blocked" || *cs.Substatus != messages.SubstatusMediation || cs.ClaimID == nil || *cs.ClaimID != 5000000001 ||
		cs.StatusDate != "2026-03-04T16:00:00.000Z" {
		t.Fatalf("status = %+v", cs)
	}
	e.claims.set(o.ID, messages.ClaimState{ClaimID: 5000000001})
	e.mustSend(o, e.seller, "Resuelto")
}

func TestStatus_AMediationOnAFulfillmentSaleIsMediationFBM(t *testing.T) {
	e := newEnv(t)
	o := e.paid()
	if _, err := e.sales.SetLogisticType(ctx, *o.Shipping.ID, sales.LogisticFulfillment); err != nil {
		t.Fatal(err)
	}
	e.move(*o.Shipping.ID, sales.ShipmentShipped)
	e.move(*o.Shipping.ID, sales.ShipmentDelivered)
	e.claims.set(o.ID, messages.ClaimState{ClaimID: 5000000001, Mediation: true, MediationSince: start})
	if st, sub := e.status(o, e.buyer); st != "blocked" || sub != messages.SubstatusMediationFBM {
		t.Fatalf("status %s/%s", st, sub)
	}
}

func TestStatus_ARefundBlocksUntilTheBuyerWrites(t *testing.T) {
	e := newEnv(t)
	o := e.paid()
	e.mustSend(o, e.buyer, "hola")
	e.mustSend(o, e.seller, "hola, ¿qué pasó?")
	e.clock.Advance(time.Hour)
	e.claims.set(o.ID, messages.ClaimState{ClaimID: 5000000001, Refunded: true, RefundedAt: e.clock.Now()})
	_, err := e.send(o, e.seller, "Te devolví el dinero")
	wantShaped(t, err, messages.ShapeStatusCode, errs.Forbidden, messages.MsgBlocked)
	if st, sub := e.status(o, e.seller); st != "blocked" || sub != messages.SubstatusRefund {
		t.Fatalf("status %s/%s", st, sub)
	}
	e.clock.Advance(time.Minute)
	e.mustSend(o, e.buyer, "Gracias")
	cs := e.read(o, e.seller, false).ConversationStatus
	if cs.Status != "active" || cs.StatusDate != "2026-03-04T16:01:00.000Z" {
		t.Fatalf("after the buyer wrote: %+v, want active since the message", cs)
	}
	e.mustSend(o, e.seller, "De nada")
}

func TestStatus_ThirtyDaysAfterTheLastMessageTheConversationIsBlockedByTimeUntilTheBuyerWrites(t *testing.T) {
	e := newEnv(t)
	o := e.paid()
	e.mustSend(o, e.buyer, "hola")
	e.clock.Advance(messages.TimeLimit - time.Millisecond)
	e.mustSend(o, e.seller, "hola")
	e.clock.Advance(messages.TimeLimit)
	_, err := e.send(o, e.seller, "¿seguís ahí?")
	wantShaped(t, err, messages.ShapeStatusCode, errs.Forbidden, messages.MsgBlocked)
	cs := e.read(o, e.seller, false).ConversationStatus
	if cs.Status != "blocked" || *cs.Substatus != messages.SubstatusTime {
		t.Fatalf("status = %+v", cs)
	}
	e.mustSend(o, e.buyer, "sí")
	e.mustSend(o, e.seller, "genial")
}

func TestStatus_EighteenMonthsAfterThePurchaseTheConversationExpiresAndHidesItsMessages(t *testing.T) {
	e := newEnv(t)
	o := e.paid()
	m := e.mustSend(o, e.buyer, "hola")
	e.clock.Set(start.AddDate(0, 18, 0))
	for _, from := range []int64{e.buyer, e.seller} {
		_, err := e.send(o, from, "¿seguís?")
		wantShaped(t, err, messages.ShapeStatusCode, errs.Forbidden, messages.MsgBlocked)
	}
	c := e.read(o, e.seller, true)
	if c.ConversationStatus.Status != "blocked" || *c.ConversationStatus.Substatus != messages.SubstatusExpired ||
		len(c.Messages) != 0 || c.Paging.Total != 0 || c.ConversationStatus.StatusDate != "2027-09-04T15:00:00.000Z" {
		t.Fatalf("expired conversation: %+v", c)
	}
	_, err := e.msg.Message(ctx, e.seller, m.ID)
	wantErr(t, err, errs.Invalid, "The specified message id does not exists")
}

func TestStatus_TheFirstRuleThatMatchesWins(t *testing.T) {
	e := newEnv(t)
	// Unpaid and in mediation: payment comes first.
	unpaid := e.order(sales.StatusPaymentRequired)
	e.claims.set(unpaid.ID, messages.ClaimState{Mediation: true, MediationSince: start})
	if _, sub := e.status(unpaid, e.buyer); sub != messages.SubstatusPayment {
		t.Fatalf("unpaid in mediation: %s", sub)
	}
	// Cancelled and unpaid: cancelled comes first.
	if _, err := e.sales.Cancel(ctx, unpaid.ID); err != nil {
		t.Fatal(err)
	}
	if _, sub := e.status(unpaid, e.buyer); sub != messages.SubstatusCancelledOrder {
		t.Fatalf("cancelled: %s", sub)
	}
	// Fulfillment not delivered and in mediation: fulfillment first.
	full := e.paid()
	if _, err := e.sales.SetLogisticType(ctx, *full.Shipping.ID, sales.LogisticFulfillment); err != nil {
		t.Fatal(err)
	}
	e.claims.set(full.ID, messages.ClaimState{Mediation: true, MediationSince: start})
	if _, sub := e.status(full, e.buyer); sub != messages.SubstatusFulfillment {
		t.Fatalf("fulfillment in mediation: %s", sub)
	}
	// Mediation and refund: mediation first; refund over time.
	o := e.paid()
	e.mustSend(o, e.buyer, "hola")
	e.claims.set(o.ID, messages.ClaimState{Mediation: true, MediationSince: start, Refunded: true, RefundedAt: start.Add(time.Second)})
	if _, sub := e.status(o, e.buyer); sub != messages.SubstatusMediation {
		t.Fatalf("mediation and refund: %s", sub)
	}
	e.claims.set(o.ID, messages.ClaimState{Refunded: true, RefundedAt: start.Add(time.Second)})
	e.clock.Advance(40 * 24 * time.Hour)
	if _, sub := e.status(o, e.buyer); sub != messages.SubstatusRefund {
		t.Fatalf("refund and time: %s", sub)
	}
	e.claims.set(o.ID, messages.ClaimState{})
	if _, sub := e.status(o, e.buyer); sub != messages.SubstatusTime {
		t.Fatalf("time: %s", sub)
	}
	e.clock.Set(start.AddDate(0, 18, 0))
	if _, sub := e.status(o, e.buyer); sub != messages.SubstatusExpired {
		t.Fatalf("expired and time: %s", sub)
	}
}

func TestModeration_TheHookWordRejectsAMessageAndHidesItFromTheRecipient(t *testing.T) {
	e := newEnv(t)
	o := e.paid()
	e.mustSend(o, e.buyer, "hola")
	before := e.lastEvent()
	m := e.mustSend(o, e.buyer, "esto es "+messages.ModerationHook)
	if m.Status != "moderated" || m.Moderation.Status != "rejected" || *m.Moderation.Reason != "OUT_OF_PLACE_LANGUAGE" || m.MessageDate.Available != nil {
		t.Fatalf("moderated message = %+v", m)
	}
	if evs := e.outbox(before); len(evs) != 0 {
		t.Fatalf("a rejected message notified: %+v", evs)
	}
	seller := e.read(o, e.seller, false)
	if seller.Paging.Total != 1 || len(seller.Messages) != 1 || seller.Messages[0].Text != "hola" {
		t.Fatalf("the seller sees %+v", seller)
	}
	buyer := e.read(o, e.buyer, false)
	if buyer.Paging.Total != 2 || buyer.Messages[0].ID != m.ID {
		t.Fatalf("the buyer does not see its own moderated message: %+v", buyer)
	}
	if u := e.unread(e.seller, "seller"); u[resource(o)] != 1 {
		t.Fatalf("unread = %v, want the clean message only", u)
	}
	_, err := e.msg.Message(ctx, e.seller, m.ID)
	wantErr(t, err, errs.Invalid, "The specified message id does not exists")
	if _, err := e.msg.Message(ctx, e.buyer, m.ID); err != nil {
		t.Fatalf("the sender reads its moderated message: %v", err)
	}
}

func TestModeration_LinksOfShortenersAreRejected(t *testing.T) {
	e := newEnv(t)
	o := e.paid()
	for _, text := range []string{"mirá https://bit.ly/3abc", "en tinyurl.com/xyz", `<a href="http://www.rebrand.ly/a">x</a>`, "BL.INK/foo"} {
		m := e.mustSend(o, e.buyer, text)
		if m.Moderation.Status != "rejected" || *m.Moderation.Reason != "LINK_SHORT_URL" {
			t.Fatalf("%q: moderation %+v", text, m.Moderation)
		}
	}
	for _, text := range []string{"mi web es orbit.lyon.com", "https://www.mercadolibre.com.ar/bit", "rabbit.ly"} {
		if m := e.mustSend(o, e.buyer, text); m.Moderation.Status != "clean" {
			t.Fatalf("%q was moderated: %+v", text, m.Moderation)
		}
	}
}

func TestModerate_TheOperatorsVerdictShowsOrHidesTheMessage(t *testing.T) {
	e := newEnv(t)
	o := e.paid()
	m := e.mustSend(o, e.buyer, "hola "+messages.ModerationHook)
	before := e.lastEvent()
	e.clock.Advance(time.Minute)
	clean, err := e.msg.Moderate(ctx, m.ID, messages.ModerationInput{Status: "clean"})
	if err != nil {
		t.Fatal(err)
	}
	if clean.Status != "available" || clean.Moderation.Reason != nil || *clean.MessageDate.Available != "2026-03-04T15:01:00.000Z" {
		t.Fatalf("cleaned = %+v", clean)
	}
	if evs := e.outbox(before); len(evs) != 1 || evs[0].Action != "created" || evs[0].UserID != e.seller {
		t.Fatalf("events = %+v, want created for the seller", evs)
	}
	if u := e.unread(e.seller, "seller"); u[resource(o)] != 1 {
		t.Fatalf("unread = %v", u)
	}
	reason := "PERSONAL_DATA"
	rej, err := e.msg.Moderate(ctx, m.ID, messages.ModerationInput{Status: "rejected", Reason: &reason})
	if err != nil {
		t.Fatal(err)
	}
	if rej.Status != "moderated" || *rej.Moderation.Reason != "PERSONAL_DATA" {
		t.Fatalf("rejected = %+v", rej)
	}
	if u := e.unread(e.seller, "seller"); len(u) != 0 {
		t.Fatalf("unread = %v after the rejection", u)
	}
	if c := e.read(o, e.seller, false); c.Paging.Total != 0 {
		t.Fatalf("the seller still sees it: %+v", c)
	}
	_, err = e.msg.Moderate(ctx, m.ID, messages.ModerationInput{Status: "maybe"})
	wantErr(t, err, errs.Invalid, "Invalid status: maybe. Valid values are: [clean, rejected]")
	bad := "RUDE"
	_, err = e.msg.Moderate(ctx, m.ID, messages.ModerationInput{Status: "rejected", Reason: &bad})
	wantErr(t, err, errs.Invalid, "Invalid reason: RUDE. Valid values are: [OUT_OF_PLACE_LANGUAGE, SOCIAL_NETWORK_LINK, LINK_SHORT_URL, AUTOMATIC_MESSAGE, PERSONAL_DATA, LINK_MERCADOPAGO, ML_LINKS_PAYPAL, EVASION_CLAIM_SELLER]")
	_, err = e.msg.Moderate(ctx, strings.Repeat("a", 32), messages.ModerationInput{Status: "clean"})
	wantErr(t, err, errs.NotFound, "Message "+strings.Repeat("a", 32)+" not found")
}

func TestConversation_AReadMarksTheCallersMessagesReadAndNotifiesTheirSender(t *testing.T) {
	e := newEnv(t)
	o := e.paid()
	m1 := e.mustSend(o, e.buyer, "uno")
	m2 := e.mustSend(o, e.buyer, "dos")
	if u := e.unread(e.seller, "seller"); u[resource(o)] != 2 {
		t.Fatalf("unread = %v", u)
	}
	c := e.read(o, e.seller, false)
	if c.Messages[0].MessageDate.Read != nil {
		t.Fatal("mark_as_read=false marked")
	}
	// The buyer's read marks nothing of the buyer's own messages.
	e.read(o, e.buyer, true)
	before := e.lastEvent()
	e.clock.Advance(time.Minute)
	c = e.read(o, e.seller, true)
	for _, m := range c.Messages {
		if m.MessageDate.Read == nil || *m.MessageDate.Read != "2026-03-04T15:01:00.000Z" {
			t.Fatalf("not marked read: %+v", m)
		}
	}
	evs := e.outbox(before)
	if len(evs) != 2 || evs[0].Action != "read" || evs[0].UserID != e.buyer || evs[1].UserID != e.buyer ||
		!(evs[0].Resource == m1.ID && evs[1].Resource == m2.ID || evs[0].Resource == m2.ID && evs[1].Resource == m1.ID) {
		t.Fatalf("events = %+v, want read for the buyer of each", evs)
	}
	if u := e.unread(e.seller, "seller"); len(u) != 0 {
		t.Fatalf("unread = %v after the read", u)
	}
	before = e.lastEvent()
	e.read(o, e.seller, true)
	if evs := e.outbox(before); len(evs) != 0 {
		t.Fatalf("a second read notified again: %+v", evs)
	}
}

func TestConversation_AReadMarksEveryUnreadMessageNotOnlyThePage(t *testing.T) {
	e := newEnv(t)
	o := e.paid()
	for i := range 450 {
		e.mustSend(o, e.buyer, "m"+itoa(int64(i)))
	}
	if _, err := e.msg.Conversation(ctx, e.seller, o.PackID, e.seller, messages.ConversationQuery{Limit: 1, MarkAsRead: true}); err != nil {
		t.Fatal(err)
	}
	if u := e.unread(e.seller, "seller"); len(u) != 0 {
		t.Fatalf("unread = %v", u)
	}
	if c := e.read(o, e.seller, false); c.Messages[99].MessageDate.Read == nil {
		t.Fatal("an old message is unread")
	}
}

func TestConversation_PagesAreNewestFirstWithTheTotal(t *testing.T) {
	e := newEnv(t)
	o := e.paid()
	for i := range 15 {
		e.mustSend(o, e.buyer, "m"+itoa(int64(i)))
	}
	c, err := e.msg.Conversation(ctx, e.seller, o.PackID, e.seller, messages.ConversationQuery{Limit: 10, Offset: 10})
	if err != nil {
		t.Fatal(err)
	}
	if c.Paging != (messages.Paging{Limit: 10, Offset: 10, Total: 15}) || len(c.Messages) != 5 || c.Messages[0].Text != "m4" || c.Messages[4].Text != "m0" {
		t.Fatalf("page = %+v", c.Paging)
	}
	if c.SellerMaxLength != 350 || c.BuyerMaxLength != 3500 {
		t.Fatalf("max lengths %d %d", c.SellerMaxLength, c.BuyerMaxLength)
	}
}

func TestConversation_SellerIDMustBeThePacksSellerAndTheCallerAParty(t *testing.T) {
	e := newEnv(t)
	o := e.paid()
	_, err := e.msg.Conversation(ctx, e.other, o.PackID, e.seller, messages.ConversationQuery{Limit: 10})
	wantErr(t, err, errs.Forbidden, "User access token invalid for resource "+itoa(o.PackID))
	_, err = e.msg.Conversation(ctx, e.seller, o.PackID, e.buyer, messages.ConversationQuery{Limit: 10})
	wantErr(t, err, errs.Forbidden, "User access token invalid for resource "+itoa(o.PackID))
}

func TestParseConversationQuery_TheLimitIsFrom1To100AndTheOffsetNotNegative(t *testing.T) {
	for _, c := range []struct{ q, msg string }{
		{"limit=0", "The limit param must be greater than 0"}, {"limit=-3", "The limit param must be greater than 0"},
		{"limit=x", "Invalid limit param"}, {"limit=101", "Invalid limit param"},
		{"offset=-1", "Invalid offset param"}, {"offset=a", "Invalid offset param"},
	} {
		v, _ := url.ParseQuery(c.q)
		_, err := messages.ParseConversationQuery(v)
		wantErr(t, err, errs.Invalid, c.msg)
	}
	q, err := messages.ParseConversationQuery(url.Values{"mark_as_read": {"false"}})
	if err != nil || q != (messages.ConversationQuery{Limit: 10}) {
		t.Fatalf("defaults: %+v %v", q, err)
	}
}

func TestUnread_CountsTheUnreadMessagesAddressedToTheCallerByRole(t *testing.T) {
	e := newEnv(t)
	o1, o2 := e.paid(), e.paid()
	e.mustSend(o1, e.buyer, "a")
	e.mustSend(o1, e.buyer, "b")
	e.mustSend(o2, e.buyer, "c")
	e.mustSend(o2, e.seller, "d")
	if u := e.unread(e.seller, "seller"); len(u) != 2 || u[resource(o1)] != 2 || u[resource(o2)] != 1 {
		t.Fatalf("seller's = %v", u)
	}
	if u := e.unread(e.seller, ""); len(u) != 2 {
		t.Fatalf("the default role is seller: %v", u)
	}
	if u := e.unread(e.buyer, "buyer"); len(u) != 1 || u[resource(o2)] != 1 {
		t.Fatalf("buyer's = %v", u)
	}
	if u := e.unread(e.buyer, "seller"); len(u) != 0 {
		t.Fatalf("the buyer as a seller: %v", u)
	}
	one, err := e.msg.UnreadOf(ctx, e.seller, o1.PackID, e.seller)
	if err != nil || len(one.Results) != 1 || one.Results[0].Count != 2 || one.UserID != e.seller {
		t.Fatalf("one conversation: %+v %v", one, err)
	}
	_, err = e.msg.UnreadOf(ctx, e.other, o1.PackID, e.seller)
	wantErr(t, err, errs.Forbidden, "User access token invalid for resource "+itoa(o1.PackID))
}

func TestMessage_OnlyThePartiesReadAMessage(t *testing.T) {
	e := newEnv(t)
	o := e.paid()
	m := e.mustSend(o, e.buyer, "hola")
	s, err := e.msg.Message(ctx, e.seller, m.ID)
	if err != nil || len(s.Messages) != 1 || s.Messages[0].ID != m.ID || s.Paging != nil || s.ConversationStatus != nil {
		t.Fatalf("single = %+v %v", s, err)
	}
	if s.Messages[0].MessageDate.Read != nil {
		t.Fatal("reading one message marked it read")
	}
	_, err = e.msg.Message(ctx, e.other, m.ID)
	wantErr(t, err, errs.Forbidden, "Access denied for user "+itoa(e.other)+" to message with id "+m.ID)
	_, err = e.msg.Message(ctx, e.seller, strings.Repeat("0", 32))
	wantErr(t, err, errs.Invalid, "The specified message id does not exists")
	_, err = e.msg.Message(ctx, e.seller, "nope")
	wantErr(t, err, errs.Invalid, "The specified message id does not exists")
}

func TestMarkAsRead_MarksTheMessagesTheCallerReceivedInOneConversation(t *testing.T) {
	e := newEnv(t)
	o1, o2 := e.paid(), e.paid()
	a := e.mustSend(o1, e.buyer, "a")
	b := e.mustSend(o1, e.buyer, "b")
	c := e.mustSend(o2, e.buyer, "c")
	if err := e.msg.MarkAsRead(ctx, e.seller, []string{a.ID, c.ID}); err == nil {
		t.Fatal("messages of two conversations were marked")
	} else {
		wantErr(t, err, errs.Invalid, "Not allowed messages from multiple orders")
	}
	if err := e.msg.MarkAsRead(ctx, e.seller, []string{a.ID}); err != nil {
		t.Fatal(err)
	}
	if u := e.unread(e.seller, "seller"); u[resource(o1)] != 1 {
		t.Fatalf("unread = %v", u)
	}
	// The buyer's own messages are left unread.
	if err := e.msg.MarkAsRead(ctx, e.buyer, []string{b.ID}); err != nil {
		t.Fatal(err)
	}
	if u := e.unread(e.seller, "seller"); u[resource(o1)] != 1 {
		t.Fatalf("unread = %v", u)
	}
	missing := strings.Repeat("f", 32)
	wantErr(t, e.msg.MarkAsRead(ctx, e.seller, []string{missing}), errs.Invalid, "The specified message id: "+missing+" does not exists")
	for _, raw := range []string{"", ",", "x", strings.Repeat(a.ID+",", 101)} {
		_, err := messages.ParseMessageIDs(raw)
		wantErr(t, err, errs.Invalid, "Messages id empty or invalid")
	}
}

func TestParseSendBody_TheSpecsMessagesForAMissingBodySenderRecipientOrText(t *testing.T) {
	for _, c := range []struct{ body, msg string }{
		{"", "A JSON body is required"}, {"null", "A JSON body is required"},
		{"[]", "Malformed JSON body: a JSON object is expected"},
		{`{}`, "The field 'from' is required"},
		{`{"from":{}}`, "The field 'from' is required"},
		{`{"from":{"user_id":"x"}}`, "Invalid 'from' user id"},
		{`{"from":{"user_id":"1"}}`, "The field 'to.user_id' is required"},
		{`{"from":{"user_id":1},"to":{"user_id":"abc"}}`, "Invalid 'to' user id"},
		{`{"from":{"user_id":1},"to":{"user_id":2}}`, "The field 'text' is required"},
		{`{"from":{"user_id":1},"to":{"user_id":2},"text":5}`, "The field 'text' is required"},
	} {
		_, err := messages.ParseSendBody([]byte(c.body))
		wantErr(t, err, errs.Invalid, c.msg)
	}
	b, err := messages.ParseSendBody([]byte(`{"from":{"user_id":"415458330"},"to":{"user_id":1325224382},"text":"hola","attachments":["a"]}`))
	if err != nil || b.From != 415458330 || b.To != 1325224382 || b.Text != "hola" || len(b.Attachments) != 1 {
		t.Fatalf("body = %+v %v", b, err)
	}
	_, err = messages.ParseSendBody([]byte(`{"from":{"user_id":1},"to":{"user_id":2},"text":"x","attachments":"a"}`))
	var me *messages.Error
	if !asError(err, &me) || !me.Unprocessable {
		t.Fatalf("attachments not a list: %v", err)
	}
}

func TestGuide_TheOptionsFollowTheShipment(t *testing.T) {
	e := newEnv(t)
	ids := func(o sales.Order) string {
		g, err := e.msg.Guide(ctx, e.seller, o.PackID)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, op := range g.Options {
			out = append(out, op.ID)
		}
		return strings.Join(out, ",")
	}
	dropOff := e.paid()
	if got := ids(dropOff); got != "REQUEST_VARIANTS,REQUEST_BILLING_INFO,SEND_INVOICE_LINK,OTHER" {
		t.Fatalf("drop off: %s", got)
	}
	flex := e.paid()
	if _, err := e.sales.SetLogisticType(ctx, *flex.Shipping.ID, sales.LogisticSelfService); err != nil {
		t.Fatal(err)
	}
	if got := ids(flex); got != "REQUEST_BILLING_INFO,SEND_INVOICE_LINK,DELIVERY_PROMISE,OTHER" {
		t.Fatalf("flex: %s", got)
	}
	e.move(*dropOff.Shipping.ID, sales.ShipmentShipped)
	e.move(*dropOff.Shipping.ID, sales.ShipmentDelivered)
	if got := ids(dropOff); got != "REQUEST_VARIANTS,REQUEST_BILLING_INFO,SEND_INVOICE_LINK" {
		t.Fatalf("delivered: %s", got)
	}
	_, err := e.msg.Guide(ctx, e.buyer, dropOff.PackID)
	wantShaped(t, err, messages.ShapeCause, errs.Forbidden, "You are not allowed to access the information of the pack "+itoa(dropOff.PackID))
}

func TestSendOption_EachOptionSendsOnceBeforeTheBuyerReplies(t *testing.T) {
	e := newEnv(t)
	o := e.paid()
	before := e.lastEvent()
	m, err := e.msg.SendOption(ctx, e.seller, 0, o.PackID, messages.OptionBody{OptionID: "REQUEST_VARIANTS", TemplateID: "TEMPLATE___REQUEST_VARIANTS___1"})
	if err != nil {
		t.Fatal(err)
	}
	if m.To.UserID != e.buyer || m.To.Name != "Ana BUYER" || !strings.HasPrefix(m.Text, "Hola, necesitamos") || m.Status != "available" {
		t.Fatalf("answer = %+v", m)
	}
	if evs := e.outbox(before); len(evs) != 1 || evs[0].UserID != e.buyer || evs[0].Action != "created" {
		t.Fatalf("events = %+v", evs)
	}
	caps, err := e.msg.Caps(ctx, e.seller, o.PackID)
	if err != nil || caps[0] != (messages.Cap{OptionID: "REQUEST_VARIANTS", CapAvailable: 0}) || caps[1].CapAvailable != 1 {
		t.Fatalf("caps = %+v %v", caps, err)
	}
	_, err = e.msg.SendOption(ctx, e.seller, 0, o.PackID, messages.OptionBody{OptionID: "REQUEST_VARIANTS", TemplateID: "TEMPLATE___REQUEST_VARIANTS___1"})
	wantShaped(t, err, messages.ShapeCause, errs.Forbidden, "You are not allowed to execute the option REQUEST_VARIANTS again")
	c := e.read(o, e.buyer, false)
	if len(c.Messages) != 1 || !c.Messages[0].FirstMessage {
		t.Fatalf("the option's message does not start the conversation: %+v", c.Messages)
	}
	e.mustSend(o, e.buyer, "Rojo")
	_, err = e.msg.SendOption(ctx, e.seller, 0, o.PackID, messages.OptionBody{OptionID: "OTHER", Text: "hola"})
	me := wantShaped(t, err, messages.ShapeCause, errs.Forbidden, "This package has the conversation blocked, please check blocked messages")
	if me.Cause != messages.SubstatusUseMessageAPI {
		t.Fatalf("cause = %q", me.Cause)
	}
	g, _ := e.msg.Guide(ctx, e.seller, o.PackID)
	for _, op := range g.Options {
		if op.Actionable {
			t.Fatalf("%s is actionable after the buyer wrote", op.ID)
		}
	}
}

func TestSendOption_TheSpecsRefusals(t *testing.T) {
	e := newEnv(t)
	o := e.paid()
	send := func(in messages.OptionBody) error {
		_, err := e.msg.SendOption(ctx, e.seller, 0, o.PackID, in)
		return err
	}
	wantShaped(t, send(messages.OptionBody{OptionID: "NOPE"}), messages.ShapeCause, errs.NotFound, "The option selected is not valid")
	wantShaped(t, send(messages.OptionBody{OptionID: "DELIVERY_PROMISE"}), messages.ShapeCause, errs.NotFound, "The option selected is not valid")
	wantShaped(t, send(messages.OptionBody{OptionID: "REQUEST_BILLING_INFO", TemplateID: "T"}), messages.ShapeCause, errs.Invalid, "The template T is invalid")
	me := wantShaped(t, send(messages.OptionBody{OptionID: "OTHER", Text: strings.Repeat("a", 351)}), messages.ShapeCause, errs.Invalid, "The text is invalid")
	if me.Err.Code != "limit_exceeded" {
		t.Fatalf("code = %s", me.Err.Code)
	}
	wantShaped(t, send(messages.OptionBody{OptionID: "OTHER", Text: "日本"}), messages.ShapeCause, errs.Invalid, "The text is invalid")
	m, err := e.msg.SendOption(ctx, e.seller, 0, o.PackID, messages.OptionBody{OptionID: "SEND_INVOICE_LINK", Text: "https://bit.ly/factura"})
	if err != nil || m.Status != "moderated" || *m.Moderation.Reason != "link_short_url" || m.MessageDate.Available != nil {
		t.Fatalf("moderated option: %+v %v", m, err)
	}
	_, err = e.msg.SendOption(ctx, e.buyer, 0, o.PackID, messages.OptionBody{OptionID: "OTHER", Text: "x"})
	wantShaped(t, err, messages.ShapeCause, errs.Forbidden, "You are not allowed to access the information of the pack "+itoa(o.PackID))
	unpaid := e.order(sales.StatusPaymentRequired)
	_, err = e.msg.SendOption(ctx, e.seller, 0, unpaid.PackID, messages.OptionBody{OptionID: "OTHER", Text: "x"})
	me = wantShaped(t, err, messages.ShapeCause, errs.Forbidden, "The conversation is blocked")
	if me.Cause != messages.SubstatusPayment {
		t.Fatalf("cause = %q", me.Cause)
	}
}

func TestSendOption_TheDeliveryPromiseFillsItsHours(t *testing.T) {
	e := newEnv(t)
	o := e.paid()
	if _, err := e.sales.SetLogisticType(ctx, *o.Shipping.ID, sales.LogisticSelfService); err != nil {
		t.Fatal(err)
	}
	body := func(init, limit string) messages.OptionBody {
		return messages.OptionBody{OptionID: "DELIVERY_PROMISE", TemplateID: "TEMPLATE___DELIVERY_PROMISE___1",
			Vars: map[string]json.Number{"TEMPLATE___DELIVERY_PROMISE___1___VAR___INIT": json.Number(init), "TEMPLATE___DELIVERY_PROMISE___1___VAR___LIMIT": json.Number(limit)}}
	}
	_, err := e.msg.SendOption(ctx, e.seller, 0, o.PackID, body("18", "12"))
	wantShaped(t, err, messages.ShapeCause, errs.Invalid, "The template TEMPLATE___DELIVERY_PROMISE___1 is invalid")
	m, err := e.msg.SendOption(ctx, e.seller, 0, o.PackID, body("12", "18"))
	if err != nil || m.Text != "Hola, entregaremos tu compra hoy entre las 12 y las 18 hs." {
		t.Fatalf("%+v %v", m, err)
	}
}
