package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docs/compatibility.md's table of public packages tells an outsider who
// each recorded package is for. A package recorded in api/marketplace.txt
// but missing from the table is a promise nobody explained, so every
// recorded package must be in the table's first column (by its path in the
// module; the root as `marketplace`), and every package the table names
// must be recorded.
func TestCompatibilityDoc_TableListsEveryRecordedPackage(t *testing.T) {
	root, err := moduleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	recorded, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(File)))
	if err != nil {
		t.Fatal(err)
	}
	module, err := goCommand(root, "list", "-m", "-f", "{{.Path}}")
	if err != nil {
		t.Fatal(err)
	}
	mod := strings.TrimSpace(string(module))
	var packages []string
	for _, line := range Parse(recorded) {
		path, _, ok := strings.Cut(strings.TrimPrefix(line, "pkg "), ", ")
		if !ok {
			continue
		}
		name := "marketplace"
		if rel, nested := strings.CutPrefix(path, mod+"/"); nested {
			name = rel
		}
		if !slices.Contains(packages, name) {
			packages = append(packages, name)
		}
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "compatibility.md"))
	if err != nil {
		t.Fatal(err)
	}
	table := packageTable(string(doc))
	if len(table) < 10 {
		t.Fatalf("docs/compatibility.md's package table names %d packages: the test reads it wrong, or the table is gone", len(table))
	}
	for _, p := range packages {
		if !slices.Contains(table, p) {
			t.Errorf("docs/compatibility.md's table of public packages lacks `%s`, which %s records", p, File)
		}
	}
	for _, p := range table {
		if !slices.Contains(packages, p) {
			t.Errorf("docs/compatibility.md's table names `%s`, which %s does not record", p, File)
		}
	}
}

// packageTable is every package the first column of the table under the
// header "| Package |" names in backticks.
func packageTable(doc string) []string {
	quoted := regexp.MustCompile("`([^`]+)`")
	var names []string
	in := false
	for _, line := range strings.Split(doc, "\n") {
		switch {
		case strings.HasPrefix(line, "| Package |"):
			in = true
		case in && !strings.HasPrefix(line, "|"):
			return names
		case in:
			cells := strings.Split(line, "|")
			if len(cells) < 2 {
				continue
			}
			for _, m := range quoted.FindAllStringSubmatch(cells[1], -1) {
				names = append(names, m[1])
			}
		}
	}
	return names
}
