package stubs

import (
	"html"
	"strconv"
	"strings"
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

func checkTemplates(v any) error {
	switch x := v.(type) {
	case string:
		return checkTemplate(x)
	case []any:
		for _, e := range x {
			if err := checkTemplates(e); err != nil {
				return err
			}
		}
	case map[string]any:
		for _, e := range x {
			if err := checkTemplates(e); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkTemplate(s string) error {
	_, err := parseTemplate(s)
	return err
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

// render runs a checked template on r.
func render(s string, r *Request, params map[string]string) string {
	parts, err := parseTemplate(s)
	if err != nil {
		// Templates were checked when the mapping was loaded.
		return s
	}
	var b strings.Builder
	for _, p := range parts {
		if p.expr == nil {
			b.WriteString(p.lit)
			continue
		}
		v := p.expr.value(r, params)
		if !p.expr.raw {
			v = html.EscapeString(v)
		}
		b.WriteString(v)
	}
	return b.String()
}

func (e *expr) value(r *Request, params map[string]string) string {
	switch e.kind {
	case "method":
		return r.Method
	case "url":
		return r.URL()
	case "path":
		return r.Path
	case "pathParam":
		return params[e.name]
	case "pathSegment":
		segs := strings.Split(strings.TrimPrefix(r.Path, "/"), "/")
		if e.index < len(segs) {
			return segs[e.index]
		}
		return ""
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

func renderJSON(v any, r *Request, params map[string]string) any {
	switch x := v.(type) {
	case string:
		return render(x, r, params)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = renderJSON(e, r, params)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = renderJSON(e, r, params)
		}
		return out
	}
	return v
}
