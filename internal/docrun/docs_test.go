package docrun_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/marketplace/marketplace/internal/docrun"
	"github.com/marketplace/marketplace/internal/pgtest"
	"github.com/marketplace/marketplace/internal/pgtest/pgserver"
)

// documents are the documents whose walk-throughs run.
var documents = []string{
	"README.md",
	"docs/oauth.md",
	"docs/testing-with-marketplace.md",
	"docs/faults-and-journal.md",
	"docs/scale-out.md",
	"docs/notifications.md",
	"docs/stubs.md",
	"docs/recording.md",
	"docs/post-sale.md",
	"docs/messages.md",
	"docs/claims.md",
}

// docPorts are the loopback ports the documents name; each run takes free
// ones in their place.
var docPorts = []string{"8080", "8081", "8082", "9000"}

const root = "../.."

// blockTimeout bounds one block, so that a walk-through that waits for
// something that never comes fails instead of hanging the run.
const blockTimeout = 60 * time.Second

func TestDocs_EveryShellBlockIsMarkedRunnableOrNot(t *testing.T) {
	for _, doc := range documents {
		b, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		blocks, err := docrun.Parse(string(b))
		if err != nil {
			t.Errorf("%s: %v", doc, err)
			continue
		}
		runnable := 0
		for _, bl := range blocks {
			if bl.Kind == docrun.Script || bl.Kind == docrun.Server {
				runnable++
			}
		}
		if runnable == 0 {
			t.Errorf("%s: no runnable block", doc)
		}
	}
}

func TestDocs_WalkThroughsRunAsWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and starts the server")
	}
	// The walk-throughs call what a reader's shell has; CI installs them
	// (.ci/run), and there a missing one fails rather than skips.
	var missing []string
	for _, tool := range []string{"bash", "curl", "jq", "openssl", "basenc", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if len(missing) > 0 {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the walk-throughs need %s on PATH", strings.Join(missing, ", "))
		}
		t.Skipf("the walk-throughs need %s on PATH", strings.Join(missing, ", "))
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "marketplaced"), "./cmd/marketplaced")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, doc := range documents {
		t.Run(strings.TrimSuffix(filepath.Base(doc), ".md"), func(t *testing.T) {
			t.Parallel()
			b, err := os.ReadFile(filepath.Join(root, doc))
			if err != nil {
				t.Fatal(err)
			}
			blocks, err := docrun.Parse(string(b))
			if err != nil {
				t.Fatalf("%s: %v", doc, err)
			}
			r := newRun(t, doc, bin)
			for _, bl := range blocks {
				if bl.Kind == docrun.File {
					r.writeFile(bl)
				}
			}
			for _, bl := range blocks {
				switch bl.Kind {
				case docrun.Script:
					r.script(bl)
				case docrun.Server:
					r.servers(bl)
				}
				if t.Failed() {
					return // the next blocks build on this one
				}
			}
		})
	}
}

// run is one document's walk-through: its folder, its ports, its shell
// state and the processes it started.
type run struct {
	t       *testing.T
	doc     string
	dir     string
	state   string
	ports   map[string]string
	env     []string
	running []*server
	groups  []int // process groups of the blocks, for what they left running
	pg      *pgtest.Server
}

type server struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

func newRun(t *testing.T, doc, bin string) *run {
	dir := t.TempDir()
	r := &run{t: t, doc: doc, dir: dir, state: filepath.Join(dir, ".docrun-state"), ports: map[string]string{}}
	for _, p := range docPorts {
		r.ports[p] = freePort(t)
	}
	for _, kv := range os.Environ() {
		// The server reads MARKETPLACE_*; the person's own settings must
		// not change what the documents show.
		if !strings.HasPrefix(kv, "MARKETPLACE_") && !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "PG") {
			r.env = append(r.env, kv)
		}
	}
	r.env = append(r.env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"MARKETPLACE_ADDR=127.0.0.1:"+r.ports["8080"])
	t.Cleanup(r.stop)
	return r
}

func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

func (r *run) writeFile(bl docrun.Block) {
	p := filepath.Join(r.dir, filepath.FromSlash(bl.Path))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(docrun.Ports(bl.Text, r.ports)), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// prelude runs before each block: bash's strict mode, the variables that
// the document's earlier blocks set, and the check marker.
const prelude = `set -euo pipefail
__docrun_known=" $(compgen -v | tr '\n' ' ') "
__docrun_mark() { printf '\036DOCRUN %s\036' "$1"; }
if [[ -f "$__DOCRUN_STATE" ]]; then source "$__DOCRUN_STATE"; fi
`

// epilogue keeps the variables the block set (and those it was given) for
// the next blocks of the document.
const epilogue = `
for __docrun_v in $(compgen -v); do
  case "$__docrun_known" in *" $__docrun_v "*) continue ;; esac
  case "$__docrun_v" in __docrun*|__DOCRUN*) continue ;; esac
  declare -p "$__docrun_v"
done > "$__DOCRUN_STATE.new"
mv "$__DOCRUN_STATE.new" "$__DOCRUN_STATE"
`

func (r *run) bash(ctx context.Context, script string, stdout, stderr *os.File) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = r.dir
	cmd.Env = append(append([]string{}, r.env...), "__DOCRUN_STATE="+r.state)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	return cmd
}

func (r *run) script(bl docrun.Block) {
	t := r.t
	body, checks := docrun.Instrument(docrun.Ports(bl.Text, r.ports), bl.Line+1, "__docrun_mark")
	out, errOut := r.tempFile("out"), r.tempFile("err")
	ctx, cancel := context.WithTimeout(context.Background(), blockTimeout)
	defer cancel()
	cmd := r.bash(ctx, prelude+body+epilogue, out, errOut)
	err := cmd.Start()
	if err == nil {
		r.groups = append(r.groups, cmd.Process.Pid)
		err = cmd.Wait()
	}
	got, _ := os.ReadFile(out.Name())
	stderr, _ := os.ReadFile(errOut.Name())
	segments := bytes.Split(got, []byte("\x1eDOCRUN "))
	outputs := map[int]string{}
	// The output of check i is what came between marker i-1 and marker i.
	prev := segments[0]
	for _, seg := range segments[1:] {
		n, rest, _ := bytes.Cut(seg, []byte("\x1e"))
		i, _ := strconv.Atoi(string(n))
		outputs[i] = string(prev)
		prev = rest
	}
	if err != nil {
		t.Errorf("%s:%d: the block failed: %v\nstderr:\n%s\nstdout:\n%s%s", r.doc, bl.Line, err, stderr, clean(got), r.serverLogs())
		return
	}
	for i, c := range checks {
		o, ok := outputs[i]
		if !ok {
			t.Errorf("%s:%d: the check was not reached", r.doc, c.Line)
			continue
		}
		if !docrun.Matches(o, c.Want) {
			t.Errorf("%s:%d: the output\n\t%s\ndoes not end as the document shows:\n\t%s", r.doc, c.Line, strings.TrimSpace(o), c.Want)
		}
	}
}

func clean(b []byte) string {
	return string(bytes.ReplaceAll(b, []byte("\x1e"), []byte("|")))
}

func (r *run) tempFile(name string) *os.File {
	f, err := os.CreateTemp(r.t.TempDir(), name)
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { f.Close() })
	return f
}

// servers stops the servers of the document's previous server block (the
// reader's Ctrl-C) and starts this block's.
func (r *run) servers(bl docrun.Block) {
	t := r.t
	r.stopServers()
	if bl.Postgres && r.pg == nil {
		r.startPostgres()
	}
	for _, c := range docrun.Commands(docrun.Ports(bl.Text, r.ports)) {
		if !docrun.IsServer(c) {
			ctx, cancel := context.WithTimeout(context.Background(), blockTimeout)
			var out bytes.Buffer
			cmd := exec.CommandContext(ctx, "bash", "-c", prelude+c)
			cmd.Dir = r.dir
			cmd.Env = append(append([]string{}, r.env...), "__DOCRUN_STATE="+r.state)
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			cancel()
			if err != nil {
				t.Fatalf("%s:%d: %s: %v\n%s", r.doc, bl.Line, c, err, out.Bytes())
			}
			continue
		}
		log := r.tempFile("server")
		cmd := r.bash(context.Background(), prelude+"exec "+c, log, log)
		if err := cmd.Start(); err != nil {
			t.Fatalf("%s:%d: %s: %v", r.doc, bl.Line, c, err)
		}
		s := &server{cmd: cmd, log: log.Name(), done: make(chan struct{})}
		go func() { _ = cmd.Wait(); close(s.done) }()
		r.running = append(r.running, s)
		addr := docrun.Addr(c)
		if addr == "" {
			addr = "127.0.0.1:" + r.ports["8080"]
		}
		if err := waitHealthy(addr, s.done); err != nil {
			t.Fatalf("%s:%d: %s: %v%s", r.doc, bl.Line, c, err, r.serverLogs())
		}
	}
}

func waitHealthy(addr string, done <-chan struct{}) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return errors.New("the server exited")
		default:
		}
		res, err := http.Get("http://" + addr + "/health")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("no healthy answer on %s within 30s", addr)
}

// startPostgres starts a throwaway PostgreSQL for the document and points
// the libpq variables at it, as a reader's shell would be set up; without
// PostgreSQL binaries the document is skipped, except under CI=true.
func (r *run) startPostgres() {
	r.pg = pgtest.Start(r.t)
	path := ""
	if createdb, err := pgserver.Binary("createdb"); err == nil {
		path = filepath.Dir(createdb) + string(os.PathListSeparator)
	}
	for i, kv := range r.env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			r.env[i] = "PATH=" + p + string(os.PathListSeparator) + strings.TrimSuffix(path, string(os.PathListSeparator))
		}
	}
	r.env = append(r.env, "PGHOST=127.0.0.1", "PGPORT="+strconv.Itoa(r.pg.Port()), "PGUSER=postgres")
}

func (r *run) serverLogs() string {
	var b strings.Builder
	for _, s := range r.running {
		log, _ := os.ReadFile(s.log)
		if len(log) > 4000 {
			log = log[len(log)-4000:]
		}
		fmt.Fprintf(&b, "\nserver %s:\n%s", strings.Join(s.cmd.Args[2:], " "), log)
	}
	return b.String()
}

func (r *run) stopServers() {
	for _, s := range r.running {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	}
	for _, s := range r.running {
		select {
		case <-s.done:
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
			<-s.done
		}
	}
	r.running = nil
}

func (r *run) stop() {
	r.stopServers()
	for _, g := range r.groups {
		_ = syscall.Kill(-g, syscall.SIGKILL)
	}
}
