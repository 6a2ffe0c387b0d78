// Package console holds the operator console: a page, a style sheet and a
// script that drive the marketplace through its documented HTTP API alone,
// embedded in the binary so that the server needs no files and the browser
// no network beyond the server itself. httpapi serves them at /console.
//
// The files live in a package of their own, not in httpapi, so that the
// assets sit in one directory that a reader can open in a browser's view of
// the source, and so that an embedder who mounts the API elsewhere can serve
// the same files (FS) under its own prefix.
package console

import "embed"

// FS holds index.html, console.css and console.js.
//
//go:embed index.html console.css console.js
var FS embed.FS
