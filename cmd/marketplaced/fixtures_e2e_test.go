package main

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

const e2eFixtures = `{
  "users": [{"name": "shop", "nickname": "SHOP", "site_id": "MLA", "tokens": ["APP_USR-e2e-shop-token-0000001"]}],
  "stores": [{"name": "main", "user": "shop", "description": "Main", "tags": ["stock_location"]}]
}`

func sendNoBody(t *testing.T, method, url, token string) int {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	return res.StatusCode
}

func TestEndToEnd_FixturesAtStartResetAndSnapshotsSurviveARestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the server")
	}
	bin := buildServer(t)
	dir := t.TempDir()
	file := filepath.Join(t.TempDir(), "fixtures.json")
	if err := os.WriteFile(file, []byte(e2eFixtures), 0o600); err != nil {
		t.Fatal(err)
	}
	const op = "fixtures-operator-token-0123"
	const shopToken = "APP_USR-e2e-shop-token-0000001"
	for run := 0; run < 2; run++ {
		s := startServer(t, bin, "-data", dir, "-demo", "-fixtures", file, "-operator-token", op)
		if !strings.Contains(strings.Join(s.banner, "\n"), "fixtures "+file+": 1 user, 1 store") {
			t.Errorf("run %d: banner %q", run, s.banner)
		}
		// The demo seller came first, so the fixture's user is the third.
		status, stores := call(t, "GET", s.base+"/users/100000003/stores/search", shopToken, nil)
		if status != http.StatusOK || stores["paging"].(map[string]any)["total"] != float64(1) {
			t.Fatalf("run %d: the fixture's store (one, not more): %d %v", run, status, stores)
		}
		if run == 0 {
			if status, snap := call(t, "POST", s.base+"/operator/snapshots", op, map[string]any{"name": "with shop"}); status != http.StatusCreated {
				t.Fatalf("snapshot: %d %v", status, snap)
			}
			if status := sendNoBody(t, "POST", s.base+"/operator/reset", op); status != http.StatusNoContent {
				t.Fatalf("reset: %d", status)
			}
			if status := sendNoBody(t, "GET", s.base+"/users/100000003", shopToken); status != http.StatusUnauthorized {
				t.Fatalf("the fixture's token after reset: %d", status)
			}
		} else {
			// The snapshot survived the reset and the restart.
			if status := sendNoBody(t, "POST", s.base+"/operator/snapshots/1/restore", op); status != http.StatusNoContent {
				t.Fatalf("restore after restart: %d", status)
			}
			if status := sendNoBody(t, "GET", s.base+"/users/100000003", shopToken); status != http.StatusOK {
				t.Fatalf("the fixture's token after restore: %d", status)
			}
		}
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		if err := s.cmd.Wait(); err != nil {
			t.Fatalf("run %d: exit: %v", run, err)
		}
	}

	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"stores": [{"name": "main", "user": "ghost"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "-memory", "-fixtures", bad, "-addr", "127.0.0.1:0").CombinedOutput()
	if err == nil || !strings.Contains(string(out), `Invalid fixture stores[0] ("main"), field user: no record of users is named "ghost"`) {
		t.Errorf("a bad fixtures file: %v\n%s", err, out)
	}
}
