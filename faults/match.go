package faults

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/marketplace/marketplace/errs"
)

// Bounds of a rule's selectors on the query and the body.
const (
	// MaxSelectors bounds the entries of query and of body_fields, each.
	MaxSelectors = 20
	// MaxPathSegments bounds the segments of a body field's dotted path.
	MaxPathSegments = 16
)

// bodyField is one entry of a rule's body_fields, parsed: the path's
// segments and the value wanted, decoded as the request's body is.
type bodyField struct {
	path []string
	want any
}

// checkQuery checks a rule's query selectors. Errors: Invalid.
func checkQuery(q map[string]string) error {
	if len(q) > MaxSelectors {
		return errs.Invalidf("Invalid query: %d parameters. A rule selects on at most %d", len(q), MaxSelectors)
	}
	for _, name := range sortedKeys(q) {
		if strings.TrimSpace(name) == "" {
			return errs.Invalidf("Invalid query: a parameter name must not be empty")
		}
	}
	return nil
}

// parseBodyFields checks a rule's body_fields and returns them parsed, in
// the order of their paths. Errors: Invalid, naming the path at fault.
func parseBodyFields(in map[string]json.RawMessage) ([]bodyField, error) {
	if len(in) > MaxSelectors {
		return nil, errs.Invalidf("Invalid body_fields: %d fields. A rule selects on at most %d", len(in), MaxSelectors)
	}
	var out []bodyField
	for _, p := range sortedKeys(in) {
		segs := strings.Split(p, ".")
		if len(segs) > MaxPathSegments {
			return nil, errs.Invalidf("Invalid body_fields: the path [%s] has more than %d segments", p, MaxPathSegments)
		}
		if slices.Contains(segs, "") {
			return nil, errs.Invalidf("Invalid body_fields: the path [%s] has an empty segment; write fields as item_id or shipping.mode", p)
		}
		raw := bytes.TrimSpace(in[p])
		if len(raw) == 0 {
			return nil, errs.Invalidf("Invalid body_fields: the value of [%s] is missing", p)
		}
		var want any
		if err := json.Unmarshal(raw, &want); err != nil {
			return nil, errs.Invalidf("Invalid body_fields: the value of [%s] must be a JSON value", p)
		}
		out = append(out, bodyField{path: segs, want: want})
	}
	return out, nil
}

// matchQuery reports whether every parameter of want is in the request's
// query with that value (among its values, when it is repeated).
func matchQuery(want map[string]string, got func(name string) []string) bool {
	for name, v := range want {
		if got == nil || !slices.Contains(got(name), v) {
			return false
		}
	}
	return true
}

// matchBody reports whether the request's body, decoded, has every field
// of want with an equal value. Numbers are compared as numbers (1 and 1.0
// are equal), everything else exactly. A body that is not JSON matches no
// rule with body fields.
func matchBody(want []bodyField, body any, ok bool) bool {
	if !ok {
		return false
	}
	for _, f := range want {
		v, found := lookup(body, f.path)
		if !found || !reflect.DeepEqual(v, f.want) {
			return false
		}
	}
	return true
}

// lookup follows path into v: a segment names an object's member, or
// indexes an array when it is a number.
func lookup(v any, path []string) (any, bool) {
	for _, seg := range path {
		switch x := v.(type) {
		case map[string]any:
			next, ok := x[seg]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// decodeBody decodes a request's body for matchBody; ok is false when it
// is not one JSON value.
func decodeBody(b []byte) (any, bool) {
	var v any
	if len(bytes.TrimSpace(b)) == 0 || json.Unmarshal(b, &v) != nil {
		return nil, false
	}
	return v, true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
