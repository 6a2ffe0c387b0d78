package stubs

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// The server's own paths (its operator's routes, its console, its health,
// readiness, version, metrics and OpenAPI routes) are never a stub's: a
// stub that took them could answer DELETE /operator/stubs/{id} itself and
// never be removed, or open the operator's routes to anyone. The HTTP
// adapter reserves them from its route table (Reserve); a mapping whose URL
// matcher could match one is refused, and no request to one is answered by
// a stub, whatever the store holds.

// reserved is the set Reserve built: exact paths, and prefixes ending in
// "/" that reserve themselves without the slash and every path under them.
type reserved struct {
	exact, under []string
}

var (
	reserveMu   sync.Mutex
	reservedSet atomic.Pointer[reserved] // nil: nothing reserved
)

// reservedNow returns the set Reserve built.
func reservedNow() *reserved {
	if rs := reservedSet.Load(); rs != nil {
		return rs
	}
	return &reserved{}
}

// Reserve adds paths that no stub may match or answer. A path that ends in
// "/" reserves itself without the slash and every path under it ("/operator/"
// reserves /operator and /operator/stubs); any other path reserves itself
// alone. Package httpapi reserves its own routes when the program starts,
// so that every mapping made after (by Create, Load, Parse, a fixtures
// document or marketplacetest) is checked. Paths that do not start with "/"
// are ignored.
func Reserve(paths ...string) {
	reserveMu.Lock()
	defer reserveMu.Unlock()
	cur := reservedNow()
	next := &reserved{exact: slices.Clone(cur.exact), under: slices.Clone(cur.under)}
	for _, p := range paths {
		switch {
		case !strings.HasPrefix(p, "/"):
		case strings.HasSuffix(p, "/") && len(p) > 1:
			if !slices.Contains(next.under, p) {
				next.under = append(next.under, p)
			}
		case !slices.Contains(next.exact, p):
			next.exact = append(next.exact, p)
		}
	}
	slices.Sort(next.exact)
	slices.Sort(next.under)
	reservedSet.Store(next)
}

// reservedPath reports whether path is one that no stub answers.
func reservedPath(path string) bool {
	rs := reservedSet.Load()
	if rs == nil {
		return false
	}
	for _, u := range rs.under {
		if strings.HasPrefix(path, u) || path == u[:len(u)-1] {
			return true
		}
	}
	return slices.Contains(rs.exact, path)
}

// checkReserved refuses a URL matcher that could match a reserved path,
// naming the path. A pattern is judged exactly, not on samples: it is
// refused when some string it matches is a reserved path, or starts with a
// reserved prefix (reach). A pattern with no URL matcher matches every
// path, and is left to Answer, which never answers a reserved one: that is
// how a catch-all is written.
func (u urlMatch) checkReserved(where string) error {
	rs := reservedNow()
	if u.kind == "" || len(rs.exact)+len(rs.under) == 0 {
		return nil
	}
	refuse := func(what string) error {
		return invalid(where+"."+u.kind, "it could match "+what+
			", which the server keeps for its own routes: no stub answers the operator's, the console's or the operations' routes")
	}
	switch u.kind {
	case "url", "urlPath":
		path, _, _ := strings.Cut(u.value, "?")
		if reservedPath(path) {
			return refuse(path)
		}
		return nil
	}
	prog, err := reachProg(u)
	if err != nil {
		// The pattern compiled once already; a second failure is the
		// analysis's, and a pattern it cannot judge is not taken.
		return refuse("a reserved path")
	}
	// urlPattern is matched against the path and the query: a reserved
	// path followed by "?" is one too.
	withQuery := u.kind == "urlPattern"
	for _, p := range rs.exact {
		if prog.matches(p) {
			return refuse(p)
		}
		if withQuery && prog.reaches(p+"?") {
			return refuse(p + " with a query")
		}
	}
	for _, p := range rs.under {
		base := p[:len(p)-1]
		if prog.matches(base) {
			return refuse(base)
		}
		if withQuery && prog.reaches(base+"?") {
			return refuse(base + " with a query")
		}
		if prog.reaches(p) {
			return refuse("a path under " + p)
		}
	}
	return nil
}

// reachProg compiles the regular expression a URL matcher stands for: its
// pattern, or a template's segments with each parameter one segment.
func reachProg(u urlMatch) (*reachable, error) {
	src := u.value
	if u.kind == "urlPathTemplate" {
		segs := make([]string, len(u.segments))
		for i, s := range u.segments {
			if strings.HasPrefix(s, "{") {
				segs[i] = `[^/]+`
			} else {
				segs[i] = regexp.QuoteMeta(s)
			}
		}
		src = strings.Join(segs, "/")
	}
	re, err := syntax.Parse(`^(?:`+src+`)$`, syntax.Perl)
	if err != nil {
		return nil, err
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil, err
	}
	return &reachable{prog: prog}, nil
}

// reachable runs a compiled regular expression as the automaton it is, to
// tell whether it matches a string, or some string that starts with a
// prefix: the sets of states after each rune of the prefix, then whether a
// match is reachable from the last set by any runes. Zero-width assertions
// are checked where the runes beside them are known and taken as met where
// they are not, so that the answer errs towards "it could".
type reachable struct {
	prog *syntax.Prog
}

// matches reports whether the expression matches s, whole.
func (r *reachable) matches(s string) bool {
	set := r.run(s, true)
	for _, pc := range set {
		if r.prog.Inst[pc].Op == syntax.InstMatch {
			return true
		}
	}
	return false
}

// reaches reports whether the expression matches some string that starts
// with prefix.
func (r *reachable) reaches(prefix string) bool {
	set := r.run(prefix, false)
	seen := make([]bool, len(r.prog.Inst))
	stack := slices.Clone(set)
	for len(stack) > 0 {
		pc := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[pc] {
			continue
		}
		seen[pc] = true
		in := &r.prog.Inst[pc]
		switch in.Op {
		case syntax.InstMatch:
			return true
		case syntax.InstFail:
		case syntax.InstAlt, syntax.InstAltMatch:
			stack = append(stack, in.Out, in.Arg)
		default:
			stack = append(stack, in.Out)
		}
	}
	return false
}

// run returns the states after the runes of s; with end, s is the whole
// text, else more may follow it.
func (r *reachable) run(s string, end bool) []uint32 {
	runes := []rune(s)
	next := func(i int) (rune, bool) {
		if i < len(runes) {
			return runes[i], true
		}
		return -1, end
	}
	after, known := next(0)
	set := r.closure(nil, []uint32{uint32(r.prog.Start)}, -1, after, known)
	for i, c := range runes {
		var out []uint32
		for _, pc := range set {
			in := &r.prog.Inst[pc]
			var ok bool
			switch in.Op {
			case syntax.InstRune, syntax.InstRune1:
				ok = in.MatchRune(c)
			case syntax.InstRuneAny:
				ok = true
			case syntax.InstRuneAnyNotNL:
				ok = c != '\n'
			}
			if ok {
				out = append(out, in.Out)
			}
		}
		after, known = next(i + 1)
		set = r.closure(nil, out, c, after, known)
		if len(set) == 0 {
			return nil
		}
	}
	return set
}

// closure follows the instructions that consume no rune from pcs, between
// the runes before and after (after unknown unless known), and returns the
// states that consume one or match.
func (r *reachable) closure(set []uint32, pcs []uint32, before, after rune, known bool) []uint32 {
	seen := make([]bool, len(r.prog.Inst))
	stack := slices.Clone(pcs)
	ctx := syntax.EmptyOpContext(before, after)
	for len(stack) > 0 {
		pc := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[pc] {
			continue
		}
		seen[pc] = true
		in := &r.prog.Inst[pc]
		switch in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			stack = append(stack, in.Out, in.Arg)
		case syntax.InstCapture, syntax.InstNop:
			stack = append(stack, in.Out)
		case syntax.InstEmptyWidth:
			if !known || syntax.EmptyOp(in.Arg)&^ctx == 0 {
				stack = append(stack, in.Out)
			}
		case syntax.InstFail:
		default:
			set = append(set, pc)
		}
	}
	return set
}
