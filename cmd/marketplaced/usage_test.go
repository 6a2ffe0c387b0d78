package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The -h texts are compared with files written from the server's output
// (go run ./cmd/marketplaced -h 2>testdata/usage.golden, and so on): scripts
// and documentation quote them, so a change to one is made on purpose.
func TestUsage_IsTheTextOfTheGoldenFiles(t *testing.T) {
	clearEnvironment(t)
	for _, tc := range []struct {
		golden string
		run    func(stderr io.Writer) error
	}{
		{"usage.golden", func(w io.Writer) error { return run(context.Background(), []string{"-h"}, io.Discard, w) }},
		{"usage-import.golden", func(w io.Writer) error {
			return runImport(context.Background(), []string{"-h"}, strings.NewReader(""), io.Discard, w)
		}},
		{"usage-migrate.golden", func(w io.Writer) error { return runMigrate(context.Background(), []string{"-h"}, io.Discard, w) }},
		{"usage-drift.golden", func(w io.Writer) error { return runDrift([]string{"-h"}, io.Discard, w) }},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata", tc.golden))
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := tc.run(&got); err != nil {
				t.Fatal(err)
			}
			if got.String() != string(want) {
				t.Errorf("usage:\n%s\nwant:\n%s", got.String(), want)
			}
		})
	}
}

// clearEnvironment unsets every MARKETPLACE_ variable for the test: they
// would change the values a subcommand's usage shows.
func clearEnvironment(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "MARKETPLACE_") {
			t.Setenv(name, "") // restored after the test
			os.Unsetenv(name)
		}
	}
}
