package drift

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/marketplace/marketplace/httpapi/openapi"
)

// Contract is what an OpenAPI document promises of each route: the
// statuses it answers, the schema of each answer, and the error codes and
// messages of its error answers (the document's x-errors lists). It is
// read once and safe for concurrent use.
type Contract struct {
	// byLen holds the operations by the number of segments of their path.
	byLen  map[int][]*operation
	common []errorEntry
	// anyRoute holds the error answers of every operation: a message of
	// one route's list, answered by another with the same status and
	// code, is one the engine sends (the required-field and type
	// messages are shared by many routes).
	anyRoute []errorEntry
}

// operation is one method of one path of the document.
type operation struct {
	method   string
	path     string   // as the document writes it: /items/{item_id}
	segments []string // of path; "" for a parameter
	literals int      // segments that are not parameters
	// answers are the statuses the operation declares, with the schema of
	// their JSON body (nil: no JSON body, or any).
	answers map[int]*answer
	// fallback is the default answer: the shape of every error status.
	fallback *answer
	errors   []errorEntry
	// catalogued: the operation lists its errors (x-errors), so that a
	// status or an error code it does not list is drift.
	catalogued bool
}

// answer is one declared answer of an operation.
type answer struct {
	schema *schema  // nil when the answer has no JSON body
	json   bool     // the answer declares a JSON body
	others []string // the other media types it declares (text/html)
}

// Route is an operation of the contract: its method and its path as the
// document writes it (/items/{item_id}).
type Route struct {
	Method, Path string
}

// String is "GET /items/{item_id}".
func (r Route) String() string { return r.Method + " " + r.Path }

// Engine returns the contract of the engine's own OpenAPI document
// (httpapi/openapi).
func Engine() (*Contract, error) {
	doc, err := openapi.JSON()
	if err != nil {
		return nil, err
	}
	return Load(doc)
}

// Load reads the contract of an OpenAPI 3.1 document given as JSON.
func Load(doc []byte) (*Contract, error) {
	var d struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components json.RawMessage                       `json:"components"`
		Errors     json.RawMessage                       `json:"x-errors"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("drift: read the document: %w", err)
	}
	var root any
	if err := json.Unmarshal(doc, &root); err != nil {
		return nil, fmt.Errorf("drift: read the document: %w", err)
	}
	sc := newCompiler(root)
	c := &Contract{byLen: map[int][]*operation{}}
	var err error
	if c.common, err = readErrors(d.Errors); err != nil {
		return nil, fmt.Errorf("drift: the document's x-errors: %w", err)
	}
	for p, item := range d.Paths {
		for m, raw := range item {
			switch m {
			case "get", "put", "post", "delete", "patch", "head", "options", "trace":
			default:
				continue
			}
			op, err := readOperation(sc, strings.ToUpper(m), p, raw)
			if err != nil {
				return nil, fmt.Errorf("drift: %s %s: %w", strings.ToUpper(m), p, err)
			}
			c.byLen[len(op.segments)] = append(c.byLen[len(op.segments)], op)
			c.anyRoute = append(c.anyRoute, op.errors...)
		}
	}
	if sc.err != nil {
		return nil, fmt.Errorf("drift: %w", sc.err)
	}
	for _, ops := range c.byLen {
		// The operation with more literal segments, earlier, wins: GET
		// /questions/search before GET /questions/{question_id}.
		slices.SortFunc(ops, func(a, b *operation) int {
			for i := range a.segments {
				al, bl := a.segments[i] != "", b.segments[i] != ""
				if al != bl {
					if al {
						return -1
					}
					return 1
				}
			}
			if c := strings.Compare(a.path, b.path); c != 0 {
				return c
			}
			return strings.Compare(a.method, b.method)
		})
	}
	return c, nil
}

func readOperation(sc *compiler, method, path string, raw json.RawMessage) (*operation, error) {
	var o struct {
		Responses map[string]any  `json:"responses"`
		Errors    json.RawMessage `json:"x-errors"`
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, err
	}
	op := &operation{method: method, path: path, answers: map[int]*answer{}}
	for _, s := range strings.Split(strings.Trim(path, "/"), "/") {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			op.segments = append(op.segments, "")
		} else {
			op.segments = append(op.segments, s)
			op.literals++
		}
	}
	for code, r := range o.Responses {
		a := sc.answer(r)
		if code == "default" {
			op.fallback = a
			continue
		}
		n, err := strconv.Atoi(code)
		if err != nil {
			return nil, fmt.Errorf("response %q: only numbers and default are read", code)
		}
		op.answers[n] = a
	}
	var err error
	if op.errors, err = readErrors(o.Errors); err != nil {
		return nil, fmt.Errorf("x-errors: %w", err)
	}
	op.catalogued = o.Errors != nil
	return op, nil
}

// find returns the operation that answers method and path (a path without
// its query), or nil. Like the engine's router, a literal segment wins
// over a parameter, and a path whose literal operation lacks the method
// falls to the parameter one.
func (c *Contract) find(method, path string) *operation {
	// A trailing slash is a segment of its own, as the router sees it:
	// /users/ is not /users.
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	for _, op := range c.byLen[len(segs)] {
		if op.method != method {
			continue
		}
		ok := true
		for i, s := range op.segments {
			if s != "" && s != segs[i] || s == "" && segs[i] == "" {
				ok = false
				break
			}
		}
		if ok {
			return op
		}
	}
	return nil
}

// requestPath is the path of a recorded URL, absolute or not, without its
// query, unescaped.
func requestPath(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil {
		// A recording may keep a path as the client wrote it, unescaped
		// (a space, a stray %): the path is what comes before ? and #,
		// after the scheme and the host.
		if i := strings.Index(raw, "://"); i >= 0 {
			rest := raw[i+3:]
			j := strings.IndexByte(rest, '/')
			if j < 0 {
				return "/", true
			}
			raw = rest[j:]
		}
		if i := strings.IndexAny(raw, "?#"); i >= 0 {
			raw = raw[:i]
		}
		return raw, strings.HasPrefix(raw, "/")
	}
	p := u.Path
	if p == "" {
		p = "/"
	}
	if !strings.HasPrefix(p, "/") {
		return "", false
	}
	return p, true
}

// Check returns the route that answers ex in the contract, and the
// differences between ex's answer and what the contract promises; ok is
// false when no route of the contract answers ex (a route the engine does
// not emulate).
func (c *Contract) Check(ex Exchange) (r Route, findings []Finding, ok bool) {
	p, valid := requestPath(ex.URL)
	if !valid {
		return Route{}, nil, false
	}
	op := c.find(strings.ToUpper(ex.Method), p)
	if op == nil {
		return Route{}, nil, false
	}
	var w walker
	c.check(op, ex, &w)
	return Route{Method: op.method, Path: op.path}, w.findings, true
}

func (c *Contract) check(op *operation, ex Exchange, w *walker) {
	a, declared := op.answers[ex.Status]
	if !declared && ex.Status >= 400 {
		a = op.fallback
	}
	if !declared && !c.listsStatus(op, ex.Status) {
		w.add(Finding{Kind: Status, Got: strconv.Itoa(ex.Status), Want: c.statuses(op)})
		return
	}
	if a == nil || !a.json || ex.NoBody || ex.Method == "HEAD" {
		return
	}
	if ex.ContentType != "" && !isJSON(ex.ContentType) {
		mt, _, _ := mime.ParseMediaType(ex.ContentType)
		if slices.Contains(a.others, mt) {
			return
		}
		w.add(Finding{Kind: Body, Path: "$", Got: mt, Want: "application/json"})
		return
	}
	dec := json.NewDecoder(bytes.NewReader(ex.Body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		got := "not JSON"
		if len(bytes.TrimSpace(ex.Body)) == 0 {
			got = "empty"
		}
		w.add(Finding{Kind: Body, Path: "$", Got: got, Want: "application/json"})
		return
	}
	if a.schema != nil {
		w.walk(v, a.schema)
	}
	if ex.Status >= 400 && op.catalogued {
		if obj, isObj := v.(map[string]any); isObj {
			c.checkError(op, ex.Status, obj, w)
		}
	}
}

// listsStatus says whether the operation's or the document's error list
// has status.
func (c *Contract) listsStatus(op *operation, status int) bool {
	if !op.catalogued {
		// An operation without its error list answers any error status in
		// its default shape.
		return status >= 400 && op.fallback != nil
	}
	for _, l := range [][]errorEntry{op.errors, c.common} {
		for _, e := range l {
			if e.status == status {
				return true
			}
		}
	}
	return false
}

// statuses lists the statuses op answers, for a finding.
func (c *Contract) statuses(op *operation) string {
	var ss []int
	for s := range op.answers {
		ss = append(ss, s)
	}
	if op.catalogued {
		for _, l := range [][]errorEntry{op.errors, c.common} {
			for _, e := range l {
				ss = append(ss, e.status)
			}
		}
	}
	slices.Sort(ss)
	ss = slices.Compact(ss)
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Itoa(s)
	}
	return strings.Join(out, ", ")
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}
