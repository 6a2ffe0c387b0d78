package marketplace_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docs/architecture.md is where a newcomer looks for a rule's home: a
// package or file it names that no longer exists sends them nowhere. Every
// package of its tree and every path it names in backticks (a file, or a
// folder under one of the repository's top-level folders) must exist. Store
// key prefixes (`sys/lease/<name>`) look like paths too; they are told apart
// by their first segment, which is no folder of the repository.
var (
	backticked = regexp.MustCompile("`([^`]+)`")
	pathLike   = regexp.MustCompile(`^(?:[a-z][a-z0-9_]*/)*[A-Za-z0-9_.*-]+$`)
)

func TestArchitectureDoc_EveryPackageAndFileItNamesExists(t *testing.T) {
	b, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	var tree, inText []string
	inBlock := false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			inBlock = !inBlock
			continue
		}
		if inBlock {
			// The package tree: a line starts with the folders it
			// describes; an indented line goes on with the previous one.
			if line == "" || line[0] == ' ' {
				continue
			}
			for _, f := range strings.Fields(line) {
				if !strings.HasSuffix(f, "/") && !strings.Contains(f, "/") {
					break
				}
				tree = append(tree, strings.TrimSuffix(f, "/"))
			}
			continue
		}
		for _, m := range backticked.FindAllStringSubmatch(line, -1) {
			inText = append(inText, m[1])
		}
	}
	exists := func(name string) bool {
		matches, err := filepath.Glob(name)
		return err == nil && len(matches) > 0
	}
	if len(tree) < 20 {
		t.Fatalf("the package tree of docs/architecture.md lists %d folders: the test reads it wrong, or the document lost its map", len(tree))
	}
	for _, dir := range tree {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			t.Errorf("docs/architecture.md's tree lists %s/, which is no folder of the repository", dir)
		}
	}
	files := 0
	for _, name := range inText {
		name = strings.TrimSuffix(strings.TrimSuffix(name, "/..."), "/")
		if !pathLike.MatchString(name) {
			continue
		}
		first, _, nested := strings.Cut(name, "/")
		switch {
		case strings.HasSuffix(name, ".go") && !nested:
			// A file of the root package.
		case nested && exists(first) && !strings.HasSuffix(first, ".go"):
		default:
			continue
		}
		files++
		if !exists(name) {
			t.Errorf("docs/architecture.md names %s, which does not exist", name)
		}
	}
	if files < 20 {
		t.Errorf("docs/architecture.md names %d files and folders in its text: the test reads it wrong, or the document lost its map", files)
	}
}
