package stubs

import (
	"bytes"
	"encoding/json"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/theory/jsonpath"
)

// Request is what a pattern is matched against: a request as it arrived.
type Request struct {
	Method string
	// Path is the URL path, unescaped.
	Path string
	// RawQuery is the query string as sent.
	RawQuery string
	// Header names are canonical (net/http's form).
	Header map[string][]string
	Body   []byte

	query url.Values
	body  any
	// bodyRead: body holds Body decoded, or bodyBad says Body is no JSON.
	bodyRead, bodyBad bool
}

// URL is the path and the query as sent, as WireMock's url matches it.
func (r *Request) URL() string {
	if r.RawQuery == "" {
		return r.Path
	}
	return r.Path + "?" + r.RawQuery
}

// Query returns the query parameters.
func (r *Request) Query() url.Values {
	if r.query == nil {
		r.query, _ = url.ParseQuery(r.RawQuery)
		if r.query == nil {
			r.query = url.Values{}
		}
	}
	return r.query
}

func (r *Request) json() (any, bool) {
	if !r.bodyRead {
		r.bodyRead = true
		dec := json.NewDecoder(bytes.NewReader(r.Body))
		if err := dec.Decode(&r.body); err != nil {
			r.bodyBad = true
		}
	}
	return r.body, !r.bodyBad
}

// Matches reports whether r matches every part of p.
func (p *Pattern) Matches(r *Request) bool {
	if p.method != "" && p.method != r.Method {
		return false
	}
	if _, ok := p.url.match(r); !ok {
		return false
	}
	q := r.Query()
	for _, nm := range p.query {
		vs, ok := q[nm.name]
		if !nm.m.matchValues(vs, ok) {
			return false
		}
	}
	for _, nm := range p.headers {
		vs, ok := r.Header[nm.name]
		if !nm.m.matchValues(vs, ok) {
			return false
		}
	}
	for _, b := range p.bodies {
		if !b.match(r) {
			return false
		}
	}
	return true
}

// PathParams returns the values of the URL template's parameters in r's
// path (nil unless the pattern is a urlPathTemplate).
func (p *Pattern) PathParams(r *Request) map[string]string {
	params, _ := p.url.match(r)
	return params
}

func (u urlMatch) match(r *Request) (map[string]string, bool) {
	switch u.kind {
	case "url":
		return nil, r.URL() == u.value
	case "urlPath":
		return nil, r.Path == u.value
	case "urlPattern":
		return nil, u.re.MatchString(r.URL())
	case "urlPathPattern":
		return nil, u.re.MatchString(r.Path)
	case "urlPathTemplate":
		segs := strings.Split(r.Path, "/")
		if len(segs) != len(u.segments) {
			return nil, false
		}
		params := map[string]string{}
		for i, s := range u.segments {
			if strings.HasPrefix(s, "{") {
				if segs[i] == "" {
					return nil, false
				}
				params[s[1:len(s)-1]] = segs[i]
			} else if s != segs[i] {
				return nil, false
			}
		}
		return params, true
	}
	return nil, true
}

// matcher is one of WireMock's string value patterns.
type matcher struct {
	kind  string // equalTo, contains, doesNotContain, matches, doesNotMatch, absent
	value string
	fold  bool
	re    *regexp.Regexp
	// absent: the value must be missing (true) or present (false).
	absent bool
	// json: an equalToJson nested in a matchesJsonPath.
	json *jsonEqual
}

var matcherKinds = []string{"equalTo", "contains", "doesNotContain", "matches", "doesNotMatch", "absent"}

func parseMatcher(raw json.RawMessage, where string) (matcher, error) {
	obj, err := fields(raw, where, append(slices.Clone(matcherKinds), "caseInsensitive")...)
	if err != nil {
		return matcher{}, err
	}
	var m matcher
	for _, k := range matcherKinds {
		v, ok := obj[k]
		if !ok {
			continue
		}
		if m.kind != "" {
			return m, invalid(where, "give one matcher of "+strings.Join(matcherKinds, ", "))
		}
		m.kind = k
		if k == "absent" {
			if err := json.Unmarshal(v, &m.absent); err != nil {
				return m, invalid(where+".absent", "it must be true or false")
			}
			continue
		}
		if err := json.Unmarshal(v, &m.value); err != nil {
			return m, invalid(where+"."+k, "it must be a string")
		}
		if k == "matches" || k == "doesNotMatch" {
			re, err := regexp.Compile(`^(?:` + m.value + `)$`)
			if err != nil {
				return m, invalid(where+"."+k, "it is not a regular expression: "+err.Error())
			}
			m.re = re
		}
	}
	if m.kind == "" {
		return m, invalid(where, "give one matcher of "+strings.Join(matcherKinds, ", "))
	}
	if v, ok := obj["caseInsensitive"]; ok {
		if err := json.Unmarshal(v, &m.fold); err != nil {
			return m, invalid(where+".caseInsensitive", "it must be true or false")
		}
		if m.kind != "equalTo" {
			return m, invalid(where+".caseInsensitive", "it goes with equalTo")
		}
	}
	return m, nil
}

// matchValues matches a parameter or a header sent with values vs
// (present says whether it was sent at all): as WireMock, one value that
// matches is enough.
func (m matcher) matchValues(vs []string, present bool) bool {
	if m.kind == "absent" {
		return present != m.absent
	}
	if !present {
		return false
	}
	for _, v := range vs {
		if m.match(v) {
			return true
		}
	}
	return false
}

func (m matcher) match(s string) bool {
	switch m.kind {
	case "equalTo":
		if m.fold {
			return strings.EqualFold(s, m.value)
		}
		return s == m.value
	case "contains":
		return strings.Contains(s, m.value)
	case "doesNotContain":
		return !strings.Contains(s, m.value)
	case "matches":
		return m.re.MatchString(s)
	case "doesNotMatch":
		return !m.re.MatchString(s)
	}
	return false
}

// bodyMatcher is one entry of bodyPatterns.
type bodyMatcher struct {
	// one of
	equal *jsonEqual
	path  *jsonpath.Path
	str   *matcher
	// nested is the matcher the values at path must meet; nil: there must
	// be a value there.
	nested *matcher
}

type jsonEqual struct {
	want              any
	ignoreExtra       bool
	ignoreArrayOrders bool
}

func parseBodyMatcher(raw json.RawMessage, where string) (bodyMatcher, error) {
	obj, err := fields(raw, where, "equalToJson", "ignoreExtraElements", "ignoreArrayOrder", "matchesJsonPath",
		"equalTo", "contains", "doesNotContain", "matches", "doesNotMatch", "caseInsensitive")
	if err != nil {
		return bodyMatcher{}, err
	}
	var bm bodyMatcher
	switch {
	case obj["equalToJson"] != nil:
		if obj["matchesJsonPath"] != nil {
			return bm, invalid(where, "give one of equalToJson and matchesJsonPath")
		}
		bm.equal, err = parseJSONEqual(obj, where)
		return bm, err
	case obj["matchesJsonPath"] != nil:
		for _, k := range []string{"ignoreExtraElements", "ignoreArrayOrder"} {
			if obj[k] != nil {
				return bm, invalid(where+"."+k, "it goes with equalToJson")
			}
		}
		v := obj["matchesJsonPath"]
		var expr string
		if isObject(v) {
			inner, err := fields(v, where+".matchesJsonPath", "expression", "equalTo", "contains", "doesNotContain",
				"matches", "doesNotMatch", "absent", "caseInsensitive", "equalToJson", "ignoreExtraElements", "ignoreArrayOrder")
			if err != nil {
				return bm, err
			}
			if err := json.Unmarshal(inner["expression"], &expr); err != nil {
				return bm, invalid(where+".matchesJsonPath.expression", "it must be a JSONPath string")
			}
			delete(inner, "expression")
			if inner["equalToJson"] != nil {
				eq, err := parseJSONEqual(inner, where+".matchesJsonPath")
				if err != nil {
					return bm, err
				}
				bm.nested = &matcher{kind: "equalToJson", json: eq}
			} else {
				m, err := parseMatcher(mustJSON(inner), where+".matchesJsonPath")
				if err != nil {
					return bm, err
				}
				bm.nested = &m
			}
		} else if err := json.Unmarshal(v, &expr); err != nil {
			return bm, invalid(where+".matchesJsonPath", "it must be a JSONPath string or an object with an expression")
		}
		p, err := jsonpath.Parse(expr)
		if err != nil {
			return bm, invalid(where+".matchesJsonPath", "it is not a JSONPath: "+err.Error())
		}
		bm.path = p
		return bm, nil
	default:
		m, err := parseMatcher(raw, where)
		if err != nil {
			return bm, err
		}
		if m.kind == "absent" {
			return bm, invalid(where+".absent", "a body is matched by equalToJson, matchesJsonPath, equalTo, contains or matches")
		}
		bm.str = &m
		return bm, nil
	}
}

func parseJSONEqual(obj map[string]json.RawMessage, where string) (*jsonEqual, error) {
	eq := &jsonEqual{}
	v := bytes.TrimSpace(obj["equalToJson"])
	var s string
	if len(v) > 0 && v[0] == '"' {
		// WireMock takes the JSON as a string, or as JSON.
		_ = json.Unmarshal(v, &s)
		v = []byte(s)
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	if err := dec.Decode(&eq.want); err != nil {
		return nil, invalid(where+".equalToJson", "it must be JSON, or a string of JSON")
	}
	for _, k := range []string{"ignoreExtraElements", "ignoreArrayOrder"} {
		if b, ok := obj[k]; ok {
			var x bool
			if err := json.Unmarshal(b, &x); err != nil {
				return nil, invalid(where+"."+k, "it must be true or false")
			}
			if k == "ignoreExtraElements" {
				eq.ignoreExtra = x
			} else {
				eq.ignoreArrayOrders = x
			}
		}
	}
	return eq, nil
}

func (b bodyMatcher) match(r *Request) bool {
	if b.str != nil {
		return b.str.match(string(r.Body))
	}
	doc, ok := r.json()
	if !ok {
		return false
	}
	if b.equal != nil {
		return b.equal.match(doc)
	}
	nodes := b.path.Select(doc)
	if b.nested == nil {
		return len(nodes) > 0
	}
	if b.nested.kind == "absent" {
		return (len(nodes) == 0) == b.nested.absent
	}
	for _, n := range nodes {
		if b.nested.json != nil {
			if b.nested.json.match(n) {
				return true
			}
			continue
		}
		if b.nested.match(text(n)) {
			return true
		}
	}
	return false
}

// text is a JSON value as a nested matcher sees it: a string as itself,
// anything else as its JSON.
func text(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return "null"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func (e *jsonEqual) match(got any) bool {
	return jsonEq(e.want, got, e.ignoreExtra, e.ignoreArrayOrders)
}

func jsonEq(want, got any, extra, anyOrder bool) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || (!extra && len(g) != len(w)) {
			return false
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok || !jsonEq(wv, gv, extra, anyOrder) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok {
			return false
		}
		if !extra && len(g) != len(w) || len(g) < len(w) {
			return false
		}
		if !anyOrder {
			if len(g) != len(w) {
				return false
			}
			for i := range w {
				if !jsonEq(w[i], g[i], extra, anyOrder) {
					return false
				}
			}
			return true
		}
		used := make([]bool, len(g))
	next:
		for _, wv := range w {
			for j, gv := range g {
				if !used[j] && jsonEq(wv, gv, extra, anyOrder) {
					used[j] = true
					continue next
				}
			}
			return false
		}
		return true
	default:
		return reflect.DeepEqual(want, got)
	}
}
