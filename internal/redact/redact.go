// Package redact takes tokens and secrets out of what a server writes for
// people and tools to read: the request log, the request journal and the
// messages of error answers. A caller that writes its access token into a
// path (GET /items/APP_USR-...) or a query value by mistake must not find
// it again in any of them.
//
// One form everywhere: the token is replaced by Mark. A token is a word
// that starts with one of the prefixes of the tokens and codes the engine
// issues (APP_USR- for access tokens, the demo ones included; TG- for
// refresh tokens and authorization codes; OPERATOR- for a generated
// operator token), in any case, followed by the characters tokens are made
// of (letters, digits, '_' and '-'). The server's own secrets (its operator
// token, whatever its shape) are replaced wherever they appear.
package redact

import (
	"encoding/json"
	"net/url"
	"strings"
)

// Mark replaces a token or a secret.
const Mark = "REDACTED"

// prefixes start the tokens and codes the engine issues.
var prefixes = []string{"APP_USR-", "TG-", "OPERATOR-"}

// MinSecretLength is the shortest secret looked for in free text: a
// shorter one would match ordinary words and ids. The generated operator
// token is far longer.
const MinSecretLength = 8

// Redactor replaces tokens and a server's own secrets.
type Redactor struct {
	secrets []string
}

// New returns a Redactor of the token shapes and of secrets. Empty
// secrets are left out; those shorter than MinSecretLength are replaced
// only where they are a whole path segment or query value.
func New(secrets ...string) *Redactor {
	r := &Redactor{}
	for _, s := range secrets {
		if s != "" {
			r.secrets = append(r.secrets, s)
		}
	}
	return r
}

// Text returns s with every token and every secret in it replaced by Mark.
// A text with neither is returned as it is, without an allocation.
func (r *Redactor) Text(s string) string {
	for _, sec := range r.secrets {
		if len(sec) >= MinSecretLength && strings.Contains(s, sec) {
			s = strings.ReplaceAll(s, sec, Mark)
		}
	}
	return tokens(s)
}

// Path returns the request path p with every token and secret replaced by
// Mark, as Text does, and also every segment that is a whole secret
// shorter than MinSecretLength.
func (r *Redactor) Path(p string) string {
	p = r.Text(p)
	for _, sec := range r.secrets {
		if len(sec) >= MinSecretLength || !strings.Contains(p, sec) {
			continue
		}
		segs := strings.Split(p, "/")
		for i, seg := range segs {
			if seg == sec {
				segs[i] = Mark
			}
		}
		p = strings.Join(segs, "/")
	}
	return p
}

// Query returns the raw query with the value of every parameter that may
// carry a token or a secret replaced by Mark: one whose name says so
// (access_token, client_secret, code, ...), or whose value, unescaped,
// holds a token or a secret. The rest is kept as it was sent, in its
// order.
func (r *Redactor) Query(raw string) string {
	if raw == "" {
		return ""
	}
	parts := strings.Split(raw, "&")
	for i, p := range parts {
		k, v, hasValue := strings.Cut(p, "=")
		if !hasValue {
			continue
		}
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		value, err := url.QueryUnescape(v)
		if err != nil {
			value = v
		}
		if isSecretName(name) || r.holdsSecret(value) || r.holdsSecret(v) {
			parts[i] = k + "=" + Mark
		}
	}
	return strings.Join(parts, "&")
}

func (r *Redactor) holdsSecret(v string) bool {
	for _, sec := range r.secrets {
		if v == sec || (len(sec) >= MinSecretLength && strings.Contains(v, sec)) {
			return true
		}
	}
	return tokens(v) != v
}

// secretParams are the query parameters that carry tokens, codes and
// secrets in the public API's OAuth and in the older SDKs.
var secretParams = []string{"access_token", "refresh_token", "client_secret", "code", "code_verifier",
	"password", "id_token", "client_assertion", "token", "secret", "api_key", "apikey"}

func isSecretName(name string) bool {
	name = strings.ToLower(name)
	for _, s := range secretParams {
		if name == s {
			return true
		}
	}
	return strings.Contains(name, "token") || strings.Contains(name, "secret") || strings.Contains(name, "password")
}

// tokens replaces every token-shaped word of s by Mark. Every prefix ends
// in '-', so a text without one is returned at once.
func tokens(s string) string {
	if strings.IndexByte(s, '-') < 0 {
		return s
	}
	var b strings.Builder
	done, replaced := 0, false // s[:done] is written to b
	for i := 0; i < len(s); {
		n := tokenAt(s, i)
		if n == 0 {
			i++
			continue
		}
		if !replaced {
			b.Grow(len(s))
			replaced = true
		}
		b.WriteString(s[done:i])
		b.WriteString(Mark)
		i += n
		done = i
	}
	if !replaced {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

// tokenAt returns the length of the token that starts at s[i], or 0. A
// token starts a word (it follows no letter, digit or '_') and has at
// least one character after its prefix.
func tokenAt(s string, i int) int {
	if i > 0 && isWordByte(s[i-1]) {
		return 0
	}
	for _, p := range prefixes {
		if len(s)-i > len(p) && strings.EqualFold(s[i:i+len(p)], p) && isTokenByte(s[i+len(p)]) {
			j := i + len(p)
			for j < len(s) && isTokenByte(s[j]) {
				j++
			}
			return j - i
		}
	}
	return 0
}

func isWordByte(c byte) bool {
	return c == '_' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

func isTokenByte(c byte) bool { return isWordByte(c) || c == '-' }

// Body returns a request body with its tokens and secrets replaced by
// Mark: in a JSON document, the value of every member whose name says it
// carries one (password, client_secret, refresh_token, ...); in a form,
// as Query does; and in any body, every token and secret as Text does.
func (r *Redactor) Body(contentType string, b []byte) string {
	s := string(b)
	if strings.HasPrefix(strings.ToLower(contentType), "application/x-www-form-urlencoded") {
		return r.Text(r.Query(s))
	}
	var doc any
	if json.Unmarshal(b, &doc) == nil {
		if redactJSON(doc) {
			if out, err := json.Marshal(doc); err == nil {
				s = string(out)
			}
		}
	}
	return r.Text(s)
}

// redactJSON replaces the values of secret-named members in place and
// reports whether it replaced any.
func redactJSON(v any) bool {
	changed := false
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if isSecretName(k) {
				x[k] = Mark
				changed = true
				continue
			}
			changed = redactJSON(e) || changed
		}
	case []any:
		for _, e := range x {
			changed = redactJSON(e) || changed
		}
	}
	return changed
}

// Header returns the value of header name as it may be kept: Mark for the
// headers that carry credentials, else the value with its tokens and
// secrets replaced as Text does.
func (r *Redactor) Header(name, value string) string {
	switch strings.ToLower(name) {
	case "authorization", "cookie", "set-cookie", "proxy-authorization":
		return Mark
	}
	if isSecretName(name) {
		return Mark
	}
	return r.Text(value)
}
