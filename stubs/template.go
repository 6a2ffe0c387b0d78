package stubs

import (
	"html"
	"slices"
	"strconv"
	"strings"

	"github.com/marketplace/marketplace/internal/jsonenc"
)

// The response templates are a subset of WireMock's Handlebars: the
// expressions below, in {{ }} (HTML-escaped, as Handlebars does) or in
// {{{ }}} (as they are):
//
//	request.method, request.url, request.path
//	request.path.<name>     a urlPathTemplate's parameter
//	request.path.[<n>]      the n-th segment of the path, from 0
//	request.query.<name>    the first value of a query parameter
//	request.headers.<name>  the first value of a header
//	jsonPath request.body '<JSONPath>'
//
// Anything else between braces is refused when the mapping is loaded.

type part struct {
	lit  string
	expr *expr
}

type expr struct {
	raw     bool
	kind    string // method, url, path, pathParam, pathSegment, query, header, jsonPath
	name    string
	index   int
	jsonPth *bodyPath
}

// A template is read once, with its mapping, into its parts; a jsonBody's
// template into the JSON it writes, in chunks: literal bytes, already as
// encoding/json writes them (keys sorted, no HTML escaping), and the
// strings that templates fill. An answer is then one pass that appends.

// jsonChunk is literal JSON, or (with tmpl) a string a template fills.
type jsonChunk struct {
	lit  []byte
	tmpl []part
}

// compileJSON reads v, a jsonBody, into the chunks that write it, checking
// the templates of its strings.
func compileJSON(v any) ([]jsonChunk, error) {
	var chunks []jsonChunk
	var lit []byte
	var walk func(v any) error
	walk = func(v any) error {
		switch x := v.(type) {
		case string:
			if !strings.Contains(x, "{{") {
				lit = jsonenc.AppendString(lit, x)
				return nil
			}
			parts, err := parseTemplate(x)
			if err != nil {
				return err
			}
			chunks = append(chunks, jsonChunk{lit: lit}, jsonChunk{tmpl: parts})
			lit = nil
		case []any:
			lit = append(lit, '[')
			for i, e := range x {
				if i > 0 {
					lit = append(lit, ',')
				}
				if err := walk(e); err != nil {
					return err
				}
			}
			lit = append(lit, ']')
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			lit = append(lit, '{')
			for i, k := range keys {
				if i > 0 {
					lit = append(lit, ',')
				}
				lit = append(jsonenc.AppendString(lit, k), ':')
				if err := walk(x[k]); err != nil {
					return err
				}
			}
			lit = append(lit, '}')
		default:
			lit = append(lit, mustJSON(x)...)
		}
		return nil
	}
	if err := walk(v); err != nil {
		return nil, err
	}
	return append(chunks, jsonChunk{lit: lit}), nil
}

// renderJSON writes the jsonBody of chunks for r.
func renderJSON(chunks []jsonChunk, r *Request, u *urlMatch) []byte {
	n := 0
	for _, c := range chunks {
		n += len(c.lit) + 16
	}
	b := make([]byte, 0, n)
	for _, c := range chunks {
		if c.tmpl == nil {
			b = append(b, c.lit...)
			continue
		}
		b = jsonenc.AppendString(b, renderString(c.tmpl, r, u))
	}
	return b
}

// renderString runs a template on r.
func renderString(parts []part, r *Request, u *urlMatch) string {
	if len(parts) == 1 {
		return parts[0].text(r, u)
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.text(r, u))
	}
	return b.String()
}

// renderText writes a body template for r.
func renderText(parts []part, r *Request, u *urlMatch) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p.text(r, u)...)
	}
	return b
}

// text is what the part writes for r: itself, or its expression's value,
// HTML-escaped unless in {{{ }}}.
func (p part) text(r *Request, u *urlMatch) string {
	if p.expr == nil {
		return p.lit
	}
	v := p.expr.value(r, u)
	if !p.expr.raw {
		v = html.EscapeString(v)
	}
	return v
}

func parseTemplate(s string) ([]part, error) {
	var parts []part
	for {
		i := strings.Index(s, "{{")
		if i < 0 {
			if s != "" {
				parts = append(parts, part{lit: s})
			}
			return parts, nil
		}
		if i > 0 {
			parts = append(parts, part{lit: s[:i]})
		}
		s = s[i:]
		raw := strings.HasPrefix(s, "{{{")
		open, end := "{{", "}}"
		if raw {
			open, end = "{{{", "}}}"
		}
		j := strings.Index(s, end)
		if j < 0 {
			return nil, invalid("response.body", "a template expression has no closing "+end)
		}
		e, err := parseExpr(strings.TrimSpace(s[len(open):j]))
		if err != nil {
			return nil, err
		}
		e.raw = raw
		parts = append(parts, part{expr: e})
		s = s[j+len(end):]
	}
}

func parseExpr(src string) (*expr, error) {
	bad := invalid("response.body", "the template expression {{"+src+"}} is not one this server knows (request.method, request.url, request.path, request.path.<name>, request.query.<name>, request.headers.<name>, jsonPath request.body '<path>')")
	if rest, ok := strings.CutPrefix(src, "jsonPath "); ok {
		rest = strings.TrimSpace(rest)
		arg, ok := strings.CutPrefix(rest, "request.body ")
		arg = strings.TrimSpace(arg)
		if !ok || len(arg) < 2 || (arg[0] != '\'' && arg[0] != '"') || arg[len(arg)-1] != arg[0] {
			return nil, bad
		}
		p, why := checkPath(arg[1 : len(arg)-1])
		if why != "" {
			return nil, invalid("response.body", "the template's JSONPath "+arg+": "+why)
		}
		return &expr{kind: "jsonPath", jsonPth: p}, nil
	}
	switch src {
	case "request.method":
		return &expr{kind: "method"}, nil
	case "request.url":
		return &expr{kind: "url"}, nil
	case "request.path":
		return &expr{kind: "path"}, nil
	}
	for _, k := range []struct{ prefix, kind string }{{"request.path.", "pathParam"}, {"request.query.", "query"}, {"request.headers.", "header"}} {
		name, ok := strings.CutPrefix(src, k.prefix)
		if !ok || name == "" || strings.ContainsAny(name, " '\"{}") {
			continue
		}
		e := &expr{kind: k.kind, name: name}
		if k.kind == "pathParam" && strings.HasPrefix(name, "[") && strings.HasSuffix(name, "]") {
			n, err := strconv.Atoi(name[1 : len(name)-1])
			if err != nil || n < 0 {
				return nil, bad
			}
			e.kind, e.index = "pathSegment", n
		}
		return e, nil
	}
	return nil, bad
}

func (e *expr) value(r *Request, u *urlMatch) string {
	switch e.kind {
	case "method":
		return r.Method
	case "url":
		return r.URL()
	case "path":
		return r.Path
	case "pathParam":
		i, ok := u.params[e.name]
		if !ok {
			return ""
		}
		v, _ := segment(r.Path, i)
		return v
	case "pathSegment":
		v, _ := segment(strings.TrimPrefix(r.Path, "/"), e.index)
		return v
	case "query":
		return r.Query().Get(e.name)
	case "header":
		for k, vs := range r.Header {
			if strings.EqualFold(k, e.name) && len(vs) > 0 {
				return vs[0]
			}
		}
		return ""
	case "jsonPath":
		doc, ok := r.json()
		if !ok {
			return ""
		}
		nodes, ok := e.jsonPth.selectNodes(doc, r, r.bodyDepth)
		if !ok || len(nodes) == 0 {
			return ""
		}
		return text(nodes[0])
	}
	return ""
}
