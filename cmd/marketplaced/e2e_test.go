package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildServer builds the marketplaced binary into a temporary folder.
func buildServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "marketplaced")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("build: %v", err)
	}
	return bin
}

// server is a running marketplaced process.
type server struct {
	cmd  *exec.Cmd
	base string
	out  *bufio.Scanner
	logs *bytes.Buffer
	// banner holds what the server printed before it listened (the
	// operator token, the demo accounts).
	banner []string
	lines  chan string
}

// startServer runs bin with args on a free port and waits until it listens.
func startServer(t *testing.T, bin string, args ...string) *server {
	t.Helper()
	s := launchServer(t, bin, args...)
	s.waitListening(t)
	return s
}

// launchServer runs bin with args on a free port; waitListening waits
// until it listens. Servers launched together start at the same moment.
func launchServer(t *testing.T, bin string, args ...string) *server {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"-addr", "127.0.0.1:0"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logs := &bytes.Buffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, out: bufio.NewScanner(stdout), logs: logs, lines: make(chan string)}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	go func() {
		for s.out.Scan() {
			s.lines <- s.out.Text()
		}
		close(s.lines)
	}()
	return s
}

func (s *server) waitListening(t *testing.T) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case line, ok := <-s.lines:
			if !ok {
				t.Fatalf("server exited before listening; logs:\n%s", s.logs)
			}
			if addr, found := strings.CutPrefix(line, "listening on "); found {
				s.base = addr
				go func() {
					for range s.lines {
					}
				}()
				return
			}
			s.banner = append(s.banner, line)
		case <-deadline:
			t.Fatalf("server did not start; logs:\n%s", s.logs)
		}
	}
}

func call(t *testing.T, method, url, token string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		t.Fatalf("%s %s: decode: %v", method, url, err)
	}
	return res.StatusCode, out
}

func TestEndToEnd_SellerAndStoresOverRealHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the server")
	}
	bin := buildServer(t)
	const op = "e2e-operator-token-0123456789"
	s := startServer(t, bin, "-memory", "-operator-token", op)

	status, seller := call(t, "POST", s.base+"/operator/users", op, map[string]any{
		"nickname": "E2E_SELLER", "site_id": "MLA", "first_name": "Eva", "last_name": "Seller", "tags": []string{"normal", "warehouse_management"},
	})
	if status != http.StatusCreated {
		t.Fatalf("create seller: %d %v", status, seller)
	}
	sellerID := int64(seller["id"].(float64))
	sellerToken := seller["access_token"].(string)
	for i := 0; i < 2; i++ {
		status, store := call(t, "POST", fmt.Sprintf("%s/operator/users/%d/stores", s.base, sellerID), op, map[string]any{
			"description": fmt.Sprintf("Warehouse %d", i), "tags": []string{"stock_location"},
		})
		if status != http.StatusCreated {
			t.Fatalf("create store: %d %v", status, store)
		}
	}
	status, buyer := call(t, "POST", s.base+"/operator/users", op, map[string]any{"nickname": "E2E_BUYER", "site_id": "MLA"})
	if status != http.StatusCreated {
		t.Fatalf("create buyer: %d %v", status, buyer)
	}
	buyerToken := buyer["access_token"].(string)

	status, me := call(t, "GET", fmt.Sprintf("%s/users/%d", s.base, sellerID), sellerToken, nil)
	if status != http.StatusOK || me["first_name"] != "Eva" || me["nickname"] != "E2E_SELLER" {
		t.Fatalf("own record: %d %v", status, me)
	}
	status, pub := call(t, "GET", fmt.Sprintf("%s/users/%d", s.base, sellerID), buyerToken, nil)
	if _, personal := pub["first_name"]; status != http.StatusOK || personal {
		t.Fatalf("public record: %d %v", status, pub)
	}
	status, stores := call(t, "GET", fmt.Sprintf("%s/users/%d/stores/search?tags=stock_location", s.base, sellerID), sellerToken, nil)
	if status != http.StatusOK || stores["paging"].(map[string]any)["total"] != float64(2) || len(stores["results"].([]any)) != 2 {
		t.Fatalf("stores: %d %v", status, stores)
	}
	status, denied := call(t, "GET", fmt.Sprintf("%s/users/%d/stores/search?tags=stock_location", s.base, sellerID), buyerToken, nil)
	if status != http.StatusForbidden || denied["status"] != float64(403) {
		t.Fatalf("stores of another: %d %v", status, denied)
	}
	status, anon := call(t, "GET", fmt.Sprintf("%s/users/%d/stores/search", s.base, sellerID), "", nil)
	if status != http.StatusUnauthorized || anon["error"] != "unauthorized" {
		t.Fatalf("no token: %d %v", status, anon)
	}
	// A user's public subset is a public read.
	status, anonUser := call(t, "GET", fmt.Sprintf("%s/users/%d", s.base, sellerID), "", nil)
	if _, personal := anonUser["first_name"]; status != http.StatusOK || personal {
		t.Fatalf("public user read: %d %v", status, anonUser)
	}

	// Graceful shutdown on SIGTERM: the process exits cleanly.
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v; logs:\n%s", err, s.logs)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("server did not stop after SIGTERM")
	}
	if !strings.Contains(s.logs.String(), `"route":"/users/:user_id"`) {
		t.Fatalf("no request log line with the route; logs:\n%s", s.logs)
	}
}

func TestEndToEnd_DemoIsIdempotentAndBadgerDataSurvivesRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the server")
	}
	bin := buildServer(t)
	dir := t.TempDir()
	const op = "demo-operator-token-0123"
	var createdID float64
	var createdToken string
	for run := 0; run < 2; run++ {
		s := startServer(t, bin, "-data", dir, "-demo", "-operator-token", op)
		status, stores := call(t, "GET", s.base+"/users/100000001/stores/search?tags=stock_location", "APP_USR-demo-seller-0000000000000001", nil)
		if status != http.StatusOK || stores["paging"].(map[string]any)["total"] != float64(2) {
			t.Fatalf("run %d: demo stores (two, not more): %d %v", run, status, stores)
		}
		if run == 0 {
			status, u := call(t, "POST", s.base+"/operator/users", op, map[string]any{"nickname": "KEPT", "site_id": "MLA"})
			if status != http.StatusCreated {
				t.Fatalf("create: %d %v", status, u)
			}
			createdID, createdToken = u["id"].(float64), u["access_token"].(string)
		} else {
			status, u := call(t, "GET", fmt.Sprintf("%s/users/%.0f", s.base, createdID), createdToken, nil)
			if status != http.StatusOK || u["nickname"] != "KEPT" {
				t.Fatalf("after restart: %d %v", status, u)
			}
		}
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		if err := s.cmd.Wait(); err != nil {
			t.Fatalf("run %d: exit: %v", run, err)
		}
	}
}
