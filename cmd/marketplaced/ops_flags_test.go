package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

func TestVersionFlag_PrintsTheBuildAsJSONAndExits(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-version", "-memory"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatalf("not JSON: %q", out.String())
	}
	if v["module"] != "github.com/marketplace/marketplace" || !strings.HasPrefix(v["go"].(string), "go") {
		t.Errorf("version %v", v)
	}
}

func TestSubcommands_HelpShowsTheirOwnUsage(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(stderr io.Writer) error
		want string
	}{
		{"import", func(w io.Writer) error {
			return runImport(context.Background(), []string{"-h"}, strings.NewReader(""), io.Discard, w)
		}, "usage: marketplaced import"},
		{"migrate", func(w io.Writer) error { return runMigrate(context.Background(), []string{"-h"}, io.Discard, w) }, "usage: marketplaced migrate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var errOut bytes.Buffer
			if err := tc.run(&errOut); err != nil {
				t.Fatal(err)
			}
			got := errOut.String()
			if !strings.HasPrefix(got, tc.want) {
				t.Errorf("usage starts %q, want %q", got[:min(len(got), 60)], tc.want)
			}
			if strings.Contains(got, "-cors-origin") || !strings.Contains(got, "-postgres") {
				t.Errorf("usage lists the server's flags instead of the subcommand's:\n%s", got)
			}
		})
	}
}

func TestFlags_ABadEnvironmentValueNamesTheAcceptedValues(t *testing.T) {
	for _, tc := range []struct{ env, value, want string }{
		{"MARKETPLACE_CLOCK", "sundial", "MARKETPLACE_CLOCK=\"sundial\": accepted values are wall, manual"},
		{"MARKETPLACE_LOG_LEVEL", "loud", "accepted values are debug, info, warn, error"},
		{"MARKETPLACE_MEMORY", "maybe", "accepted values are true, false"},
		{"MARKETPLACE_SHUTDOWN_TIMEOUT", "soon", "accepted values are a duration"},
		{"MARKETPLACE_JOURNAL", "many", "accepted values are an integer"},
	} {
		t.Run(tc.env, func(t *testing.T) {
			t.Setenv(tc.env, tc.value)
			_, err := parseFlags(nil, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestFlags_OperationsFlags(t *testing.T) {
	c, err := parseFlags([]string{"-metrics-addr", "127.0.0.1:9100", "-pprof", "127.0.0.1:6060", "-validate-requests"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Metrics || c.MetricsAddr != "127.0.0.1:9100" || c.Pprof != "127.0.0.1:6060" || !c.ValidateRequests {
		t.Fatalf("%+v", c)
	}
	t.Setenv("MARKETPLACE_METRICS", "false")
	if c, _ := parseFlags(nil, io.Discard); c.Metrics {
		t.Error("MARKETPLACE_METRICS=false left the metrics on")
	}
}
