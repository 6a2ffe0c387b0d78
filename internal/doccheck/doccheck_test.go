package doccheck_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/marketplace/marketplace/internal/doccheck"
)

// moduleRoot is the folder of the module's go.mod, asked of the go command
// so that the test does not depend on where it runs from.
func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	return strings.TrimSpace(string(out))
}

func TestEveryPackageAndExportedDeclarationHasADocComment(t *testing.T) {
	offenders, err := doccheck.Check(moduleRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range offenders {
		t.Error(o)
	}
	if len(offenders) > 0 {
		t.Logf("%d declarations lack the doc comment that pkg.go.dev shows; write one starting with the name", len(offenders))
	}
}
