// Package doccheck lists what pkg.go.dev would show without documentation:
// packages without a package comment and exported declarations without a
// doc comment. Its test runs over the whole module, so a new exported name
// without a comment fails the build.
package doccheck

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Offender is one place that lacks documentation.
type Offender struct {
	Pos  string // file:line, relative to the module root
	What string // "package p" or the declaration, e.g. "func (*Service) Put"
}

// String formats the offender as a line of the test's failure.
func (o Offender) String() string { return o.Pos + ": " + o.What + " has no doc comment" }

// listed is the part of `go list -json` that Check reads.
type listed struct {
	Dir        string
	ImportPath string
	Name       string
	GoFiles    []string
	CgoFiles   []string
}

// Check returns every offender in the packages of the module rooted at dir
// (main packages excepted: pkg.go.dev shows only their package comment,
// which go vet-style tooling does not require), sorted by position.
//
// What counts: the package comment (in any one file); every exported
// top-level func, type, var and const; every exported method of an exported
// type. A var or const in a parenthesized group is documented by its own
// comment or by the group's. Struct fields and interface methods are shown
// inside their type's declaration, so the type's comment covers them.
func Check(dir string) ([]Offender, error) {
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w", commandError(err))
	}
	var offenders []Offender
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p listed
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("go list output: %w", err)
		}
		if p.Name == "main" {
			continue
		}
		found, err := checkPackage(dir, p)
		if err != nil {
			return nil, err
		}
		offenders = append(offenders, found...)
	}
	sort.Slice(offenders, func(i, j int) bool { return offenders[i].Pos < offenders[j].Pos })
	return offenders, nil
}

func checkPackage(root string, p listed) ([]Offender, error) {
	fset := token.NewFileSet()
	var offenders []Offender
	hasPackageDoc := false
	files := append(append([]string(nil), p.GoFiles...), p.CgoFiles...)
	sort.Strings(files)
	var first string
	for _, name := range files {
		path := filepath.Join(p.Dir, name)
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", path, err)
		}
		if first == "" {
			first = rel(root, fset.Position(f.Package))
		}
		if f.Doc != nil && strings.TrimSpace(f.Doc.Text()) != "" {
			hasPackageDoc = true
		}
		for _, decl := range f.Decls {
			offenders = append(offenders, checkDecl(fset, root, decl)...)
		}
	}
	if !hasPackageDoc && first != "" {
		offenders = append(offenders, Offender{Pos: first, What: "package " + p.ImportPath})
	}
	return offenders, nil
}

func checkDecl(fset *token.FileSet, root string, decl ast.Decl) []Offender {
	var offenders []Offender
	switch d := decl.(type) {
	case *ast.FuncDecl:
		if !d.Name.IsExported() || documented(d.Doc) {
			return nil
		}
		what := "func " + d.Name.Name
		if d.Recv != nil && len(d.Recv.List) > 0 {
			recv, ok := receiverType(d.Recv.List[0].Type)
			if !ok || !ast.IsExported(strings.TrimPrefix(recv, "*")) {
				return nil
			}
			what = "func (" + recv + ") " + d.Name.Name
		}
		offenders = append(offenders, Offender{Pos: rel(root, fset.Position(d.Pos())), What: what})
	case *ast.GenDecl:
		if d.Tok == token.IMPORT {
			return nil
		}
		grouped := d.Lparen.IsValid()
		for _, spec := range d.Specs {
			switch s := spec.(type) {
			case *ast.TypeSpec:
				if !s.Name.IsExported() || documented(s.Doc) || documented(d.Doc) {
					continue
				}
				offenders = append(offenders, Offender{Pos: rel(root, fset.Position(s.Pos())), What: "type " + s.Name.Name})
			case *ast.ValueSpec:
				if documented(s.Doc) || (documented(d.Doc) && (grouped || len(d.Specs) == 1)) {
					continue
				}
				for _, n := range s.Names {
					if n.IsExported() {
						offenders = append(offenders, Offender{Pos: rel(root, fset.Position(n.Pos())), What: d.Tok.String() + " " + n.Name})
					}
				}
			}
		}
	}
	return offenders
}

func documented(g *ast.CommentGroup) bool {
	return g != nil && strings.TrimSpace(g.Text()) != ""
}

// receiverType names a method's receiver type as pkg.go.dev does: T or *T,
// without type parameters.
func receiverType(e ast.Expr) (string, bool) {
	star := ""
	if s, ok := e.(*ast.StarExpr); ok {
		star, e = "*", s.X
	}
	switch t := e.(type) {
	case *ast.IndexExpr:
		e = t.X
	case *ast.IndexListExpr:
		e = t.X
	}
	id, ok := e.(*ast.Ident)
	if !ok {
		return "", false
	}
	return star + id.Name, true
}

func rel(root string, pos token.Position) string {
	name := pos.Filename
	if r, err := filepath.Rel(root, name); err == nil {
		name = filepath.ToSlash(r)
	}
	return fmt.Sprintf("%s:%d", name, pos.Line)
}

func commandError(err error) error {
	if ee, ok := err.(*exec.ExitError); ok && len(ee.Stderr) > 0 {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(string(ee.Stderr)))
	}
	return err
}
