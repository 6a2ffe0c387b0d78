package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/money"
)

// maxBodyBytes bounds every request body.
const maxBodyBytes = 1 << 20

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// writeJSON encodes v with status. Encoding into a buffer first means a value
// that cannot be encoded becomes a 500, not half a body.
func (s *Server) writeJSON(w http.ResponseWriter, status int, v any) {
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer bufPool.Put(buf)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		s.logger.Error("encode response", "err", err)
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"message":"Internal server error","error":"internal_error","status":500,"cause":[]}` + "\n")
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// readBody reads the whole request body, at most maxBodyBytes.
func readBody(r *http.Request) ([]byte, error) {
	body := http.MaxBytesReader(nil, r.Body, maxBodyBytes)
	var b []byte
	var err error
	if n := r.ContentLength; n > 0 && n <= maxBodyBytes {
		// One buffer of the announced size rather than ReadAll's growing
		// ones; net/http stops the body at that size. Zero is read as
		// unknown, as net/http reads it on requests built by hand.
		b = make([]byte, n)
		_, err = io.ReadFull(body, b)
	} else {
		b, err = io.ReadAll(body)
	}
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, &httpError{status: http.StatusRequestEntityTooLarge, code: "request_entity_too_large",
				message: "Request body too large: the limit is 1048576 bytes"}
		}
		return nil, errs.Invalidf("Could not read the request body")
	}
	return b, nil
}

// decode reads a JSON object body into v. Unknown fields are ignored, as the
// public API does; a body that is not JSON, or not an object of the expected
// shape, is a 400.
func decode(r *http.Request, v any) error {
	b, err := readBody(r)
	if err != nil {
		return err
	}
	return decodeBytes(b, v)
}

// errNotAnObject answers a body that is JSON but not an object. Every body
// the API decodes is an object (the route table's objectBody and
// optionalObjectBody routes); null in particular would otherwise decode
// into the zero value and be taken as an empty object.
func errNotAnObject() error { return errs.Invalidf("Malformed JSON body: a JSON object is expected") }

// decodeBytes decodes body b, which must be one JSON object, into v.
func decodeBytes(b []byte, v any) error {
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) == 0 {
		return errs.Invalidf("The request body is empty; a JSON object is expected")
	}
	// A body that is not JSON at all gets the decoder's message, which
	// says where it breaks.
	if trimmed[0] != '{' && json.Valid(trimmed) {
		return errNotAnObject()
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return malformed(err)
	}
	if dec.More() {
		return errs.Invalidf("Malformed JSON body: unexpected data after the JSON value")
	}
	return nil
}

func malformed(err error) error {
	if e, ok := money.InvalidField(err); ok {
		// An amount (a price) of the wrong type gets the amount rule's
		// message, as a number that breaks the rule would.
		return e
	}
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) && ute.Field != "" {
		return errs.Invalidf("Invalid JSON: the field [%s] must be of type %s", ute.Field, jsonTypeName(ute.Type.Kind().String()))
	}
	if errors.As(err, &ute) {
		// The body as a whole has the wrong type; the decoder's text would
		// name a Go type.
		return errs.Invalidf("Malformed JSON body: a JSON %s is expected", jsonTypeName(ute.Type.Kind().String()))
	}
	return errs.Invalidf("Malformed JSON body: %v", err)
}

func jsonTypeName(kind string) string {
	switch kind {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "integer"
	case "float32", "float64":
		return "number"
	case "slice", "array":
		return "array"
	case "struct", "map":
		return "object"
	case "bool":
		return "boolean"
	}
	return kind
}
