package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The image is built once for the tests of this file: a build of the
// binary and the layer's compression take seconds.
var builtImage struct {
	once sync.Once
	path string
	err  error
}

// buildImage runs `go run ./internal/release -image` as a user would and
// returns the path of marketplaced-image.tar. -allow-dirty: it checks the
// image, not whether the tree is releasable.
func buildImage(t *testing.T) string {
	t.Helper()
	if testing.Short() && os.Getenv("CI") != "true" {
		t.Skip("-short: the image is not built")
	}
	builtImage.once.Do(func() {
		dir, err := os.MkdirTemp("", "marketplace-image-")
		if err != nil {
			builtImage.err = err
			return
		}
		builtImage.path = filepath.Join(dir, ImageFile)
		builtImage.err = releaseImage(dir)
	})
	if builtImage.err != nil {
		t.Fatal(builtImage.err)
	}
	return builtImage.path
}

// releaseImage runs the command in a process of its own: in this one, under
// -race, the layer's compression alone takes a minute.
func releaseImage(dir string) error {
	cmd := exec.Command("go", "run", ".", "-image", "-allow-dirty", "-out", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go run ./internal/release -image: %v\n%s", err, out)
	}
	return nil
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builtImage.path != "" {
		os.RemoveAll(filepath.Dir(builtImage.path))
	}
	os.Exit(code)
}

func TestImage_TwoBuildsOfOneCommitAreTheSameBytes(t *testing.T) {
	first := buildImage(t)
	dir := t.TempDir()
	if err := releaseImage(dir); err != nil {
		t.Fatal(err)
	}
	a, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, ImageFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatalf("two image builds of one checkout differ (%d and %d bytes)", len(a), len(b))
	}
	sums, err := os.ReadFile(filepath.Join(dir, ImageFile+".sha256"))
	if err != nil {
		t.Fatal(err)
	}
	if want := hexDigest(b) + "  " + ImageFile + "\n"; string(sums) != want {
		t.Errorf("%s.sha256 = %q, want %q", ImageFile, sums, want)
	}
}

// podman is Debian's podman with the settings that work as root in a
// container without systemd, as CI runs: runc, cgroupfs, events in a file,
// no default ulimits (which a container may not raise), and its own
// storage (vfs, which needs no overlay mounts) under a temporary folder.
type podman struct {
	t    *testing.T
	path string
	args []string
	env  []string
}

// newPodman finds podman; under CI it must be there (.ci/run installs it),
// elsewhere the test is skipped without it.
func newPodman(t *testing.T) *podman {
	t.Helper()
	path, err := exec.LookPath("podman")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("podman not found under CI: %v", err)
		}
		t.Skip("podman not installed (apt-get install -y podman runc): the container image is not run")
	}
	// Not t.TempDir: podman refuses a runroot path longer than 50 bytes.
	dir, err := os.MkdirTemp("", "mp-podman-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Error(err)
		}
	})
	conf := filepath.Join(dir, "containers.conf")
	err = os.WriteFile(conf, []byte(`[containers]
default_ulimits = []

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	return &podman{t: t, path: path,
		args: []string{"--root", filepath.Join(dir, "root"), "--runroot", filepath.Join(dir, "run"), "--storage-driver", "vfs"},
		env:  []string{"CONTAINERS_CONF=" + conf}}
}

func (p *podman) run(args ...string) (string, error) {
	cmd := exec.Command(p.path, append(append([]string(nil), p.args...), args...)...)
	cmd.Env = append(os.Environ(), p.env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("podman %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// logs is what the container wrote to stdout and stderr.
func (p *podman) logs(name string) string {
	cmd := exec.Command(p.path, append(append([]string(nil), p.args...), "logs", name)...)
	cmd.Env = append(os.Environ(), p.env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Sprintf("podman logs: %v: %s", err, out)
	}
	return string(out)
}

func (p *podman) must(args ...string) string {
	p.t.Helper()
	out, err := p.run(args...)
	if err != nil {
		p.t.Fatal(err)
	}
	return out
}

// TestImage_PodmanRunsItOnItsVolumeAndItStopsCleanlyOnSIGTERM loads the
// image, reads its configuration, runs it with a flag and MARKETPLACE_*
// variables, calls /health and the API with the operator's and the demo
// seller's tokens, and stops it: an exit status of 0 means it ended on
// SIGTERM before podman's timeout (a kill gives 137, and a SIGTERM that
// the server does not handle gives 2: Go's default, as PID 1).
func TestImage_PodmanRunsItOnItsVolumeAndItStopsCleanlyOnSIGTERM(t *testing.T) {
	pm := newPodman(t)
	tarPath := buildImage(t)

	loaded := pm.must("load", "-q", "-i", tarPath)
	image := strings.TrimSpace(strings.TrimPrefix(loaded, "Loaded image:"))
	if !strings.Contains(image, "marketplaced:v0.0.0-") {
		t.Fatalf("podman load: %q, want an image named marketplaced:<version>", loaded)
	}
	t.Cleanup(func() { pm.run("rmi", "-f", image) })

	var inspect []struct {
		Config struct {
			User         string
			Env          []string
			Entrypoint   []string
			WorkingDir   string
			ExposedPorts map[string]any
			Volumes      map[string]any
		}
	}
	if err := json.Unmarshal([]byte(pm.must("image", "inspect", image)), &inspect); err != nil || len(inspect) != 1 {
		t.Fatalf("podman image inspect: %v", err)
	}
	cfg := inspect[0].Config
	if cfg.User != "65532:65532" {
		t.Errorf("user %q, want 65532:65532 (not root)", cfg.User)
	}
	if !strings.Contains(strings.Join(cfg.Env, " "), "MARKETPLACE_ADDR=0.0.0.0:8080") {
		t.Errorf("env %q, want MARKETPLACE_ADDR=0.0.0.0:8080", cfg.Env)
	}
	if _, ok := cfg.ExposedPorts["8080/tcp"]; !ok {
		t.Errorf("exposed ports %v, want 8080/tcp", cfg.ExposedPorts)
	}
	if _, ok := cfg.Volumes["/data"]; !ok || cfg.WorkingDir != "/data" {
		t.Errorf("volumes %v in %q, want the volume /data as the working folder", cfg.Volumes, cfg.WorkingDir)
	}

	// The host's network: a bridge needs what a container in CI may not
	// have. The address then comes from the environment, as a user's would.
	addr := freeAddr(t)
	const token = "OPERATOR-image-test"
	name := fmt.Sprintf("marketplace-image-test-%d", os.Getpid())
	pm.must("run", "-d", "--name", name, "--network", "host",
		"-e", "MARKETPLACE_ADDR="+addr, "-e", "MARKETPLACE_OPERATOR_TOKEN="+token, image, "-demo")
	t.Cleanup(func() { pm.run("rm", "-f", "-v", name) })

	base := "http://" + addr
	waitHealthy(t, pm, name, base+"/health")
	if status, body := get(t, base+"/operator/requests", token); status != http.StatusOK {
		t.Errorf("GET /operator/requests with the operator token: %d %s", status, body)
	}
	if status, body := get(t, base+"/users/me", "APP_USR-demo-seller-0000000000000001"); status != http.StatusOK || !strings.Contains(body, `"id":100000001`) {
		t.Errorf("GET /users/me with the demo seller's token: %d %s", status, body)
	}
	if mounts := pm.must("inspect", name, "--format", "{{range .Mounts}}{{.Destination}} {{end}}"); strings.TrimSpace(mounts) != "/data" {
		t.Errorf("mounts %q, want the volume /data", mounts)
	}

	pm.must("stop", "-t", "10", name)
	state := pm.must("inspect", name, "--format", "{{.State.ExitCode}}")
	logs := pm.logs(name)
	if state != "0" {
		t.Errorf("exit status %s after podman stop, want 0 (drained on SIGTERM; a kill gives 137, an unhandled SIGTERM 2); logs:\n%s", state, logs)
	}
	if !strings.Contains(logs, `"storage":"badger:./marketplace-data"`) || !strings.Contains(logs, `"msg":"stopped"`) {
		t.Errorf("logs do not show the Badger store in /data and a clean stop:\n%s", logs)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// waitHealthy polls url until it answers 200, failing with the
// container's logs if the container ends or a minute passes first.
func waitHealthy(t *testing.T, pm *podman, name, url string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if status, _ := getMaybe(url, ""); status == http.StatusOK {
			return
		}
		if running, _ := pm.run("inspect", name, "--format", "{{.State.Running}}"); running == "false" {
			break
		}
	}
	logs := pm.logs(name)
	t.Fatalf("%s did not answer 200; logs:\n%s", url, logs)
}

func get(t *testing.T, url, token string) (int, string) {
	t.Helper()
	status, body := getMaybe(url, token)
	if status == 0 {
		t.Fatalf("GET %s: %s", url, body)
	}
	return status, body
}

func getMaybe(url, token string) (int, string) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, err.Error()
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}
