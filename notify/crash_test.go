package notify_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/badger"
)

// crashEnv names the folder and the seller of the child process of the crash
// test; the child test does nothing unless it is set.
const crashEnv = "MARKETPLACE_NOTIFY_CRASH"

// TestCrashChild is the child of
// TestDelivery_EveryCommittedEventIsDeliveredAcrossSIGKILL: it runs the
// delivery loop on Badger and appends events, each in its own transaction,
// printing each one's number once its Update has returned, until it is
// killed.
func TestCrashChild(t *testing.T) {
	arg := os.Getenv(crashEnv)
	if arg == "" {
		t.Skip("runs only as the child of the crash test")
	}
	dir, sellerText, _ := strings.Cut(arg, "|")
	seller, _ := strconv.ParseInt(sellerText, 10, 64)
	m, err := marketplace.Open(context.Background(), badger.Dir(dir), marketplace.Options{Clock: clock.Wall{},
		Notifications: notify.Options{AllowPrivateCallbacks: true, Timeout: 10 * time.Second}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(2)
	}
	ctx := context.Background()
	go func() { _ = m.Start(ctx) }()
	// The parent kills this process; the bound only stops a child whose
	// parent went away.
	for n := 1; n <= 100000; n++ {
		err := m.Store().Update(ctx, func(tx storage.Tx) error {
			_, err := notify.Append(ctx, m.Store(), tx, notify.Event{Topic: notify.TopicQuestions, UserID: seller,
				Resource: fmt.Sprintf("/questions/%d", n), Action: "created", Received: time.Now()})
			return err
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "append:", err)
			os.Exit(2)
		}
		fmt.Printf("committed %d\n", n)
	}
	os.Exit(0)
}

// TestDelivery_EveryCommittedEventIsDeliveredAcrossSIGKILL kills a process
// that appends events while its loop delivers them, in the middle of
// fan-outs, POSTs and records, then opens the store again: every event whose
// commit was acknowledged reaches the receiver, at least once.
func TestDelivery_EveryCommittedEventIsDeliveredAcrossSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir := t.TempDir()
	rcv := newReceiver(t, always(http.StatusOK))
	opts := marketplace.Options{Clock: clock.Wall{},
		Notifications: notify.Options{AllowPrivateCallbacks: true, Timeout: 10 * time.Second}}
	m1, err := marketplace.Open(context.Background(), badger.Dir(dir), opts)
	if err != nil {
		t.Fatal(err)
	}
	e1 := &env{t: t, ctx: context.Background(), m: m1}
	seller := e1.mustUser()
	e1.mustApp(seller, rcv.URL)
	if err := m1.Close(); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(os.Args[0], "-test.run", "^TestCrashChild$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%d", crashEnv, dir, seller))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	committed := 0
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		n, ok := strings.CutPrefix(lines.Text(), "committed ")
		if !ok {
			continue
		}
		committed, _ = strconv.Atoi(n)
		if committed >= 400 && len(rcv.got()) >= 100 {
			break
		}
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if committed < 400 {
		t.Fatalf("the child stopped after %d events", committed)
	}
	before := len(rcv.got())

	m2, err := marketplace.Open(context.Background(), badger.Dir(dir), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = m2.Start(ctx) }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		seen := map[string]bool{}
		for _, h := range rcv.got() {
			seen[h.Body.Resource] = true
		}
		missing := 0
		for n := 1; n <= committed; n++ {
			if !seen[fmt.Sprintf("/questions/%d", n)] {
				missing++
			}
		}
		if missing == 0 {
			t.Logf("%d events committed, %d POSTs before the kill, %d after", committed, before, len(rcv.got())-before)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d committed events never reached the receiver", missing, committed)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
