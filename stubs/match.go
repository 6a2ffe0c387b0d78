package stubs

import (
	"bytes"
	"encoding/json"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
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
	// bodyRead: body holds Body decoded, or bodyBad says Body is no JSON
	// (or none the JSON matchers read); bodyDepth is its nesting.
	bodyRead, bodyBad bool
	bodyDepth         int
	bodyText          *string
	// work is the steps the matchers have spent on the request (charge);
	// spent: the bound is reached.
	work  int64
	spent bool
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

// text returns the body as a string, made once for every string matcher.
func (r *Request) text() string {
	if r.bodyText == nil {
		t := string(r.Body)
		r.bodyText = &t
	}
	return *r.bodyText
}

// json returns the body decoded, false when it is no JSON to the matchers:
// not JSON, or beyond maxJSONBody or maxJSONDepth, or beyond the request's
// bound.
func (r *Request) json() (any, bool) {
	if !r.bodyRead {
		r.bodyRead = true
		depth, ok := jsonShape(r.Body)
		r.bodyDepth = depth
		if !ok || !r.charge(len(r.Body)*decodeCost) {
			r.bodyBad = true
			return nil, false
		}
		dec := json.NewDecoder(bytes.NewReader(r.Body))
		if err := dec.Decode(&r.body); err != nil {
			r.bodyBad = true
		}
	}
	return r.body, !r.bodyBad
}

// Matches reports whether r matches every part of p.
func (p *Pattern) Matches(r *Request) bool { return p.matchesURL(r) && p.matchesRest(r) }

// matchesURL reports whether r's method and URL match p's: what is read
// before the caller is known.
func (p *Pattern) matchesURL(r *Request) bool {
	if p.method != "" && p.method != r.Method {
		return false
	}
	return p.url.match(r)
}

// matchesRest reports whether r's query, headers and body match p's.
func (p *Pattern) matchesRest(r *Request) bool {
	if len(p.query) > 0 {
		q := r.Query()
		for _, nm := range p.query {
			vs, ok := q[nm.name]
			if !nm.m.matchValues(vs, ok, r) {
				return false
			}
		}
	}
	for _, nm := range p.headers {
		vs, ok := r.Header[nm.name]
		if !nm.m.matchValues(vs, ok, r) {
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
// path (nil unless the pattern is a urlPathTemplate that r matches).
func (p *Pattern) PathParams(r *Request) map[string]string {
	if p.url.kind != "urlPathTemplate" || !p.url.match(r) {
		return nil
	}
	params := make(map[string]string, len(p.url.params))
	for name, i := range p.url.params {
		params[name], _ = segment(r.Path, i)
	}
	return params
}

func (u *urlMatch) match(r *Request) bool {
	switch u.kind {
	case "url":
		if r.RawQuery == "" {
			return r.Path == u.value
		}
		return len(u.value) == len(r.Path)+1+len(r.RawQuery) && u.value[:len(r.Path)] == r.Path &&
			u.value[len(r.Path)] == '?' && u.value[len(r.Path)+1:] == r.RawQuery
	case "urlPath":
		return r.Path == u.value
	case "urlPattern":
		url := r.URL()
		return r.charge(regexpCost(len(url), u.insts)) && u.re.MatchString(url)
	case "urlPathPattern":
		return r.charge(regexpCost(len(r.Path), u.insts)) && u.re.MatchString(r.Path)
	case "urlPathTemplate":
		// Segment by segment, in place: a request is tried against every
		// template, and splitting its path for each would cost it as much
		// as the rest of its answer.
		rest, last := r.Path, len(u.segments)-1
		for i, s := range u.segments {
			seg := rest
			if i < last {
				j := strings.IndexByte(rest, '/')
				if j < 0 {
					return false
				}
				seg, rest = rest[:j], rest[j+1:]
			} else if strings.IndexByte(rest, '/') >= 0 {
				return false
			}
			if strings.HasPrefix(s, "{") {
				if seg == "" {
					return false
				}
			} else if s != seg {
				return false
			}
		}
		return true
	}
	return true
}

// segment returns the i-th segment of path, split at "/" (the path's
// leading "" is segment 0).
func segment(path string, i int) (string, bool) {
	for ; i > 0; i-- {
		j := strings.IndexByte(path, '/')
		if j < 0 {
			return "", false
		}
		path = path[j+1:]
	}
	if j := strings.IndexByte(path, '/'); j >= 0 {
		path = path[:j]
	}
	return path, true
}

// matcher is one of WireMock's string value patterns.
type matcher struct {
	kind  string // equalTo, contains, doesNotContain, matches, doesNotMatch, absent
	value string
	fold  bool
	re    *regexp.Regexp
	insts int // re's instructions
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
			if m.re, m.insts, err = compileRegexp(where+"."+k, m.value); err != nil {
				return m, err
			}
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
func (m *matcher) matchValues(vs []string, present bool, r *Request) bool {
	if m.kind == "absent" {
		return present != m.absent
	}
	if !present {
		return false
	}
	for _, v := range vs {
		if m.match(v, r) {
			return true
		}
	}
	return false
}

// match reports whether s meets m, within r's bound: past it, nothing
// matches, not even a doesNotMatch.
func (m *matcher) match(s string, r *Request) bool {
	cost := len(s)/64 + 1
	if m.re != nil {
		cost = regexpCost(len(s), m.insts)
	}
	if !r.charge(cost) {
		return false
	}
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
	path  *bodyPath
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
		p, err := parsePath(where+".matchesJsonPath", expr)
		if err != nil {
			return bm, err
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

func (b *bodyMatcher) match(r *Request) bool {
	if b.str != nil {
		return b.str.match(r.text(), r)
	}
	doc, ok := r.json()
	if !ok {
		return false
	}
	if b.equal != nil {
		return b.equal.match(doc, r)
	}
	nodes, ok := b.path.selectNodes(doc, r, r.bodyDepth)
	if !ok {
		return false
	}
	if b.nested == nil {
		return len(nodes) > 0
	}
	if b.nested.kind == "absent" {
		return (len(nodes) == 0) == b.nested.absent
	}
	for _, n := range nodes {
		if b.nested.json != nil {
			if b.nested.json.match(n, r) {
				return true
			}
			continue
		}
		t := text(n)
		if _, str := n.(string); !str && !r.charge(4*len(t)) {
			// Writing a value back as JSON costs about four steps a byte; it
			// is counted once written, when its size is known.
			return false
		}
		if b.nested.match(t, r) {
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

func (e *jsonEqual) match(got any, r *Request) bool {
	return jsonEq(e.want, got, e.ignoreExtra, e.ignoreArrayOrders, r)
}

// jsonEq compares want and got, a step of r's bound per pair of values
// compared: with ignoreArrayOrder, every element of want may be compared
// with every element of got.
func jsonEq(want, got any, extra, anyOrder bool, r *Request) bool {
	if !r.charge(1) {
		return false
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || (!extra && len(g) != len(w)) {
			return false
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok || !jsonEq(wv, gv, extra, anyOrder, r) {
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
				if !jsonEq(w[i], g[i], extra, anyOrder, r) {
					return false
				}
			}
			return true
		}
		used := make([]bool, len(g))
	next:
		for _, wv := range w {
			for j, gv := range g {
				if !used[j] && jsonEq(wv, gv, extra, anyOrder, r) {
					used[j] = true
					continue next
				}
			}
			return false
		}
		return true
	case string:
		g, ok := got.(string)
		return ok && g == w
	case float64:
		g, ok := got.(float64)
		return ok && g == w
	case bool:
		g, ok := got.(bool)
		return ok && g == w
	case nil:
		return got == nil
	default:
		return reflect.DeepEqual(want, got)
	}
}
