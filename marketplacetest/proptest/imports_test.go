package proptest_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestModels_ImportNothingOfTheEngine keeps the models independent of the
// code they check: the kit's own files import the standard library, rapid
// and the declarative packages a case is written in (fixtures, money),
// never a domain package, the engine or its HTTP adapter.
func TestModels_ImportNothingOfTheEngine(t *testing.T) {
	allowed := map[string]bool{
		"pgregory.net/rapid":                          true,
		"github.com/marketplace/marketplace/fixtures": true,
		"github.com/marketplace/marketplace/money":    true,
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range parsed.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.Contains(path, ".") && !allowed[path] {
				t.Errorf("%s imports %s", f, path)
			}
		}
	}
}
