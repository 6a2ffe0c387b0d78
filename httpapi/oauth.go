package httpapi

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"html/template"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/oauth"
)

// handlePostUser answers POST /users/test_user; any other POST
// /users/:user_id is no route.
func (s *Server) handlePostUser(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	if p.ByName("user_id") != "test_user" {
		return &httpError{status: http.StatusNotFound, code: "not_found",
			message: "Resource " + r.Method + " " + r.URL.Path + " not found"}
	}
	var in struct {
		SiteID string `json:"site_id"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	u, err := s.m.Accounts.CreateTestUser(r.Context(), caller, in.SiteID)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusCreated, u)
	return nil
}

// handleRotateClientSecret answers POST
// /operator/applications/:app_id/secret: the application with its new
// client secret, shown this once.
func (s *Server) handleRotateClientSecret(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	id, err := int64Param(p, "app_id")
	if err != nil {
		return err
	}
	app, err := s.m.Notify.RotateClientSecret(r.Context(), id)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, app)
	return nil
}

// handleOperatorAuthorize answers POST /operator/authorizations: the code
// a person's grant on the authorization page would give.
func (s *Server) handleOperatorAuthorize(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var in oauth.OperatorGrant
	if err := decode(r, &in); err != nil {
		return err
	}
	code, err := s.m.OAuth.Authorize(r.Context(), in)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusCreated, map[string]string{"code": code})
	return nil
}

// handleToken answers POST /oauth/token. The parameters come from a form
// body, a JSON body or the query string (older SDKs send them there), the
// body winning; the client may also authenticate with HTTP Basic (RFC 6749
// 2.3.1).
func (s *Server) handleToken(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	// RFC 6749 5.1: token answers, errors too, are never cached.
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	params, err := tokenParams(r)
	if err != nil {
		return err
	}
	req := oauth.TokenRequest{
		GrantType: params("grant_type"), ClientID: params("client_id"), ClientSecret: params("client_secret"),
		Code: params("code"), RedirectURI: params("redirect_uri"), CodeVerifier: params("code_verifier"),
		RefreshToken: params("refresh_token"),
	}
	if id, secret, ok := r.BasicAuth(); ok && req.ClientID == "" && req.ClientSecret == "" {
		// Basic credentials are form-encoded first (RFC 6749 2.3.1).
		req.ClientID, _ = url.QueryUnescape(id)
		req.ClientSecret, _ = url.QueryUnescape(secret)
	}
	pair, err := s.m.OAuth.Token(r.Context(), req)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, pair)
	return nil
}

// tokenParams reads the token request's parameters and returns a lookup
// of one by name. Errors: invalid_request for a body that cannot be read.
func tokenParams(r *http.Request) (func(string) string, error) {
	query := r.URL.Query()
	b, err := readBody(r)
	if err != nil {
		if e := errs.As(err); e != nil {
			return nil, accounts.ErrInvalidRequest(e.Message)
		}
		return nil, err
	}
	body := map[string]string{}
	if len(bytes.TrimSpace(b)) > 0 {
		mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if mt == "application/json" {
			var raw map[string]any
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.UseNumber()
			// null decodes into a nil map without an error.
			if err := dec.Decode(&raw); err != nil || dec.More() || raw == nil {
				return nil, accounts.ErrInvalidRequest("Malformed JSON body: a JSON object of parameters is expected")
			}
			for k, v := range raw {
				switch v := v.(type) {
				case string:
					body[k] = v
				case json.Number:
					body[k] = v.String()
				case nil:
				default:
					return nil, accounts.ErrInvalidRequest("Invalid parameter [" + truncateText(k, 50) + "]: a string is expected")
				}
			}
		} else {
			form, err := url.ParseQuery(string(b))
			if err != nil {
				return nil, accounts.ErrInvalidRequest("Malformed form body")
			}
			for k, v := range form {
				body[k] = v[0]
			}
		}
	}
	return func(name string) string {
		if v, ok := body[name]; ok {
			return v
		}
		return query.Get(name)
	}, nil
}

func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// authorizationParams reads the authorization request from a query or a
// submitted form.
func authorizationParams(v url.Values) oauth.AuthorizationRequest {
	return oauth.AuthorizationRequest{
		ResponseType: v.Get("response_type"), ClientID: v.Get("client_id"), RedirectURI: v.Get("redirect_uri"),
		State: v.Get("state"), CodeChallenge: v.Get("code_challenge"), CodeChallengeMethod: v.Get("code_challenge_method"),
	}
}

// handleAuthorizationPage answers GET /authorization: the sign-in and
// grant page, an error page for an unknown client or redirect URI, or a
// redirect with the error for any other fault of the request.
func (s *Server) handleAuthorizationPage(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	req := authorizationParams(r.URL.Query())
	client, err := s.m.OAuth.Check(r.Context(), req)
	if err != nil {
		s.authorizationFailed(w, r, err)
		return nil
	}
	s.writePage(w, http.StatusOK, pageData{Client: client, Req: req, Operator: s.cfg.OperatorToken != ""})
	return nil
}

// handleAuthorizationSubmit answers POST /authorization, the page's form:
// deny, or sign in (a test user's nickname and password, or the operator
// token and a user id) and grant; either way a 302 to the redirect URI.
func (s *Server) handleAuthorizationSubmit(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
	if err := r.ParseForm(); err != nil {
		s.writePage(w, http.StatusBadRequest, pageData{Error: "The form could not be read"})
		return nil
	}
	form := r.PostForm
	req := authorizationParams(form)
	client, err := s.m.OAuth.Check(r.Context(), req)
	if err != nil {
		s.authorizationFailed(w, r, err)
		return nil
	}
	if form.Get("action") == "deny" {
		to, err := s.m.OAuth.Deny(r.Context(), req)
		if err != nil {
			s.authorizationFailed(w, r, err)
			return nil
		}
		redirect(w, to)
		return nil
	}
	user, err := s.signIn(r, form)
	if err != nil {
		page := pageData{Client: client, Req: req, Operator: s.cfg.OperatorToken != "", Nickname: form.Get("nickname")}
		status := http.StatusInternalServerError
		page.Error = "The sign-in failed; try again"
		if e := errs.As(err); e != nil && e.Kind != errs.Internal {
			status, page.Error = statusByKind[e.Kind], e.Message
		} else {
			s.logger.Error("sign in", "err", err)
		}
		s.writePage(w, status, page)
		return nil
	}
	to, err := s.m.OAuth.Grant(r.Context(), req, user)
	if err != nil {
		s.authorizationFailed(w, r, err)
		return nil
	}
	redirect(w, to)
	return nil
}

// signIn returns the user the form signs in. Errors: Unauthorized.
func (s *Server) signIn(r *http.Request, form url.Values) (int64, error) {
	if tok := form.Get("operator_token"); tok != "" {
		if s.cfg.OperatorToken == "" || subtle.ConstantTimeCompare([]byte(tok), []byte(s.cfg.OperatorToken)) != 1 {
			return 0, errs.Unauthorizedf("Invalid operator token")
		}
		id, ok := positive(strings.TrimSpace(form.Get("user_id")))
		if !ok {
			return 0, errs.Invalidf("Invalid user_id: it must be a positive integer")
		}
		if _, err := s.m.Accounts.User(r.Context(), id); err != nil {
			return 0, err
		}
		return id, nil
	}
	return s.m.Accounts.SignIn(r.Context(), strings.TrimSpace(form.Get("nickname")), form.Get("password"))
}

// authorizationFailed answers a failed authorization request: a redirect
// for the errors that go back to the client, an error page otherwise.
func (s *Server) authorizationFailed(w http.ResponseWriter, r *http.Request, err error) {
	var re *oauth.RedirectError
	if errors.As(err, &re) {
		redirect(w, re.URL)
		return
	}
	status, msg := http.StatusInternalServerError, "Internal server error"
	if e := errs.As(err); e != nil && e.Kind != errs.Internal {
		status, msg = statusByKind[e.Kind], e.Message
	} else {
		s.logger.Error("authorization", "method", r.Method, "path", s.redact.Path(r.URL.Path), "err", s.redact.Text(err.Error()))
	}
	s.writePage(w, status, pageData{Error: msg, Fatal: true})
}

func redirect(w http.ResponseWriter, to string) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Location", to)
	w.WriteHeader(http.StatusFound)
}

// pageData is what the authorization page shows.
type pageData struct {
	Client   oauth.Client
	Req      oauth.AuthorizationRequest
	Operator bool
	Nickname string
	Error    string
	// Fatal is an error of the request itself: no form is shown.
	Fatal bool
}

// writePage answers the authorization page. It loads nothing from
// elsewhere: the policy forbids scripts and every other origin.
func (s *Server) writePage(w http.ResponseWriter, status int, d pageData) {
	var buf bytes.Buffer
	if err := authorizationPage.Execute(&buf, d); err != nil {
		s.logger.Error("authorization page", "err", err)
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString("Internal server error\n")
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

var authorizationPage = template.Must(template.New("authorization").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{if .Fatal}}Authorization error{{else}}Authorize {{.Client.Name}}{{end}}</title>
<style>
body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#222}
fieldset{border:1px solid #ccc;border-radius:6px;margin:1rem 0;padding:1rem}
label{display:block;margin:.5rem 0 .2rem}
input[type=text],input[type=password]{width:100%;box-sizing:border-box;padding:.4rem}
button{margin-top:.8rem;padding:.4rem 1rem}
.error{color:#a00;border:1px solid #a00;border-radius:6px;padding:.6rem}
</style>
</head>
<body>
{{if .Fatal}}
<h1>Authorization error</h1>
<p class="error" id="error">{{.Error}}</p>
{{else}}
<h1>Authorize {{.Client.Name}}</h1>
<p>The application <strong>{{.Client.Name}}</strong> (client {{.Client.ID}}) asks to act on your behalf: read and write (offline_access read write).</p>
{{if .Error}}<p class="error" id="error">{{.Error}}</p>{{end}}
<form method="post" action="/authorization" id="signin">
{{template "hidden" .Req}}
<fieldset>
<legend>Sign in as a test user</legend>
<label for="nickname">Nickname</label>
<input type="text" id="nickname" name="nickname" value="{{.Nickname}}" autocomplete="username">
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password">
</fieldset>
{{if .Operator}}
<fieldset>
<legend>Or, as the operator, pick a user</legend>
<label for="operator_token">Operator token</label>
<input type="password" id="operator_token" name="operator_token" autocomplete="off">
<label for="user_id">User id</label>
<input type="text" id="user_id" name="user_id" inputmode="numeric">
</fieldset>
{{end}}
<button type="submit" id="allow" name="action" value="allow">Allow</button>
<button type="submit" id="deny" name="action" value="deny">Deny</button>
</form>
{{end}}
</body>
</html>
{{define "hidden"}}<input type="hidden" name="response_type" value="{{.ResponseType}}">
<input type="hidden" name="client_id" value="{{.ClientID}}">
<input type="hidden" name="redirect_uri" value="{{.RedirectURI}}">
<input type="hidden" name="state" value="{{.State}}">
<input type="hidden" name="code_challenge" value="{{.CodeChallenge}}">
<input type="hidden" name="code_challenge_method" value="{{.CodeChallengeMethod}}">{{end}}
`))
