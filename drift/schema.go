package drift

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// jsonType is a set of JSON Schema types.
type jsonType uint8

const (
	tNull jsonType = 1 << iota
	tBoolean
	tInteger
	tNumber
	tString
	tArray
	tObject
)

var typeNames = []struct {
	t    jsonType
	name string
}{{tObject, "object"}, {tArray, "array"}, {tString, "string"}, {tInteger, "integer"}, {tNumber, "number"}, {tBoolean, "boolean"}, {tNull, "null"}}

func (t jsonType) String() string {
	var names []string
	for _, n := range typeNames {
		if t&n.t != 0 && !(n.t == tInteger && t&tNumber != 0) {
			names = append(names, n.name)
		}
	}
	return strings.Join(names, " or ")
}

// allows says whether a value of type v is of one of the types t: an
// integer is also a number.
func (t jsonType) allows(v jsonType) bool {
	return t&v != 0 || v == tInteger && t&tNumber != 0
}

// schema is the part of a JSON Schema the comparison reads: types,
// properties (closed or not), required names, items, alternatives, enums.
type schema struct {
	types    jsonType // 0: any type
	props    map[string]*schema
	required []string
	closed   bool    // additionalProperties: false
	extra    *schema // additionalProperties: a schema (a map)
	items    *schema
	oneOf    []*schema // oneOf or anyOf
	enum     []string  // the values, as JSON
	none     bool      // the schema false: no value (items of an array that is always empty)
}

// compiler turns the document's schemas into schemas, each $ref once.
type compiler struct {
	root any
	refs map[string]*schema
	err  error
}

func newCompiler(root any) *compiler { return &compiler{root: root, refs: map[string]*schema{}} }

// resolve follows $ref (a JSON pointer into the document) until a node
// that is not one.
func (c *compiler) resolve(n any) any {
	for range 32 {
		m, ok := n.(map[string]any)
		if !ok {
			return n
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return n
		}
		n = c.pointer(ref)
	}
	return n
}

func (c *compiler) pointer(ref string) any {
	if !strings.HasPrefix(ref, "#/") {
		c.fail("$ref %s: only references into the document are read", ref)
		return nil
	}
	n := c.root
	for _, tok := range strings.Split(ref[2:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := n.(map[string]any)
		if !ok {
			c.fail("$ref %s: not found", ref)
			return nil
		}
		n = m[tok]
	}
	if n == nil {
		c.fail("$ref %s: not found", ref)
	}
	return n
}

func (c *compiler) fail(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf(format, args...)
	}
}

// answer reads a response object: its media types and the schema of its
// application/json body.
func (c *compiler) answer(r any) *answer {
	m, _ := c.resolve(r).(map[string]any)
	content, _ := m["content"].(map[string]any)
	a := &answer{}
	for mt, media := range content {
		if mt != "application/json" {
			a.others = append(a.others, mt)
			continue
		}
		mm, _ := media.(map[string]any)
		a.json, a.schema = true, c.schema(mm["schema"])
	}
	return a
}

// schema compiles a schema node; a $ref is compiled once, so recursive
// schemas end.
func (c *compiler) schema(n any) *schema {
	if m, ok := n.(map[string]any); ok {
		if ref, ok := m["$ref"].(string); ok {
			if s, ok := c.refs[ref]; ok {
				return s
			}
			s := &schema{}
			c.refs[ref] = s
			*s = *c.schema(c.pointer(ref))
			return s
		}
	}
	s := &schema{}
	if b, ok := n.(bool); ok {
		s.none = !b
		return s
	}
	m, ok := n.(map[string]any)
	if !ok {
		return s
	}
	switch t := m["type"].(type) {
	case string:
		s.types = typeOf(t)
	case []any:
		for _, x := range t {
			if name, ok := x.(string); ok {
				s.types |= typeOf(name)
			}
		}
	}
	if props, ok := m["properties"].(map[string]any); ok {
		s.props = make(map[string]*schema, len(props))
		for name, p := range props {
			s.props[name] = c.schema(p)
		}
	}
	if req, ok := m["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				s.required = append(s.required, name)
			}
		}
	}
	switch ap := m["additionalProperties"].(type) {
	case bool:
		s.closed = !ap
	case map[string]any:
		s.extra = c.schema(ap)
	}
	if it, ok := m["items"]; ok {
		s.items = c.schema(it)
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		if alts, ok := m[k].([]any); ok {
			for _, a := range alts {
				s.oneOf = append(s.oneOf, c.schema(a))
			}
		}
	}
	if enum, ok := m["enum"].([]any); ok {
		for _, e := range enum {
			b, _ := json.Marshal(e)
			s.enum = append(s.enum, string(b))
		}
	}
	return s
}

func typeOf(name string) jsonType {
	for _, n := range typeNames {
		if n.name == name {
			return n.t
		}
	}
	return 0
}

// valueType is the JSON type of a value decoded with UseNumber.
func valueType(v any) jsonType {
	switch x := v.(type) {
	case nil:
		return tNull
	case bool:
		return tBoolean
	case json.Number:
		if isInteger(string(x)) {
			return tInteger
		}
		return tNumber
	case string:
		return tString
	case []any:
		return tArray
	case map[string]any:
		return tObject
	}
	return 0
}

// isInteger says whether a JSON number is a whole number (1.0 is, as JSON
// Schema counts).
func isInteger(n string) bool {
	if !strings.ContainsAny(n, ".eE") {
		return true
	}
	f, err := strconv.ParseFloat(n, 64)
	return err == nil && f == float64(int64(f))
}

// walker compares one body with a schema and keeps each finding once.
type walker struct {
	path     []byte
	findings []Finding
}

func (w *walker) add(f Finding) {
	for _, g := range w.findings {
		if g.Kind == f.Kind && g.Path == f.Path {
			return
		}
	}
	w.findings = append(w.findings, f)
}

func (w *walker) at() string {
	if len(w.path) == 0 {
		return "$"
	}
	return "$" + string(w.path)
}

// walk compares v with s at the walker's path.
func (w *walker) walk(v any, s *schema) {
	vt := valueType(v)
	if s.none {
		w.add(Finding{Kind: Extra, Path: w.at(), Got: vt.String()})
		return
	}
	if len(s.oneOf) > 0 {
		// The alternative of v's type; of several (an item or an error),
		// the one v differs from least.
		var all jsonType
		var best *walker
		for _, alt := range s.oneOf {
			all |= alt.types
			if alt.types != 0 && !alt.types.allows(vt) {
				continue
			}
			try := &walker{path: append([]byte(nil), w.path...)}
			try.walk(v, alt)
			if best == nil || len(try.findings) < len(best.findings) {
				best = try
			}
			if len(best.findings) == 0 {
				break
			}
		}
		if best == nil {
			w.add(Finding{Kind: Type, Path: w.at(), Got: vt.String(), Want: all.String()})
			return
		}
		for _, f := range best.findings {
			w.add(f)
		}
		return
	}
	if s.types != 0 && !s.types.allows(vt) {
		w.add(Finding{Kind: Type, Path: w.at(), Got: vt.String(), Want: s.types.String()})
		return
	}
	if s.enum != nil && vt != tObject && vt != tArray {
		b, _ := json.Marshal(v)
		if !slices.Contains(s.enum, string(b)) {
			w.add(Finding{Kind: Value, Path: w.at(), Got: short(string(b)), Want: short(strings.Join(s.enum, ", "))})
		}
	}
	switch x := v.(type) {
	case map[string]any:
		n := len(w.path)
		for _, name := range s.required {
			if _, ok := x[name]; !ok {
				w.path = appendName(w.path, name)
				w.add(Finding{Kind: Missing, Path: w.at()})
				w.path = w.path[:n]
			}
		}
		for name, fv := range x {
			if p, ok := s.props[name]; ok {
				w.path = appendName(w.path, name)
				w.walk(fv, p)
			} else if s.extra != nil {
				w.path = append(w.path, ".*"...)
				w.walk(fv, s.extra)
			} else if s.closed {
				w.path = appendName(w.path, name)
				w.add(Finding{Kind: Extra, Path: w.at(), Got: valueType(fv).String()})
			}
			w.path = w.path[:n]
		}
	case []any:
		if s.items == nil {
			return
		}
		n := len(w.path)
		w.path = append(w.path, "[*]"...)
		for _, e := range x {
			w.walk(e, s.items)
		}
		w.path = w.path[:n]
	}
}

// appendName adds .name to a JSON path, or ['name'] when name is not an
// identifier.
func appendName(p []byte, name string) []byte {
	plain := name != ""
	for i, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			plain = false
			break
		}
	}
	if plain {
		return append(append(p, '.'), name...)
	}
	p = append(p, "['"...)
	p = append(p, strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(name)...)
	return append(p, "']"...)
}

// short cuts a value shown in the report to 80 characters.
func short(s string) string {
	if len(s) <= 80 {
		return s
	}
	cut := 77
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "..."
}
