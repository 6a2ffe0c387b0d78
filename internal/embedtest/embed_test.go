package embedtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Markers of README.md: the HTML comment before the example program's
// fence, and the one before the fence of what it prints.
const (
	programMarker = "<!-- embedding-example: main.go"
	outputMarker  = "<!-- embedding-example-output -->"
)

// mainModule is this module, as the go command sees it: the path comes
// from go.mod, so the test follows any change of the module path.
type mainModule struct {
	Path      string
	Dir       string
	GoVersion string
}

func readMainModule(t *testing.T) mainModule {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-json").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	var m mainModule
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// fencedBlock returns the body of the first fenced code block after marker.
func fencedBlock(readme, marker string) (string, error) {
	i := strings.Index(readme, marker)
	if i < 0 {
		return "", errors.New("README.md has no " + marker)
	}
	rest := readme[i:]
	open := strings.Index(rest, "\n```")
	if open < 0 {
		return "", errors.New("no code block after " + marker)
	}
	rest = rest[open+1:]
	nl := strings.IndexByte(rest, '\n')
	if nl < 0 {
		return "", errors.New("unterminated code block after " + marker)
	}
	body := rest[nl+1:]
	end := strings.Index(body, "```")
	if end < 0 {
		return "", errors.New("unterminated code block after " + marker)
	}
	return body[:end], nil
}

// fetchFailure recognizes a go command that failed for want of the module
// proxy (offline, GOPROXY=off), not because of the code.
var fetchFailure = regexp.MustCompile(`dial tcp|no such host|connection refused|GOPROXY=off|module lookup disabled|i/o timeout|TLS handshake|proxy.golang.org`)

// outsideModule writes files (by slash-separated path) into a new module
// in a temporary folder outside the repository, example.com/embedder,
// which requires this module by its path and replaces it with the working
// tree. It returns the folder and a function that runs the go command
// there and fails t when it fails: a failure to fetch modules is a skip
// outside CI (CI=true makes it a failure, as any other).
func outsideModule(t *testing.T, mod mainModule, files map[string]string) (string, func(args ...string) []byte) {
	t.Helper()
	dir := t.TempDir()
	if rel, err := filepath.Rel(mod.Dir, dir); err == nil && !strings.HasPrefix(rel, "..") {
		t.Fatalf("the temporary module %s is inside the repository %s", dir, mod.Dir)
	}
	goMod := "module example.com/embedder\n\ngo " + mod.GoVersion + "\n\n" +
		"require " + mod.Path + " v0.0.0\n\n" +
		"replace " + mod.Path + " => " + filepath.ToSlash(mod.Dir) + "\n"
	sum, err := os.ReadFile(filepath.Join(mod.Dir, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]string{"go.mod": goMod, "go.sum": string(sum)}
	for name, data := range files {
		all[name] = data
	}
	for name, data := range all {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// The module cache and the proxy are the environment's; only the
	// module mode is fixed, so that a missing requirement is resolved
	// rather than reported.
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	goCmd := func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			if os.Getenv("CI") != "true" && fetchFailure.Match(out) {
				t.Skipf("go %s could not fetch modules (outside CI this is a skip): %s", strings.Join(args, " "), out)
			}
			t.Fatalf("go %s in the outside module: %v\n%s\ngo.mod:\n%s", strings.Join(args, " "), err, out, goMod)
		}
		return out
	}
	return dir, goCmd
}

func TestREADMEEmbeddingExampleRunsInAModuleOutsideTheRepository(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module of its own; skipped with -short")
	}
	mod := readMainModule(t)
	readme, err := os.ReadFile(filepath.Join(mod.Dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	program, err := fencedBlock(string(readme), programMarker)
	if err != nil {
		t.Fatal(err)
	}
	wantOutput, err := fencedBlock(string(readme), outputMarker)
	if err != nil {
		t.Fatal(err)
	}

	dir, goCmd := outsideModule(t, mod, map[string]string{"main.go": program})
	goCmd("mod", "tidy")
	bin := filepath.Join(dir, "embedder")
	goCmd("build", "-o", bin, ".")

	run := exec.Command(bin)
	run.Dir = dir
	var stdout, stderr bytes.Buffer
	run.Stdout, run.Stderr = &stdout, &stderr
	if err := run.Run(); err != nil {
		t.Fatalf("the README's example exited with %v:\n%s%s", err, stdout.String(), stderr.String())
	}
	if got := stdout.String(); got != wantOutput {
		t.Errorf("the README's example printed:\n%s\nthe README says it prints:\n%s", got, wantOutput)
	}
}

func TestFencedBlock_ReturnsTheBlockAfterTheMarker(t *testing.T) {
	doc := "text\n```go\nnot this\n```\n<!-- m -->\n```go\npackage main\n```\nmore\n"
	got, err := fencedBlock(doc, "<!-- m -->")
	if err != nil || got != "package main\n" {
		t.Errorf("fencedBlock = %q, %v; want %q", got, err, "package main\n")
	}
	if _, err := fencedBlock(doc, "<!-- missing -->"); err == nil {
		t.Error("fencedBlock without the marker: want an error")
	}
}
