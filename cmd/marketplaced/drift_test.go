package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/marketplace/marketplace/marketplacetest"
)

// recordHAR writes what the engine answers to each path as a HAR 1.2 file,
// its answers changed by seed (nil keeps them), and returns its name.
func recordHAR(t *testing.T, dir string, seed func(path string, body map[string]any), paths ...string) string {
	t.Helper()
	srv := marketplacetest.NewServer(t)
	var entries []any
	for _, p := range paths {
		res, err := srv.Client("").Do(context.Background(), "GET", p, nil)
		if err != nil {
			t.Fatal(err)
		}
		body := string(res.Body)
		if seed != nil {
			var m map[string]any
			if err := json.Unmarshal(res.Body, &m); err != nil {
				t.Fatal(err)
			}
			seed(p, m)
			b, _ := json.Marshal(m)
			body = string(b)
		}
		entries = append(entries, map[string]any{
			"request":  map[string]any{"method": "GET", "url": "https://api.mercadolibre.com" + p, "headers": []any{}},
			"response": map[string]any{"status": res.Status, "headers": []any{}, "content": map[string]any{"mimeType": res.Header.Get("Content-Type"), "text": body}},
		})
	}
	b, err := json.Marshal(map[string]any{"log": map[string]any{"version": "1.2", "entries": entries}})
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, "recording.har")
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

func TestDriftCommand_ExchangesOfTheEngineItselfPass(t *testing.T) {
	har := recordHAR(t, t.TempDir(), nil, "/currencies/ARS", "/sites/MLA", "/items/MLA999")
	var out bytes.Buffer
	if err := runDrift([]string{har}, &out, &out); err != nil {
		t.Fatalf("drift: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "3 exchanges in 1 file: 3 on emulated routes, 0 of them on 0 routes differ") {
		t.Errorf("summary:\n%s", out.String())
	}
}

func TestDriftCommand_ADifferenceFailsWithItsRouteAndPath(t *testing.T) {
	har := recordHAR(t, t.TempDir(), func(p string, m map[string]any) {
		if p == "/currencies/ARS" {
			m["decimal_places"] = "2"
			m["shipping"] = map[string]any{"logistic_type": "fulfillment"}
		}
	}, "/currencies/ARS", "/sites/MLA")
	var out bytes.Buffer
	err := runDrift([]string{har}, &out, &out)
	if err == nil || errors.As(err, new(usageError)) {
		t.Fatalf("err %v, want a plain error (exit status 1)", err)
	}
	for _, want := range []string{"GET /currencies/{currency_id}: 1 of 1 exchange differ",
		"200 $.decimal_places: the type is string, ours integer", "200 $.shipping: a field ours never sends",
		"e.g. " + har + "#1: GET https://api.mercadolibre.com/currencies/ARS answered 200",
		"Routes that match the contract: GET /sites/{site_id} (1)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the summary lacks %q:\n%s", want, out.String())
		}
	}

	out.Reset()
	if err := runDrift([]string{"-json", har}, &out, &out); err == nil {
		t.Fatal("-json: no error")
	}
	var rep struct {
		Differing int `json:"differing"`
		Routes    []struct {
			Method, Path string
			Differences  []struct {
				Status int
				Kind   string
				Path   string
			}
		}
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("-json: %v\n%s", err, out.String())
	}
	if rep.Differing != 1 || len(rep.Routes) != 2 || rep.Routes[0].Path != "/currencies/{currency_id}" ||
		len(rep.Routes[0].Differences) != 2 || rep.Routes[0].Differences[0].Path != "$.decimal_places" {
		t.Errorf("-json: %s", out.String())
	}
}

func TestDriftCommand_APathThatCannotBeReadIsAUsageError(t *testing.T) {
	var out bytes.Buffer
	for _, args := range [][]string{{}, {filepath.Join(t.TempDir(), "nowhere.har")}, {"-color"}} {
		if err := runDrift(args, &out, &out); !errors.As(err, new(usageError)) {
			t.Errorf("drift %q: err %v, want a usage error (exit status 2)", args, err)
		}
	}
}

// The exit statuses CI reads, through the binary.
func TestDriftCommand_ExitStatusSaysWhetherAnythingDrifts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildServer(t)
	dir := t.TempDir()
	clean := recordHAR(t, t.TempDir(), nil, "/currencies/ARS")
	drifted := recordHAR(t, dir, func(_ string, m map[string]any) { delete(m, "symbol") }, "/currencies/ARS")
	for _, tc := range []struct {
		path string
		want int
	}{{clean, 0}, {drifted, 1}, {filepath.Join(dir, "nowhere"), 2}} {
		err := exec.Command(bin, "drift", tc.path).Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tc.want {
			t.Errorf("drift %s: exit status %d, want %d", tc.path, code, tc.want)
		}
	}
}
