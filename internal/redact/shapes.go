package redact

import (
	"encoding/base64"
	"strings"
)

// prefixes start the tokens and codes the engine issues.
var prefixes = []string{"APP_USR-", "TG-", "OPERATOR-"}

// minHexSecret is the shortest run of hexadecimal digits taken for a
// secret: the client secrets and the notification secrets are 64 digits
// (256 bits); shorter runs are ids and hashes a test may want to see
// (a UUID without its dashes is 32).
const minHexSecret = 64

// shapes replaces every word of s shaped like a credential by Mark. A text
// with none is returned as it is, without an allocation.
func shapes(s string) string {
	var b []byte
	done := 0 // s[:done] is in b
	for i := 0; i < len(s); {
		if i > 0 && isWordByte(s[i-1]) {
			i++
			continue
		}
		start, end := shapeAt(s, i)
		if end == 0 {
			i++
			continue
		}
		if b == nil {
			b = make([]byte, 0, len(s))
		}
		b = append(b, s[done:start]...)
		b = append(b, Mark...)
		done, i = end, end
	}
	if b == nil {
		return s
	}
	return string(append(b, s[done:]...))
}

// shapeAt returns where the credential that the word at s[i] starts or
// introduces begins and ends, or end 0 when there is none.
func shapeAt(s string, i int) (start, end int) {
	if n := tokenAt(s, i); n > 0 {
		return i, i + n
	}
	if n := jwtAt(s, i); n > 0 {
		return i, i + n
	}
	if n := hexAt(s, i); n > 0 {
		return i, i + n
	}
	return schemeAt(s, i)
}

// tokenAt returns the length of the token that starts at s[i], or 0: a
// prefix in any case and at least one token character after it.
func tokenAt(s string, i int) int {
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

// jwtAt returns the length of the JSON Web Token that starts at s[i], or
// 0: "eyJ" (the base64 of `{"`), its header, a dot, its payload, and its
// signature after a second dot when there is one.
func jwtAt(s string, i int) int {
	if !strings.HasPrefix(s[i:], "eyJ") {
		return 0
	}
	j := i + 3
	for j < len(s) && isBase64URLByte(s[j]) {
		j++
	}
	if j-i < 8 || j+1 >= len(s) || s[j] != '.' || !isBase64URLByte(s[j+1]) {
		return 0
	}
	j++
	for j < len(s) && (isBase64URLByte(s[j]) || s[j] == '.') {
		j++
	}
	return j - i
}

// hexAt returns the length of the run of at least minHexSecret hexadecimal
// digits that is the word at s[i], or 0.
func hexAt(s string, i int) int {
	j := i
	for j < len(s) && isHexByte(s[j]) {
		j++
	}
	if j-i < minHexSecret || (j < len(s) && isWordByte(s[j])) {
		return 0
	}
	return j - i
}

// schemeAt returns where the credential after "Bearer " or "Basic " at
// s[i] begins and ends, or end 0: any word of at least MinSecretLength
// characters after Bearer; after Basic, base64 that decodes to a
// user:password pair (so that "basic questions" is kept).
func schemeAt(s string, i int) (start, end int) {
	var basic bool
	switch {
	case len(s)-i > 7 && strings.EqualFold(s[i:i+6], "bearer"):
		i += 6
	case len(s)-i > 6 && strings.EqualFold(s[i:i+5], "basic"):
		i += 5
		basic = true
	default:
		return 0, 0
	}
	if s[i] != ' ' && s[i] != '\t' {
		return 0, 0
	}
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	j := i
	for j < len(s) && !isCredentialEnd(s[j]) {
		j++
	}
	if j-i < MinSecretLength {
		return 0, 0
	}
	if basic {
		d, err := base64.StdEncoding.DecodeString(s[i:j])
		if err != nil {
			d, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(s[i:j], "="))
		}
		if err != nil || !strings.Contains(string(d), ":") {
			return 0, 0
		}
	}
	return i, j
}

func isCredentialEnd(c byte) bool {
	return c <= ' ' || c == '"' || c == '\'' || c == ',' || c == ';' || c == '&' || c == '<' || c == '>' || c == '\\'
}

func isWordByte(c byte) bool {
	return c == '_' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

func isTokenByte(c byte) bool { return isWordByte(c) || c == '-' }

func isBase64URLByte(c byte) bool { return isWordByte(c) || c == '-' }

func isHexByte(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}
