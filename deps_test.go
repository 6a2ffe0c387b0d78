package marketplace_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestMemoryOnlyEmbedder_LinksNeitherBadgerNorPgx: a program that runs the
// engine on memory (testdata/memoryembedder: marketplace.New on
// storage/memory, served by httpapi) must not link the durable backends and
// their transitive packages; the backend is an opener the caller names
// (badger.Dir, postgres.URL), never an import of the root package.
func TestMemoryOnlyEmbedder_LinksNeitherBadgerNorPgx(t *testing.T) {
	// go test puts its own go command first in the PATH of the test.
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the packages a program links: %v", err)
	}
	for _, pkg := range []string{".", "./testdata/memoryembedder"} {
		out, err := exec.Command(goTool, "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 10 {
			t.Fatalf("go list -deps %s listed %d packages; want the engine's dependencies", pkg, len(deps))
		}
		for _, dep := range deps {
			for _, banned := range []string{"github.com/dgraph-io/badger", "github.com/jackc/pgx", "github.com/marketplace/marketplace/storage/badger", "github.com/marketplace/marketplace/storage/postgres"} {
				if strings.HasPrefix(dep, banned) {
					t.Errorf("go list -deps %s: links %s", pkg, dep)
				}
			}
		}
	}
}
