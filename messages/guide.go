package messages

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/sales"
	"github.com/marketplace/marketplace/storage"
)

// Options of the action guide ("reasons to communicate").
const (
	OptionRequestVariants    = "REQUEST_VARIANTS"
	OptionRequestBillingInfo = "REQUEST_BILLING_INFO"
	OptionSendInvoiceLink    = "SEND_INVOICE_LINK"
	OptionDeliveryPromise    = "DELIVERY_PROMISE"
	OptionOther              = "OTHER"
)

// OptionCap is how many messages the seller may send with each option
// before the buyer replies.
const OptionCap = 1

// GuideCharLimit is the longest free text of an option.
const GuideCharLimit = 350

// Option is an option of the action guide.
type Option struct {
	ID                  string     `json:"id"`
	InternalDescription string     `json:"internal_description"`
	Enabled             bool       `json:"enabled"`
	Type                string     `json:"type"`
	Templates           []Template `json:"templates"`
	// Actionable says whether the option can be sent now: the
	// conversation takes the action guide's messages and the option has
	// messages left.
	Actionable   bool  `json:"actionable"`
	CharLimit    *int  `json:"char_limit"`
	ChildOptions []any `json:"child_options"`
	CapAvailable int   `json:"cap_available"`
}

// Template is a template of an option.
type Template struct {
	ID string `json:"id"`
	// Texts are the template's text by site (lower case), for the pack's
	// site.
	Texts map[string]TemplateText `json:"texts"`
	Vars  []TemplateVar           `json:"vars"`
}

// TemplateText is a template's text; %s, %d stand for its values.
type TemplateText struct {
	HTML string `json:"html"`
}

// TemplateVar is a value a template takes.
type TemplateVar struct {
	ID   string `json:"id"`
	Type string `json:"type"`
}

// Guide is the answer of GET /messages/action_guide/packs/{pack_id}.
type Guide struct {
	Options []Option `json:"options"`
}

// Cap is an option's remaining messages.
type Cap struct {
	OptionID     string `json:"option_id"`
	CapAvailable int    `json:"cap_available"`
}

// optionDef is an option as the engine defines it.
type optionDef struct {
	id, description string
	template        string // "" for a free text option
	vars            []string
	// texts by language: es, pt.
	texts map[string]string
	// offered says whether the option is offered for the sale.
	offered func(saleFacts) bool
}

func always(saleFacts) bool { return true }

// options are the five options, in the order they are listed. The
// template texts are the engine's own fixed sentences (the public API
// shows none but the delivery promise's).
var options = []optionDef{
	{id: OptionRequestVariants, description: "Ask variant data", template: "TEMPLATE___REQUEST_VARIANTS___1",
		texts: map[string]string{
			"es": "Hola, necesitamos que nos confirmes las características del producto que compraste (color, talle o modelo) para preparar tu envío.",
			"pt": "Olá, precisamos que você confirme as características do produto que comprou (cor, tamanho ou modelo) para prepararmos o seu envio.",
		},
		offered: func(f saleFacts) bool {
			return f.logisticType == sales.LogisticCrossDocking || f.logisticType == sales.LogisticDropOff
		}},
	{id: OptionRequestBillingInfo, description: "Ask billing data", template: "TEMPLATE___REQUEST_BILLING_INFO___1",
		texts: map[string]string{
			"es": "Hola, para emitir tu factura necesitamos tu nombre completo, tu número de documento (DNI, RFC o cédula), tu dirección y tu código postal.",
			"pt": "Olá, para emitir a sua nota fiscal precisamos do seu nome completo, do seu CPF ou CNPJ, do seu endereço e do seu CEP.",
		},
		offered: always},
	{id: OptionSendInvoiceLink, description: "Send invoice link", offered: always},
	{id: OptionDeliveryPromise, description: "Inform delivery window", template: "TEMPLATE___DELIVERY_PROMISE___1",
		vars: []string{"TEMPLATE___DELIVERY_PROMISE___1___VAR___INIT", "TEMPLATE___DELIVERY_PROMISE___1___VAR___LIMIT"},
		texts: map[string]string{
			"es": "Hola, entregaremos tu compra %s entre las %d y las %d hs.",
			"pt": "Olá, entregaremos a sua compra %s entre as %d e as %d horas.",
		},
		offered: func(f saleFacts) bool { return f.logisticType == sales.LogisticSelfService }},
	{id: OptionOther, description: "Free text",
		offered: func(f saleFacts) bool { return f.shipmentStatus != sales.ShipmentDelivered }},
}

// language is the language of a site's templates.
func language(siteID string) string {
	if siteID == "MLB" {
		return "pt"
	}
	return "es"
}

// today is the word a delivery promise's %s is written with.
var today = map[string]string{"es": "hoy", "pt": "hoje"}

func (d optionDef) view(p pack, used int, actionable bool) Option {
	o := Option{ID: d.id, InternalDescription: d.description, Enabled: true, Type: "free_text",
		CapAvailable: max(OptionCap-used, 0)}
	o.Actionable = actionable && o.CapAvailable > 0
	if d.template == "" {
		limit := GuideCharLimit
		o.CharLimit = &limit
		return o
	}
	o.Type = "template"
	t := Template{ID: d.template,
		Texts: map[string]TemplateText{strings.ToLower(p.sale.siteID): {HTML: d.texts[language(p.sale.siteID)]}}}
	for _, v := range d.vars {
		t.Vars = append(t.Vars, TemplateVar{ID: v, Type: "NUMBER"})
	}
	o.Templates = []Template{t}
	return o
}

// guidePack reads the conversation of id for the action guide: caller
// must be its seller, and its product not one made to order. It returns
// whether the conversation takes the guide's messages now, and the error
// that says why not.
func (s *Service) guidePack(tx storage.Tx, caller, id int64, now time.Time) (pack, error, error) {
	p, err := s.readPack(tx, id, nil)
	if err != nil {
		return pack{}, nil, err
	}
	if caller != p.sale.sellerID {
		return pack{}, nil, guideError(errs.Forbidden, "forbidden", fmt.Sprintf("You are not allowed to access the information of the pack %d", id), "")
	}
	if p.sale.exceptedCase() {
		return pack{}, nil, guideError(errs.Invalid, "bad_request",
			"This pack belongs to an excepted case, it is requested to use the messaging resource.", SubstatusExceptedCase)
	}
	var refusal error
	switch st := p.state(now); {
	case st.blocked:
		refusal = guideError(errs.Forbidden, "forbidden", "The conversation is blocked", st.substatus)
	case !p.conv.LastBuyer.IsZero():
		refusal = guideError(errs.Forbidden, "forbidden", "This package has the conversation blocked, please check blocked messages",
			SubstatusUseMessageAPI)
	}
	return p, refusal, nil
}

// Guide returns the options the seller may start the conversation of
// pack id with: all five, by the sale's shipment (REQUEST_VARIANTS for
// cross docking and drop off, DELIVERY_PROMISE for Flex, OTHER until the
// shipment is delivered), each with the messages it has left. An option
// is actionable while the conversation takes the guide's messages (not
// blocked, and the buyer has not written) and it has messages left.
// Errors: NotFound, *Error of ShapeCause (caller is not the seller; a
// product made to order).
func (s *Service) Guide(ctx context.Context, caller, id int64) (Guide, error) {
	now := s.clock.Now()
	out := Guide{Options: []Option{}}
	err := s.store.View(ctx, func(tx storage.Tx) error {
		p, refusal, err := s.guidePack(tx, caller, id, now)
		if err != nil {
			return err
		}
		for _, d := range options {
			if d.offered(p.sale) {
				out.Options = append(out.Options, d.view(p, p.conv.Used[d.id], refusal == nil))
			}
		}
		return nil
	})
	return out, err
}

// Caps returns the messages each offered option has left. Errors: as
// Guide.
func (s *Service) Caps(ctx context.Context, caller, id int64) ([]Cap, error) {
	g, err := s.Guide(ctx, caller, id)
	if err != nil {
		return nil, err
	}
	out := make([]Cap, 0, len(g.Options))
	for _, o := range g.Options {
		out = append(out, Cap{OptionID: o.ID, CapAvailable: o.CapAvailable})
	}
	return out, nil
}

// OptionBody is the body of POST /messages/action_guide/packs/{pack_id}/option.
type OptionBody struct {
	OptionID   string
	TemplateID string
	Text       string
	// Vars are a template's values by id.
	Vars map[string]json.Number
}

// ParseOptionBody reads the body of an option's message. Errors: Invalid
// (no body, or one that is not an object).
func ParseOptionBody(b []byte) (OptionBody, error) {
	m, err := objectBody(b, invalid(msgBodyRequired))
	if err != nil {
		return OptionBody{}, err
	}
	var out OptionBody
	str := func(field string) string {
		var s string
		if raw, ok := m[field]; ok {
			_ = json.Unmarshal(raw, &s)
		}
		return s
	}
	out.OptionID, out.TemplateID, out.Text = str("option_id"), str("template_id"), str("text")
	if raw, ok := m["vars"]; ok && !isNull(raw) {
		var vars []map[string]json.RawMessage
		_ = json.Unmarshal(raw, &vars)
		out.Vars = map[string]json.Number{}
		for _, v := range vars {
			var id string
			var val json.Number
			if json.Unmarshal(v["id"], &id) == nil && json.Unmarshal(v["value"], &val) == nil {
				out.Vars[id] = val
			}
		}
	}
	return out, nil
}

// GuideMessage is the answer of an option's message.
type GuideMessage struct {
	ID          string      `json:"id"`
	To          Recipient   `json:"to"`
	Status      string      `json:"status"`
	Text        string      `json:"text"`
	MessageDate MessageDate `json:"message_date"`
	Moderation  Moderation  `json:"message_moderation"`
}

// Recipient is the recipient of an option's message, with its name.
type Recipient struct {
	UserID int64  `json:"user_id"`
	Name   string `json:"name"`
}

// SendOption sends the seller's message of an option of the action guide
// in the conversation of pack id: a template's text, filled with its
// values, or a free text (moderated as any message). Each lowers the
// option's messages left by one; the message starts the conversation.
// Errors (each an *Error of ShapeCause, the spec's 3.9): NotFound (no such
// pack, an option unknown or not offered), Forbidden (caller is not the
// seller; the buyer has written: use the messages route; any other block;
// no messages left), Invalid (a wrong template or values, a text over 350
// characters), Conflict (another request on the pack won the race).
func (s *Service) SendOption(ctx context.Context, caller, clientID, id int64, in OptionBody) (GuideMessage, error) {
	seq, eventSeq := kv.NewOnceID(s.store, messageSequence), kv.NewOnceID(s.store, notify.OutboxSequence)
	now := s.clock.Now()
	var out GuideMessage
	err := s.store.Update(ctx, func(tx storage.Tx) error {
		// At network distance: the message's ids with the pack's first
		// read, the buyer with its unread count, then the commit.
		drawn := kv.DrawOnceLater(ctx, tx, seq, eventSeq)
		p, refusal, err := s.guidePack(tx, caller, id, now)
		if err != nil {
			return err
		}
		if refusal != nil {
			return refusal
		}
		if err := storage.Prefetch(tx, append(accounts.UserKeys(p.sale.buyerID), userUnreadKey(p.sale.buyerID, roleBuyer, p.sale.packID))...); err != nil {
			return err
		}
		var def *optionDef
		for i := range options {
			if options[i].id == in.OptionID && options[i].offered(p.sale) {
				def = &options[i]
			}
		}
		if def == nil {
			return guideError(errs.NotFound, "not_found", "The option selected is not valid", "")
		}
		if p.conv.Used[def.id] >= OptionCap {
			return guideError(errs.Forbidden, "bad_request", fmt.Sprintf("You are not allowed to execute the option %s again", def.id), "")
		}
		text, err := def.text(p, in, now)
		if err != nil {
			return err
		}
		reason := ""
		if def.template == "" {
			reason = moderate(text)
		}
		if err := drawn(); err != nil {
			return err
		}
		n, _ := seq.Get(ctx)
		evSeq, _ := eventSeq.Get(ctx)
		r := record{ID: messageID(n), Seq: n, PackID: p.sale.packID, SellerID: p.sale.sellerID, SiteID: p.sale.siteID,
			ClientID: clientID, From: caller, To: p.sale.buyerID, BySeller: true, Text: text, Created: now, Option: def.id}
		m, err := s.write(ctx, tx, p, r, reason, evSeq, now)
		if err != nil {
			return err
		}
		buyer, err := accounts.GetUser(tx, p.sale.buyerID)
		if err != nil {
			return err
		}
		name := strings.TrimSpace(buyer.FirstName + " " + buyer.LastName)
		if name == "" {
			name = buyer.Nickname
		}
		out = GuideMessage{ID: m.ID, To: Recipient{UserID: p.sale.buyerID, Name: name}, Status: m.Status, Text: m.Text,
			MessageDate: m.MessageDate, Moderation: m.Moderation}
		if m.Moderation.Reason != nil {
			// The option's answer writes the reason in lower case, as the
			// public example does.
			lower := strings.ToLower(*m.Moderation.Reason)
			out.Moderation.Reason = &lower
		}
		return nil
	})
	if errors.Is(err, storage.ErrConflict) {
		return GuideMessage{}, guideError(errs.Conflict, "conflict", "There is another request locking this operation", "")
	}
	return out, err
}

// text is the message an option sends: its template filled with the
// body's values, or the body's free text.
func (d optionDef) text(p pack, in OptionBody, now time.Time) (string, error) {
	if d.template == "" {
		switch t := in.Text; {
		case utf8.RuneCountInString(t) > GuideCharLimit:
			return "", guideError(errs.Invalid, "limit_exceeded", "The text is invalid", "")
		case checkText(t, GuideCharLimit) != nil:
			return "", guideError(errs.Invalid, "bad_request", "The text is invalid", "")
		}
		return in.Text, nil
	}
	badTemplate := guideError(errs.Invalid, "bad_request", fmt.Sprintf("The template %s is invalid", orNull(in.TemplateID)), "")
	if in.TemplateID != d.template {
		return "", badTemplate
	}
	lang := language(p.sale.siteID)
	if len(d.vars) == 0 {
		return d.texts[lang], nil
	}
	hours := make([]any, 0, len(d.vars)+1)
	hours = append(hours, today[lang])
	for _, v := range d.vars {
		h, err := in.Vars[v].Int64()
		if err != nil || h < 0 || h > 24 {
			return "", badTemplate
		}
		hours = append(hours, h)
	}
	if hours[1].(int64) >= hours[2].(int64) {
		return "", badTemplate
	}
	if est := p.sale.deliveryEstimate; !est.IsZero() && est.Before(now.Truncate(24*time.Hour)) {
		return "", guideError(errs.Invalid, "bad_request",
			"The promise of delivery of the shipping contained in the pack is from a date before today", "")
	}
	return fmt.Sprintf(d.texts[lang], hours...), nil
}

func orNull(s string) string {
	if s == "" {
		return "null"
	}
	return s
}
