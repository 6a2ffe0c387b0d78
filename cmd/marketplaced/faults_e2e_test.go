package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/internal/pgtest"
)

// TestEndToEnd_FaultRulesAreSharedAndTimesAreExactAcrossServers starts two
// servers on one database: a rule made through one is applied by both, and
// its times are never used more than once between them.
func TestEndToEnd_FaultRulesAreSharedAndTimesAreExactAcrossServers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the server")
	}
	url := pgtest.NewDatabase(t)
	bin := buildServer(t)
	args := clusterArgs(url, clusterOp)
	servers := []*server{launchServer(t, bin, args...), launchServer(t, bin, args...)}
	for _, s := range servers {
		s.waitListening(t)
	}
	mustSend := func(method, url, token string, body any) reply {
		t.Helper()
		r, err := send(method, url, token, nil, body)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	limited := mustSend("POST", servers[0].base+"/operator/faults", clusterOp,
		map[string]any{"method": "GET", "route": "/currencies/{currency_id}", "status": 503, "times": 4})
	if limited.status != http.StatusCreated {
		t.Fatalf("create the rule: %v", limited)
	}
	// A rule that only marks the requests it sees, made after the first:
	// once the second server applies it, it has read the first too.
	probe := mustSend("POST", servers[0].base+"/operator/faults", clusterOp,
		map[string]any{"route": "/health", "latency_ms": 0})
	probeID := probe.body["id"]
	for seen := false; !seen; {
		mustSend("GET", servers[1].base+"/health", "", nil)
		j := mustSend("GET", servers[1].base+"/operator/requests?route=/health&limit=1", clusterOp, nil)
		results := j.body["results"].([]any)
		seen = len(results) > 0 && results[0].(map[string]any)["fault_id"] == probeID
		if !seen {
			time.Sleep(20 * time.Millisecond) // the poll interval is 100 ms
		}
	}

	faulted := 0
	for i := range 12 {
		r := mustSend("GET", servers[i%2].base+"/currencies/ARS", marketplace.DemoSellerToken, nil)
		switch {
		case r.status == http.StatusServiceUnavailable && errorBodyIs(r, 503, "service_not_available", "Service not available"):
			faulted++
		case r.status != http.StatusOK:
			t.Fatalf("request %d: %v", i, r)
		}
	}
	if faulted != 4 {
		t.Fatalf("%d requests faulted across the servers, want exactly 4", faulted)
	}
	for i, s := range servers {
		j := mustSend("GET", s.base+"/operator/requests?route=/currencies/{id}", clusterOp, nil)
		if got := j.body["paging"].(map[string]any)["total"]; got != float64(6) {
			t.Errorf("server %d journal: %v entries, want its own 6", i, got)
		}
		if strings.Contains(string(j.raw), marketplace.DemoSellerToken) {
			t.Errorf("server %d journal holds a token: %s", i, j.raw)
		}
	}
	// The logs are read once the servers have stopped writing them.
	for i, s := range servers {
		stopCleanly(t, s, fmt.Sprintf("server %d", i))
		if !strings.Contains(s.logs.String(), `"path":"/currencies/ARS"`) {
			t.Errorf("server %d log lines carry no path", i)
		}
	}
}
