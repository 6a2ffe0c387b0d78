package main

import (
	"net/http"
	"testing"
)

// TestEndToEnd_CORSOriginFlagAnswersPreflightsAndPublicReadsNeedNoToken
// starts the binary with -cors-origin and sends what a browser app sends.
func TestEndToEnd_CORSOriginFlagAnswersPreflightsAndPublicReadsNeedNoToken(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the server")
	}
	bin := buildServer(t)
	s := startServer(t, bin, "-memory", "-operator-token", "e2e-operator-token-0123456789", "-cors-origin", "http://localhost:5173")

	req, err := http.NewRequest(http.MethodOptions, s.base+"/sites/MLA", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Origin", "http://localhost:5173")
	req.Header.Set("Access-Control-Request-Method", "GET")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent || res.Header.Get("Access-Control-Allow-Origin") != "http://localhost:5173" ||
		res.Header.Get("Access-Control-Allow-Methods") != "GET, OPTIONS" {
		t.Fatalf("preflight: %d %v", res.StatusCode, res.Header)
	}

	status, site := call(t, "GET", s.base+"/sites/MLA", "", nil)
	if status != http.StatusOK || site["default_currency_id"] != "ARS" {
		t.Fatalf("public read without a token: %d %v", status, site)
	}
	status, body := call(t, "GET", s.base+"/sites/MLA", "APP_USR-not-a-token", nil)
	if status != http.StatusUnauthorized || body["message"] != "Invalid access token" {
		t.Fatalf("bad token on a public read: %d %v", status, body)
	}
}
