package recording

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/textproto"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/marketplace/marketplace/internal/redact"
	"github.com/marketplace/marketplace/stubs"
)

// Exchange is one forwarded request and the upstream's answer to it, as
// they crossed the server: secrets and all. Capture makes of it what may
// be kept.
type Exchange struct {
	Method string
	// Path is the request's path, unescaped (as the stubs match it);
	// RawQuery its query as sent.
	Path, RawQuery string
	RequestHeader  http.Header
	RequestBody    []byte
	Status         int
	ResponseHeader http.Header
	ResponseBody   []byte
	// Emulated says that a route of the engine serves the request: its
	// mapping must override the route to be heard on playback.
	Emulated bool
}

// Entry is an exchange as it may be kept, every secret out: its request as
// a WireMock request pattern, its answer as a WireMock response. Entries
// with the same request pattern are one distinct request.
type Entry struct {
	name     string
	request  []byte
	response []byte
	emulated bool
	status   int
	// seen is the request, redacted, as filters match it.
	seen stubs.Request
}

// Name is the entry's method and path, its secrets redacted: "GET
// /items/MLA1".
func (e Entry) Name() string { return e.name }

// size is what the entry holds, for the bounds of a Log.
func (e Entry) size() int {
	n := len(e.request) + len(e.response) + len(e.seen.Body) + len(e.seen.RawQuery)
	for k, vs := range e.seen.Header {
		n += len(k)
		for _, v := range vs {
			n += len(v)
		}
	}
	return n
}

// Matches reports whether the entry's request, its secrets redacted,
// matches p.
func (e Entry) Matches(p *stubs.Pattern) bool {
	r := e.seen // Matches caches the parsed query and body in its request
	return p.Matches(&r)
}

// anything stands, in a recorded pattern, for a secret the request sent:
// the recording matches whatever value a later request sends there.
const anything = `(?s:.*)`

// Capture turns an exchange into an entry, leaving out or redacting every
// secret (the package redact's rules): secrets are the server's own
// (secrets, its operator token), every credential the request presents
// (its Authorization header and the value of every header, query
// parameter, form field and JSON member whose name says it carries one:
// access_token, client_secret, code, refresh_token, password, ...), and
// every token of the API's shapes (APP_USR-..., TG-..., JSON Web Tokens,
// long hexadecimal secrets), wherever they appear again, in the answer
// too.
//
// The request pattern has the method, the path (urlPath) and, with
// equalTo, every query parameter but those that carry a secret; the body
// as equalToJson when it is JSON, with the members that carry a secret left
// to any value, and otherwise as equalTo, or matches when a secret is left
// to any value; no header (a replay sends its own credentials). A body
// that is not text is not matched.
//
// The response has the status, the headers but the connection's and the
// delivery's (Date, Set-Cookie, ...), and the body, byte for byte: as
// jsonBody when the stubs write it back to the same bytes (compact JSON,
// its members in order), as body when it is other text, and as
// base64Body when it is not UTF-8.
func Capture(ex Exchange, secrets ...string) Entry {
	red := redact.New(secrets...).For(context.Background(), nil, ex.RequestHeader, ex.RawQuery)
	e := Entry{emulated: ex.Emulated, status: ex.Status}
	// The body first: a secret it carries under a credential's name is
	// then replaced wherever the exchange repeats it.
	var reqBody string
	if len(ex.RequestBody) > 0 {
		reqBody = red.Body(ex.RequestHeader.Get("Content-Type"), ex.RequestBody)
	}
	var req pattern
	req.Method = ex.Method
	path := red.Path(ex.Path)
	if path == ex.Path {
		req.URLPath = ex.Path
	} else {
		req.URLPathPattern = wildcard(path, `[^/]*`)
	}
	e.name = ex.Method + " " + path
	req.QueryParameters = queryMatchers(red, ex.RawQuery)
	if len(ex.RequestBody) > 0 {
		req.BodyPatterns = bodyMatchers(ex.RequestBody, reqBody)
	}
	e.request = encode(req)

	resp := response{Status: ex.Status}
	ct := ex.ResponseHeader.Get("Content-Type")
	body := ex.ResponseBody
	if len(body) > 0 {
		body = []byte(red.Body(ct, body))
	}
	resp.Headers = responseHeaders(red, ex.ResponseHeader)
	switch {
	case len(body) == 0:
	case !utf8.Valid(body):
		resp.Base64Body = base64.StdEncoding.EncodeToString(body)
	case writtenBack(body):
		resp.JSONBody = json.RawMessage(body)
	default:
		resp.Body = string(body)
	}
	e.response = encode(resp)

	e.seen = stubs.Request{Method: ex.Method, Path: path, RawQuery: red.Query(ex.RawQuery),
		Header: make(map[string][]string, len(ex.RequestHeader)), Body: []byte(reqBody)}
	for k, vs := range ex.RequestHeader {
		if HopByHop(ex.RequestHeader, k) || red.Header(k, "-") == redact.Mark {
			continue // a credential's header: its name says so
		}
		kept := make([]string, len(vs))
		for i, v := range vs {
			kept[i] = red.Header(k, v)
		}
		e.seen.Header[textproto.CanonicalMIMEHeaderKey(k)] = kept
	}
	return e
}

// pattern is a WireMock request pattern, its fields in the order a reader
// expects them.
type pattern struct {
	Method          string                  `json:"method"`
	URLPath         string                  `json:"urlPath,omitempty"`
	URLPathPattern  string                  `json:"urlPathPattern,omitempty"`
	QueryParameters map[string]valueMatcher `json:"queryParameters,omitempty"`
	BodyPatterns    []map[string]any        `json:"bodyPatterns,omitempty"`
}

type valueMatcher struct {
	EqualTo string `json:"equalTo"`
}

// response is a WireMock response.
type response struct {
	Status     int             `json:"status"`
	Headers    map[string]any  `json:"headers,omitempty"`
	JSONBody   json.RawMessage `json:"jsonBody,omitempty"`
	Body       string          `json:"body,omitempty"`
	Base64Body string          `json:"base64Body,omitempty"`
}

// wildcard is a regular expression of s, a text in which redact.Mark
// stands for a secret: the rest literally, each secret as any.
func wildcard(s, any string) string {
	parts := strings.Split(s, redact.Mark)
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return strings.Join(parts, any)
}

// queryMatchers matches each parameter of the query as sent, with its
// first value; a parameter that carries a secret (by its name or its
// value) is left out, so that a replay matches whatever it sends there.
func queryMatchers(red *redact.Redactor, raw string) map[string]valueMatcher {
	if raw == "" {
		return nil
	}
	out := map[string]valueMatcher{}
	for part := range strings.SplitSeq(raw, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		name, err1 := url.QueryUnescape(k)
		value, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil || name == "" {
			continue // as url.ParseQuery, which the stubs match with, drops it
		}
		if red.Query(part) != part {
			continue
		}
		if _, ok := out[name]; !ok {
			out[name] = valueMatcher{EqualTo: value}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// bodyMatchers matches a request body as sent, given the same redacted:
// JSON as equalToJson, with the members that carried a secret required but
// left to any value; other text as equalTo, or as a regular expression in
// which each secret is any text; a body that is not text is not matched.
func bodyMatchers(body []byte, redacted string) []map[string]any {
	if doc, ok := decodeOne(body); ok {
		red, ok := decodeOne([]byte(redacted))
		if !ok {
			return nil // redacted whole
		}
		if jsonEqual(doc, red) {
			return []map[string]any{{"equalToJson": json.RawMessage(body)}}
		}
		obj, isObj := doc.(map[string]any)
		redObj, redIsObj := red.(map[string]any)
		if !isObj || !redIsObj {
			return nil
		}
		var left []string
		kept := prune(obj, redObj, "$", &left)
		out := []map[string]any{{"equalToJson": kept, "ignoreExtraElements": true}}
		for _, p := range left {
			out = append(out, map[string]any{"matchesJsonPath": p})
		}
		return out
	}
	if !utf8.Valid(body) {
		return nil
	}
	if redacted == string(body) {
		return []map[string]any{{"equalTo": string(body)}}
	}
	return []map[string]any{{"matches": wildcard(redacted, anything)}}
}

// prune returns the members of doc that its redacted copy red kept as
// they were, and adds to left the JSONPath of each member it leaves out.
// An object member is pruned member by member; any other value that
// changed (an array holding a secret, a secret itself) is left out whole.
func prune(doc, red map[string]any, path string, left *[]string) map[string]any {
	out := make(map[string]any, len(doc))
	names := make([]string, 0, len(doc))
	for k := range doc {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		v := doc[k]
		at := path + "[" + quoteJSONPath(k) + "]"
		rv, ok := red[k]
		switch {
		case ok && jsonEqual(v, rv):
			out[k] = v
		case ok && isObject(v) && isObject(rv):
			out[k] = prune(v.(map[string]any), rv.(map[string]any), at, left)
		default:
			*left = append(*left, at)
		}
	}
	return out
}

func isObject(v any) bool {
	_, ok := v.(map[string]any)
	return ok
}

// quoteJSONPath quotes a member name for a JSONPath bracket selector.
func quoteJSONPath(name string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for _, r := range name {
		switch {
		case r == '\'' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[r>>4])
			b.WriteByte("0123456789abcdef"[r&0xf])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// decodeOne decodes b when it is one JSON document, its numbers as they
// were written.
func decodeOne(b []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err == nil {
		return nil, false // more than one document
	}
	return v, true
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// writtenBack reports whether the stubs, which read a jsonBody and write
// it again compact with its members sorted and its numbers as floats,
// write body back byte for byte.
func writtenBack(body []byte) bool {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return false
	}
	return bytes.Equal(compact(v), body)
}

// compact encodes v as the stubs write a body: compact, HTML not escaped.
func compact(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// responseHeaders are the answer's headers as recorded: the connection's
// and the delivery's left out, and so is every header whose name says it
// carries a credential; the others with their tokens redacted.
func responseHeaders(red *redact.Redactor, h http.Header) map[string]any {
	out := map[string]any{}
	for k, vs := range h {
		if !recordedHeader(h, k) || red.Header(k, "-") == redact.Mark {
			continue
		}
		kept := make([]string, len(vs))
		for i, v := range vs {
			kept[i] = red.Header(k, v)
		}
		if len(kept) == 1 {
			out[k] = kept[0]
		} else if len(kept) > 1 {
			out[k] = kept
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// encode writes v as JSON, HTML not escaped, so that a body reads as it
// was sent.
func encode(v any) []byte {
	b := compact(v)
	if b == nil {
		panic("recording: a value that does not encode") // built from decoded JSON and strings only
	}
	return b
}
