package redact

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Names that say a value is a credential, compared with the name in lower
// case and without its separators ("X-Api-Key" is "xapikey",
// "client_secret" is "clientsecret"):
var (
	// secretParts are found anywhere in a name: access_token,
	// refresh_token, id_token, client_secret, password, passwd, pwd,
	// api_key, apikey, private_key, credentials, Authorization, Cookie,
	// client_assertion, code_verifier, contraseña, ...
	secretParts = [][]byte{
		[]byte("token"), []byte("secret"), []byte("passw"), []byte("pwd"), []byte("passphrase"),
		[]byte("apikey"), []byte("privatekey"), []byte("accesskey"), []byte("signingkey"),
		[]byte("credential"), []byte("authorization"), []byte("cookie"), []byte("sessionid"),
		[]byte("jwt"), []byte("bearer"), []byte("assertion"), []byte("verifier"), []byte("contrase"),
	}
	// secretWords are whole names, or whole words of a name ("X-Auth",
	// "basic_auth", "authHeader", "db_pass"): too short or too common to
	// be found inside other words ("author", "passenger").
	secretWords = []string{"auth", "pass", "session", "creds", "clave", "senha"}
)

// secretName reports whether a value under name (a header, a query
// parameter, a form field, a JSON member) is a credential. code, the
// authorization code of OAuth, counts only as the whole name.
func secretName(name string) bool {
	switch name {
	case "":
		return false
	case "Authorization":
		return true
	case "Accept", "Accept-Encoding", "Accept-Language", "User-Agent", "Content-Type", "Content-Length",
		"Connection", "X-Request-Id", "X-Version", "Origin", "Referer":
		// The headers of nearly every request, in canonical form: their
		// answer without the scan below.
		return false
	}
	var buf [128]byte
	norm := buf[:0]
	word := 0 // norm[word:] is the word being read
	for i := 0; i < len(name); i++ {
		c := name[i]
		upper := 'A' <= c && c <= 'Z'
		if !upper && !('a' <= c && c <= 'z') && !('0' <= c && c <= '9') {
			if isSecretWord(norm[word:]) {
				return true
			}
			word = len(norm)
			continue
		}
		if upper && i > 0 && 'a' <= name[i-1] && name[i-1] <= 'z' { // camelCase
			if isSecretWord(norm[word:]) {
				return true
			}
			word = len(norm)
		}
		if upper {
			c += 'a' - 'A'
		}
		norm = append(norm, c)
	}
	if isSecretWord(norm[word:]) || string(norm) == "code" {
		return true
	}
	for _, p := range secretParts {
		if bytes.Contains(norm, p) {
			return true
		}
	}
	return false
}

func isSecretWord(w []byte) bool {
	for _, s := range secretWords {
		if string(w) == s {
			return true
		}
	}
	return false
}

// authSchemes are the words that start an Authorization header's value:
// the credential follows them.
var authSchemes = []string{"basic", "bearer", "digest", "token", "negotiate", "apikey"}

// namedValues replaces, in free text, the value of every name=value,
// name: value, "name": value and 'name': value whose name says it carries
// a credential: a quoted value up to its closing quote, an object or an
// array up to its closing bracket, else a word up to a space or a
// separator (and the credential after an authorization scheme). A text
// without such a pair is returned as it is.
func (r *Redactor) namedValues(s string) string {
	if strings.IndexByte(s, '=') < 0 && strings.IndexByte(s, ':') < 0 {
		return s
	}
	var out []byte
	done := 0
	for i := 0; i < len(s); {
		var name string
		var next int // just after the name
		quoted := s[i] == '"' || s[i] == '\''
		switch {
		case quoted:
			j := closeQuote(s, i)
			if j < 0 {
				i++
				continue
			}
			name, next = unquote(s[i:j+1]), j+1
		case isNameByte(s[i]) && (i == 0 || !isNameByte(s[i-1])):
			j := i + 1
			for j < len(s) && isNameByte(s[j]) {
				j++
			}
			name, next = s[i:j], j
		default:
			i++
			continue
		}
		k := skipBlanks(s, next)
		if k >= len(s) || (s[k] != '=' && s[k] != ':') || !secretName(name) {
			if quoted {
				i++ // the quoted text may hold pairs of its own
			} else {
				i = next
			}
			continue
		}
		v := skipBlanks(s, k+1)
		end := valueEnd(s, v)
		if end > v && !isQuote(s[v]) && isAuthScheme(s[v:end]) {
			if w := skipBlanks(s, end); w > end && w < len(s) {
				end = valueEnd(s, w)
			}
		}
		val := s[v:end]
		if val == "" || strings.Trim(val, `"'`) == Mark {
			i = max(end, next)
			continue
		}
		r.learn(strings.Trim(val, `"'`))
		out = append(out, s[done:v]...)
		if isQuote(s[v]) {
			out = append(out, '"')
			out = append(out, Mark...)
			out = append(out, '"')
		} else {
			out = append(out, Mark...)
		}
		done, i = end, end
	}
	if out == nil {
		return s
	}
	return string(append(out, s[done:]...))
}

func isAuthScheme(w string) bool {
	for _, s := range authSchemes {
		if strings.EqualFold(w, s) {
			return true
		}
	}
	return false
}

func isQuote(c byte) bool { return c == '"' || c == '\'' }

func isNameByte(c byte) bool { return isWordByte(c) || c == '-' || c == '.' }

func skipBlanks(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// closeQuote returns the index of the quote that closes the one at s[i],
// past backslash escapes, or -1.
func closeQuote(s string, i int) int {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case q:
			return j
		}
	}
	return -1
}

// unquote returns the text of a quoted name, its JSON escapes decoded.
func unquote(lit string) string {
	if lit[0] == '"' {
		var v string
		if json.Unmarshal([]byte(lit), &v) == nil {
			return v
		}
	}
	return unescape(lit[1 : len(lit)-1])
}

// valueEnd returns where the value that starts at s[v] ends.
func valueEnd(s string, v int) int {
	if v >= len(s) {
		return v
	}
	switch s[v] {
	case '"', '\'':
		if j := closeQuote(s, v); j >= 0 {
			return j + 1
		}
		return len(s)
	case '{', '[':
		return closeBracket(s, v)
	}
	j := v
	for j < len(s) && !strings.ContainsRune(" \t\r\n&,;\"'<>)}]", rune(s[j])) {
		j++
	}
	return j
}

// closeBracket returns the index after the bracket that closes the one at
// s[i], past quoted strings, or len(s).
func closeBracket(s string, i int) int {
	depth := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return j + 1
			}
		case '"', '\'':
			k := closeQuote(s, j)
			if k < 0 {
				return len(s)
			}
			j = k
		}
	}
	return len(s)
}

// knownWords replaces every word of s (a run without spaces, and the parts
// of it between quotes and separators) that the known check knows.
func (r *Redactor) knownWords(s string) string {
	if r.known == nil || len(s) < MinKnownLength {
		return s
	}
	var out []byte
	done := 0
	for i := 0; i < len(s); {
		if isSpace(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && !isSpace(s[j]) {
			j++
		}
		if a, b, ok := r.knownIn(s, i, j); ok {
			out = append(out, s[done:a]...)
			out = append(out, Mark...)
			done = b
		}
		i = j
	}
	if out == nil {
		return s
	}
	return string(append(out, s[done:]...))
}

// knownIn looks for a known token in s[i:j], a word: the word trimmed of
// quotes and brackets, else its longest parts between separators.
func (r *Redactor) knownIn(s string, i, j int) (int, int, bool) {
	if j-i < MinKnownLength {
		return 0, 0, false
	}
	const trim = "\"'`,;()[]{}<>"
	a, b := i, j
	for a < b && strings.IndexByte(trim, s[a]) >= 0 {
		a++
	}
	for b > a && strings.IndexByte(trim, s[b-1]) >= 0 {
		b--
	}
	if r.isKnown(s[a:b]) {
		return a, b, true
	}
	const seps = "\"'`,;()[]{}<>=&:"
	for p := a; p < b; {
		q := p
		for q < b && strings.IndexByte(seps, s[q]) < 0 {
			q++
		}
		if q-p >= MinKnownLength && (p != a || q != b) && r.isKnown(s[p:q]) {
			return p, q, true
		}
		p = q + 1
	}
	return 0, 0, false
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
