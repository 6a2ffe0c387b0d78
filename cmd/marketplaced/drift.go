package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/marketplace/marketplace/drift"
)

const driftUsage = `usage: marketplaced drift [-json] PATH...

Reads recorded exchanges of the real API (stub mappings in WireMock's format,
one per file or {"mappings": [...]}, as -record and WireMock write them, and
HAR 1.2 files, as browsers and proxies export them; a folder is read whole)
and reports, route by route, where the engine differs from them: a status it
never answers, a body that breaks the answer's schema, fields it never sends,
another error code or message. Routes it does not emulate are listed as
candidates for stubs. Offline: it reads files only.

Exit status: 0 when nothing differs, 1 when something does, 2 when a path
or a file could not be read.

Flags:
`

// runDrift implements `marketplaced drift [-json] PATH...`: the drift
// report of recorded exchanges against the engine's OpenAPI document
// (package drift, docs/recording.md). Its error is a usageError (exit 2)
// when a path or a file could not be read, and a plain one (exit 1) when
// an exchange differs; the report is written either way.
func runDrift(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("drift", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "write the report as JSON instead of the summary")
	fs.Usage = func() {
		fmt.Fprint(stderr, driftUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err}
	}
	if fs.NArg() == 0 {
		return usagef("usage: marketplaced drift [-json] PATH...")
	}
	c, err := drift.Engine()
	if err != nil {
		return err
	}
	t := drift.NewTally(c)
	t.Read(fs.Args()...)
	r := t.Report()
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		err = enc.Encode(r)
	} else {
		err = r.WriteText(stdout)
	}
	if err != nil {
		return fmt.Errorf("drift: %w", err)
	}
	if n := len(r.Unread) + r.MoreUnread; n > 0 {
		return usagef("drift: %d of the files could not be read", n)
	}
	if r.Drifted() {
		return fmt.Errorf("drift: %d of %d exchanges on emulated routes differ from the engine", r.Differing, r.Emulated)
	}
	return nil
}
