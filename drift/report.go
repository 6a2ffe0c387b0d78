package drift

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Bounds on what a run keeps, whatever the recordings hold: a report
// lists at most this many differences per route, routes not emulated and
// unread files, and counts the rest.
const (
	maxDifferences = 200
	maxCandidates  = 1000
	maxUnread      = 100
)

// Report is the outcome of a run: per route, what differs, in how many
// exchanges, with one example each.
type Report struct {
	// Files is the number of files read; Exchanges the exchanges in them.
	Files     int `json:"files"`
	Exchanges int `json:"exchanges"`
	// Emulated counts the exchanges of routes the engine emulates, and
	// Differing those of them with at least one difference.
	Emulated  int `json:"emulated"`
	Differing int `json:"differing"`
	// Routes are the emulated routes the recordings reach, sorted by path
	// and method.
	Routes []RouteReport `json:"routes"`
	// NotEmulated are the routes the engine does not emulate, candidates
	// for stubs, most recorded first; a path segment with a digit is
	// written {id}.
	NotEmulated []Candidate `json:"not_emulated"`
	// MoreNotEmulated counts the exchanges of routes past the list's bound.
	MoreNotEmulated int `json:"more_not_emulated,omitempty"`
	// Skipped are exchanges that could not be checked, by reason.
	Skipped []Skipped `json:"skipped"`
	// Unread are files that could not be read as recordings.
	Unread     []Unread `json:"unread"`
	MoreUnread int      `json:"more_unread,omitempty"`
}

// RouteReport is one emulated route's part of the report.
type RouteReport struct {
	Method      string       `json:"method"`
	Path        string       `json:"path"`
	Exchanges   int          `json:"exchanges"`
	Differing   int          `json:"differing"`
	Differences []Difference `json:"differences"`
	// MoreDifferences counts the differences past the list's bound.
	MoreDifferences int `json:"more_differences,omitempty"`
}

// Difference is one way a route's recorded answers differ from the
// contract, with the exchanges that show it and the first of them.
type Difference struct {
	// Status is the recorded answer's status.
	Status int    `json:"status"`
	Kind   Kind   `json:"kind"`
	Path   string `json:"path,omitempty"`
	// Got is what the example has there; Want what the contract says.
	Got       string  `json:"got,omitempty"`
	Want      string  `json:"want,omitempty"`
	Summary   string  `json:"summary"`
	Exchanges int     `json:"exchanges"`
	Example   Example `json:"example"`
}

// Example names one exchange: its file and place, its request and status.
type Example struct {
	File   string `json:"file"`
	Entry  int    `json:"entry,omitempty"`
	Method string `json:"method"`
	URL    string `json:"url"`
	Status int    `json:"status"`
}

// String is the example as the summary shows it: file#entry, the request
// and its status.
func (e Example) String() string {
	at := e.File
	if e.Entry > 0 {
		at += "#" + strconv.Itoa(e.Entry)
	}
	return fmt.Sprintf("%s: %s %s answered %d", at, e.Method, e.URL, e.Status)
}

// before orders examples by file and entry, so that the report names the
// same one whatever order the files were read in.
func (e Example) before(f Example) bool {
	if e.File != f.File {
		return e.File < f.File
	}
	return e.Entry < f.Entry
}

// Candidate is a route the engine does not emulate, with its exchanges.
type Candidate struct {
	Method    string  `json:"method"`
	Path      string  `json:"path"`
	Exchanges int     `json:"exchanges"`
	Example   Example `json:"example"`
}

// Skipped counts the exchanges that could not be checked for one reason.
type Skipped struct {
	Reason    string  `json:"reason"`
	Exchanges int     `json:"exchanges"`
	Example   Example `json:"example"`
}

// Unread is a file that could not be read as recordings.
type Unread struct {
	File  string `json:"file"`
	Error string `json:"error"`
}

// Drifted reports whether any exchange differs from the contract.
func (r *Report) Drifted() bool { return r.Differing > 0 }

// Tally adds exchanges up into a Report. It keeps per route counts and one
// example per difference, never the exchanges: its memory is bounded by
// the routes and differences it finds, not by the exchanges it reads. It
// is not safe for concurrent use.
type Tally struct {
	c           *Contract
	report      Report
	routes      map[Route]*routeTally
	notEmulated map[Route]*Candidate
	skipped     map[string]*Skipped
}

type routeTally struct {
	r     RouteReport
	diffs map[diffKey]*Difference
}

type diffKey struct {
	status          int
	kind            Kind
	path, got, want string
}

// NewTally returns an empty tally against c.
func NewTally(c *Contract) *Tally {
	return &Tally{c: c, routes: map[Route]*routeTally{}, notEmulated: map[Route]*Candidate{}, skipped: map[string]*Skipped{}}
}

func example(ex Exchange) Example {
	return Example{File: ex.Source, Entry: ex.Entry, Method: ex.Method, URL: short(ex.URL), Status: ex.Status}
}

// Add checks one exchange and counts it.
func (t *Tally) Add(ex Exchange) {
	t.report.Exchanges++
	route, findings, ok := t.c.Check(ex)
	if !ok {
		t.addNotEmulated(ex)
		return
	}
	t.report.Emulated++
	rt := t.routes[route]
	if rt == nil {
		rt = &routeTally{r: RouteReport{Method: route.Method, Path: route.Path}, diffs: map[diffKey]*Difference{}}
		t.routes[route] = rt
	}
	rt.r.Exchanges++
	if len(findings) == 0 {
		return
	}
	t.report.Differing++
	rt.r.Differing++
	eg := example(ex)
	for _, f := range findings {
		k := diffKey{status: ex.Status, kind: f.Kind, path: f.Path}
		switch f.Kind {
		case Type, ErrorCode, Body:
			k.got = f.Got
		case ErrorMessage:
			k.want = f.Want
		}
		d := rt.diffs[k]
		if d == nil {
			if len(rt.diffs) >= maxDifferences {
				rt.r.MoreDifferences++
				continue
			}
			d = &Difference{Status: ex.Status, Kind: f.Kind, Path: f.Path, Got: f.Got, Want: f.Want, Summary: f.describe(), Example: eg}
			rt.diffs[k] = d
		} else if eg.before(d.Example) {
			d.Got, d.Want, d.Summary, d.Example = f.Got, f.Want, f.describe(), eg
		}
		d.Exchanges++
	}
}

func (t *Tally) addNotEmulated(ex Exchange) {
	p, _ := requestPath(ex.URL)
	r := Route{Method: ex.Method, Path: candidatePath(p)}
	c := t.notEmulated[r]
	if c == nil {
		if len(t.notEmulated) >= maxCandidates {
			t.report.MoreNotEmulated++
			return
		}
		c = &Candidate{Method: r.Method, Path: r.Path, Example: example(ex)}
		t.notEmulated[r] = c
	} else if eg := example(ex); eg.before(c.Example) {
		c.Example = eg
	}
	c.Exchanges++
}

// candidatePath writes the segments of a path that hold a digit (ids) as
// {id}, so that the exchanges of one route count together.
func candidatePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if strings.IndexFunc(s, unicode.IsDigit) >= 0 {
			segs[i] = "{id}"
		}
	}
	return strings.Join(segs, "/")
}

// skip counts an exchange that cannot be checked.
func (t *Tally) skip(ex Exchange, reason string) {
	t.report.Exchanges++
	s := t.skipped[reason]
	eg := example(ex)
	if s == nil {
		s = &Skipped{Reason: reason, Example: eg}
		t.skipped[reason] = s
	} else if eg.before(s.Example) {
		s.Example = eg
	}
	s.Exchanges++
}

// Read adds the exchanges of each path: a file (a stub mapping, a
// {"mappings": [...]} list, a HAR 1.2 file) or a folder, whose *.json and
// *.har files are read, folders within included and __files left out. A
// path or file that cannot be read is listed in the report's Unread.
func (t *Tally) Read(paths ...string) {
	br := bufio.NewReaderSize(nil, 32<<10)
	for _, p := range paths {
		err := files(p, func(file string) {
			t.report.Files++
			if err := readFile(file, br, func(ex Exchange, skip string) {
				if skip != "" {
					t.skip(ex, skip)
					return
				}
				t.Add(ex)
			}); err != nil {
				t.unread(file, err)
			}
		})
		if err != nil {
			t.unread(p, err)
		}
	}
}

func (t *Tally) unread(file string, err error) {
	if len(t.report.Unread) >= maxUnread {
		t.report.MoreUnread++
		return
	}
	t.report.Unread = append(t.report.Unread, Unread{File: file, Error: err.Error()})
}

// Report returns what the tally has counted so far, sorted.
func (t *Tally) Report() *Report {
	r := t.report
	r.Routes = make([]RouteReport, 0, len(t.routes))
	for _, rt := range t.routes {
		rr := rt.r
		rr.Differences = make([]Difference, 0, len(rt.diffs))
		for _, d := range rt.diffs {
			rr.Differences = append(rr.Differences, *d)
		}
		slices.SortFunc(rr.Differences, func(a, b Difference) int {
			return cmp.Or(cmp.Compare(a.Status, b.Status), cmp.Compare(kindOrder[a.Kind], kindOrder[b.Kind]),
				strings.Compare(a.Path, b.Path), strings.Compare(a.Got, b.Got), strings.Compare(a.Want, b.Want))
		})
		r.Routes = append(r.Routes, rr)
	}
	slices.SortFunc(r.Routes, func(a, b RouteReport) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), strings.Compare(a.Method, b.Method))
	})
	r.NotEmulated = make([]Candidate, 0, len(t.notEmulated))
	for _, c := range t.notEmulated {
		r.NotEmulated = append(r.NotEmulated, *c)
	}
	slices.SortFunc(r.NotEmulated, func(a, b Candidate) int {
		return cmp.Or(cmp.Compare(b.Exchanges, a.Exchanges), strings.Compare(a.Path, b.Path), strings.Compare(a.Method, b.Method))
	})
	r.Skipped = make([]Skipped, 0, len(t.skipped))
	for _, s := range t.skipped {
		r.Skipped = append(r.Skipped, *s)
	}
	slices.SortFunc(r.Skipped, func(a, b Skipped) int { return strings.Compare(a.Reason, b.Reason) })
	r.Unread = slices.Clone(r.Unread)
	if r.Unread == nil {
		r.Unread = []Unread{}
	}
	return &r
}

// WriteText writes the report for people: the routes that differ, each
// difference with its count and an example, then the routes not
// emulated, what was skipped or unread, and a closing count.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	var matching []string
	for _, rt := range r.Routes {
		if rt.Differing == 0 {
			matching = append(matching, fmt.Sprintf("%s %s (%d)", rt.Method, rt.Path, rt.Exchanges))
			continue
		}
		fmt.Fprintf(&b, "%s %s: %d of %d %s differ\n", rt.Method, rt.Path, rt.Differing, rt.Exchanges, plural(rt.Exchanges, "exchange"))
		for _, d := range rt.Differences {
			at := d.Path
			if at == "" {
				at = "status"
			}
			fmt.Fprintf(&b, "  %d %s: %s (%d %s)\n      e.g. %s\n", d.Status, at, d.Summary, d.Exchanges, plural(d.Exchanges, "exchange"), d.Example)
		}
		if rt.MoreDifferences > 0 {
			fmt.Fprintf(&b, "  and %d more findings\n", rt.MoreDifferences)
		}
	}
	if len(matching) > 0 {
		fmt.Fprintf(&b, "Routes that match the contract: %s\n", strings.Join(matching, ", "))
	}
	if len(r.NotEmulated) > 0 {
		b.WriteString("Routes the engine does not emulate (candidates for stubs):\n")
		for _, c := range r.NotEmulated {
			fmt.Fprintf(&b, "  %s %s: %d %s, e.g. %s\n", c.Method, c.Path, c.Exchanges, plural(c.Exchanges, "exchange"), c.Example)
		}
		if r.MoreNotEmulated > 0 {
			fmt.Fprintf(&b, "  and %d exchanges of other routes\n", r.MoreNotEmulated)
		}
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(&b, "Not checked, %s: %d %s, e.g. %s\n", s.Reason, s.Exchanges, plural(s.Exchanges, "exchange"), s.Example)
	}
	for _, u := range r.Unread {
		fmt.Fprintf(&b, "Not read: %s: %s\n", u.File, u.Error)
	}
	if r.MoreUnread > 0 {
		fmt.Fprintf(&b, "Not read: %d more files\n", r.MoreUnread)
	}
	routes := 0
	for _, rt := range r.Routes {
		if rt.Differing > 0 {
			routes++
		}
	}
	fmt.Fprintf(&b, "%d %s in %d %s: %d on emulated routes, %d of them on %d %s differ from the contract; %d on routes not emulated",
		r.Exchanges, plural(r.Exchanges, "exchange"), r.Files, plural(r.Files, "file"), r.Emulated, r.Differing, routes, plural(routes, "route"),
		r.Exchanges-r.Emulated-r.skippedCount())
	if n := r.skippedCount(); n > 0 {
		fmt.Fprintf(&b, "; %d not checked", n)
	}
	if n := len(r.Unread) + r.MoreUnread; n > 0 {
		fmt.Fprintf(&b, "; %d %s not read", n, plural(n, "file"))
	}
	b.WriteString(".\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func (r *Report) skippedCount() int {
	n := 0
	for _, s := range r.Skipped {
		n += s.Exchanges
	}
	return n
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
