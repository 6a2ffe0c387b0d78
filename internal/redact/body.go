package redact

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/textproto"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Body returns a request body with its tokens and secrets replaced by
// Mark, whatever its declared Content-Type: a body that parses as one JSON
// document is read as JSON (names and values with their escapes decoded),
// a multipart body part by part, any other as text (see the package
// comment). A JSON document or a text with nothing to replace is returned
// as it was sent; one that cannot be told apart from a secret is Mark
// whole.
func (r *Redactor) Body(contentType string, b []byte) string {
	return r.body(contentType, b, 0)
}

func (r *Redactor) body(contentType string, b []byte, depth int) string {
	if len(b) == 0 {
		return ""
	}
	if mt, params, err := mime.ParseMediaType(contentType); err == nil && strings.HasPrefix(mt, "multipart/") {
		return r.multipart(b, params["boundary"], depth)
	}
	if s, ok := r.json(b, depth); ok {
		return s
	}
	return r.raw(string(b), depth)
}

// raw returns free text s with its secrets replaced: form pairs, shapes,
// named pairs and known words. A text whose escapes, decoded, would show
// one more is Mark whole.
func (r *Redactor) raw(s string, depth int) string {
	if s == "" || s == Mark {
		return s
	}
	if depth < maxDepth && containsFold(s, "content-disposition") {
		return r.multipart([]byte(s), firstBoundary(s), depth)
	}
	s = r.pairs(s, depth, false)
	s = r.Text(s)
	s = r.namedValues(s)
	s = r.knownWords(s)
	if depth < maxDepth {
		if d := unescape(s); d != s && r.raw(d, depth+1) != d {
			return Mark
		}
	}
	return s
}

// value returns a decoded string value with its secrets replaced: Mark
// when the whole value is one, else as free text.
func (r *Redactor) value(v string, depth int) string {
	if v == "" || v == Mark {
		return v
	}
	if r.whole(v, true) {
		return Mark
	}
	return r.raw(v, depth+1)
}

// json rewrites b, when it is one JSON document, with the value of every
// member whose name says it is a credential replaced by "REDACTED" (an
// object or an array whole), and every name and string that holds a secret
// replaced by its redacted text; the rest of b is kept byte for byte. ok
// is false when b is not one JSON document.
func (r *Redactor) json(b []byte, depth int) (s string, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	type frame struct{ object, wantName bool }
	var stack []frame
	var out []byte
	done := 0
	replace := func(start, end int, with string) {
		out = append(out, b[done:start]...)
		out = append(out, with...)
		done = end
	}
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].wantName = true
		}
	}
	hideNext := false // the next value is a credential's
	skip, skipStart := 0, 0
	documents := 0
	for {
		before := int(dec.InputOffset())
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", false
		}
		end := int(dec.InputOffset())
		start := before
		for start < end && strings.IndexByte(" \t\r\n,:", b[start]) >= 0 {
			start++
		}
		if len(stack) == 0 && skip == 0 {
			if documents++; documents > 1 {
				return "", false
			}
		}
		if skip > 0 { // inside a credential's object or array
			if d, ok := tok.(json.Delim); ok {
				if d == '{' || d == '[' {
					skip++
				} else {
					skip--
				}
			}
			if skip == 0 {
				replace(skipStart, end, `"`+Mark+`"`)
				valueDone()
			}
			continue
		}
		switch t := tok.(type) {
		case json.Delim:
			switch {
			case (t == '{' || t == '[') && hideNext:
				hideNext, skip, skipStart = false, 1, start
			case t == '{':
				stack = append(stack, frame{object: true, wantName: true})
			case t == '[':
				stack = append(stack, frame{})
			default:
				stack = stack[:len(stack)-1]
				valueDone()
			}
		case string:
			if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantName {
				stack[n-1].wantName = false
				hideNext = secretName(t)
				if rt := r.value(t, depth); rt != t {
					replace(start, end, quoteJSON(rt))
				}
				continue
			}
			switch {
			case hideNext:
				hideNext = false
				r.learn(t)
				replace(start, end, `"`+Mark+`"`)
			default:
				if rt := r.value(t, depth); rt != t {
					replace(start, end, quoteJSON(rt))
				}
			}
			valueDone()
		default: // numbers, booleans, null
			n, isNumber := t.(json.Number)
			if hideNext || (isNumber && r.whole(n.String(), true)) {
				hideNext = false
				replace(start, end, `"`+Mark+`"`)
			}
			valueDone()
		}
	}
	if documents != 1 || skip > 0 || len(stack) > 0 {
		return "", false
	}
	if out == nil {
		return string(b), true
	}
	return string(append(out, b[done:]...)), true
}

// quoteJSON returns s as a JSON string, without escaping HTML.
func quoteJSON(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(buf.String(), "\n")
}

// multipart rewrites a multipart body part by part: a part whose form
// name says it is a credential becomes Mark, any other is read as a body
// of its own Content-Type. A body that does not parse as multipart with
// boundary is Mark whole.
func (r *Redactor) multipart(b []byte, boundary string, depth int) string {
	if boundary == "" {
		return Mark
	}
	mr := multipart.NewReader(bytes.NewReader(b), boundary)
	var out bytes.Buffer
	w := multipart.NewWriter(&out)
	if w.SetBoundary(boundary) != nil {
		return Mark
	}
	for {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Mark
		}
		content, err := io.ReadAll(p)
		if err != nil {
			return Mark
		}
		h := textproto.MIMEHeader{}
		for k, vs := range p.Header {
			for _, v := range vs {
				h.Add(k, r.Header(k, v))
			}
		}
		kept := Mark
		if name := p.FormName(); secretName(name) {
			r.learn(string(content))
		} else if depth < maxDepth {
			kept = r.body(p.Header.Get("Content-Type"), content, depth+1)
		}
		pw, err := w.CreatePart(h)
		if err != nil {
			return Mark
		}
		_, _ = io.WriteString(pw, kept)
	}
	if w.Close() != nil {
		return Mark
	}
	return out.String()
}

// firstBoundary returns the boundary of a multipart body sent without its
// Content-Type: its first line, less the leading "--".
func firstBoundary(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	b, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "--")
	if !ok {
		return ""
	}
	return b
}

// containsFold reports whether s holds sub (ASCII, lower case) in any case.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}

func hasEscapes(s string) bool { return strings.ContainsAny(s, `%\&`) }

// unescape decodes the escapes a text may hide a secret behind: %XX,
// \uXXXX, \xXX, \/ and \" and \\, &#NN; and &#xNN;. Anything else, and a
// text without any, is kept as it is.
func unescape(s string) string {
	if !hasEscapes(s) {
		return s
	}
	var b []byte
	done := 0
	// emit puts r, or the byte r when it is one (%XX, \xXX), in place of
	// the escape of n bytes at s[i].
	emit := func(i, n int, r rune, isByte bool) {
		if b == nil {
			b = make([]byte, 0, len(s))
		}
		b = append(b, s[done:i]...)
		if isByte {
			b = append(b, byte(r))
		} else {
			b = utf8.AppendRune(b, r)
		}
		done = i + n
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '%':
			if i+3 > len(s) {
				continue
			}
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				emit(i, 3, rune(v), true)
				i += 2
			}
		case '\\':
			if i+1 >= len(s) {
				continue
			}
			switch s[i+1] {
			case 'u':
				if i+6 <= len(s) {
					if v, err := strconv.ParseUint(s[i+2:i+6], 16, 16); err == nil {
						emit(i, 6, rune(v), false)
						i += 5
					}
				}
			case 'x':
				if i+4 <= len(s) {
					if v, err := strconv.ParseUint(s[i+2:i+4], 16, 8); err == nil {
						emit(i, 4, rune(v), true)
						i += 3
					}
				}
			case '/', '"', '\\', '\'':
				emit(i, 2, rune(s[i+1]), true)
				i++
			}
		case '&':
			if i+3 < len(s) && s[i+1] == '#' {
				j := strings.IndexByte(s[i:min(i+12, len(s))], ';')
				if j < 0 {
					continue
				}
				num, base := s[i+2:i+j], 10
				if len(num) > 0 && (num[0] == 'x' || num[0] == 'X') {
					num, base = num[1:], 16
				}
				if v, err := strconv.ParseUint(num, base, 21); err == nil {
					emit(i, j+1, rune(v), false)
					i += j
				}
			}
		}
	}
	if b == nil {
		return s
	}
	return string(append(b, s[done:]...))
}
