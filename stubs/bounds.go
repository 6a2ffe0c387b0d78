package stubs

import (
	"fmt"
	"regexp"
	"regexp/syntax"
)

// The work of matching one request is bounded, whatever the mappings and
// whatever the request: a public stub with a body pattern is open to
// anyone, and each request is matched against every stub in turn. Three
// bounds hold it:
//
//   - what a mapping may ask, checked when it is read: a regular
//     expression of at most maxPatternLength bytes and maxProgram
//     instructions; a JSONPath of at most maxPathLength bytes, with at most
//     one descendant segment (..), none in a filter, singular queries and a
//     literal on one side of every comparison in filters, and no match()
//     or search() (jsonpath.go);
//   - what a body is to the JSON matchers: a body of at most maxJSONBody
//     bytes, nested at most maxJSONDepth deep, or else no JSON;
//   - the work of one request against all the stubs, counted as it is
//     done, to maxWork steps (a step is 5 to 20 ns of one core: a node of
//     JSON visited costs two or three, a byte decoded eight, a byte read by
//     a regular expression half its instructions): a matcher whose work
//     would pass it does not match, nor does any stub after it, so that
//     the request is answered as if no further stub matched it. A
//     template's answer has a bound of its own.
//
// Non-public stubs add a fourth: the caller is authenticated before their
// query, headers and body are read (Service.Answer).

// maxPatternLength bounds a regular expression of a mapping: a URL pattern,
// or a matches or doesNotMatch.
const maxPatternLength = 1000

// maxProgram bounds the instructions a regular expression compiles to
// ([a-z]{1000} is short to write and long to run).
const maxProgram = 2000

// maxPathLength bounds a JSONPath of a mapping, in a body pattern or a
// template.
const maxPathLength = 256

// maxJSONBody is the largest body the JSON matchers read (equalToJson,
// matchesJsonPath and a template's jsonPath): a larger one is no JSON to
// them.
const maxJSONBody = 64 << 10

// maxJSONDepth is the deepest nesting of arrays and objects the JSON
// matchers read.
const maxJSONDepth = 32

// maxWork is the work one request may cost the matchers, in steps: about
// 20 ms of one core at worst (BenchmarkAnswer_Adversarial).
const maxWork = 1 << 20

// compileRegexp compiles a mapping's regular expression, to match whole
// values, within the bounds; where names the field.
func compileRegexp(where, src string) (*regexp.Regexp, int, error) {
	if len(src) > maxPatternLength {
		return nil, 0, invalid(where, fmt.Sprintf("a regular expression has at most %d bytes", maxPatternLength))
	}
	anchored := `^(?:` + src + `)$`
	re, err := regexp.Compile(anchored)
	if err != nil {
		return nil, 0, invalid(where, "it is not a regular expression: "+err.Error())
	}
	parsed, err := syntax.Parse(anchored, syntax.Perl)
	if err != nil {
		return nil, 0, invalid(where, "it is not a regular expression: "+err.Error())
	}
	prog, err := syntax.Compile(parsed.Simplify())
	if err != nil || len(prog.Inst) > maxProgram {
		return nil, 0, invalid(where, fmt.Sprintf("the regular expression is too large: it may compile to at most %d instructions", maxProgram))
	}
	return re, len(prog.Inst), nil
}

// charge counts n steps of work against r's bound; false: the bound is
// passed, and the work must not be done.
func (r *Request) charge(n int) bool {
	if r.spent || r.work+int64(n) > maxWork {
		r.spent = true // nothing more is tried
		return false
	}
	r.work += int64(n)
	return true
}

// decodeCost is the steps of decoding a byte of JSON into values, the
// slowest reading there is (a 64 KiB body is half the bound).
const decodeCost = 8

// regexpCost is the steps of matching a regular expression of insts
// instructions against n bytes: Go's engines are linear, at a few
// nanoseconds per byte and instruction at worst.
func regexpCost(n, insts int) int { return (n+1)*insts/2 + 1 }

// jsonShape reads b as the JSON matchers would, without decoding it: its
// deepest nesting, and whether it is within maxJSONBody and maxJSONDepth.
func jsonShape(b []byte) (int, bool) {
	if len(b) > maxJSONBody {
		return 0, false
	}
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			if depth > maxJSONDepth {
				return depth, false
			}
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest, true
}
