package openapi_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/marketplace/marketplace/httpapi/openapi"
)

func TestDocument_IsValidOpenAPI31(t *testing.T) {
	b, err := openapi.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["openapi"] != "3.1.0" {
		t.Errorf("openapi = %v, want 3.1.0", doc["openapi"])
	}
	if _, err := openapi.NewValidator(); err != nil {
		t.Fatal(err)
	}
}

// The drift report reads a field the document does not declare as one the
// engine never sends, and the suite's answer checks fail on one: so every
// object of every answer lists its fields and says that there are no
// others (additionalProperties: false), or is a map whose values it
// describes (additionalProperties: a schema); every array says what its
// items are (items: false when it is always empty); and no value of an
// answer is left as "anything" unless its x-open says why its shape is not
// the API's.
func TestDocument_EveryAnswerSchemaIsClosed(t *testing.T) {
	b, err := openapi.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	resolve := func(n any) (any, string) {
		ref := ""
		for {
			m, ok := n.(map[string]any)
			if !ok {
				return n, ref
			}
			r, ok := m["$ref"].(string)
			if !ok {
				return n, ref
			}
			ref = r
			n = doc
			for _, tok := range strings.Split(strings.TrimPrefix(r, "#/"), "/") {
				n = n.(map[string]any)[tok]
			}
		}
	}
	seen := map[string]bool{}
	var open []string
	var walk func(n any, where string)
	walk = func(n any, where string) {
		n, ref := resolve(n)
		if ref != "" {
			if seen[ref] {
				return
			}
			seen[ref] = true
			where = ref
		}
		s, _ := n.(map[string]any)
		if alts, ok := s["oneOf"].([]any); ok {
			for i, a := range alts {
				walk(a, fmt.Sprintf("%s/oneOf/%d", where, i))
			}
			return
		}
		types := map[string]bool{}
		switch t := s["type"].(type) {
		case string:
			types[t] = true
		case []any:
			for _, x := range t {
				types[x.(string)] = true
			}
		}
		_, hasProps := s["properties"]
		if why, _ := s["x-open"].(string); why != "" {
			// A value whose shape is not the API's, and says why: what a
			// client wrote, answered as written (a fault rule's body, a
			// stub mapping), or this document.
			return
		}
		if len(types) == 0 && !hasProps && s["enum"] == nil && s["const"] == nil {
			open = append(open, where+": no type")
			return
		}
		if types["object"] || hasProps {
			switch ap := s["additionalProperties"].(type) {
			case bool:
				if ap {
					open = append(open, where+": additionalProperties: true")
				}
			case map[string]any:
				walk(ap, where+"/additionalProperties")
			default:
				open = append(open, where+": an object without additionalProperties")
			}
			props, _ := s["properties"].(map[string]any)
			for name, p := range props {
				walk(p, where+"/properties/"+name)
			}
		}
		if types["array"] {
			if it, ok := s["items"]; ok {
				if it == false {
					return // an array that is always empty
				}
				walk(it, where+"/items")
			} else {
				open = append(open, where+": an array without items")
			}
		}
	}
	paths, _ := doc["paths"].(map[string]any)
	for p, item := range paths {
		for m, op := range item.(map[string]any) {
			o, ok := op.(map[string]any)
			if !ok || m == "parameters" {
				continue
			}
			resps, _ := o["responses"].(map[string]any)
			for code, r := range resps {
				r, _ := resolve(r)
				content, _ := r.(map[string]any)["content"].(map[string]any)
				if media, ok := content["application/json"].(map[string]any); ok {
					walk(media["schema"], fmt.Sprintf("%s %s %s", strings.ToUpper(m), p, code))
				}
			}
		}
	}
	slices.Sort(open)
	for _, o := range open {
		t.Error(o)
	}
}

func TestValidator_AnAnswerToAPathWithAnEmptySegmentIsCheckedAgainstItsOwnOperation(t *testing.T) {
	v, err := openapi.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	// The routes of returns answer errors in their own shape.
	returnsError := `{"code":400,"error":"bad_request","message":"Invalid claim_id: . It must be a positive integer","cause":null}`
	for _, path := range []string{"/post-purchase/v1/claims//returns/attachments", "/post-purchase/v1/claims/5000000001/returns/attachments"} {
		r := httptest.NewRequest("POST", path, nil)
		res := &http.Response{StatusCode: http.StatusBadRequest, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(returnsError)), Request: r}
		if findings := v.Response(r, res); len(findings) != 0 {
			t.Errorf("POST %s: %v", path, findings)
		}
		wrong := `{"code":400,"message":"Invalid claim_id"}`
		res.Body = io.NopCloser(strings.NewReader(wrong))
		if findings := v.Response(r, res); len(findings) == 0 {
			t.Errorf("POST %s: an error in neither declared shape passed", path)
		}
	}
}

func TestValidator_AnswersAreCheckedConcurrently(t *testing.T) {
	v, err := openapi.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	answers := []struct{ method, path, body string }{
		{"POST", "/post-purchase/v1/claims/5000000001/returns/attachments", `{"code":400,"error":"bad_request","message":"x","cause":null}`},
		{"GET", "/items/MLA1", `{"message":"Item not found","error":"not_found","status":404,"cause":[]}`},
		{"GET", "/questions/1", `{"message":"Question not found","error":"not_found","status":404,"cause":[]}`},
	}
	done := make(chan struct{})
	for g := range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 20 {
				a := answers[(g+i)%len(answers)]
				r := httptest.NewRequest(a.method, a.path, nil)
				status := http.StatusNotFound
				if a.method == "POST" {
					status = http.StatusBadRequest
				}
				res := &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}},
					Body: io.NopCloser(strings.NewReader(a.body)), Request: r}
				v.Response(r, res)
			}
		}()
	}
	for range 8 {
		<-done
	}
}
