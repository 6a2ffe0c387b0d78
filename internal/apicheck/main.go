// Command apicheck records the exported Go API of the module's importable
// packages in api/marketplace.txt, the way the Go project keeps
// api/go1.*.txt, and checks that the code still matches the record:
//
//	go run ./internal/apicheck          # compare; exit status 1 and the changed lines when they differ
//	go run ./internal/apicheck -write   # rewrite api/marketplace.txt from the code
//
// A package is recorded when an embedder can import it: every package of
// the module except main packages and those under an internal/ folder. The
// record is one sorted line per exported object, so a change to the API is
// a visible diff in review (docs/compatibility.md).
//
// Types are read from the compiler's export data (go list -export), which
// the build cache already holds, rather than type-checked from source:
// that keeps the check to a few seconds.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// File is where the record lives, relative to the module root.
const File = "api/marketplace.txt"

// Command is how to bring the record up to date, as printed on a mismatch.
const Command = "go run ./internal/apicheck -write"

func main() {
	write := flag.Bool("write", false, "rewrite "+File+" from the code instead of comparing")
	flag.Parse()
	if err := run(*write); err != nil {
		fmt.Fprintln(os.Stderr, "apicheck:", err)
		os.Exit(1)
	}
}

func run(write bool) error {
	root, err := moduleRoot(".")
	if err != nil {
		return err
	}
	lines, err := Generate(root)
	if err != nil {
		return err
	}
	path := filepath.Join(root, filepath.FromSlash(File))
	if write {
		return os.WriteFile(path, Format(lines), 0o644)
	}
	recorded, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if d := Diff(Parse(recorded), lines); d != "" {
		return fmt.Errorf("the exported API differs from %s:\n%s\nif the change is deliberate, run: %s", File, d, Command)
	}
	return nil
}

// moduleRoot returns the folder of the go.mod that governs dir.
func moduleRoot(dir string) (string, error) {
	out, err := goCommand(dir, "list", "-m", "-f", "{{.Dir}}")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// Format renders the record's file: the lines, each ending in a newline.
func Format(lines []string) []byte {
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// Parse reads a record's file back into its lines.
func Parse(data []byte) []string {
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimRight(l, "\r"); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// Diff lists the lines that are only in the code (+) and only in the record
// (-), or returns "" when both hold the same lines.
func Diff(recorded, current []string) string {
	in := func(lines []string) map[string]bool {
		m := make(map[string]bool, len(lines))
		for _, l := range lines {
			m[l] = true
		}
		return m
	}
	rec, cur := in(recorded), in(current)
	var b strings.Builder
	for _, l := range recorded {
		if !cur[l] {
			fmt.Fprintf(&b, "-%s\n", l)
		}
	}
	for _, l := range current {
		if !rec[l] {
			fmt.Fprintf(&b, "+%s\n", l)
		}
	}
	return b.String()
}

func goCommand(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
