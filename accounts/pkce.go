package accounts

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
)

// CheckChallenge checks a PKCE challenge (RFC 7636 4.2: 43 to 128
// unreserved characters) and returns its method, plain when none is given
// (RFC 7636 4.3). No challenge at all is allowed: the client then sends no
// verifier.
func CheckChallenge(challenge, method string) (string, error) {
	if challenge == "" {
		if method != "" {
			return "", ErrInvalidRequest("The parameter [code_challenge] is required when [code_challenge_method] is sent")
		}
		return "", nil
	}
	if !pkceString(challenge) {
		return "", ErrInvalidRequest("Invalid code_challenge: it must be 43 to 128 characters of A-Z, a-z, 0-9, '-', '.', '_', '~'")
	}
	switch method {
	case "":
		return MethodPlain, nil
	case MethodS256, MethodPlain:
		return method, nil
	}
	return "", ErrInvalidRequest("Invalid code_challenge_method: " + method + ". Valid values are: S256, plain")
}

// pkceString reports whether v is a valid code verifier or challenge.
func pkceString(v string) bool {
	if len(v) < 43 || len(v) > 128 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	return true
}

// verifies reports whether verifier answers the challenge of rec.
func (rec codeRecord) verifies(verifier string) bool {
	if rec.CodeChallenge == "" {
		// A verifier for a code issued without a challenge is refused:
		// accepting it would let a downgrade pass for PKCE (RFC 9700 2.1.1).
		return verifier == ""
	}
	if !pkceString(verifier) {
		return false
	}
	want := verifier
	if rec.CodeChallengeMethod == MethodS256 {
		sum := sha256.Sum256([]byte(verifier))
		want = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	return subtle.ConstantTimeCompare([]byte(want), []byte(rec.CodeChallenge)) == 1
}
