// Package openapi holds the OpenAPI 3.1 document of the marketplace API
// (openapi.yaml beside this file, kept by hand) and checks requests and
// answers against it with github.com/pb33f/libopenapi-validator.
package openapi

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync"

	yaml "github.com/pb33f/go-yaml"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	"github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/helpers"
	"github.com/pb33f/libopenapi-validator/paths"
	"github.com/pb33f/libopenapi-validator/responses"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
)

// YAML is the main file of the document as it is kept in the repository.
// The paths and components of each area that has its own file beside it
// (messages.yaml, postsale.yaml) are merged into it by JSON.
//
//go:embed openapi.yaml
var YAML []byte

//go:embed *.yaml
var parts embed.FS

var (
	jsonOnce sync.Once
	jsonDoc  []byte
	jsonErr  error
)

// JSON returns the whole document as JSON: the main file with every
// area's file merged into it, converted once from YAML.
func JSON() ([]byte, error) {
	jsonOnce.Do(func() {
		doc, err := merged()
		if err != nil {
			jsonErr = err
			return
		}
		jsonDoc, jsonErr = json.Marshal(doc)
	})
	return jsonDoc, jsonErr
}

// merged reads the main file and adds to it the paths and the components
// of every other file; a name given twice is an error, so that one area
// cannot silently replace another's path or schema.
func merged() (map[string]any, error) {
	var doc map[string]any
	if err := yaml.Unmarshal(YAML, &doc); err != nil {
		return nil, fmt.Errorf("openapi: parse openapi.yaml: %w", err)
	}
	names, err := fs.Glob(parts, "*.yaml")
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		if name == "openapi.yaml" {
			continue
		}
		b, err := parts.ReadFile(name)
		if err != nil {
			return nil, err
		}
		var part map[string]any
		if err := yaml.Unmarshal(b, &part); err != nil {
			return nil, fmt.Errorf("openapi: parse %s: %w", name, err)
		}
		if err := mergeSection(doc, part, name, "paths"); err != nil {
			return nil, err
		}
		comps, _ := part["components"].(map[string]any)
		for kind := range comps {
			into, _ := doc["components"].(map[string]any)
			if into == nil {
				return nil, fmt.Errorf("openapi: %s: the main file has no components", name)
			}
			if err := mergeSection(into, comps, name, kind); err != nil {
				return nil, err
			}
		}
	}
	return doc, nil
}

// mergeSection adds the entries of from[section] to into[section].
func mergeSection(into, from map[string]any, file, section string) error {
	src, _ := from[section].(map[string]any)
	if len(src) == 0 {
		return nil
	}
	dst, _ := into[section].(map[string]any)
	if dst == nil {
		dst = map[string]any{}
		into[section] = dst
	}
	for k, v := range src {
		if _, dup := dst[k]; dup {
			return fmt.Errorf("openapi: %s: %s %q is already in the document", file, section, k)
		}
		dst[k] = v
	}
	return nil
}

// Operation is one method of one path of the document, the path in
// OpenAPI's syntax (/items/{item_id}).
type Operation struct {
	Method, Path string
}

// Operations returns every operation of the document, sorted by path then
// method.
func Operations() ([]Operation, error) {
	b, err := JSON()
	if err != nil {
		return nil, err
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	var ops []Operation
	for p, item := range doc.Paths {
		for m := range item {
			switch m {
			case "get", "put", "post", "delete", "patch", "head", "options", "trace":
				ops = append(ops, Operation{Method: strings.ToUpper(m), Path: p})
			}
		}
	}
	slices.SortFunc(ops, func(a, b Operation) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Method, b.Method)
	})
	return ops, nil
}

// Validator checks requests and answers against the document. It is safe
// for concurrent use.
type Validator struct {
	model *v3.Document
	v     validator.Validator
	opts  *config.ValidationOptions
	// responses checks an answer against the operation found for it.
	responses responses.ResponseBodyValidator
}

// NewValidator builds a validator over the document. Security is not
// checked: a missing or wrong token is the handlers' to answer, with their
// own messages.
func NewValidator() (*Validator, error) {
	whole, err := JSON()
	if err != nil {
		return nil, err
	}
	doc, err := libopenapi.NewDocument(whole)
	if err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	model, err := doc.BuildV3Model()
	if err != nil {
		return nil, fmt.Errorf("openapi: build model: %w", err)
	}
	v, errs := validator.NewValidator(doc, config.WithoutSecurityValidation())
	if len(errs) > 0 {
		return nil, fmt.Errorf("openapi: validator: %v", errs)
	}
	// The validator's own response checker holds the schemas it compiled
	// when it was built: one made here would compile them again on every
	// answer, and libopenapi's rendering of a schema is not safe for
	// concurrent use.
	return &Validator{model: &model.Model, v: v, opts: config.NewValidationOptions(config.WithoutSecurityValidation()),
		responses: v.GetResponseBodyValidator()}, nil
}

// Documented says whether the document has an operation for r's method and
// path. The router answers the others itself (404, 405, OPTIONS).
func (v *Validator) Documented(r *http.Request) bool {
	item, errs, _ := paths.FindPath(r, v.model, v.opts)
	return item != nil && len(errs) == 0
}

// Request returns the document's findings on r, none when r matches it or
// is not documented. It reads r's body and puts it back.
func (v *Validator) Request(r *http.Request) []string {
	if !v.Documented(r) {
		return nil
	}
	if mt := v.bodyMediaType(r); mt != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Content-Type", mt)
	}
	ok, errs := v.v.ValidateHttpRequestSync(r)
	if ok {
		return nil
	}
	return messages(withoutPathErrors(errs))
}

// bodyMediaType returns the media type to validate r's body as when r names
// one its operation does not declare (or none): JSON, which every handler
// that takes a JSON body decodes whatever the header says, as the public
// API does (curl -d sends application/x-www-form-urlencoded). It returns ""
// when r's own type is declared, or the operation takes no JSON body.
func (v *Validator) bodyMediaType(r *http.Request) string {
	item, errs, _ := paths.FindPath(r, v.model, v.opts)
	if item == nil || len(errs) > 0 {
		return ""
	}
	op, ok := item.GetOperations().Get(strings.ToLower(r.Method))
	if !ok || op == nil || op.RequestBody == nil || op.RequestBody.Content == nil {
		return ""
	}
	if _, json := op.RequestBody.Content.Get("application/json"); !json {
		return ""
	}
	sent, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if _, declared := op.RequestBody.Content.Get(sent); declared && sent != "" {
		return ""
	}
	return "application/json"
}

// Response returns the document's findings on res, the answer to r; none
// when it matches or r is not documented.
func (v *Validator) Response(r *http.Request, res *http.Response) []string {
	if !v.Documented(r) {
		return nil
	}
	// The path is found here rather than by ValidateHttpResponse, whose
	// own lookup takes a path with an empty segment
	// (/claims//returns/attachments, an empty claim_id to the router) for
	// another of the document's paths.
	item, _, template := paths.FindPath(r, v.model, v.opts)
	ok, errs := v.responses.ValidateResponseBodyWithPathItem(r, res, item, template)
	if ok {
		return nil
	}
	return messages(withoutPathErrors(errs))
}

// withoutPathErrors drops the findings that the request's path or method
// is not in the document. The router, not the document, decides which
// handler answers: it sends GET /items/multiwarehouse to GET
// /items/{item_id} where the document's literal path has only POST, and it
// answers unknown paths and methods itself (404, 405) in the error shape.
func withoutPathErrors(errs []*errors.ValidationError) []*errors.ValidationError {
	out := errs[:0:0]
	for _, e := range errs {
		if e.ValidationType != helpers.PathValidation {
			out = append(out, e)
		}
	}
	return out
}

func messages(errs []*errors.ValidationError) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		msg := e.Message
		if e.Reason != "" {
			msg += ": " + e.Reason
		}
		for _, f := range e.SchemaValidationErrors {
			loc := f.FieldPath
			if loc == "" {
				loc = f.KeywordLocation
			}
			msg += fmt.Sprintf(" [%s: %s]", loc, f.Reason)
		}
		out = append(out, msg)
	}
	return out
}
