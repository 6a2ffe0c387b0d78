package claims

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/sales"
	"github.com/marketplace/marketplace/storage"
)

// Shipping methods of a shipping evidence.
const (
	MethodMail             = "mail"
	MethodEntrusted        = "entrusted"
	MethodPersonalDelivery = "personal_delivery"
	MethodEmail            = "email"
)

// NewEvidence is a shipping evidence the seller sends (POST
// .../actions/evidences), or its shipping promise (POST .../evidences,
// type handling_shipping_evidence with handling_date).
type NewEvidence struct {
	Type                string   `json:"type"`
	ShippingMethod      string   `json:"shipping_method"`
	ShippingCompanyName string   `json:"shipping_company_name"`
	DateShipped         string   `json:"date_shipped"`
	DateDelivered       string   `json:"date_delivered"`
	DestinationAgency   string   `json:"destination_agency"`
	ReceiverEmail       string   `json:"receiver_email"`
	ReceiverID          string   `json:"receiver_id"`
	ReceiverName        string   `json:"receiver_name"`
	TrackingNumber      string   `json:"tracking_number"`
	HandlingDate        string   `json:"handling_date"`
	Attachments         []string `json:"attachments"`
}

// evidenceFields are the fields each shipping method requires beside
// type, in the order they are checked, and those it takes.
var evidenceFields = map[string]struct{ required, optional []string }{
	MethodMail:             {[]string{"shipping_company_name", "date_shipped"}, []string{"tracking_number", "attachments"}},
	MethodEntrusted:        {[]string{"shipping_company_name", "date_shipped", "destination_agency", "receiver_name"}, []string{"receiver_id", "tracking_number", "date_delivered", "receiver_email", "attachments"}},
	MethodPersonalDelivery: {nil, []string{"date_delivered", "attachments"}},
	MethodEmail:            {[]string{"receiver_email", "date_shipped"}, []string{"attachments"}},
}

// field is the value of a named field of in ("" when absent).
func (in NewEvidence) field(name string) string {
	switch name {
	case "shipping_company_name":
		return in.ShippingCompanyName
	case "date_shipped":
		return in.DateShipped
	case "date_delivered":
		return in.DateDelivered
	case "destination_agency":
		return in.DestinationAgency
	case "receiver_email":
		return in.ReceiverEmail
	case "receiver_id":
		return in.ReceiverID
	case "receiver_name":
		return in.ReceiverName
	case "tracking_number":
		return in.TrackingNumber
	case "attachments":
		if len(in.Attachments) > 0 {
			return "given"
		}
	}
	return ""
}

// Evidences lists the seller's evidences of claim id, oldest first.
// Errors: NotFound, Forbidden.
func (s *Service) Evidences(ctx context.Context, caller, id int64) ([]Evidence, error) {
	var out []Evidence
	err := s.read(ctx, caller, id, func(tx storage.Tx, r *record, _ []actionRecord) error {
		out = cloneEvidences(r.Evidences)
		return nil
	})
	return out, err
}

func cloneEvidences(in []Evidence) []Evidence {
	out := make([]Evidence, 0, len(in))
	for _, e := range in {
		e.Attachments = slices.Clone(e.Attachments)
		if e.Attachments == nil {
			e.Attachments = []string{}
		}
		out = append(out, e)
	}
	return out
}

// AddEvidence records the seller's shipping evidence in on claim id and
// returns the claim's evidences: type shipping_evidence, a
// shipping_method of mail, entrusted, personal_delivery or email, and the
// fields that method requires; dates are RFC 3339 or a day (2024-03-10),
// attachments files the seller uploaded (AddFile, FileEvidence). An
// evidence is sent once and cannot be changed; the seller must have
// add_shipping_evidence (a product not received, in the claim stage: none
// is taken in dispute). Errors: Invalid, NotFound, Forbidden.
func (s *Service) AddEvidence(ctx context.Context, caller, id int64, in NewEvidence) ([]Evidence, error) {
	var out []Evidence
	err := s.write(ctx, caller, id, func(tx storage.Tx, r *record, o *outcome, nowMs int64) error {
		role := r.roleOf(caller)
		if !r.can(role, ActionAddShippingEvidence) {
			return errNotAvailable(ActionAddShippingEvidence)
		}
		e, err := s.checkEvidence(tx, r, caller, in)
		if err != nil {
			return err
		}
		r.Evidences = append(slices.Clone(r.Evidences), e)
		r.UpdatedMs = nowMs
		o.note(r, ActionAddShippingEvidence, role, nil, nowMs)
		o.acted = true
		out = cloneEvidences(r.Evidences)
		return nil
	})
	return out, err
}

// checkEvidence checks a shipping evidence in a fixed order (type, method,
// the method's required fields, fields it does not take, dates,
// attachments) and returns it as the claim keeps it.
func (s *Service) checkEvidence(tx storage.Tx, r *record, caller int64, in NewEvidence) (Evidence, error) {
	switch {
	case in.Type == "":
		return Evidence{}, errs.Invalidf("The field type is required: shipping_evidence")
	case in.Type != EvidenceShipping:
		return Evidence{}, errs.Invalidf("Invalid type: %s. Valid values are: [shipping_evidence]", in.Type)
	case in.ShippingMethod == "":
		return Evidence{}, errs.Invalidf("The field shipping_method is required: one of [mail, entrusted, personal_delivery, email]")
	}
	fields, ok := evidenceFields[in.ShippingMethod]
	if !ok {
		return Evidence{}, errs.Invalidf("Invalid shipping_method: %s. Valid values are: [mail, entrusted, personal_delivery, email]", in.ShippingMethod)
	}
	for _, f := range fields.required {
		if strings.TrimSpace(in.field(f)) == "" {
			return Evidence{}, errs.Invalidf("The field %s is required for the shipping_method %s", f, in.ShippingMethod)
		}
	}
	for _, f := range []string{"shipping_company_name", "date_shipped", "date_delivered", "destination_agency", "receiver_email",
		"receiver_id", "receiver_name", "tracking_number", "attachments"} {
		if in.field(f) != "" && !slices.Contains(fields.required, f) && !slices.Contains(fields.optional, f) {
			return Evidence{}, errs.Invalidf("The field %s is not taken for the shipping_method %s", f, in.ShippingMethod)
		}
	}
	method := in.ShippingMethod
	e := Evidence{Type: EvidenceShipping, ShippingMethod: &method, Attachments: []string{}}
	str := func(v string) *string {
		if v == "" {
			return nil
		}
		return &v
	}
	e.ShippingCompanyName, e.DestinationAgency = str(in.ShippingCompanyName), str(in.DestinationAgency)
	e.ReceiverEmail, e.ReceiverID, e.ReceiverName = str(in.ReceiverEmail), str(in.ReceiverID), str(in.ReceiverName)
	e.TrackingNumber = str(in.TrackingNumber)
	for _, d := range []struct {
		name, value string
		to          **string
	}{{"date_shipped", in.DateShipped, &e.DateShipped}, {"date_delivered", in.DateDelivered, &e.DateDelivered}} {
		if d.value == "" {
			continue
		}
		t, err := s.parseDate(tx, r, d.value)
		if err != nil {
			return Evidence{}, errs.Invalidf("Invalid %s: %s. It must be a date (2024-03-10) or a date and time (2024-03-10T05:00:00.000-03:00)", d.name, d.value)
		}
		v := s.stamp(tx, r, t.UnixMilli())
		*d.to = &v
	}
	files, err := s.messageFiles(tx, r, caller, kindEvidence, in.Attachments, func(name string) error {
		return errs.Invalidf("Attachment not found [claim: %d - fileName: %s]", r.ID, name)
	})
	if err != nil {
		return Evidence{}, err
	}
	for _, f := range files {
		e.Attachments = append(e.Attachments, f.Name)
	}
	return e, nil
}

// parseDate reads a date of an evidence: RFC 3339, or a day, which is its
// midnight in the site's time zone.
func (s *Service) parseDate(tx storage.Tx, r *record, v string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	day, err := time.Parse(time.DateOnly, v)
	if err != nil {
		return time.Time{}, err
	}
	// The site's offset on that day: the offset its time zone writes for
	// the day's noon.
	noon, err := time.Parse(sales.TimeLayout, s.stamp(tx, r, day.Add(12*time.Hour).UnixMilli()))
	if err != nil {
		return time.Time{}, err
	}
	return time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, noon.Location()), nil
}

// AddHandlingEvidence records the seller's shipping promise on claim id:
// in.Type handling_shipping_evidence and in.HandlingDate, the day the
// seller will ship (2024-06-13), kept as its midnight in the site's time
// zone. The seller must have send_potential_shipping (a product not
// received and not delivered, in the claim stage); a promise is sent
// once. Errors: Invalid, NotFound, Forbidden.
func (s *Service) AddHandlingEvidence(ctx context.Context, caller, id int64, in NewEvidence) (Evidence, error) {
	var out Evidence
	err := s.write(ctx, caller, id, func(tx storage.Tx, r *record, o *outcome, nowMs int64) error {
		role := r.roleOf(caller)
		if !r.can(role, ActionSendPotentialShipping) {
			return errNotAvailable(ActionSendPotentialShipping)
		}
		switch {
		case in.Type == "":
			return errs.Invalidf("The field type is required: handling_shipping_evidence")
		case in.Type != EvidenceHandlingShipping:
			return errs.Invalidf("Invalid type: %s. Valid values are: [handling_shipping_evidence]", in.Type)
		case in.HandlingDate == "":
			return errs.Invalidf("The field handling_date is required: the day the product ships (2024-06-13)")
		}
		t, err := s.parseDate(tx, r, in.HandlingDate)
		if err != nil {
			return errs.Invalidf("Invalid handling_date: %s. It must be a date (2024-06-13)", in.HandlingDate)
		}
		if _, err := time.Parse(time.DateOnly, in.HandlingDate); err != nil {
			return errs.Invalidf("Invalid handling_date: %s. It must be a date (2024-06-13)", in.HandlingDate)
		}
		day := s.stamp(tx, r, t.UnixMilli())
		e := Evidence{Type: EvidenceHandlingShipping, HandlingDate: &day, Attachments: []string{}}
		r.Evidences = append(slices.Clone(r.Evidences), e)
		r.UpdatedMs = nowMs
		o.note(r, ActionSendPotentialShipping, role, nil, nowMs)
		o.acted = true
		out = e
		return nil
	})
	return out, err
}
