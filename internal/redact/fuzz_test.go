package redact_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/marketplace/marketplace/internal/redact"
)

// planted is a credential as a request writes it (put) and the part of it
// that must never be kept (hidden).
type planted struct{ put, hidden string }

// fixtureTokens are tokens a fixture chose, of no shape the engine issues:
// only the known check finds them.
var fixtureTokens = []string{"fixture.Token~of_any:shape!42", "plainfixturetokenwithnoprefix", "12345678901234567890"}

var plantedSecrets = func() []planted {
	hex64 := strings.Repeat("9f8e7d6c5b4a3210", 4)
	basic := base64.StdEncoding.EncodeToString([]byte("1000001:" + hex64))
	jwt := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMDAwMDAxIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	ps := []planted{
		{"APP_USR-a985b719e0f568269e0e12d0b29f76e7", ""},          // operator-issued access token
		{"APP_USR-1000001-030415-239415bc3f218abf-100000001", ""}, // OAuth access token
		{"TG-239415bc3f218abfb3f4b4f0060b266a-100000001", ""},     // refresh token, code
		{hex64, ""},    // client secret, notification secret
		{operator, ""}, // the operator token
		{jwt, ""},      // a JSON Web Token
		{"Basic " + basic, basic},
		{"Bearer opaque.credential_value-77", "opaque.credential_value-77"},
	}
	for _, tok := range fixtureTokens {
		ps = append(ps, planted{tok, ""})
	}
	for i := range ps {
		if ps[i].hidden == "" {
			ps[i].hidden = ps[i].put
		}
	}
	return ps
}()

var plantedNames = []string{"note", "password", "passwd", "pwd", "secret", "client_secret", "token", "access_token",
	"refresh_token", "api_key", "apikey", "private_key", "credentials", "auth", "authorization", "code",
	"code_verifier", "X-Api-Key", "Password"}

func escapedJSON(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		fmt.Fprintf(&b, `\u%04x`, r)
	}
	b.WriteByte('"')
	return b.String()
}

func quoted(s string) string { b, _ := json.Marshal(s); return string(b) }

// plantedEncodings write a body with value under name, and other and more
// (anything) around it.
var plantedEncodings = []struct {
	contentType string
	write       func(name, value, other, more string) string
}{
	{"application/json", func(n, v, o, m string) string {
		return fmt.Sprintf(`{"a":%s,%s:%s,"b":[%s]}`, quoted(o), quoted(n), quoted(v), quoted(m))
	}},
	{"application/json", func(n, v, o, m string) string {
		return fmt.Sprintf(`{"a":%s,%s:%s,"b":{"c":%s}}`, quoted(o), escapedJSON(n), escapedJSON(v), quoted(m))
	}},
	{"application/json", func(n, v, o, m string) string {
		return fmt.Sprintf(`{"a":%s,"x":[{%s:%s}],"b":%s,}`, quoted(o), quoted(n), quoted(v), quoted(m))
	}},
	{"application/x-www-form-urlencoded", func(n, v, o, m string) string {
		return url.Values{"a": {o}, n: {v}, "b": {m}}.Encode()
	}},
	{"text/plain", func(n, v, o, m string) string { return url.Values{"a": {o}, n: {v}, "b": {m}}.Encode() }},
	{"", func(n, v, o, m string) string { return o + "\n" + n + ": " + v + "\n" + m }},
	{"multipart/form-data; boundary=XyZ", func(n, v, o, m string) string {
		return "--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n" + o + "\r\n" +
			"--XyZ\r\nContent-Disposition: form-data; name=\"" + n + "\"\r\n\r\n" + v + "\r\n--XyZ--\r\n"
	}},
}

// shows reports whether kept, as it is or decoded (URL, JSON escapes, the
// strings of a JSON document), holds hidden.
func shows(kept, hidden string) bool {
	forms := []string{kept}
	if u, err := url.QueryUnescape(kept); err == nil {
		forms = append(forms, u)
	}
	if u, err := url.PathUnescape(kept); err == nil {
		forms = append(forms, u)
	}
	if u, err := strconv.Unquote(`"` + strings.ReplaceAll(kept, `"`, `\"`) + `"`); err == nil {
		forms = append(forms, u)
	}
	var doc any
	if json.Unmarshal([]byte(kept), &doc) == nil {
		b, _ := json.Marshal(doc)
		forms = append(forms, string(b))
		var walk func(any)
		walk = func(v any) {
			switch x := v.(type) {
			case string:
				forms = append(forms, x)
			case map[string]any:
				for k, e := range x {
					forms = append(forms, k)
					walk(e)
				}
			case []any:
				for _, e := range x {
					walk(e)
				}
			}
		}
		walk(doc)
	}
	for _, f := range forms {
		if strings.Contains(f, hidden) {
			return true
		}
	}
	return false
}

// FuzzBody_NeverKeepsAPlantedSecret plants a credential of every shape the
// engine issues or accepts under every common secret name and in every
// body encoding, beside text of the fuzzer's choice: what the redactor
// keeps never shows it, decoded or not.
func FuzzBody_NeverKeepsAPlantedSecret(f *testing.F) {
	for s := range plantedSecrets {
		for n := range plantedNames {
			for e := range plantedEncodings {
				f.Add(uint8(s), uint8(n), uint8(e), "ordinary text", "more")
			}
		}
	}
	f.Add(uint8(0), uint8(0), uint8(0), `"password": "`, `\u0041%41&#65;`)
	f.Add(uint8(3), uint8(1), uint8(5), "--XyZ", "Content-Disposition: x")
	f.Fuzz(func(t *testing.T, s, n, e uint8, other, more string) {
		p := plantedSecrets[int(s)%len(plantedSecrets)]
		name := plantedNames[int(n)%len(plantedNames)]
		enc := plantedEncodings[int(e)%len(plantedEncodings)]
		if strings.Contains(other+more, p.hidden) {
			t.Skip()
		}
		known := func(w string) bool {
			for _, tok := range fixtureTokens {
				if w == tok {
					return true
				}
			}
			return false
		}
		body := enc.write(name, p.put, other, more)
		kept := redact.New(operator).For(context.Background(), checkOf(known), nil, "").Body(enc.contentType, []byte(body))
		if shows(kept, p.hidden) {
			t.Fatalf("Body(%q, %q) = %q keeps %q", enc.contentType, body, kept, p.hidden)
		}
	})
}
