package main

import (
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// withPassword puts a password into a pgtest URL. The test servers trust
// every local connection and never ask for it, so it only shows where a
// password would leak.
func withPassword(url, password string) string {
	return strings.Replace(url, "postgres://postgres@", "postgres://postgres:"+password+"@", 1)
}

// stopServer sends SIGTERM and waits for a clean exit.
func stopServer(t *testing.T, s *server) {
	t.Helper()
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
}

// demoAccounts are the demo accounts a server printed at its start.
type demoAccounts struct {
	seller, buyer int64
	stores        [2]string
}

// printedDemo reads the demo accounts from what s printed before it
// listened: "demo seller: id N, token T, stores A and B" and "demo buyer:
// id N, token T".
func printedDemo(t *testing.T, s *server) demoAccounts {
	t.Helper()
	var d demoAccounts
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

// demoItem publishes an item of the demo seller with stock in its stores.
func demoItem(t *testing.T, s *server) string {
	t.Helper()
	stores := printedDemo(t, s).stores
	status, item := call(t, "POST", s.base+"/items/multiwarehouse", marketplace.DemoSellerToken, map[string]any{
		"title": "Auriculares inalámbricos", "category_id": "MLA1055", "price": 350000, "listing_type_id": "gold_special",
		"currency_id": "ARS", "condition": "new", "channels": []string{"marketplace"},
		"stock_locations": []map[string]any{{"store_id": stores[0], "quantity": 5}, {"store_id": stores[1], "quantity": 3}},
	})
	if status != http.StatusCreated {
		t.Fatalf("publish: %d %v", status, item)
	}
	return item["id"].(string)
}

// demoUsers counts the users with a DEMO_ nickname, looking at every id up
// to that of a user created now: ids may have gaps, where an attempt that
// lost a race drew one.
func demoUsers(t *testing.T, s *server, op string) map[string]int {
	t.Helper()
	probe, _ := e2eUser(t, s, op, "PROBE")
	found := map[string]int{}
	for id := probe - 1; id >= 100000001; id-- {
		status, u := call(t, "GET", fmt.Sprintf("%s/operator/users/%d", s.base, id), op, nil)
		if status == http.StatusNotFound {
			continue
		}
		if status != http.StatusOK {
			t.Fatalf("user %d: %d %v", id, status, u)
		}
		if nick, _ := u["nickname"].(string); strings.HasPrefix(nick, "DEMO_") {
			found[nick]++
		}
	}
	return found
}

func TestEndToEnd_PostgresKeepsQuestionsAndAnswersAcrossARestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the server")
	}
	url := withPassword(pgtest.NewDatabase(t), "hunter2-not-for-logs")
	bin := buildServer(t)
	const op = "pg-operator-token-0123456789"
	args := []string{"-postgres", url, "-demo", "-operator-token", op}

	s := startServer(t, bin, args...)
	item := demoItem(t, s)
	id := e2eAsk(t, s, marketplace.DemoBuyerToken, item)
	if status, body := call(t, "POST", s.base+"/answers", marketplace.DemoSellerToken, map[string]any{"question_id": id, "text": "Sí, en negro."}); status != http.StatusOK {
		t.Fatalf("answer: %d %v", status, body)
	}
	stopServer(t, s)
	logs := s.logs.String()
	if strings.Contains(logs, "hunter2") {
		t.Fatalf("the logs show the database password:\n%s", logs)
	}
	if !strings.Contains(logs, `"storage":"postgres:postgres://postgres@127.0.0.1:`) {
		t.Fatalf("the start log line does not name the database; logs:\n%s", logs)
	}

	s = startServer(t, bin, args...)
	status, q := call(t, "GET", fmt.Sprintf("%s/questions/%d?api_version=4", s.base, id), marketplace.DemoBuyerToken, nil)
	answer, _ := q["answer"].(map[string]any)
	if status != http.StatusOK || q["text"] != "Does it come with a case?" || q["status"] != "ANSWERED" || answer == nil || answer["text"] != "Sí, en negro." {
		t.Fatalf("the question after a restart: %d %v", status, q)
	}
	if n := demoUsers(t, s, op); n["DEMO_SELLER"] != 1 || n["DEMO_BUYER"] != 1 {
		t.Fatalf("demo users after two starts with -demo: %v; want one of each", n)
	}
}

func TestEndToEnd_TwoServersOnOneDatabaseStartTogetherAndShareEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the server")
	}
	url := pgtest.NewDatabase(t)
	bin := buildServer(t)
	const op = "pg-operator-token-0123456789"
	args := []string{"-postgres", url, "-demo", "-operator-token", op}
	// Both at the same moment on an empty database: tables, schema
	// version, reference data and demo accounts are all set up by two
	// processes at once.
	a, b := launchServer(t, bin, args...), launchServer(t, bin, args...)
	a.waitListening(t)
	b.waitListening(t)
	if strings.Join(a.banner, "\n") != strings.Join(b.banner, "\n") {
		t.Fatalf("the servers report other demo accounts:\nA: %q\nB: %q", a.banner, b.banner)
	}
	if n := demoUsers(t, a, op); n["DEMO_SELLER"] != 1 || n["DEMO_BUYER"] != 1 {
		t.Fatalf("demo users: %v; want one of each", n)
	}

	// A question asked through A is read through B.
	item := demoItem(t, a)
	id := e2eAsk(t, a, marketplace.DemoBuyerToken, item)
	status, q := call(t, "GET", fmt.Sprintf("%s/questions/%d?api_version=4", b.base, id), marketplace.DemoSellerToken, nil)
	if status != http.StatusOK || q["text"] != "Does it come with a case?" || q["item_id"] != item {
		t.Fatalf("the question through B: %d %v", status, q)
	}

	// A blacklist entry made through A stops an ask through B.
	demo := printedDemo(t, a)
	seller, buyer := demo.seller, demo.buyer
	if status, body := call(t, "POST", fmt.Sprintf("%s/users/%d/questions_blacklist", a.base, seller), marketplace.DemoSellerToken,
		map[string]any{"user_id": buyer}); status != http.StatusOK && status != http.StatusCreated {
		t.Fatalf("blacklist through A: %d %v", status, body)
	}
	status, refused := call(t, "POST", b.base+"/questions", marketplace.DemoBuyerToken, map[string]any{"text": "And in white?", "item_id": item})
	want := fmt.Sprintf("User %d is blocked from asking questions to seller %d", buyer, seller)
	if status != http.StatusForbidden || refused["status"] != float64(403) || refused["error"] != "forbidden" || refused["message"] != want {
		t.Fatalf("ask through B after the blacklist through A: %d %v; want 403 %q", status, refused, want)
	}

	stopServer(t, a)
	stopServer(t, b)
}

func TestEndToEnd_PostgresBesideAnExplicitDataFolderExitsWithStatus2(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the server")
	}
	bin := buildServer(t)
	for name, env := range map[string][]string{
		"Flags":       nil,
		"Environment": {"MARKETPLACE_DATA=" + t.TempDir()},
	} {
		t.Run(name, func(t *testing.T) {
			args := []string{"-postgres", "postgres://app@127.0.0.1:1/market"}
			if env == nil {
				args = append(args, "-data", t.TempDir())
			}
			cmd := exec.Command(bin, args...)
			cmd.Env = append(cmd.Environ(), env...)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 2 {
				t.Fatalf("err = %v; want exit status 2; output:\n%s", err, out)
			}
			if !strings.Contains(string(out), "-postgres cannot be combined with -data") {
				t.Fatalf("output:\n%s", out)
			}
		})
	}
}

func TestEndToEnd_UnreachablePostgresIsAnErrorNamingTheServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the server")
	}
	bin := buildServer(t)
	cmd := exec.Command(bin, "-postgres", "postgres://app:hunter2@127.0.0.1:1/market?sslmode=disable")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("err = %v; want exit status 1; output:\n%s", err, out)
	}
	text := string(out)
	if !strings.Contains(text, "127.0.0.1:1") || !strings.Contains(text, "unavailable") || strings.Contains(text, "panic") {
		t.Fatalf("output does not name the server, or panics:\n%s", text)
	}
	if strings.Contains(text, "hunter2") {
		t.Fatalf("output shows the password:\n%s", text)
	}
}
