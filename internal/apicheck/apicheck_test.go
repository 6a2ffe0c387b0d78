package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRecordedAPIMatchesTheCode(t *testing.T) {
	root, err := moduleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	current, err := Generate(root)
	if err != nil {
		t.Fatal(err)
	}
	recorded, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(File)))
	if err != nil {
		t.Fatal(err)
	}
	if d := Diff(Parse(recorded), current); d != "" {
		t.Fatalf("the exported API differs from %s (+ in the code only, - in the record only):\n%s\n"+
			"if the change is deliberate, run from the module root: %s", File, d, Command)
	}
}

// TestGenerate_OneLinePerExportedObject builds a small module of its own,
// so the shape of every kind of line is checked apart from the project's
// own API.
func TestGenerate_OneLinePerExportedObject(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/lib\n\ngo 1.22\n",
		"lib.go": `// Package lib is a fixture.
package lib

import "context"

// Max is a limit.
const Max = 3

// Level is a level.
type Level int

// Default is the default level.
const Default Level = 2

// Hook runs.
var Hook func(ctx context.Context, name string) error

// Store keeps things.
type Store interface {
	Get(ctx context.Context, key []byte) ([]byte, error)
	unexported()
}

// Base is embedded.
type Base struct{ ID int64 }

// Name returns the name.
func (Base) Name() string { return "" }

// Service serves.
type Service struct {
	Base
	Limit  int
	hidden bool
}

// Put puts.
func (s *Service) Put(ctx context.Context, items ...string) (n int, err error) { return 0, nil }

func (s *Service) put() {}

// New makes a Service.
func New[K comparable](keys map[K]bool) *Service { return nil }

// Pair is generic.
type Pair[K comparable, V any] struct{ Key K; Value V }

// Alias is another name.
type Alias = Pair[string, int]

type hidden struct{}
`,
		"internal/x/x.go":  "// Package x is internal.\npackage x\n\n// X is not recorded.\nconst X = 1\n",
		"cmd/tool/main.go": "// Command tool is a main package.\npackage main\n\nfunc main() {}\n",
	}
	for name, body := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lines, err := Generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"pkg example.com/lib, const Default Level = 2",
		"pkg example.com/lib, const Max untyped int = 3",
		"pkg example.com/lib, func New[K comparable](map[K]bool) *Service",
		"pkg example.com/lib, method (*Service) Put(context.Context, ...string) (int, error)",
		"pkg example.com/lib, method (Base) Name() string",
		"pkg example.com/lib, method (Service) Name() string",
		"pkg example.com/lib, type Alias = Pair[string, int]",
		"pkg example.com/lib, type Base struct",
		"pkg example.com/lib, type Base struct, ID int64",
		"pkg example.com/lib, type Level int",
		"pkg example.com/lib, type Pair[K comparable, V any] struct",
		"pkg example.com/lib, type Pair[K comparable, V any] struct, Key K",
		"pkg example.com/lib, type Pair[K comparable, V any] struct, Value V",
		"pkg example.com/lib, type Service struct",
		"pkg example.com/lib, type Service struct, Limit int",
		"pkg example.com/lib, type Service struct, embedded Base",
		"pkg example.com/lib, type Store interface { Get, unexported methods }",
		"pkg example.com/lib, type Store interface, Get(context.Context, []byte) ([]byte, error)",
		"pkg example.com/lib, var Hook func(context.Context, string) error",
	}
	if got := strings.Join(lines, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("Generate:\n%s\n\nwant:\n%s\n\ndiff:\n%s", got, strings.Join(want, "\n"), Diff(want, lines))
	}
}

func TestDiff_ListsAddedAndRemovedLines(t *testing.T) {
	d := Diff([]string{"a", "b", "c"}, []string{"a", "c", "d"})
	if d != "-b\n+d\n" {
		t.Errorf("Diff = %q, want %q", d, "-b\n+d\n")
	}
	if d := Diff([]string{"a"}, []string{"a"}); d != "" {
		t.Errorf("Diff of equal records = %q, want empty", d)
	}
}

func TestParse_ReadsWhatFormatWrites(t *testing.T) {
	lines := []string{"pkg a, func F()", "pkg a, var V int"}
	if got := Parse(Format(lines)); strings.Join(got, "|") != strings.Join(lines, "|") {
		t.Errorf("Parse(Format(lines)) = %q, want %q", got, lines)
	}
}
