package faults

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/marketplace/marketplace/errs"
)

// NewRule is the input of Create. Every field is optional, but a rule must
// do something: answer a status, fault the wire, add latency, trickle the
// answer or limit a rate.
type NewRule struct {
	// Method, Route, UserID, ApplicationID, Query and BodyFields select the
	// requests; an absent one matches every request. Route is a route
	// template as the spec writes it (/questions/{question_id}); parameter
	// names do not matter.
	Method        *string `json:"method"`
	Route         *string `json:"route"`
	UserID        *int64  `json:"user_id"`
	ApplicationID *int64  `json:"application_id"`
	// Query selects requests whose query has each parameter with that
	// value (one of its values, when repeated).
	Query map[string]string `json:"query"`
	// BodyFields selects requests whose JSON body has each field with an
	// equal JSON value; a field is a dotted path (shipping.mode, and a
	// number indexes an array: items.0.id).
	BodyFields map[string]json.RawMessage `json:"body_fields"`
	// Fault, when given, is answered instead of an HTTP status: a wire
	// fault (WireFaults). It takes no status and no body.
	Fault *WireFault `json:"fault"`
	// BytesPerSecond trickles the answer (the rule's, or the route's own
	// when the rule answers nothing) at that rate.
	BytesPerSecond *int64 `json:"bytes_per_second"`
	// Status and Body are the answer; Body defaults to the public API's body
	// for Status (DefaultBody).
	Status *int            `json:"status"`
	Body   json.RawMessage `json:"body"`
	// LatencyMS is added before the answer (or before the request is served
	// normally, when there is no Status).
	LatencyMS *int64 `json:"latency_ms"`
	// Probability is the chance that a matching request is faulted (default
	// 1); Times, when given, is how many requests the rule faults before it
	// is removed.
	Probability *float64 `json:"probability"`
	Times       *int64   `json:"times"`
	// RequestsPerMinute makes the rule a rate limit: each user (Per "user",
	// the default) or application (Per "application") may make that many
	// matching requests in a minute of the engine's clock; the next get 429.
	RequestsPerMinute *int64  `json:"requests_per_minute"`
	Per               *string `json:"per"`
}

// Rule is a stored fault rule. Unset selectors are null.
type Rule struct {
	ID                int64                      `json:"id"`
	Method            *string                    `json:"method"`
	Route             *string                    `json:"route"`
	UserID            *int64                     `json:"user_id"`
	ApplicationID     *int64                     `json:"application_id"`
	Query             map[string]string          `json:"query"`
	BodyFields        map[string]json.RawMessage `json:"body_fields"`
	Status            *int                       `json:"status"`
	Body              json.RawMessage            `json:"body"`
	Fault             *WireFault                 `json:"fault"`
	BytesPerSecond    *int64                     `json:"bytes_per_second"`
	LatencyMS         int64                      `json:"latency_ms"`
	Probability       float64                    `json:"probability"`
	Times             *int64                     `json:"times"`
	RequestsPerMinute *int64                     `json:"requests_per_minute"`
	Per               *string                    `json:"per"`
	Created           time.Time                  `json:"created"`

	// route is Route with its parameter names dropped, and bodyFields
	// BodyFields parsed, for matching.
	route      string
	bodyFields []bodyField
}

// MaxBytesPerSecond bounds bytes_per_second: a faster trickle is no
// trickle.
const MaxBytesPerSecond = 10 << 20

// prepare derives the fields that matching reads from the stored ones.
func (r *Rule) prepare() error {
	r.route = templateKey(deref(r.Route))
	fields, err := parseBodyFields(r.BodyFields)
	r.bodyFields = fields
	return err
}

// methods are the methods a rule may name.
var methods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete,
	http.MethodPatch, http.MethodHead, http.MethodOptions}

// validate checks in field by field, in a fixed order, and returns the rule
// it describes with its defaults.
func validate(in NewRule) (Rule, error) {
	r := Rule{UserID: in.UserID, ApplicationID: in.ApplicationID, Probability: 1, Times: in.Times,
		RequestsPerMinute: in.RequestsPerMinute}
	if in.Method != nil {
		m := strings.ToUpper(strings.TrimSpace(*in.Method))
		if !slices.Contains(methods, m) {
			return Rule{}, errs.Invalidf("Invalid method: %s. It must be one of %s", *in.Method, strings.Join(methods, ", "))
		}
		r.Method = &m
	}
	if in.Route != nil {
		route := strings.TrimSpace(*in.Route)
		if err := CheckRoute(route); err != nil {
			return Rule{}, err
		}
		r.Route = &route
	}
	if in.UserID != nil && *in.UserID <= 0 {
		return Rule{}, errs.Invalidf("Invalid user_id: %d. It must be a positive integer", *in.UserID)
	}
	if in.ApplicationID != nil && *in.ApplicationID <= 0 {
		return Rule{}, errs.Invalidf("Invalid application_id: %d. It must be a positive integer", *in.ApplicationID)
	}
	if err := checkQuery(in.Query); err != nil {
		return Rule{}, err
	}
	if len(in.Query) > 0 {
		r.Query = maps.Clone(in.Query)
	}
	if _, err := parseBodyFields(in.BodyFields); err != nil {
		return Rule{}, err
	}
	if len(in.BodyFields) > 0 {
		r.BodyFields = make(map[string]json.RawMessage, len(in.BodyFields))
		for k, v := range in.BodyFields {
			r.BodyFields[k] = append(json.RawMessage(nil), bytes.TrimSpace(v)...)
		}
	}
	if in.Status == nil && in.LatencyMS == nil && in.RequestsPerMinute == nil && in.Fault == nil && in.BytesPerSecond == nil {
		return Rule{}, errs.Invalidf("The fields [status, fault, latency_ms, bytes_per_second or requests_per_minute] are required for requested call: a rule must answer a status, fault the wire, add latency, trickle the answer or limit a rate")
	}
	if in.Fault != nil {
		f, err := ParseWireFault("fault", string(*in.Fault))
		if err != nil {
			return Rule{}, err
		}
		switch {
		case in.Status != nil:
			return Rule{}, errs.Invalidf("Invalid status: a rule with fault %s answers no status of its own", f)
		case len(in.Body) > 0 && string(in.Body) != "null":
			return Rule{}, errs.Invalidf("Invalid body: a rule with fault %s writes no body of its own", f)
		case in.RequestsPerMinute != nil:
			return Rule{}, errs.Invalidf("Invalid fault: a rate limit answers a status, not fault %s", f)
		case in.BytesPerSecond != nil && f.ClosesConnection():
			return Rule{}, errs.Invalidf("Invalid bytes_per_second: fault %s closes the connection, there is no answer to trickle", f)
		}
		r.Fault = &f
	}
	if in.BytesPerSecond != nil {
		if *in.BytesPerSecond <= 0 || *in.BytesPerSecond > MaxBytesPerSecond {
			return Rule{}, errs.Invalidf("Invalid bytes_per_second: %d. It must be from 1 to %d", *in.BytesPerSecond, MaxBytesPerSecond)
		}
		bps := *in.BytesPerSecond
		r.BytesPerSecond = &bps
	}
	if in.Status != nil {
		if *in.Status < 400 || *in.Status > 599 {
			return Rule{}, errs.Invalidf("Invalid status: %d. It must be an error status, from 400 to 599", *in.Status)
		}
		st := *in.Status
		r.Status = &st
	}
	if len(in.Body) > 0 && string(in.Body) != "null" {
		if in.Status == nil && in.RequestsPerMinute == nil {
			return Rule{}, errs.Invalidf("Invalid body: a body needs a status to be answered with")
		}
		if !json.Valid(in.Body) {
			return Rule{}, errs.Invalidf("Invalid body: it must be a JSON value")
		}
		r.Body = append(json.RawMessage(nil), in.Body...)
	}
	if in.LatencyMS != nil {
		if *in.LatencyMS < 0 || *in.LatencyMS > MaxLatency.Milliseconds() {
			return Rule{}, errs.Invalidf("Invalid latency_ms: %d. It must be from 0 to %d", *in.LatencyMS, MaxLatency.Milliseconds())
		}
		r.LatencyMS = *in.LatencyMS
	}
	if in.Probability != nil {
		if !(*in.Probability > 0 && *in.Probability <= 1) {
			return Rule{}, errs.Invalidf("Invalid probability: %v. It must be more than 0 and at most 1", *in.Probability)
		}
		r.Probability = *in.Probability
	}
	if in.Times != nil && *in.Times <= 0 {
		return Rule{}, errs.Invalidf("Invalid times: %d. It must be a positive integer", *in.Times)
	}
	if in.RequestsPerMinute != nil {
		if *in.RequestsPerMinute <= 0 {
			return Rule{}, errs.Invalidf("Invalid requests_per_minute: %d. It must be a positive integer", *in.RequestsPerMinute)
		}
		if in.Probability != nil || in.Times != nil {
			return Rule{}, errs.Invalidf("Invalid requests_per_minute: a rate limit takes neither probability nor times")
		}
		per := PerUser
		if in.Per != nil {
			per = *in.Per
		}
		if per != PerUser && per != PerApplication {
			return Rule{}, errs.Invalidf("Invalid per: %s. It must be user or application", per)
		}
		r.Per = &per
		if r.Status == nil {
			st := http.StatusTooManyRequests
			r.Status = &st
		}
	} else if in.Per != nil {
		return Rule{}, errs.Invalidf("Invalid per: it applies only to a rule with requests_per_minute")
	}
	if r.Status != nil && r.Body == nil {
		r.Body = DefaultBody(*r.Status)
	}
	if err := r.prepare(); err != nil {
		return Rule{}, err
	}
	return r, nil
}
