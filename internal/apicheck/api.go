package main

import (
	"encoding/json"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
)

// listedPackage is the part of `go list -json` that Generate reads.
type listedPackage struct {
	ImportPath string
	Export     string
}

// Generate returns the sorted record of the exported API of the importable
// packages of the module rooted at root.
func Generate(root string) ([]string, error) {
	// First the recorded packages, then export data for them and their
	// dependencies only: main packages need not be compiled for the check.
	out, err := goCommand(root, "list", "-f", "{{.ImportPath}} {{.Name}}", "./...")
	if err != nil {
		return nil, err
	}
	var targets []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, name, _ := strings.Cut(line, " ")
		if Recorded(path, name) {
			targets = append(targets, path)
		}
	}
	sort.Strings(targets)
	if len(targets) == 0 {
		return nil, nil
	}
	out, err = goCommand(root, append([]string{"list", "-export", "-deps", "-json=ImportPath,Export"}, targets...)...)
	if err != nil {
		return nil, err
	}
	exports := map[string]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p listedPackage
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("go list output: %w", err)
		}
		exports[p.ImportPath] = p.Export
	}
	imp := importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok || file == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
	var lines []string
	for _, path := range targets {
		pkg, err := imp.Import(path)
		if err != nil {
			return nil, fmt.Errorf("import %s: %w", path, err)
		}
		lines = append(lines, packageLines(pkg)...)
	}
	sort.Strings(lines)
	return slices.Compact(lines), nil
}

// Recorded reports whether a package is part of the recorded API: an
// embedder can import it (it is not under an internal/ folder) and it is a
// library (not a main package).
func Recorded(importPath, name string) bool {
	if name == "main" {
		return false
	}
	for _, elem := range strings.Split(importPath, "/") {
		if elem == "internal" || elem == "testdata" {
			return false
		}
	}
	return true
}

// packageLines writes one line per exported object of pkg, and one per
// exported field, method and interface method of its exported types.
func packageLines(pkg *types.Package) []string {
	prefix := "pkg " + pkg.Path() + ", "
	qual := func(p *types.Package) string {
		if p == pkg {
			return ""
		}
		return p.Path()
	}
	var lines []string
	add := func(format string, args ...any) { lines = append(lines, prefix+fmt.Sprintf(format, args...)) }

	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch o := obj.(type) {
		case *types.Const:
			add("const %s %s = %s", name, typeString(o.Type(), qual), o.Val().ExactString())
		case *types.Var:
			add("var %s %s", name, typeString(o.Type(), qual))
		case *types.Func:
			add("func %s%s", name, signatureString(o.Type().(*types.Signature), qual))
		case *types.TypeName:
			lines = append(lines, typeLines(prefix, o, qual)...)
		}
	}
	return lines
}

func typeLines(prefix string, o *types.TypeName, qual types.Qualifier) []string {
	typeString := func(t types.Type) string { return typeString(t, qual) }
	var lines []string
	add := func(format string, args ...any) { lines = append(lines, prefix+fmt.Sprintf(format, args...)) }
	name := o.Name()
	if o.IsAlias() {
		add("type %s = %s", name, typeString(types.Unalias(o.Type())))
		return lines
	}
	named, ok := o.Type().(*types.Named)
	if !ok {
		add("type %s %s", name, typeString(o.Type()))
		return lines
	}
	w := typeWriter{qual: qual}
	w.typeParams(named.TypeParams())
	head := name + w.b.String()
	switch u := named.Underlying().(type) {
	case *types.Struct:
		add("type %s struct", head)
		for i := range u.NumFields() {
			f := u.Field(i)
			if !f.Exported() {
				continue
			}
			if f.Embedded() {
				add("type %s struct, embedded %s", head, typeString(f.Type()))
			} else {
				add("type %s struct, %s %s", head, f.Name(), typeString(f.Type()))
			}
		}
	case *types.Interface:
		var names []string
		for i := range u.NumMethods() {
			m := u.Method(i)
			if m.Exported() {
				names = append(names, m.Name())
			} else {
				names = append(names, "unexported methods")
			}
		}
		names = slices.Compact(names)
		if len(names) == 0 {
			add("type %s interface {}", head)
		} else {
			add("type %s interface { %s }", head, strings.Join(names, ", "))
		}
		for i := range u.NumMethods() {
			m := u.Method(i)
			if m.Exported() {
				add("type %s interface, %s%s", head, m.Name(), signatureString(m.Type().(*types.Signature), qual))
			}
		}
		for i := range u.NumEmbeddeds() {
			if _, isIface := u.EmbeddedType(i).Underlying().(*types.Interface); !isIface {
				add("type %s interface, %s", head, typeString(u.EmbeddedType(i)))
			}
		}
		return lines
	default:
		add("type %s %s", head, typeString(u))
	}
	// Methods of T and *T, promoted ones included: an embedded type's method
	// that the type gains or loses is part of its API too.
	ms := types.NewMethodSet(types.NewPointer(named))
	for i := range ms.Len() {
		m := ms.At(i).Obj().(*types.Func)
		if !m.Exported() {
			continue
		}
		recv := name
		if types.NewMethodSet(named).Lookup(m.Pkg(), m.Name()) == nil {
			recv = "*" + name
		}
		add("method (%s) %s%s", recv, m.Name(), signatureString(m.Type().(*types.Signature), qual))
	}
	return lines
}
