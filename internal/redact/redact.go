// Package redact takes tokens and secrets out of what a server writes for
// people and tools to read: the request log, the request journal and the
// messages of error answers. A caller that writes its access token into a
// path (GET /items/APP_USR-...), a query value, a header or a body, by
// mistake or on purpose, must not find it again in any of them.
//
// One form everywhere: the token or secret is replaced by Mark. Three
// rules find them, each catching what the others cannot:
//
//   - Shape. A word shaped like a credential the engine issues or reads:
//     one that starts with APP_USR- (access tokens, the demo ones
//     included), TG- (refresh tokens and authorization codes) or OPERATOR-
//     (a generated operator token), in any case; a JSON Web Token
//     (eyJ....); a run of 64 or more hexadecimal digits (the client
//     secrets and notification secrets); the credential after "Bearer",
//     and after "Basic" when it decodes to a user:password pair.
//   - Position. The value of every header, query parameter, form field,
//     JSON member and name=value or "name": value pair whose name says it
//     carries a credential (Authorization, Cookie, X-Auth, X-Api-Key,
//     password, passwd, pwd, client_secret, access_token, private_key,
//     credentials, auth, code, ... see secretName), whatever the value's
//     shape, nested objects and arrays whole.
//   - Knowledge. The server's own secrets (its operator token, whatever its
//     shape); within one request (For), every credential the request
//     presents, in whatever position it appears again; and the tokens the
//     engine accepts whatever their shape (a fixture can give a user any
//     token of 16 characters or more), asked of the accounts store word by
//     word, within a bound.
//
// A body is read as what it is, not as what its Content-Type says: as JSON
// when it parses as one JSON document (escaped names and values decoded),
// as multipart when declared or shaped so, and otherwise as text, in which
// form pairs, name=value and "name": value pairs and every shape are
// replaced. A text that, once its escapes (%XX, \uXXXX, \xXX, &#NN;) are
// decoded, would still show a secret is dropped whole: Mark stands for it.
package redact

import (
	"context"
	"encoding/base64"
	"net/url"
	"slices"
	"strings"
)

// Mark replaces a token or a secret.
const Mark = "REDACTED"

// MinSecretLength is the shortest secret looked for in free text: a
// shorter one would match ordinary words and ids. The generated operator
// token is far longer.
const MinSecretLength = 8

// MinKnownLength is the shortest word a request's redactor asks its known
// check about: the accounts' shortest chosen token.
const MinKnownLength = 16

// maxKnownLength is the longest word asked about: no header carries a
// longer token.
const maxKnownLength = 4096

// MaxKnownChecks bounds the known checks of one request's redactor, each of
// which may cost a read of the store; a word beyond the bound is replaced
// without one, as a secret may be.
const MaxKnownChecks = 32

// maxDepth bounds how many encodings deep a value is decoded again (a form
// value in a JSON string in a multipart part ...).
const maxDepth = 3

// maxSecrets bounds the secrets one request's redactor learns.
const maxSecrets = 64

// Redactor replaces tokens and secrets. One from New is safe for
// concurrent use; one from For belongs to one request and one goroutine.
type Redactor struct {
	secrets []string
	// short: some secret is shorter than MinSecretLength, so a path is
	// looked at segment by segment.
	short bool
	// scoped: a request's redactor (For), which learns the secrets it
	// meets; known, checked and checks are its known check.
	scoped bool
	known  func(ctx context.Context, word string) (bool, error)
	ctx    context.Context
	// knownFailed: the known check returned an error; every word it would
	// be asked about is then taken for a token, and it is not asked again.
	knownFailed bool
	checked     map[string]bool
	checks      int
	// inline holds a request's secrets while they are few: a redactor is
	// made per request, and its secrets then cost no allocation of their
	// own.
	inline [4]string
}

// New returns a Redactor of the token shapes and of secrets. Empty
// secrets are left out; those shorter than MinSecretLength are replaced
// only where they are a whole path segment, query value or field value.
func New(secrets ...string) *Redactor {
	r := &Redactor{}
	for _, s := range secrets {
		if s != "" {
			r.secrets = append(r.secrets, s)
			r.short = r.short || len(s) < MinSecretLength
		}
	}
	return r
}

// For returns a redactor of one request, for one goroutine: r's secrets,
// and also every credential the request presents (the value of its
// Authorization header, the password of its Basic credentials, the value
// of every header and query parameter whose name says it carries one) and
// every secret met later in its body, replaced wherever they appear again.
// known, when not nil, tells whether a word of at least MinKnownLength
// characters without spaces is a token the engine accepts; it is asked,
// with ctx, at most MaxKnownChecks times, once per word, and never again
// once it returns an error: the words are then taken for tokens.
func (r *Redactor) For(ctx context.Context, known func(ctx context.Context, word string) (bool, error), header map[string][]string, rawQuery string) *Redactor {
	s := &Redactor{short: r.short, scoped: true, known: known, ctx: ctx}
	s.secrets = append(s.inline[:0], r.secrets...)
	for name, vs := range header {
		if !secretName(name) {
			continue
		}
		for _, v := range vs {
			s.learnHeader(name, v)
		}
	}
	if rawQuery != "" {
		for p := range strings.SplitSeq(rawQuery, "&") {
			if k, v, ok := strings.Cut(p, "="); ok && secretName(unescapeForm(k)) {
				s.learn(unescapeForm(v))
			}
		}
	}
	return s
}

// learnHeader learns the credentials of a header whose name says it
// carries them.
func (r *Redactor) learnHeader(name, v string) {
	v = strings.TrimSpace(v)
	r.learn(v)
	scheme, cred, ok := strings.Cut(v, " ")
	if !ok {
		return
	}
	cred = strings.TrimSpace(cred)
	r.learn(cred)
	if strings.EqualFold(scheme, "Basic") {
		if d, err := base64.StdEncoding.DecodeString(cred); err == nil {
			if _, pass, ok := strings.Cut(string(d), ":"); ok {
				r.learn(pass)
				r.learn(unescapeForm(pass))
			}
		}
	}
	if containsFold(name, "cookie") {
		for c := range strings.SplitSeq(v, ";") {
			if _, val, ok := strings.Cut(c, "="); ok {
				r.learn(val)
			}
		}
	}
}

// learn adds v to the secrets of a request's redactor.
func (r *Redactor) learn(v string) {
	if !r.scoped {
		return
	}
	v = strings.TrimSpace(v)
	if len(v) < MinSecretLength || v == Mark || len(r.secrets) >= maxSecrets || slices.Contains(r.secrets, v) {
		return
	}
	r.secrets = append(r.secrets, v)
}

// whole reports whether v, a whole value, is a secret: one of r's, or,
// with check, a token the known check knows.
func (r *Redactor) whole(v string, check bool) bool {
	for _, sec := range r.secrets {
		if v == sec {
			return true
		}
	}
	return check && r.isKnown(v)
}

// isKnown asks the known check about w, once per word and within the
// bound.
func (r *Redactor) isKnown(w string) bool {
	if r.known == nil || len(w) < MinKnownLength || len(w) > maxKnownLength || w == Mark ||
		strings.ContainsAny(w, " \t\r\n") {
		return false
	}
	if v, ok := r.checked[w]; ok {
		return v
	}
	if r.checked == nil {
		r.checked = map[string]bool{}
	}
	v := true // beyond the bound, or once the check failed: replaced unchecked
	if r.checks < MaxKnownChecks && !r.knownFailed {
		r.checks++
		known, err := r.known(r.ctx, w)
		if err != nil {
			r.knownFailed = true
		} else {
			v = known
		}
	}
	r.checked[w] = v
	if v {
		r.learn(w)
	}
	return v
}

// Text returns s with every token and every secret in it replaced by Mark.
// A text with neither is returned as it is, without an allocation.
func (r *Redactor) Text(s string) string {
	for _, sec := range r.secrets {
		if len(sec) >= MinSecretLength && strings.Contains(s, sec) {
			s = strings.ReplaceAll(s, sec, Mark)
		}
	}
	return shapes(s)
}

// Path returns the request path p with every token and secret replaced by
// Mark, as Text does, and also every segment that is a whole secret
// shorter than MinSecretLength, that would show a secret once its escapes
// are decoded, or, for a request's redactor, that the known check knows.
func (r *Redactor) Path(p string) string { return r.path(p, true) }

// RoutedPath is Path for the path of a request that a route answered with
// success: its segments are not asked of the known check, as the route
// took each one as the id of something it found.
func (r *Redactor) RoutedPath(p string) string { return r.path(p, false) }

func (r *Redactor) path(p string, check bool) string {
	p = r.Text(p)
	check = check && r.known != nil
	if !r.short && !check && !strings.ContainsAny(p, `%\&`) {
		return p
	}
	var out []byte
	done := 0
	for start := 0; start <= len(p); {
		end := strings.IndexByte(p[start:], '/')
		if end < 0 {
			end = len(p)
		} else {
			end += start
		}
		if seg := p[start:end]; seg != "" && seg != Mark &&
			(r.whole(seg, check) || (hasEscapes(seg) && r.raw(seg, 1) != seg)) {
			out = append(out, p[done:start]...)
			out = append(out, Mark...)
			done = end
		}
		start = end + 1
	}
	if out == nil {
		return p
	}
	return string(append(out, p[done:]...))
}

// Query returns the raw query with the value of every parameter that may
// carry a token or a secret replaced by Mark: one whose name says so
// (access_token, client_secret, code, ...), or whose value, unescaped,
// holds a token or a secret. The rest is kept as it was sent, in its
// order, unless its escapes hide a secret: then the whole query is Mark.
func (r *Redactor) Query(raw string) string {
	if raw == "" {
		return ""
	}
	s := r.Text(r.pairs(raw, 0, true))
	if d := unescape(s); d != s && r.raw(d, 1) != d {
		return Mark
	}
	return s
}

// Header returns the value of header name as it may be kept: Mark for a
// header whose name says it carries a credential (Authorization, Cookie,
// X-Auth, X-Api-Key, ...), else the value with its tokens and secrets
// replaced as in a text body.
func (r *Redactor) Header(name, value string) string {
	if secretName(name) {
		r.learnHeader(name, value)
		return Mark
	}
	return r.raw(value, 0)
}

// pairs replaces, in s read as name=value pairs joined by '&', the value
// of every pair whose name says it carries a secret or whose value holds
// one; with flags, in a query, also every part without a value that holds
// one.
func (r *Redactor) pairs(s string, depth int, flags bool) string {
	if !flags && strings.IndexByte(s, '=') < 0 {
		return s
	}
	parts := strings.Split(s, "&")
	changed := false
	for i, p := range parts {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			if flags && p != Mark && r.holds(unescapeForm(p), p, depth) {
				parts[i] = Mark
				changed = true
			}
			continue
		}
		if v == Mark {
			continue
		}
		name, val := unescapeForm(k), unescapeForm(v)
		if secretName(name) {
			r.learn(val)
		} else if !r.holds(val, v, depth) {
			continue
		}
		parts[i] = k + "=" + Mark
		changed = true
	}
	if !changed {
		return s
	}
	return strings.Join(parts, "&")
}

// holds reports whether val, a value decoded from v, holds a secret.
func (r *Redactor) holds(val, v string, depth int) bool {
	if val == "" || val == Mark {
		return false
	}
	if r.whole(val, true) || r.Text(val) != val {
		return true
	}
	return val != v && depth < maxDepth && r.raw(val, depth+1) != val
}

// unescapeForm decodes a form-encoded name or value, or returns it as it
// is when it is not validly encoded.
func unescapeForm(s string) string {
	if !strings.ContainsAny(s, "%+") {
		return s
	}
	if u, err := url.QueryUnescape(s); err == nil {
		return u
	}
	return s
}
