package patronitest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// operatorToken is the operator token of every server of a test.
const operatorToken = "patroni-operator-token-0123456789"

// unavailableMessage is the message of the 503 a server answers while no
// primary takes its statements (docs/scale-out.md).
const unavailableMessage = "The service is temporarily unavailable, try again later"

// server is a running marketplaced process.
type server struct {
	name   string
	cmd    *exec.Cmd
	base   string
	banner []string
	mu     sync.Mutex
	logs   bytes.Buffer
}

// syncWriter lets the process write its logs while the test reads them.
type syncWriter struct{ s *server }

func (w syncWriter) Write(p []byte) (int, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	return w.s.logs.Write(p)
}

func (s *server) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.String()
}

// buildServer builds cmd/marketplaced into dir.
func buildServer(dir string) (string, error) {
	bin := filepath.Join(dir, "marketplaced")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/marketplace/marketplace/cmd/marketplaced").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %w\n%s", err, out)
	}
	return bin, nil
}

// startServers starts n servers on url at once and waits until each
// listens; they are killed when the test ends, if still running.
func startServers(t *testing.T, bin, url string, n int) []*server {
	t.Helper()
	servers := make([]*server, n)
	lines := make([]chan string, n)
	for i := range servers {
		s := &server{name: fmt.Sprintf("server %d", i)}
		s.cmd = exec.Command(bin, "-addr", "127.0.0.1:0", "-postgres", url, "-demo", "-operator-token", operatorToken)
		stdout, err := s.cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		s.cmd.Stderr = syncWriter{s}
		if err := s.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = s.cmd.Process.Kill()
			_ = s.cmd.Wait()
		})
		lines[i] = make(chan string)
		go func(ch chan<- string) {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				ch <- sc.Text()
			}
			close(ch)
		}(lines[i])
		servers[i] = s
	}
	for i, s := range servers {
		deadline := time.After(60 * time.Second)
	wait:
		for {
			select {
			case line, ok := <-lines[i]:
				if !ok {
					t.Fatalf("%s exited before listening:\n%s", s.name, s.log())
				}
				if addr, found := strings.CutPrefix(line, "listening on "); found {
					s.base = addr
					go func(ch <-chan string) {
						for range ch {
						}
					}(lines[i])
					break wait
				}
				s.banner = append(s.banner, line)
			case <-deadline:
				t.Fatalf("%s did not listen within 60s:\n%s", s.name, s.log())
			}
		}
	}
	return servers
}

// stop stops s with SIGTERM and fails when its logs show an internal error
// (a 500).
func (s *server) stop(t *testing.T) {
	t.Helper()
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		t.Errorf("%s did not stop within 30s of SIGTERM", s.name)
	}
	if strings.Contains(s.log(), `"msg":"internal error"`) {
		t.Errorf("%s logged an internal error:\n%s", s.name, s.log())
	}
}

// demo is what the demo banner says: the seller, the buyer and the
// seller's two stores.
type demo struct {
	seller, buyer int64
	stores        [2]string
}

func printedDemo(t *testing.T, s *server) demo {
	t.Helper()
	var d demo
	for _, line := range s.banner {
		f := strings.Fields(strings.NewReplacer(",", "").Replace(line))
		switch {
		case len(f) == 10 && f[1] == "seller:":
			d.stores = [2]string{f[7], f[9]}
			_, _ = fmt.Sscan(f[3], &d.seller)
		case len(f) == 6 && f[1] == "buyer:":
			_, _ = fmt.Sscan(f[3], &d.buyer)
		}
	}
	if d.seller == 0 || d.buyer == 0 || d.stores[1] == "" {
		t.Fatalf("no demo accounts in %q", s.banner)
	}
	return d
}

// client sends the test's requests; a request that waits longer than the
// servers' own deadline (10 s) has gone wrong.
var client = &http.Client{
	Timeout:   30 * time.Second,
	Transport: &http.Transport{MaxIdleConnsPerHost: 16, IdleConnTimeout: 30 * time.Second},
}

// reply is a server's answer.
type reply struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

func (r reply) String() string { return fmt.Sprintf("%d %s", r.status, bytes.TrimSpace(r.raw)) }

// send sends one request; err is a transport error or a body that is not
// JSON.
func send(method, url, token string, header map[string]string, body any) (reply, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return reply{}, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return reply{}, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := client.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return reply{}, fmt.Errorf("%s %s: read the body: %w", method, url, err)
	}
	out := reply{status: res.StatusCode, header: res.Header, raw: raw}
	if len(bytes.TrimSpace(raw)) > 0 && raw[0] == '{' {
		if err := json.Unmarshal(raw, &out.body); err != nil {
			return out, fmt.Errorf("%s %s: decode %q: %w", method, url, raw, err)
		}
	}
	return out, nil
}

// must sends a request that must answer want.
func must(t *testing.T, want int, method, url, token string, body any) reply {
	t.Helper()
	r, err := send(method, url, token, nil, body)
	if err != nil || r.status != want {
		t.Fatalf("%s %s: %v %v; want %d", method, url, r, err, want)
	}
	return r
}

// errorShape reports whether r is the error body {message, error, status,
// cause: []} with r's status and no other field.
func errorShape(r reply) bool {
	_, isList := r.body["cause"].([]any)
	msg, _ := r.body["message"].(string)
	code, _ := r.body["error"].(string)
	return len(r.body) == 4 && r.body["status"] == float64(r.status) && msg != "" && code != "" && isList
}

// unavailable reports the 503 of a server that finds no primary: the
// storage's outage, or a request out of time while it lasted.
func unavailable(r reply) bool {
	return r.status == http.StatusServiceUnavailable && errorShape(r) &&
		(r.body["error"] == "service_unavailable" && r.body["message"] == unavailableMessage || r.body["error"] == "request_timeout")
}
