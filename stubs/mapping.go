package stubs

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/faults"
)

// DefaultPriority is a mapping's priority when it names none, as in
// WireMock: 1 is tried first.
const DefaultPriority = 5

// MaxDelay bounds fixedDelayMilliseconds: the server's write timeout is a
// minute, and a slower answer would never arrive.
const MaxDelay = 30 * time.Second

// Mapping is one stub: a request pattern and the response to it, in
// WireMock's JSON format.
type Mapping struct {
	// ID is the mapping's UUID, given or drawn.
	ID       string
	Priority int
	// Extension is the marketplace's own part of the mapping.
	Extension Extension

	raw     json.RawMessage
	seq     uint64
	request *Pattern
	resp    response
}

// Extension is the "marketplace" object of a mapping: names WireMock does
// not have.
type Extension struct {
	// Override lets the stub answer a request an emulated route serves.
	Override bool `json:"override,omitempty"`
	// Public lets a request be answered without a valid token.
	Public bool `json:"public,omitempty"`
	// Times, when positive, is how many requests the stub answers before
	// it is spent.
	Times int64 `json:"times,omitempty"`
}

// MarshalJSON writes the mapping as it was given, with its id.
func (m *Mapping) MarshalJSON() ([]byte, error) { return m.raw, nil }

// Request returns the mapping's request pattern.
func (m *Mapping) Request() *Pattern { return m.request }

type response struct {
	status    int
	headers   [][2]string
	body      []byte
	jsonBody  any // when set, body is its encoding and templates run on its strings
	delay     time.Duration
	fault     faults.WireFault
	templated bool
	// The templates, read once: of a body, or of a jsonBody's strings.
	text []part
	json []jsonChunk
}

// fields reads raw as one JSON object whose names are among allowed;
// where says where it is, for the error.
func fields(raw json.RawMessage, where string, allowed ...string) (map[string]json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, invalid(where, "it must be a JSON object")
	}
	var unknown []string
	for k := range obj {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return nil, invalid(join(where, unknown[0]), "it is not a field this server knows: "+strings.Join(allowed, ", "))
	}
	return obj, nil
}

func join(where, name string) string {
	if where == "" {
		return name
	}
	return where + "." + name
}

// faultNames lists the wire faults a response may name.
func faultNames() string {
	names := make([]string, len(faults.WireFaults))
	for i, f := range faults.WireFaults {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

func invalid(field, why string) error {
	return errs.Invalidf("Invalid mapping field %s: %s", field, why)
}

// Parse reads one mapping in WireMock's format. Every field is checked:
// an unknown name or a malformed value is an Invalid error naming it, so
// that no mapping matches more than its author wrote, and a URL matcher
// that could match a path the server keeps for itself (Reserve) is refused
// naming the path. A mapping with no id gets a new one.
func Parse(data []byte) (*Mapping, error) { return parse(data, true) }

// parse is Parse; a mapping read back from the store is not judged against
// the reserved paths again (one kept from before they were reserved stays
// listed, and can be deleted), since Answer never answers them anyway.
func parse(data []byte, checkReserved bool) (*Mapping, error) {
	obj, err := fields(data, "mapping", "id", "uuid", "name", "request", "response", "priority", "metadata", "persistent", "marketplace")
	if err != nil {
		return nil, err
	}
	m := &Mapping{Priority: DefaultPriority}
	for _, k := range []string{"id", "uuid"} {
		if v, ok := obj[k]; ok {
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, invalid(k, "it must be a UUID")
			}
			u, err := uuid.Parse(s)
			if err != nil {
				return nil, invalid(k, "it must be a UUID")
			}
			if m.ID != "" && m.ID != u.String() {
				return nil, invalid(k, "id and uuid differ")
			}
			m.ID = u.String()
		}
	}
	if m.ID == "" {
		m.ID = uuid.NewString()
	}
	for _, k := range []string{"name"} {
		if v, ok := obj[k]; ok {
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, invalid(k, "it must be a string")
			}
		}
	}
	if v, ok := obj["persistent"]; ok {
		var b bool
		if err := json.Unmarshal(v, &b); err != nil {
			return nil, invalid("persistent", "it must be true or false")
		}
	}
	if v, ok := obj["metadata"]; ok {
		var md map[string]any
		if err := json.Unmarshal(v, &md); err != nil || md == nil {
			return nil, invalid("metadata", "it must be a JSON object")
		}
	}
	if v, ok := obj["priority"]; ok {
		if err := json.Unmarshal(v, &m.Priority); err != nil || m.Priority < 1 {
			return nil, invalid("priority", "it must be a whole number from 1")
		}
	}
	if v, ok := obj["marketplace"]; ok {
		ext, err := fields(v, "marketplace", "override", "public", "times")
		if err != nil {
			return nil, err
		}
		for _, k := range []string{"override", "public"} {
			if b, ok := ext[k]; ok {
				var x bool
				if err := json.Unmarshal(b, &x); err != nil {
					return nil, invalid("marketplace."+k, "it must be true or false")
				}
				if k == "override" {
					m.Extension.Override = x
				} else {
					m.Extension.Public = x
				}
			}
		}
		if b, ok := ext["times"]; ok {
			if err := json.Unmarshal(b, &m.Extension.Times); err != nil || m.Extension.Times < 1 {
				return nil, invalid("marketplace.times", "it must be a whole number from 1")
			}
		}
	}
	req, ok := obj["request"]
	if !ok {
		return nil, invalid("request", "it is required")
	}
	if m.request, err = parsePattern(req, "request"); err != nil {
		return nil, err
	}
	if checkReserved {
		if err := m.request.url.checkReserved("request"); err != nil {
			return nil, err
		}
	}
	resp, ok := obj["response"]
	if !ok {
		return nil, invalid("response", "it is required")
	}
	if m.resp, err = parseResponse(resp); err != nil {
		return nil, err
	}
	// The mapping is kept as given, with its id, so that it reads back as
	// it was written.
	obj["id"] = mustJSON(m.ID)
	delete(obj, "uuid")
	m.raw = mustJSON(obj)
	return m, nil
}

// mustJSON encodes a value read from JSON, which always encodes; HTML is
// not escaped, so that a body is answered as its author wrote it.
func mustJSON(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func parseResponse(raw json.RawMessage) (response, error) {
	obj, err := fields(raw, "response", "status", "headers", "body", "jsonBody", "base64Body",
		"fixedDelayMilliseconds", "fault", "transformers")
	if err != nil {
		return response{}, err
	}
	r := response{status: http.StatusOK}
	if v, ok := obj["status"]; ok {
		// A 1xx is not an answer: 101 switches protocols and never answers,
		// 103 sends an interim answer before the real one.
		if err := json.Unmarshal(v, &r.status); err != nil || r.status < 200 || r.status > 599 {
			return r, invalid("response.status", "it must be an HTTP status from 200 to 599 (an informational 1xx is not an answer)")
		}
	}
	if v, ok := obj["headers"]; ok {
		var hs map[string]json.RawMessage
		if err := json.Unmarshal(v, &hs); err != nil || hs == nil {
			return r, invalid("response.headers", "it must be a JSON object of names to values")
		}
		names := make([]string, 0, len(hs))
		for k := range hs {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			var one string
			var many []string
			switch {
			case json.Unmarshal(hs[k], &one) == nil:
				many = []string{one}
			case json.Unmarshal(hs[k], &many) == nil:
			default:
				return r, invalid("response.headers."+k, "it must be a string or a list of strings")
			}
			if k == "" || strings.ContainsAny(k, " \r\n:") {
				return r, invalid("response.headers."+k, "it is not a header name")
			}
			if framing(k) {
				continue
			}
			for _, s := range many {
				if strings.ContainsAny(s, "\r\n") {
					return r, invalid("response.headers."+k, "a value cannot hold a line break")
				}
				r.headers = append(r.headers, [2]string{k, s})
			}
		}
	}
	n := 0
	if v, ok := obj["body"]; ok {
		n++
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return r, invalid("response.body", "it must be a string")
		}
		r.body = []byte(s)
	}
	if v, ok := obj["jsonBody"]; ok {
		n++
		if err := json.Unmarshal(v, &r.jsonBody); err != nil {
			return r, invalid("response.jsonBody", "it must be JSON")
		}
		r.body = mustJSON(r.jsonBody)
	}
	if v, ok := obj["base64Body"]; ok {
		n++
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return r, invalid("response.base64Body", "it must be a base64 string")
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return r, invalid("response.base64Body", "it must be a base64 string")
		}
		r.body = b
	}
	if n > 1 {
		return r, invalid("response.body", "give one of body, jsonBody and base64Body")
	}
	if v, ok := obj["fixedDelayMilliseconds"]; ok {
		var ms int64
		if err := json.Unmarshal(v, &ms); err != nil || ms < 0 || time.Duration(ms)*time.Millisecond > MaxDelay {
			return r, invalid("response.fixedDelayMilliseconds", fmt.Sprintf("it must be a whole number from 0 to %d", MaxDelay.Milliseconds()))
		}
		r.delay = time.Duration(ms) * time.Millisecond
	}
	if v, ok := obj["fault"]; ok {
		// The fault rules' names, so that a rule and a stub say the same:
		// WireMock's four and MALFORMED_JSON.
		var name string
		_ = json.Unmarshal(v, &name)
		f, err := faults.ParseWireFault("response.fault", name)
		if err != nil {
			return r, invalid("response.fault", "it must be one of "+faultNames())
		}
		r.fault = f
	}
	if v, ok := obj["transformers"]; ok {
		var ts []string
		if err := json.Unmarshal(v, &ts); err != nil {
			return r, invalid("response.transformers", "it must be a list of names")
		}
		for _, t := range ts {
			if t != "response-template" {
				return r, invalid("response.transformers", "the one transformer this server knows is response-template, not "+t)
			}
			r.templated = true
		}
	}
	if r.templated {
		if r.jsonBody != nil {
			if r.json, err = compileJSON(r.jsonBody); err != nil {
				return r, err
			}
		} else if r.text, err = parseTemplate(string(r.body)); err != nil {
			return r, err
		}
	}
	// A jsonBody is JSON unless the headers say otherwise: said once, here,
	// rather than on every answer.
	if r.jsonBody != nil && !slices.ContainsFunc(r.headers, func(h [2]string) bool {
		return http.CanonicalHeaderKey(h[0]) == "Content-Type"
	}) {
		r.headers = append(r.headers, [2]string{"Content-Type", "application/json"})
	}
	r.headers = slices.Clip(r.headers)
	return r, nil
}

// framing reports whether the header named k says how the answer is
// framed on the wire: the server writes those itself, from the body it
// sends, so that a length given in a mapping (a recording's, or one a
// template outgrows) never cuts an answer or leaves a client waiting.
func framing(k string) bool {
	k = http.CanonicalHeaderKey(k)
	return k == "Content-Length" || k == "Transfer-Encoding"
}

// Pattern is a request pattern: a stub's request, or a verification's.
type Pattern struct {
	method  string // "" or ANY: every method
	url     urlMatch
	query   []namedMatcher
	headers []namedMatcher
	bodies  []bodyMatcher
}

type urlMatch struct {
	kind     string // url, urlPath, urlPattern, urlPathPattern, urlPathTemplate; "" matches every URL
	value    string
	re       *regexp.Regexp
	insts    int            // re's instructions
	segments []string       // of a template: "{name}" or a literal
	params   map[string]int // of a template: each name's segment
}

type namedMatcher struct {
	name string
	m    matcher
}

// ParsePattern reads a request pattern in WireMock's format, the request of
// a mapping. Errors: Invalid, naming the field.
func ParsePattern(raw []byte) (*Pattern, error) { return parsePattern(raw, "request") }

func parsePattern(raw json.RawMessage, where string) (*Pattern, error) {
	urlKinds := []string{"url", "urlPath", "urlPattern", "urlPathPattern", "urlPathTemplate"}
	obj, err := fields(raw, where, append([]string{"method", "queryParameters", "headers", "bodyPatterns"}, urlKinds...)...)
	if err != nil {
		return nil, err
	}
	p := &Pattern{}
	if v, ok := obj["method"]; ok {
		if err := json.Unmarshal(v, &p.method); err != nil || p.method == "" || strings.ContainsAny(p.method, " \t/") {
			return nil, invalid(where+".method", "it must be an HTTP method or ANY")
		}
		p.method = strings.ToUpper(p.method)
		if p.method == "ANY" {
			p.method = ""
		}
	}
	for _, k := range urlKinds {
		v, ok := obj[k]
		if !ok {
			continue
		}
		if p.url.kind != "" {
			return nil, invalid(where+"."+k, "give one of "+strings.Join(urlKinds, ", "))
		}
		p.url.kind = k
		if err := json.Unmarshal(v, &p.url.value); err != nil || !strings.HasPrefix(p.url.value, "/") && !strings.HasSuffix(k, "Pattern") {
			return nil, invalid(where+"."+k, "it must be a path that starts with /")
		}
		switch k {
		case "urlPattern", "urlPathPattern":
			if p.url.re, p.url.insts, err = compileRegexp(where+"."+k, p.url.value); err != nil {
				return nil, err
			}
		case "urlPathTemplate":
			p.url.segments = strings.Split(p.url.value, "/")
			p.url.params = map[string]int{}
			for i, s := range p.url.segments {
				if strings.HasPrefix(s, "{") {
					name := strings.TrimSuffix(strings.TrimPrefix(s, "{"), "}")
					if _, seen := p.url.params[name]; !strings.HasSuffix(s, "}") || name == "" || strings.ContainsAny(name, "{}") || seen {
						return nil, invalid(where+"."+k, "a parameter is one whole segment, {name}, each name once")
					}
					p.url.params[name] = i
				} else if strings.ContainsAny(s, "{}") {
					return nil, invalid(where+"."+k, "a parameter is one whole segment, {name}, each name once")
				}
			}
		}
	}
	for _, k := range []string{"queryParameters", "headers"} {
		v, ok := obj[k]
		if !ok {
			continue
		}
		var named map[string]json.RawMessage
		if err := json.Unmarshal(v, &named); err != nil || named == nil {
			return nil, invalid(where+"."+k, "it must be a JSON object of names to matchers")
		}
		names := make([]string, 0, len(named))
		for n := range named {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			m, err := parseMatcher(named[n], where+"."+k+"."+n)
			if err != nil {
				return nil, err
			}
			if k == "headers" {
				p.headers = append(p.headers, namedMatcher{name: http.CanonicalHeaderKey(n), m: m})
			} else {
				p.query = append(p.query, namedMatcher{name: n, m: m})
			}
		}
	}
	if v, ok := obj["bodyPatterns"]; ok {
		var list []json.RawMessage
		if err := json.Unmarshal(v, &list); err != nil {
			return nil, invalid(where+".bodyPatterns", "it must be a list of body matchers")
		}
		for i, b := range list {
			bm, err := parseBodyMatcher(b, fmt.Sprintf("%s.bodyPatterns[%d]", where, i))
			if err != nil {
				return nil, err
			}
			p.bodies = append(p.bodies, bm)
		}
	}
	return p, nil
}

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{'
}
