package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/marketplace/marketplace/notify"
)

func TestNotifyFlags_DefaultsRefusePrivateCallbacksAndTime500ms(t *testing.T) {
	c, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.AllowPrivateCallbacks || c.NotificationTimeout != 500*time.Millisecond || notify.DefaultTimeout != 500*time.Millisecond {
		t.Fatalf("allow-private-callbacks %v, notification-timeout %s", c.AllowPrivateCallbacks, c.NotificationTimeout)
	}
}

func TestNotifyFlags_SetByCommandLineOrEnvironmentAndTheCommandLineWins(t *testing.T) {
	c, err := parseFlags([]string{"-allow-private-callbacks", "-notification-timeout", "2s"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !c.AllowPrivateCallbacks || c.NotificationTimeout != 2*time.Second {
		t.Fatalf("command line: %v %s", c.AllowPrivateCallbacks, c.NotificationTimeout)
	}

	t.Setenv("MARKETPLACE_ALLOW_PRIVATE_CALLBACKS", "true")
	t.Setenv("MARKETPLACE_NOTIFICATION_TIMEOUT", "750ms")
	c, err = parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !c.AllowPrivateCallbacks || c.NotificationTimeout != 750*time.Millisecond {
		t.Fatalf("environment: %v %s", c.AllowPrivateCallbacks, c.NotificationTimeout)
	}
	c, err = parseFlags([]string{"-allow-private-callbacks=false", "-notification-timeout", "3s"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.AllowPrivateCallbacks || c.NotificationTimeout != 3*time.Second {
		t.Fatalf("the command line should win: %v %s", c.AllowPrivateCallbacks, c.NotificationTimeout)
	}
}

func TestNotifyFlags_TimeoutMustBeAPositiveDuration(t *testing.T) {
	for _, v := range []string{"0", "0s", "-5ms", "500", "soon"} {
		if _, err := parseFlags([]string{"-notification-timeout", v}, io.Discard); err == nil {
			t.Errorf("-notification-timeout %s accepted", v)
		}
	}
	if _, err := parseFlags([]string{"-allow-private-callbacks=maybe"}, io.Discard); err == nil {
		t.Error("-allow-private-callbacks=maybe accepted")
	}
	t.Setenv("MARKETPLACE_NOTIFICATION_TIMEOUT", "-1s")
	if _, err := parseFlags(nil, io.Discard); err == nil {
		t.Error("a negative timeout from the environment was accepted")
	}
}

// registerCallback tries to register an application of a new user with url.
func registerCallback(t *testing.T, s *server, op, url string) (int, map[string]any) {
	t.Helper()
	owner, _ := e2eUser(t, s, op, fmt.Sprintf("OWNER_%d", time.Now().UnixNano()))
	return call(t, "POST", s.base+"/operator/applications", op, map[string]any{
		"name": "Local", "owner_user_id": owner, "callback_url": url, "topics": []string{"questions"},
	})
}

func TestNotifyFlags_AllowPrivateCallbacksDecidesWhetherLoopbackReceiversMayBeRegistered(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the server")
	}
	bin := buildServer(t)
	const op = "flags-operator-token-0123456789"
	strict := startServer(t, bin, "-memory", "-operator-token", op)
	open := startServer(t, bin, "-memory", "-allow-private-callbacks", "-operator-token", op)
	cases := []struct {
		name    string
		s       *server
		url     string
		status  int
		message string
	}{
		{"LoopbackRefusedByDefault", strict, "http://127.0.0.1:9000/hook", 400, "Callback URL not allowed: 127.0.0.1 is a loopback address (allowed only with -allow-private-callbacks)"},
		{"LocalhostRefusedByDefault", strict, "http://localhost:9000/hook", 400, "Callback URL not allowed: localhost is a loopback address (allowed only with -allow-private-callbacks)"},
		{"PrivateRefusedByDefault", strict, "http://192.168.1.10/hook", 400, "Callback URL not allowed: 192.168.1.10 is a private address (allowed only with -allow-private-callbacks)"},
		{"LoopbackAllowedWithTheFlag", open, "http://127.0.0.1:9000/hook", 201, ""},
		{"LocalhostAllowedWithTheFlag", open, "http://localhost:9000/hook", 201, ""},
		{"PrivateAllowedWithTheFlag", open, "http://10.1.2.3:8080/hook", 201, ""},
		{"MetadataRefusedEvenWithTheFlag", open, "http://169.254.169.254/latest/meta-data", 400, "Callback URL not allowed: 169.254.169.254 is a link-local address"},
		{"MetadataNameRefusedEvenWithTheFlag", open, "http://metadata.google.internal/", 400, "Callback URL not allowed: metadata.google.internal is a cloud metadata address"},
		{"LinkLocalV6RefusedEvenWithTheFlag", open, "http://[fe80::1]/", 400, "Callback URL not allowed: fe80::1 is a link-local address"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body := registerCallback(t, c.s, op, c.url)
			if status != c.status {
				t.Fatalf("status %d, want %d: %v", status, c.status, body)
			}
			if c.message != "" && (body["message"] != c.message || body["error"] != "bad_request" || body["status"] != float64(400)) {
				t.Fatalf("error body: %v", body)
			}
			if c.status == 201 && body["callback_url"] != c.url {
				t.Fatalf("created: %v", body)
			}
		})
	}
}

// firstAttempt waits for the first recorded attempt of application id.
func firstAttempt(t *testing.T, s *server, op string, id any) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		status, d := call(t, "GET", fmt.Sprintf("%s/operator/applications/%.0f/deliveries", s.base, id), op, nil)
		if status != http.StatusOK {
			t.Fatalf("deliveries: %d %v", status, d)
		}
		if results, _ := d["results"].([]any); len(results) > 0 {
			return results[len(results)-1].(map[string]any)
		}
		if time.Now().After(deadline) {
			t.Fatal("no attempt was recorded")
		}
	}
}

func TestNotifyFlags_NotificationTimeoutBoundsEachPOST(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the server")
	}
	bin := buildServer(t)
	const op = "flags-operator-token-0123456789"

	t.Run("AReceiverThatNeverAnswersFailsAtTheTimeout", func(t *testing.T) {
		s := startServer(t, bin, "-memory", "-allow-private-callbacks", "-notification-timeout", "100ms", "-operator-token", op)
		release := make(chan struct{})
		rcv := newReceiver(t, func(int64) int { <-release; return http.StatusOK })
		defer close(release)
		seller, sellerToken := e2eUser(t, s, op, "SLOW_SELLER")
		_, buyerToken := e2eUser(t, s, op, "SLOW_BUYER")
		app := e2eApp(t, s, op, seller, rcv.srv.URL)
		e2eAsk(t, s, buyerToken, e2eItem(t, s, sellerToken))
		a := firstAttempt(t, s, op, app["id"])
		res := a["response"].(map[string]any)
		if a["outcome"] != "retry" || res["http_code"] != float64(0) || !strings.Contains(strings.ToLower(res["error"].(string)), "timeout") {
			t.Fatalf("a POST past the timeout is a failed attempt without an answer: %v", a)
		}
	})

	t.Run("AReceiverSlowerThanTheDefaultIsAcknowledgedWithALongerTimeout", func(t *testing.T) {
		s := startServer(t, bin, "-memory", "-allow-private-callbacks", "-notification-timeout", "30s", "-operator-token", op)
		// 800 ms is past the 500 ms default and far within the 30 s set.
		rcv := newReceiver(t, func(int64) int { time.Sleep(800 * time.Millisecond); return http.StatusOK })
		seller, sellerToken := e2eUser(t, s, op, "PATIENT_SELLER")
		_, buyerToken := e2eUser(t, s, op, "PATIENT_BUYER")
		app := e2eApp(t, s, op, seller, rcv.srv.URL)
		e2eAsk(t, s, buyerToken, e2eItem(t, s, sellerToken))
		a := firstAttempt(t, s, op, app["id"])
		if a["outcome"] != "acknowledged" || a["response"].(map[string]any)["http_code"] != float64(200) {
			t.Fatalf("the first attempt should be acknowledged: %v", a)
		}
	})
}
