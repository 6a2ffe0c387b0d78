package httpapi

import (
	"bytes"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/marketplace/marketplace/httpapi/console"
)

// consoleModTime is when the embedded files count as modified: embed keeps
// no times, and the binary's start is as good as any for revalidation.
var consoleModTime = time.Now()

// consoleCSP lets the page load and call nothing but its own server: no
// external network, no inline script.
const consoleCSP = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

// serveConsole answers GET /console, /console/ (the page) and
// /console/<asset>; an unknown asset gets the API's 404 body.
func (s *Server) serveConsole(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	name := path.Clean("/" + p.ByName("asset"))[1:]
	if name == "" {
		name = "index.html"
	}
	b, err := fs.ReadFile(console.FS, name)
	if err != nil {
		s.writeError(w, r, &httpError{status: http.StatusNotFound, code: "not_found",
			message: fmt.Sprintf("Resource %s %s not found", r.Method, r.URL.Path)})
		return
	}
	h := w.Header()
	h.Set("Content-Type", mime.TypeByExtension(path.Ext(name)))
	h.Set("Content-Security-Policy", consoleCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, name, consoleModTime, bytes.NewReader(b))
}

// serveFavicon answers GET /favicon.ico with 204: no icon, no error in
// the browser's console, and nothing in the journal or the request metrics.
func serveFavicon(w http.ResponseWriter, _ *http.Request, _ httprouter.Params) {
	w.Header().Set("Cache-Control", "max-age=86400")
	w.WriteHeader(http.StatusNoContent)
}
