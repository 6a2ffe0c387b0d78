package httpapi

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"

	"github.com/julienschmidt/httprouter"

	"github.com/marketplace/marketplace/idempotency"
)

// answerHeaders are the headers of an answer that a replay gives again:
// the body's type, where the thing created is, the stock's version and the
// caching a token answer forbids. The rest (Date, lengths, CORS) belong to
// each answer.
var answerHeaders = []string{"Content-Type", "Location", "X-Version", "Cache-Control", "Pragma"}

// varyHeaders are the request headers, beside the body, that routes read
// and that make two requests different ones.
var varyHeaders = []string{"X-Version"}

// keyedEndpoint returns e with its handler carried out once per
// X-Idempotency-Key of its caller. Only a user's and the operator's routes
// take keys: anonymous callers would share theirs.
func (s *Server) keyedEndpoint(e endpoint) endpoint {
	switch e.who {
	case aUser:
		ah := e.ah
		e.ah = func(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
			who := idempotency.Caller{User: caller, App: tokenApp(token(r))}
			return s.idempotently(w, r, who, func(w http.ResponseWriter, r *http.Request) error { return ah(w, r, p, caller) })
		}
	case theOperator:
		h := e.h
		e.h = func(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
			return s.idempotently(w, r, idempotency.Caller{Operator: true}, func(w http.ResponseWriter, r *http.Request) error { return h(w, r, p) })
		}
	}
	return e
}

// idempotently serves r with serve, once per key when r carries one: the
// first request runs under a claim of its key, and its answer is recorded
// when it wrote; a retry gets that answer again, or the refusal of the key
// (package idempotency says which).
func (s *Server) idempotently(w http.ResponseWriter, r *http.Request, who idempotency.Caller, serve func(http.ResponseWriter, *http.Request) error) error {
	keys := r.Header.Values(idempotency.Header)
	if len(keys) == 0 {
		return serve(w, r)
	}
	if len(keys) > 1 {
		return &httpError{status: http.StatusBadRequest, code: "invalid_idempotency_key",
			message: "Send one X-Idempotency-Key header, not several"}
	}
	if err := idempotency.CheckKey(keys[0]); err != nil {
		return err
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	req := idempotency.Request{Caller: who, Key: keys[0], Method: r.Method, Path: keyedPath(r.URL), Body: body}
	for _, h := range varyHeaders {
		if v := r.Header.Values(h); len(v) > 0 {
			req.Vary = append(req.Vary, h+": "+v[0])
		}
	}
	ctx := r.Context()
	answer, claim, err := s.m.Idempotency.Begin(ctx, req)
	if err != nil {
		return err
	}
	if answer != nil {
		writeAnswer(w, *answer)
		return nil
	}
	buf := &answerBuffer{header: http.Header{}}
	herr := serve(buf, r.WithContext(idempotency.WithClaim(ctx, claim)))
	if refused := claim.Refused(); refused != nil {
		// The same key, sent at once by another request that wrote first:
		// its answer, when it has one by now, is this request's too.
		if answer, _, err := s.m.Idempotency.Begin(ctx, req); answer != nil && err == nil {
			writeAnswer(w, *answer)
			return nil
		}
		return refused
	}
	if herr != nil {
		s.writeError(buf, r, herr)
	}
	a := buf.answer()
	// A 5xx after a write is no outcome to give again (a commit whose
	// outcome the store could not tell, a failure after it): a retry is
	// told that the request was carried out instead.
	if a.Status < http.StatusInternalServerError {
		// Recorded even when the client has gone: that client is the one
		// that retries.
		if err := s.m.Idempotency.Finish(context.WithoutCancel(ctx), claim, a); err != nil {
			s.logger.Warn("record the answer of an idempotent request", "method", r.Method, "path", r.URL.Path, "err", err)
		}
	}
	buf.writeTo(w)
	return nil
}

// keyedPath is the path and the query that tell requests apart: the token
// of the older access_token parameter is not part of the request (it may
// be a fresh token of the same caller).
func keyedPath(u *url.URL) string {
	q := u.Query()
	if len(q) == 0 {
		return u.Path
	}
	q.Del("access_token")
	if len(q) == 0 {
		return u.Path
	}
	return u.Path + "?" + q.Encode()
}

// writeAnswer writes a recorded answer to w.
func writeAnswer(w http.ResponseWriter, a idempotency.Answer) {
	h := w.Header()
	for _, kv := range a.Headers {
		h.Set(kv[0], kv[1])
	}
	w.WriteHeader(a.Status)
	_, _ = w.Write(a.Body)
}

// answerBuffer keeps a handler's answer until the request's outcome is
// known: it is the answer recorded for the key, and the one written.
type answerBuffer struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *answerBuffer) Header() http.Header { return b.header }

func (b *answerBuffer) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *answerBuffer) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

// writeTo writes the buffered answer, every header with it.
func (b *answerBuffer) writeTo(w http.ResponseWriter) {
	h := w.Header()
	for name, v := range b.header {
		h[name] = v
	}
	status := b.status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = w.Write(b.body.Bytes())
}

// answer is the buffered answer, with the headers a replay gives again.
// Any other header the handler set goes out with this answer only.
func (b *answerBuffer) answer() idempotency.Answer {
	a := idempotency.Answer{Status: b.status, Body: b.body.Bytes()}
	if a.Status == 0 {
		a.Status = http.StatusOK
	}
	for _, name := range answerHeaders {
		if v := b.header.Get(name); v != "" {
			a.Headers = append(a.Headers, [2]string{name, v})
		}
	}
	return a
}
