package marketplace_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// domainPackages are the packages whose rules must follow the clock they
// are given: a manual clock moved by the operator, a fixed time in a test.
var domainPackages = []string{
	"accounts", "catalog", "faults", "fees", "geo", "idempotency", "notify", "oauth",
	"questions", "responsetime", "stock",
}

// wallClockReads are the functions of package time that tell the time.
// Timers, tickers and sleeps (time.NewTimer, time.NewTicker, time.After,
// time.Sleep) are not among them: a background loop waits real time
// between its rounds whatever the engine's clock says, and what it does
// when it wakes still reads the time from an injected clock. Real time
// that a service measures (a POST's duration, a lease's expiry) comes from
// a clock.Clock it is given too, so that every reading of the time in a
// domain package goes through one.
var wallClockReads = map[string]bool{"Now": true, "Since": true, "Until": true}

// A reference to time.Now is caught as well as a call, since handing it on
// as a value (clock.Func(time.Now)) reads the wall clock all the same.
func TestDomainPackages_NeverReadTheWallClock(t *testing.T) {
	fset := token.NewFileSet()
	for _, dir := range domainPackages {
		files := 0
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			files++
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			for _, bad := range wallClockReadsIn(fset, f) {
				t.Errorf("%s reads the wall clock; use the clock the service was given", bad)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if files == 0 {
			t.Errorf("package %s has no Go files: is the list of domain packages out of date?", dir)
		}
	}
}

// wallClockReadsIn returns the positions and names of f's uses of the
// functions in wallClockReads, under whatever name f imports "time".
func wallClockReadsIn(fset *token.FileSet, f *ast.File) []string {
	var out []string
	name := ""
	for _, imp := range f.Imports {
		if path, _ := strconv.Unquote(imp.Path.Value); path != "time" {
			continue
		}
		name = "time"
		if imp.Name != nil {
			name = imp.Name.Name
		}
	}
	switch name {
	case "", "_":
		return nil
	case ".":
		// time.Now would be a bare Now(): not worth telling apart.
		return []string{fset.Position(f.Package).String() + ": imports time with a dot"}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && x.Name == name && wallClockReads[sel.Sel.Name] {
			out = append(out, fset.Position(sel.Pos()).String()+": "+name+"."+sel.Sel.Name)
		}
		return true
	})
	return out
}

// The check itself: a renamed import and a reference that is not a call are
// found; a timer, and another package's Now, are not.
func TestDomainPackages_WallClockCheckSeesRenamedImportsAndReferences(t *testing.T) {
	const src = `package p

import (
	"github.com/marketplace/marketplace/clock"
	stdtime "time"
)

func f(c clock.Clock) {
	_ = stdtime.Since(c.Now())
	_ = clock.Func(stdtime.Now)
	_ = stdtime.NewTimer(stdtime.Second)
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	got := wallClockReadsIn(fset, f)
	want := []string{"p.go:9:6: stdtime.Since", "p.go:10:17: stdtime.Now"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("found %q; want %q", got, want)
	}
}
