package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/marketplace/marketplace/internal/docrun"
)

// docPodmanDir is the folder of podman's settings and store that
// docs/container.md's podman walk-through names; the test gives it a folder
// of the run's own.
const docPodmanDir = "/tmp/marketplace-podman"

// TestContainerDoc_WalkThroughsRunAsWrittenOnAFreshClone runs the
// runnable blocks of docs/container.md in a fresh clone of the repository,
// one after the other, as a reader would: the image builds (each of which
// refuses a checkout with uncommitted changes, so the first one's output
// must not make the checkout dirty for the next), then the podman
// walk-through, which must not depend on the machine's own podman store.
// A clone holds what is committed: the document and the code as a reader
// gets them.
func TestContainerDoc_WalkThroughsRunAsWrittenOnAFreshClone(t *testing.T) {
	if testing.Short() && os.Getenv("CI") != "true" {
		t.Skip("-short: the image is built twice")
	}
	root, err := goOutput(".", nil, "list", "-m", "-f", "{{.Dir}}")
	if err != nil {
		t.Fatal(err)
	}
	clone := filepath.Join(t.TempDir(), "marketplace")
	if _, err := gitOutput(root, "clone", "--quiet", root, clone); err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(clone, "docs", "container.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := docrun.Parse(string(doc))
	if err != nil {
		t.Fatalf("docs/container.md: %v", err)
	}
	var runnable []docrun.Block
	for _, b := range blocks {
		switch b.Kind {
		case docrun.Script:
			runnable = append(runnable, b)
		case docrun.Server, docrun.File:
			t.Fatalf("docs/container.md:%d: only plain runnable blocks are run here", b.Line)
		}
	}
	if len(runnable) != 2 {
		t.Fatalf("docs/container.md has %d runnable blocks, want 2: the build and the podman walk-through", len(runnable))
	}

	// Not t.TempDir: podman refuses a runroot path longer than 50 bytes.
	store, err := os.MkdirTemp("", "mp-doc-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// What a failed walk-through left running, then its store.
		if path, err := exec.LookPath("podman"); err == nil {
			cmd := exec.Command(path, "rm", "-f", "-v", "marketplace")
			cmd.Env = append(os.Environ(), "CONTAINERS_CONF="+filepath.Join(store, "containers.conf"),
				"CONTAINERS_STORAGE_CONF="+filepath.Join(store, "storage.conf"))
			_ = cmd.Run()
		}
		if err := os.RemoveAll(store); err != nil {
			t.Error(err)
		}
	})
	ports := map[string]string{"8080": strconv.Itoa(freePort(t))}
	env := readerEnv()

	for _, b := range runnable {
		text := b.Text
		if strings.Contains(text, "podman ") {
			if !strings.Contains(text, docPodmanDir) {
				t.Fatalf("docs/container.md:%d: the podman walk-through no longer keeps its store in %s; the test would run it in the machine's", b.Line, docPodmanDir)
			}
			if _, err := exec.LookPath("podman"); err != nil {
				if os.Getenv("CI") == "true" {
					t.Fatalf("podman not found under CI: %v", err)
				}
				t.Skip("podman not installed (apt-get install -y podman runc): the podman walk-through is not run")
			}
			text = strings.ReplaceAll(text, docPodmanDir, store)
		}
		runDocBlock(t, clone, env, b.Line, docrun.Ports(text, ports))
	}
}

// readerEnv is the environment of a reader's shell: this one's, without
// the server's and podman's settings, which the walk-throughs set
// themselves.
func readerEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MARKETPLACE_") && !strings.HasPrefix(kv, "CONTAINERS_") {
			env = append(env, kv)
		}
	}
	return env
}

// runDocBlock runs one block with bash's strict mode in dir and compares
// the output before each "# =>" check with it.
func runDocBlock(t *testing.T, dir string, env []string, line int, text string) {
	t.Helper()
	body, checks := docrun.Instrument(text, line+1, "__docrun_mark")
	script := "set -euo pipefail\n__docrun_mark() { printf '\\036DOCRUN %s\\036' \"$1\"; }\n" + body
	// A bound for a command that hangs, not a timing the test relies on: a
	// build on a cold cache compiles the module and its dependencies.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("docs/container.md:%d: the block failed: %v\nstderr:\n%s\nstdout:\n%s", line, err, stderr.Bytes(),
			bytes.ReplaceAll(stdout.Bytes(), []byte("\x1e"), []byte("|")))
	}
	// The output of check i is what came between marker i-1 and marker i.
	outputs := map[int]string{}
	segments := bytes.Split(stdout.Bytes(), []byte("\x1eDOCRUN "))
	prev := segments[0]
	for _, seg := range segments[1:] {
		n, rest, _ := bytes.Cut(seg, []byte("\x1e"))
		i, _ := strconv.Atoi(string(n))
		outputs[i] = string(prev)
		prev = rest
	}
	for i, c := range checks {
		got, ok := outputs[i]
		if !ok {
			t.Errorf("docs/container.md:%d: the check was not reached", c.Line)
			continue
		}
		if !docrun.Matches(got, c.Want) {
			t.Errorf("docs/container.md:%d: the output\n\t%s\ndoes not end as the document shows:\n\t%s", c.Line, strings.TrimSpace(got), c.Want)
		}
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	addr := freeAddr(t)
	_, port, _ := strings.Cut(addr, ":")
	n, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
