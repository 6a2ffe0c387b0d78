package httpapi

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// corsExposedHeaders are the answer headers a browser app may read beside
// the simple ones: the stock version and the catalog list's total.
const corsExposedHeaders = "X-Version, X-Total-Count"

// corsDefaultHeaders are allowed on a preflight that names none.
const corsDefaultHeaders = "Authorization, Content-Type, X-Version"

// corsMaxAge is how long, in seconds, a browser may keep a preflight's answer.
const corsMaxAge = "600"

// CheckCORSOrigin checks one allowed origin of Config.CORSOrigins: "*" (any
// origin) or scheme://host[:port] with no path, as a browser sends it in
// the Origin header.
func CheckCORSOrigin(origin string) error {
	if origin == "*" {
		return nil
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil || strings.HasSuffix(origin, "/") {
		return fmt.Errorf("invalid CORS origin %q: want * or scheme://host[:port], such as https://app.example.com", origin)
	}
	return nil
}

// corsPolicy is the set of origins whose browser apps may call the API.
type corsPolicy struct {
	any     bool
	origins map[string]bool
}

// newCORSPolicy returns the policy of origins; nil (CORS off) when there
// are none.
func newCORSPolicy(origins []string) *corsPolicy {
	if len(origins) == 0 {
		return nil
	}
	c := &corsPolicy{origins: map[string]bool{}}
	for _, o := range origins {
		if o == "*" {
			c.any = true
		}
		// Scheme and host are case-insensitive; browsers send them lowercase.
		c.origins[strings.ToLower(o)] = true
	}
	return c
}

// allowOrigin returns the Access-Control-Allow-Origin value for origin, or
// "" when the origin may not call.
func (c *corsPolicy) allowOrigin(origin string) string {
	switch {
	case c == nil || origin == "":
		return ""
	case c.any:
		return "*"
	case c.origins[strings.ToLower(origin)]:
		return origin
	}
	return ""
}

// withCORS adds the CORS headers to every answer to an allowed origin.
// Tokens travel in the Authorization header, never in cookies, so no
// credentials are allowed.
func (s *Server) withCORS(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		if !s.cors.any {
			h.Add("Vary", "Origin")
		}
		if allow := s.cors.allowOrigin(r.Header.Get("Origin")); allow != "" {
			h.Set("Access-Control-Allow-Origin", allow)
			h.Set("Access-Control-Expose-Headers", corsExposedHeaders)
		}
		next.ServeHTTP(w, r)
	})
}

// isPreflight reports whether r is a CORS preflight from an allowed origin.
func (s *Server) isPreflight(r *http.Request) bool {
	return r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" &&
		s.cors.allowOrigin(r.Header.Get("Origin")) != ""
}

// writePreflight answers a preflight with the path's methods (the router's
// Allow header) and the asked headers.
func writePreflight(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Access-Control-Allow-Methods", h.Get("Allow"))
	headers := r.Header.Get("Access-Control-Request-Headers")
	if headers == "" {
		headers = corsDefaultHeaders
	}
	h.Set("Access-Control-Allow-Headers", headers)
	h.Set("Access-Control-Max-Age", corsMaxAge)
	h.Add("Vary", "Access-Control-Request-Method")
	h.Add("Vary", "Access-Control-Request-Headers")
	h.Del("Access-Control-Expose-Headers") // for actual answers only
	w.WriteHeader(http.StatusNoContent)
}
