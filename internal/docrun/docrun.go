// Package docrun reads the shell walk-throughs of the project's Markdown
// documents, so that a test can run them as written against a fresh server
// and fail when a document drifts from the server.
//
// Every shell block (a fence of sh, bash, shell or console) carries a
// marker on the line before its fence (blank lines between are allowed):
//
//	<!-- runnable -->                  run the block with bash
//	<!-- runnable: server -->          each marketplaced command of the block starts a server
//	<!-- runnable: server, postgres --> the same, with a throwaway PostgreSQL (PGHOST, PGPORT, PGUSER)
//	<!-- not runnable: why -->         never run (a go install, a browser step, a benchmark)
//
// A block of any language after <!-- file: PATH --> is written to PATH, in
// the folder the walk-through runs in, before its first block runs (the
// fixtures file a command loads, for instance).
//
// A shell block without a marker is an error: each is a deliberate choice.
// In a runnable block, a comment line "# => text" checks the output of the
// commands since the previous check (or the block's start): it must end with
// text, in which "..." (or "…") stands for any run of characters (",...,"
// for none or more fields between two commas). A check
// goes on over the next comment lines that start with "#" and four spaces;
// they are joined with the leading spaces taken off. docs/architecture.md
// ("Docs that run") is the contributors' guide.
package docrun

import (
	"bufio"
	"fmt"
	"regexp"
	"strings"
)

// Kind is what a block's marker says to do with it.
type Kind uint8

// The kinds of block.
const (
	// NotRunnable blocks are never run.
	NotRunnable Kind = iota
	// Script blocks run with bash, in the document's shell state.
	Script
	// Server blocks start the servers they name, in the background.
	Server
	// File blocks are written to Path before the walk-through runs.
	File
)

// Block is one shell block of a document.
type Block struct {
	Line     int    // the line of its opening fence, from 1
	Kind     Kind   // what the marker says
	Postgres bool   // the block needs a PostgreSQL server
	Reason   string // why a block is not runnable
	Path     string // where a File block is written
	Text     string // the block's lines, each ending with a newline
}

// Check is an expected output in a Script block.
type Check struct {
	Line int    // the line of the "# =>" comment in the document
	Want string // the expected text, "..." standing for any text
}

var (
	fence  = regexp.MustCompile("^(```+|~~~+)\\s*([A-Za-z0-9_+-]*)")
	marker = regexp.MustCompile(`^<!--\s*(runnable|not runnable|file)\s*(?::\s*(.*?))?\s*-->\s*$`)
)

var shells = map[string]bool{"sh": true, "bash": true, "shell": true, "console": true}

// Parse returns the shell blocks of a Markdown document; it fails on a
// shell block without a marker, on a marker that no shell block follows
// and on a marker it does not know.
func Parse(doc string) ([]Block, error) {
	var (
		blocks  []Block
		pending *Block // the marker waiting for its block
		pendAt  int
		in      string // the open fence, "" outside blocks
		cur     *Block
		text    strings.Builder
	)
	sc := bufio.NewScanner(strings.NewReader(doc))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if in != "" {
			if strings.HasPrefix(strings.TrimSpace(line), in) && strings.Trim(strings.TrimSpace(line), in[:1]) == "" {
				if cur != nil {
					cur.Text = text.String()
					blocks = append(blocks, *cur)
					cur = nil
				}
				in = ""
				continue
			}
			if cur != nil {
				text.WriteString(line)
				text.WriteByte('\n')
			}
			continue
		}
		if m := marker.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			if pending != nil {
				return nil, fmt.Errorf("line %d: a marker with no shell block after it", pendAt)
			}
			b, err := parseMarker(m[1], m[2])
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", n, err)
			}
			pending, pendAt = &b, n
			continue
		}
		if m := fence.FindStringSubmatch(strings.TrimLeft(line, " ")); m != nil {
			in = m[1]
			if pending != nil && pending.Kind == File {
				cur, pending = pending, nil
				cur.Line = n
				text.Reset()
				continue
			}
			if !shells[m[2]] {
				if pending != nil {
					return nil, fmt.Errorf("line %d: the marker of line %d is before a %q block, not a shell block", n, pendAt, m[2])
				}
				continue
			}
			if pending == nil {
				return nil, fmt.Errorf("line %d: a %s block without a marker (<!-- runnable --> or <!-- not runnable: why -->)", n, m[2])
			}
			cur, pending = pending, nil
			cur.Line = n
			text.Reset()
			continue
		}
		if pending != nil && strings.TrimSpace(line) != "" {
			return nil, fmt.Errorf("line %d: a marker with no shell block after it", pendAt)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if in != "" {
		return nil, fmt.Errorf("a block not closed at the end of the document")
	}
	if pending != nil {
		return nil, fmt.Errorf("line %d: a marker with no shell block after it", pendAt)
	}
	return blocks, nil
}

func parseMarker(what, args string) (Block, error) {
	if what == "file" {
		if args == "" || strings.HasPrefix(args, "/") || strings.Contains(args, "..") {
			return Block{}, fmt.Errorf("a file marker names a relative path: <!-- file: testdata/shop.json -->")
		}
		return Block{Kind: File, Path: args}, nil
	}
	if what == "not runnable" {
		if args == "" {
			return Block{}, fmt.Errorf("a not runnable marker says why: <!-- not runnable: why -->")
		}
		return Block{Kind: NotRunnable, Reason: args}, nil
	}
	b := Block{Kind: Script}
	for _, a := range strings.Split(args, ",") {
		switch strings.TrimSpace(a) {
		case "":
		case "server":
			b.Kind = Server
		case "postgres":
			b.Postgres = true
		default:
			return Block{}, fmt.Errorf("unknown runnable option %q (server, postgres)", strings.TrimSpace(a))
		}
	}
	if b.Postgres && b.Kind != Server {
		return Block{}, fmt.Errorf("postgres goes with server: <!-- runnable: server, postgres -->")
	}
	return b, nil
}

// Instrument returns the block's script with each check replaced by a
// call of mark with the check's index, and the checks. first is the
// document line of the block's first line.
func Instrument(text string, first int, mark string) (string, []Check) {
	var (
		out    strings.Builder
		checks []Check
	)
	lines := strings.SplitAfter(text, "\n")
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimSpace(lines[i])
		want, ok := strings.CutPrefix(trimmed, "# =>")
		if !ok {
			out.WriteString(lines[i])
			continue
		}
		c := Check{Line: first + i, Want: strings.TrimSpace(want)}
		for i+1 < len(lines) && strings.HasPrefix(strings.TrimLeft(lines[i+1], " \t"), "#    ") {
			i++
			c.Want += strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(lines[i]), "#"))
		}
		fmt.Fprintf(&out, "%s %d\n", mark, len(checks))
		checks = append(checks, c)
	}
	return out.String(), checks
}

// Matches says whether got ends with want, where "..." or "…" in want
// stands for any text (newlines included). Space at the end of got is
// not compared.
func Matches(got, want string) bool {
	return pattern(want).MatchString(strings.TrimRight(got, " \t\r\n"))
}

func pattern(want string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`(?s)`)
	parts := strings.Split(strings.ReplaceAll(want, "…", "..."), "...")
	for i, part := range parts {
		if i > 0 {
			// ",...," stands for the fields left out, which may be none.
			if strings.HasSuffix(parts[i-1], ",") && strings.HasPrefix(part, ",") {
				b.WriteString(`(?:.*,)?`)
				part = part[1:]
			} else {
				b.WriteString(`.*`)
			}
		}
		b.WriteString(regexp.QuoteMeta(part))
	}
	b.WriteString(`\z`)
	return regexp.MustCompile(b.String())
}

// Ports rewrites the loopback addresses of a document's walk-throughs
// (127.0.0.1:N and localhost:N) to the ports the runner chose, so that the
// run takes no port a person may be using.
func Ports(text string, ports map[string]string) string {
	return loopback.ReplaceAllStringFunc(text, func(s string) string {
		host, port, _ := strings.Cut(s, ":")
		if p, ok := ports[port]; ok {
			return host + ":" + p
		}
		return s
	})
}

var loopback = regexp.MustCompile(`\b(127\.0\.0\.1|localhost):[0-9]{2,5}\b`)

// Commands splits a server block into its commands: comment lines and
// blank lines go, lines ending in a backslash join the next, and
// "go run ./cmd/marketplaced" becomes the built "marketplaced".
func Commands(text string) []string {
	var (
		cmds []string
		cur  strings.Builder
	)
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if cur.Len() == 0 && (t == "" || strings.HasPrefix(t, "#")) {
			continue
		}
		if c, ok := strings.CutSuffix(t, `\`); ok {
			cur.WriteString(strings.TrimSpace(c))
			cur.WriteByte(' ')
			continue
		}
		cur.WriteString(t)
		cmd := strings.TrimSpace(cur.String())
		cur.Reset()
		if i := strings.Index(cmd, " #"); i >= 0 && !strings.ContainsAny(cmd[:i], `'"`) {
			cmd = strings.TrimSpace(cmd[:i])
		}
		cmd = strings.TrimSpace(strings.TrimSuffix(cmd, "&"))
		if rest, ok := strings.CutPrefix(cmd, "go run ./cmd/marketplaced"); ok {
			cmd = "marketplaced" + rest
		}
		cmds = append(cmds, cmd)
	}
	return cmds
}

// IsServer says whether a command of a server block starts marketplaced
// (the server itself, not one of its subcommands).
func IsServer(cmd string) bool {
	f := strings.Fields(cmd)
	for len(f) > 0 && strings.Contains(f[0], "=") { // VAR=value before the command
		f = f[1:]
	}
	if len(f) == 0 || f[0] != "marketplaced" {
		return false
	}
	return len(f) == 1 || strings.HasPrefix(f[1], "-")
}

// Addr is the -addr a server command names, or "" for the default.
func Addr(cmd string) string {
	f := strings.Fields(cmd)
	for i, w := range f {
		if (w == "-addr" || w == "--addr") && i+1 < len(f) {
			return strings.Trim(f[i+1], `'"`)
		}
		if v, ok := strings.CutPrefix(w, "-addr="); ok {
			return strings.Trim(v, `'"`)
		}
	}
	return ""
}
