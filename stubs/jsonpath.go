package stubs

import (
	"fmt"
	"strings"

	"github.com/theory/jsonpath"
	"github.com/theory/jsonpath/spec"
)

// A JSONPath's work grows with the document and, for some shapes, with
// its square or worse: $..[?(@..a)] walks the subtree of every node from
// every node. The shapes whose work is a small multiple of the document's
// size are the ones a stub may use (parsePath), and the segments are
// walked here, counting each node against the request's bound, rather than
// by the library's Select, whose descent copies every result once per
// level above it.

// bodyPath is a JSONPath checked by parsePath.
type bodyPath struct {
	path *jsonpath.Path
	// A filter's test reads at most filterQueries singular queries, each of
	// at most filterSegments segments, and compares what they find with a
	// literal, which may read a value as deep as the document: what one
	// test costs (selectNodes).
	filterQueries, filterSegments int
}

// parsePath reads a JSONPath of a mapping and checks its shape; where
// names the field.
func parsePath(where, expr string) (*bodyPath, error) {
	p, why := checkPath(expr)
	if why != "" {
		return nil, invalid(where, why)
	}
	return p, nil
}

// checkPath reads a JSONPath of a mapping and checks its shape: why it is
// refused, or "".
func checkPath(expr string) (*bodyPath, string) {
	if len(expr) > maxPathLength {
		return nil, fmt.Sprintf("a JSONPath has at most %d bytes", maxPathLength)
	}
	p, err := jsonpath.Parse(expr)
	if err != nil {
		return nil, "it is not a JSONPath: " + err.Error()
	}
	sh := shapeOf(p.String())
	switch {
	case sh.descendants > 1:
		return nil, "a JSONPath here has at most one descendant segment (..): each one more multiplies its work by the size of the body"
	case sh.descendantInFilter:
		return nil, "a filter here cannot hold a descendant segment (..): it would walk the body once per node"
	case sh.nonSingular != "":
		return nil, "a query in a filter here is singular, names and indexes only (@.a.b, @[0]), not " + sh.nonSingular
	case sh.regexFunc != "":
		return nil, sh.regexFunc + "() is not taken here: match the value with a nested matcher, {\"expression\": path, \"matches\": regex}"
	}
	if c := comparisonOfQueries(p.Query()); c != "" {
		return nil, "a comparison in a filter here has a literal on one side (@.status == \"paid\"), not " + c + ": two values of the body may be as large as the body"
	}
	return &bodyPath{path: p, filterQueries: sh.filterQueries, filterSegments: sh.filterSegments}, ""
}

// pathShape is what parsePath needs to know of a JSONPath.
type pathShape struct {
	descendants        int
	descendantInFilter bool
	// nonSingular is the first query of a filter that is not singular.
	nonSingular string
	// regexFunc is match or search, when a filter calls it: the library
	// compiles the expression anew for every node it tests.
	regexFunc                     string
	filterQueries, filterSegments int
}

// shapeOf reads the library's canonical form of a JSONPath, in which every
// segment is in brackets and every string in double quotes: $["a"][0,1],
// $..[?@["b"] == "x"].
func shapeOf(s string) pathShape {
	var sh pathShape
	type frame struct {
		bracket, filter bool
	}
	var stack []frame
	inFilter := func() bool {
		for _, f := range stack {
			if f.filter {
				return true
			}
		}
		return false
	}
	prev := byte(0) // the last byte outside a string, but spaces
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			i = skipString(s, i)
			prev = '"'
			continue
		case c == ' ':
			continue
		case c == '.' && i+1 < len(s) && s[i+1] == '.':
			sh.descendants++
			if inFilter() {
				sh.descendantInFilter = true
			}
			i++
		case c == '[' || c == '(':
			stack = append(stack, frame{bracket: c == '['})
		case c == ']' || c == ')':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case c == '?' && len(stack) > 0 && stack[len(stack)-1].bracket && (prev == '[' || prev == ','):
			stack[len(stack)-1].filter = true
		case c == ',' && len(stack) > 0 && stack[len(stack)-1].bracket:
			stack[len(stack)-1].filter = false
		case (c == '@' || c == '$') && inFilter():
			n, singular := querySegments(s, i+1)
			sh.filterQueries++
			sh.filterSegments = max(sh.filterSegments, n)
			if !singular && sh.nonSingular == "" {
				sh.nonSingular = queryText(s, i)
			}
		case isIdentByte(c) && !isIdentByte(prev) && inFilter():
			j := i
			for j < len(s) && isIdentByte(s[j]) {
				j++
			}
			if name := s[i:j]; (name == "match" || name == "search") && j < len(s) && s[j] == '(' && sh.regexFunc == "" {
				sh.regexFunc = name
			}
			prev = s[j-1]
			i = j - 1
			continue
		}
		prev = c
	}
	return sh
}

func isIdentByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= '0' && c <= '9'
}

// skipString returns the index of the quote that closes the string whose
// opening quote is at s[i].
func skipString(s string, i int) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return len(s)
}

// querySegments reads the segments of the query whose first segment (if
// any) starts at s[i]: how many, and whether each is one name or one index.
func querySegments(s string, i int) (int, bool) {
	n, singular := 0, true
	for i < len(s) {
		if strings.HasPrefix(s[i:], "..") {
			return n + 1, false
		}
		if s[i] != '[' {
			return n, singular
		}
		n++
		j := i + 1
		switch {
		case j < len(s) && s[j] == '"':
			j = skipString(s, j) + 1
		default:
			k := j
			if k < len(s) && s[k] == '-' {
				k++
			}
			for k < len(s) && s[k] >= '0' && s[k] <= '9' {
				k++
			}
			if k == j || k == j+1 && s[j] == '-' {
				singular = false
			}
			j = k
		}
		if j >= len(s) || s[j] != ']' {
			// Not a plain name or index: skip to the bracket that closes
			// this segment.
			singular = false
			depth := 0
			for ; j < len(s); j++ {
				if s[j] == '"' {
					j = skipString(s, j)
					continue
				}
				if s[j] == '[' {
					depth++
				}
				if s[j] == ']' {
					if depth == 0 {
						break
					}
					depth--
				}
			}
		}
		i = j + 1
	}
	return n, singular
}

// queryText is the query that starts at s[i], for a message.
func queryText(s string, i int) string {
	j := i + 1
	for depth := 0; j < len(s); j++ {
		c := s[j]
		if c == '"' {
			j = skipString(s, j)
			continue
		}
		if c == '[' {
			depth++
		} else if c == ']' {
			if depth == 0 {
				break
			}
			depth--
		} else if depth == 0 && c != '.' {
			break
		}
	}
	return s[i:j]
}

// comparisonOfQueries returns the first comparison of q's filters with no
// literal on either side, or "".
func comparisonOfQueries(q *spec.PathQuery) string {
	var inOr func(spec.LogicalOr) string
	inOr = func(or spec.LogicalOr) string {
		for _, and := range or {
			for _, e := range and {
				switch x := e.(type) {
				case *spec.CompExpr:
					if c := x.String(); !hasLiteral(c) {
						return c
					}
				case *spec.ParenExpr:
					if c := inOr(x.LogicalOr); c != "" {
						return c
					}
				case *spec.NotParenExpr:
					if c := inOr(x.LogicalOr); c != "" {
						return c
					}
				}
			}
		}
		return ""
	}
	for _, seg := range q.Segments() {
		for _, sel := range seg.Selectors() {
			if f, ok := sel.(*spec.FilterSelector); ok {
				if c := inOr(f.LogicalOr); c != "" {
					return c
				}
			}
		}
	}
	return ""
}

// hasLiteral reports whether one side of a comparison, in the library's
// canonical form ("left op right"), is a literal.
func hasLiteral(c string) bool {
	depth := 0
	for i := 0; i < len(c); i++ {
		switch c[i] {
		case '"':
			i = skipString(c, i)
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case ' ':
			if depth != 0 {
				continue
			}
			for _, op := range []string{" == ", " != ", " <= ", " >= ", " < ", " > "} {
				if strings.HasPrefix(c[i:], op) {
					return literal(c[:i]) || literal(c[i+len(op):])
				}
			}
		}
	}
	return false
}

// literal reports whether x, an operand in canonical form, is a literal.
func literal(x string) bool {
	if x == "" {
		return false
	}
	switch c := x[0]; {
	case c == '"', c == '-', c >= '0' && c <= '9':
		return true
	}
	return x == "true" || x == "false" || x == "null"
}

// selectNodes runs the path on doc, the request's body, within r's bound;
// false: the bound was passed, and nodes are not the whole answer.
func (b *bodyPath) selectNodes(doc any, r *Request, depth int) ([]any, bool) {
	nodes := []any{doc}
	// A filter's test reads its queries through the library, which
	// allocates at every step: four steps of ours each.
	testCost := 4 * (1 + b.filterQueries*(b.filterSegments+depth))
	for _, seg := range b.path.Query().Segments() {
		var out []any
		apply := func(n any) bool {
			// The library allocates a list per selector and node: a few
			// steps each, and two per node it lists.
			for _, sel := range seg.Selectors() {
				cost := 3
				switch sel.(type) {
				case spec.Name, spec.Index:
				case *spec.FilterSelector:
					cost += children(n) * testCost
				default:
					cost += 2 * children(n)
				}
				if !r.charge(cost) {
					return false
				}
				got := sel.Select(n, doc)
				if !r.charge(2 * len(got)) {
					return false
				}
				out = append(out, got...)
			}
			return true
		}
		for _, n := range nodes {
			ok := true
			if seg.IsDescendant() {
				ok = walk(n, r, apply)
			} else {
				ok = apply(n)
			}
			if !ok {
				return nil, false
			}
		}
		nodes = out
	}
	return nodes, true
}

// children is how many values n holds.
func children(n any) int {
	switch x := n.(type) {
	case []any:
		return len(x)
	case map[string]any:
		return len(x)
	}
	return 0
}

// walk calls visit with n and every value below it, parents first, as a
// descendant segment visits them, counting each against r's bound.
func walk(n any, r *Request, visit func(any) bool) bool {
	if !r.charge(2) || !visit(n) {
		return false
	}
	switch x := n.(type) {
	case []any:
		for _, v := range x {
			if !walk(v, r, visit) {
				return false
			}
		}
	case map[string]any:
		for _, v := range x {
			if !walk(v, r, visit) {
				return false
			}
		}
	}
	return true
}
