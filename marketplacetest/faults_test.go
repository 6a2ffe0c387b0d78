package marketplacetest_test

import (
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/marketplace/marketplace/faults"
	"github.com/marketplace/marketplace/marketplacetest"
)

func TestWireFault_EmptyResponseReachesTheClientAsEOFUntilCleared(t *testing.T) {
	srv := marketplacetest.NewServer(t)
	srv.WireFault(t, "GET", "/sites/{site_id}", faults.EmptyResponse)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	_, err := client.Get(srv.URL + "/sites/MLA")
	if !errors.Is(err, io.EOF) {
		t.Fatalf("err = %v, want io.EOF", err)
	}
	srv.ClearFaults(t)
	resp, err := client.Get(srv.URL + "/sites/MLA")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d after clearing, want 200", resp.StatusCode)
	}
}
