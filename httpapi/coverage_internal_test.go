package httpapi

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/marketplace/marketplace/faults"
)

var update = flag.Bool("update", false, "write docs/coverage.md from the route table")

func TestCoverageDoc_IsTheRouteTable(t *testing.T) {
	s := tableServer(t)
	want := s.coverageMarkdown()
	path := filepath.Join("..", "docs", "coverage.md")
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("docs/coverage.md is not the route table's: run go test ./httpapi -run TestCoverageDoc -update")
	}
}

func TestCoverage_NoStubRouteIsEmulated(t *testing.T) {
	keys := tableServer(t).emulatedKeys()
	seen := map[string]bool{}
	for _, st := range stubOnly {
		k := st.method + " " + faults.TemplateKey(st.path)
		if keys[k] {
			t.Errorf("%s %s is in the route table: take it out of stubOnly", st.method, st.path)
		}
		if seen[k] {
			t.Errorf("%s %s is listed twice", st.method, st.path)
		}
		seen[k] = true
	}
}
