package proptest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDoc_PropertiesShownAreTheOnesGoTestRuns keeps docs/property-testing.md
// honest: every Go block of it that is a whole test function is, verbatim,
// in one of the package's test files.
func TestDoc_PropertiesShownAreTheOnesGoTestRuns(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "property-testing.md"))
	if err != nil {
		t.Fatal(err)
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
	shown := 0
	for _, part := range strings.Split(string(doc), "```go\n")[1:] {
		block, _, _ := strings.Cut(part, "\n```")
		if !strings.HasPrefix(block, "func Test") {
			continue
		}
		shown++
		if !strings.Contains(src.String(), block) {
			name, _, _ := strings.Cut(block, "(")
			t.Errorf("docs/property-testing.md shows %s as no test file has it", name)
		}
	}
	if shown == 0 {
		t.Error("docs/property-testing.md shows no whole property")
	}
}
