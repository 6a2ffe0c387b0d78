package proptest_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// wholeFile is the marker of docs/property-testing.md before a Go block
// that is a whole file of the repository (internal/embedtest builds every
// block so marked in a module outside the repository).
var wholeFile = regexp.MustCompile("(?m)^<!-- whole: (\\S+) -->\n```go\n")

// TestDoc_PropertiesShownAreTheOnesGoTestRuns keeps docs/property-testing.md
// honest: every Go block of it marked whole is, byte for byte, the test
// file it names, and every other block that is a whole test function is,
// verbatim, in one of the package's test files.
func TestDoc_PropertiesShownAreTheOnesGoTestRuns(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "property-testing.md"))
	if err != nil {
		t.Fatal(err)
	}
	whole := map[string]bool{}
	for _, m := range wholeFile.FindAllStringSubmatchIndex(string(doc), -1) {
		name := string(doc[m[2]:m[3]])
		block, _, _ := strings.Cut(string(doc[m[1]:]), "```")
		file, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			t.Errorf("docs/property-testing.md shows %s whole: %v", name, err)
			continue
		}
		if block != string(file) {
			t.Errorf("docs/property-testing.md shows %s whole, but the file differs", name)
		}
		whole[block] = true
	}
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	var src strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.Write(b)
	}
	for _, part := range strings.Split(string(doc), "```go\n")[1:] {
		block, _, _ := strings.Cut(part, "\n```")
		if whole[block+"\n"] || !strings.HasPrefix(block, "func Test") {
			continue
		}
		if !strings.Contains(src.String(), block) {
			name, _, _ := strings.Cut(block, "(")
			t.Errorf("docs/property-testing.md shows %s as no test file has it", name)
		}
	}
	for _, f := range []string{"stock_test.go", "sales_test.go"} {
		if !whole[mustRead(t, f)] {
			t.Errorf("docs/property-testing.md does not show marketplacetest/proptest/%s whole", f)
		}
	}
}

func mustRead(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
