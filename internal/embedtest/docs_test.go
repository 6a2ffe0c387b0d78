package embedtest

import (
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// wholeMarker is the HTML comment of docs/*.md before the fence of a Go
// block that is a whole file, one a reader copies into a module of their
// own: `<!-- whole -->`, or `<!-- whole: marketplacetest/proptest/sales_test.go -->`
// when the block is a copy of that file of the repository (the package's
// own test then keeps the two the same).
var wholeMarker = regexp.MustCompile("(?m)^<!-- whole(?:: (\\S+))? -->\n```go\n")

// wholeBlock is a Go block of a document marked whole.
type wholeBlock struct {
	doc  string // the document's name, as docs/x.md
	line int    // the line of the marker
	file string // the repository file it copies, "" for none
	body string
}

// wholeBlocks returns the blocks of doc (named name) marked whole, in
// order.
func wholeBlocks(name, doc string) ([]wholeBlock, error) {
	var out []wholeBlock
	for _, m := range wholeMarker.FindAllStringSubmatchIndex(doc, -1) {
		rest := doc[m[1]:]
		end := strings.Index(rest, "```")
		if end < 0 || (end > 0 && rest[end-1] != '\n') {
			return nil, fmt.Errorf("%s:%d: the block marked whole has no closing fence", name, strings.Count(doc[:m[0]], "\n")+1)
		}
		b := wholeBlock{doc: name, line: strings.Count(doc[:m[0]], "\n") + 1, body: rest[:end]}
		if m[2] >= 0 {
			b.file = doc[m[2]:m[3]]
		}
		out = append(out, b)
	}
	return out, nil
}

// fileName is the name the block's file takes in the outside module: the
// base name of the file it copies, else one its package's kind implies.
func (b wholeBlock) fileName(pkg string) string {
	switch {
	case b.file != "":
		return path.Base(b.file)
	case strings.HasSuffix(pkg, "_test"):
		return "whole_test.go"
	default:
		return "whole.go"
	}
}

// TestDocs_WholeGoBlocksBuildInAModuleOutsideTheRepository: every Go block
// of docs/*.md marked whole is a whole file a reader can copy: each is
// written, as it is, into a package of its own in a module outside the
// repository that requires this module by its path, and go vet and go
// test (running no test, so that only the build counts) must pass there.
func TestDocs_WholeGoBlocksBuildInAModuleOutsideTheRepository(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module of its own; skipped with -short")
	}
	mod := readMainModule(t)
	docs, err := filepath.Glob(filepath.Join(mod.Dir, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	var where []string
	for _, d := range docs {
		text, err := os.ReadFile(d)
		if err != nil {
			t.Fatal(err)
		}
		name := "docs/" + filepath.Base(d)
		blocks, err := wholeBlocks(name, string(text))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range blocks {
			f, err := parser.ParseFile(token.NewFileSet(), b.fileName(""), b.body, parser.PackageClauseOnly)
			if err != nil {
				t.Errorf("%s:%d: the block marked whole is not a whole Go file: %v", b.doc, b.line, err)
				continue
			}
			dir := fmt.Sprintf("block%02d", len(where)+1)
			files[dir+"/"+b.fileName(f.Name.Name)] = b.body
			where = append(where, fmt.Sprintf("%s: %s:%d", dir, b.doc, b.line))
		}
	}
	if len(where) == 0 {
		t.Fatal("no Go block of docs/*.md is marked whole")
	}
	if t.Failed() {
		return
	}
	t.Logf("blocks marked whole:\n%s", strings.Join(where, "\n"))
	_, goCmd := outsideModule(t, mod, files)
	goCmd("mod", "tidy")
	goCmd("vet", "./...")
	goCmd("test", "-count=1", "-run", "^$", "./...")
}

func TestWholeBlocks_FindsTheMarkedBlocksAndTheFilesTheyCopy(t *testing.T) {
	doc := "# T\n```go\nnot this\n```\n<!-- whole -->\n```go\npackage a\n```\ntext\n" +
		"<!-- whole: x/y/b_test.go -->\n```go\npackage b_test\n\nfunc f() {}\n```\n"
	got, err := wholeBlocks("docs/t.md", doc)
	if err != nil {
		t.Fatal(err)
	}
	want := []wholeBlock{
		{doc: "docs/t.md", line: 5, body: "package a\n"},
		{doc: "docs/t.md", line: 10, file: "x/y/b_test.go", body: "package b_test\n\nfunc f() {}\n"},
	}
	if len(got) != len(want) {
		t.Fatalf("wholeBlocks = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("block %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if n := want[0].fileName("a"); n != "whole.go" {
		t.Errorf("the file of package a is %s", n)
	}
	if n := want[1].fileName("b_test"); n != "b_test.go" {
		t.Errorf("the file copying x/y/b_test.go is %s", n)
	}
	if _, err := wholeBlocks("docs/t.md", "<!-- whole -->\n```go\npackage a\n"); err == nil {
		t.Error("a block with no closing fence: want an error")
	}
}
