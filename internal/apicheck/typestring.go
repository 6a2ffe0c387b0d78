package main

import (
	"go/types"
	"strconv"
	"strings"
)

// typeWriter writes types as go/types does, except that function
// parameters and results lose their names: renaming a parameter changes no
// caller, so it must not change the record.
type typeWriter struct {
	qual types.Qualifier
	b    strings.Builder
}

func typeString(t types.Type, qual types.Qualifier) string {
	w := typeWriter{qual: qual}
	w.typ(t)
	return w.b.String()
}

// signatureString writes a signature without the leading "func".
func signatureString(sig *types.Signature, qual types.Qualifier) string {
	w := typeWriter{qual: qual}
	w.signature(sig)
	return w.b.String()
}

func (w *typeWriter) typ(t types.Type) {
	switch t := t.(type) {
	case *types.Basic:
		w.b.WriteString(t.Name())
	case *types.Pointer:
		w.b.WriteByte('*')
		w.typ(t.Elem())
	case *types.Slice:
		w.b.WriteString("[]")
		w.typ(t.Elem())
	case *types.Array:
		w.b.WriteString("[" + strconv.FormatInt(t.Len(), 10) + "]")
		w.typ(t.Elem())
	case *types.Map:
		w.b.WriteString("map[")
		w.typ(t.Key())
		w.b.WriteByte(']')
		w.typ(t.Elem())
	case *types.Chan:
		switch t.Dir() {
		case types.SendRecv:
			w.b.WriteString("chan ")
		case types.SendOnly:
			w.b.WriteString("chan<- ")
		case types.RecvOnly:
			w.b.WriteString("<-chan ")
		}
		w.typ(t.Elem())
	case *types.Signature:
		w.b.WriteString("func")
		w.signature(t)
	case *types.Struct:
		w.b.WriteString("struct{")
		for i := range t.NumFields() {
			if i > 0 {
				w.b.WriteString("; ")
			}
			f := t.Field(i)
			if !f.Embedded() {
				w.b.WriteString(f.Name() + " ")
			}
			w.typ(f.Type())
			if tag := t.Tag(i); tag != "" {
				w.b.WriteString(" " + strconv.Quote(tag))
			}
		}
		w.b.WriteByte('}')
	case *types.Interface:
		w.b.WriteString("interface{")
		first := true
		sep := func() {
			if !first {
				w.b.WriteString("; ")
			}
			first = false
		}
		for i := range t.NumExplicitMethods() {
			sep()
			m := t.ExplicitMethod(i)
			w.b.WriteString(m.Name())
			w.signature(m.Type().(*types.Signature))
		}
		for i := range t.NumEmbeddeds() {
			sep()
			w.typ(t.EmbeddedType(i))
		}
		w.b.WriteByte('}')
	case *types.Union:
		for i := range t.Len() {
			if i > 0 {
				w.b.WriteString(" | ")
			}
			term := t.Term(i)
			if term.Tilde() {
				w.b.WriteByte('~')
			}
			w.typ(term.Type())
		}
	case *types.Named:
		w.object(t.Obj())
		w.typeArgs(t.TypeArgs())
	case *types.Alias:
		w.object(t.Obj())
		w.typeArgs(t.TypeArgs())
	case *types.TypeParam:
		w.b.WriteString(t.Obj().Name())
	case *types.Tuple:
		w.tuple(t, false)
	default:
		w.b.WriteString(types.TypeString(t, w.qual))
	}
}

func (w *typeWriter) object(obj *types.TypeName) {
	if obj.Pkg() != nil {
		if q := w.qual(obj.Pkg()); q != "" {
			w.b.WriteString(q + ".")
		}
	}
	w.b.WriteString(obj.Name())
}

func (w *typeWriter) typeArgs(list *types.TypeList) {
	if list.Len() == 0 {
		return
	}
	w.b.WriteByte('[')
	for i := range list.Len() {
		if i > 0 {
			w.b.WriteString(", ")
		}
		w.typ(list.At(i))
	}
	w.b.WriteByte(']')
}

func (w *typeWriter) typeParams(list *types.TypeParamList) {
	if list.Len() == 0 {
		return
	}
	w.b.WriteByte('[')
	for i := range list.Len() {
		if i > 0 {
			w.b.WriteString(", ")
		}
		tp := list.At(i)
		w.b.WriteString(tp.Obj().Name() + " ")
		w.typ(tp.Constraint())
	}
	w.b.WriteByte(']')
}

func (w *typeWriter) signature(sig *types.Signature) {
	w.typeParams(sig.TypeParams())
	w.tuple(sig.Params(), sig.Variadic())
	res := sig.Results()
	switch res.Len() {
	case 0:
	case 1:
		w.b.WriteByte(' ')
		w.typ(res.At(0).Type())
	default:
		w.b.WriteByte(' ')
		w.tuple(res, false)
	}
}

func (w *typeWriter) tuple(t *types.Tuple, variadic bool) {
	w.b.WriteByte('(')
	for i := range t.Len() {
		if i > 0 {
			w.b.WriteString(", ")
		}
		typ := t.At(i).Type()
		if variadic && i == t.Len()-1 {
			w.b.WriteString("...")
			typ = typ.(*types.Slice).Elem()
		}
		w.typ(typ)
	}
	w.b.WriteByte(')')
}
