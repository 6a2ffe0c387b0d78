package httpapi

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/faults"
	"github.com/marketplace/marketplace/httpapi/openapi"
	"github.com/marketplace/marketplace/storage/memory"
)

// tableServer is a server whose route table the tests read.
func tableServer(t *testing.T) *Server {
	t.Helper()
	m, err := marketplace.New(memory.New(), marketplace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return New(m, Config{OperatorToken: "operator"})
}

// apiRoutes is the table without its bare rows.
func apiRoutes(s *Server) []route {
	var out []route
	for _, rt := range s.routeTable() {
		if rt.bare == nil {
			out = append(out, rt)
		}
	}
	return out
}

func TestRouteTable_EachRouteIsDeclaredOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, rt := range tableServer(t).routeTable() {
		key := rt.method + " " + rt.path
		if seen[key] {
			t.Errorf("%s is declared twice", key)
		}
		seen[key] = true
		if rt.bare == nil && (rt.h == nil) == (rt.ah == nil) {
			t.Errorf("%s: its handler does not fit who may call it (%s)", key, rt.who)
		}
	}
}

func TestRouteTable_RoutesIsTheTableWithoutTheConsole(t *testing.T) {
	s := tableServer(t)
	var want []Route
	for _, rt := range apiRoutes(s) {
		want = append(want, Route{Method: rt.method, Path: rt.path})
	}
	if got := s.Routes(); !slices.Equal(got, want) {
		t.Errorf("Routes() = %v, want the table's %v", got, want)
	}
}

// A static name is served by its parameter route: the same segments, the
// name in the one parameter's place.
func TestRouteTable_StaticNamesSitInTheirRoutesParameter(t *testing.T) {
	for _, rt := range tableServer(t).routeTable() {
		for _, st := range rt.statics {
			ps, ts := strings.Split(st, "/"), strings.Split(rt.path, "/")
			params := 0
			ok := len(ps) == len(ts)
			for i := 0; ok && i < len(ps); i++ {
				if strings.HasPrefix(ts[i], ":") {
					params++
				} else {
					ok = ps[i] == ts[i]
				}
			}
			if !ok || params != 1 {
				t.Errorf("%s %s: %s is not a name in its parameter's place", rt.method, rt.path, st)
			}
		}
	}
}

// The operator's routes are under /operator/, and neither faulted (so that
// a test can always take its faults away) nor journaled (faults.CheckRoute,
// journaledPath); every other route is both, but for the metrics scrapes.
func TestRouteTable_OperatorRoutesAreNeverFaultedNorJournaled(t *testing.T) {
	for _, rt := range apiRoutes(tableServer(t)) {
		op := rt.who == theOperator
		if op != strings.HasPrefix(rt.path, "/operator/") {
			t.Errorf("%s %s: called by %s", rt.method, rt.path, rt.who)
		}
		if rt.faulted == op {
			t.Errorf("%s %s: faulted = %v", rt.method, rt.path, rt.faulted)
		}
		if rt.journaled != (!op && rt.path != "/metrics") {
			t.Errorf("%s %s: journaled = %v", rt.method, rt.path, rt.journaled)
		}
		if !rt.gated && !op {
			t.Errorf("%s %s: only the operator's state routes take the gate themselves", rt.method, rt.path)
		}
	}
}

// Fault rules may name the faulted routes' templates and static names,
// and nothing else.
func TestRouteTable_FaultRulesMayNameExactlyTheFaultedRoutes(t *testing.T) {
	s := tableServer(t)
	want := map[string]bool{}
	for _, rt := range apiRoutes(s) {
		if rt.faulted {
			want[faults.TemplateKey(specTemplate(rt.path))] = true
			for _, st := range rt.statics {
				want[st] = true
			}
		}
	}
	for k := range want {
		if !s.routeKeys[k] {
			t.Errorf("%s: rules may not name it", k)
		}
	}
	for k := range s.routeKeys {
		if !want[k] {
			t.Errorf("%s: rules may name it, but the table does not fault it", k)
		}
	}
}

// servedBy reports whether the spec path (/items/{id}) with method is
// served by a row of the table: its template, whatever it calls its
// parameters, or one of its static names.
func servedBy(table []route, method, path string) bool {
	for _, rt := range table {
		if rt.method != method {
			continue
		}
		if faults.TemplateKey(specTemplate(rt.path)) == faults.TemplateKey(path) || slices.Contains(rt.statics, path) {
			return true
		}
	}
	return false
}

func TestRouteTable_IsTheOpenAPIDocumentsPaths(t *testing.T) {
	ops, err := openapi.Operations()
	if err != nil {
		t.Fatal(err)
	}
	table := apiRoutes(tableServer(t))
	for _, op := range ops {
		if !servedBy(table, op.Method, op.Path) {
			t.Errorf("%s %s is in the document but no route serves it", op.Method, op.Path)
		}
	}
	for _, rt := range table {
		want := openapi.Operation{Method: rt.method, Path: specTemplate(rt.path)}
		if !slices.Contains(ops, want) {
			t.Errorf("%s %s is routed but not in httpapi/openapi/openapi.yaml (as %s)", rt.method, rt.path, want.Path)
		}
	}
}

// docRoute is a route as a document's table names it.
type docRoute struct{ file, method, path string }

var (
	// A table row's first cell: "| `GET /items/{id}` |", "| `GET`, `PUT /x` |".
	rowCell = regexp.MustCompile(`^\|([^|]*)\|`)
	// A row whose method and paths have a cell each: "| GET | /sites, /sites/{id}[/x] |".
	methodRow = regexp.MustCompile(`^\| *(GET|HEAD|POST|PUT|DELETE) *\|([^|]*)\|`)
	codeSpan  = regexp.MustCompile("`([^`]*)`")
	method    = regexp.MustCompile(`^(GET|HEAD|POST|PUT|DELETE)$`)
	request   = regexp.MustCompile(`^(GET|HEAD|POST|PUT|DELETE) (/[^ ?]*)`)
)

// docRoutes are the routes named in the first cell of the tables of
// README.md and docs/*.md.
func docRoutes(t *testing.T) []docRoute {
	files, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []docRoute
	for _, f := range append(files, "../README.md") {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if row := methodRow.FindStringSubmatch(line); row != nil {
				for _, p := range cellPaths(row[2]) {
					out = append(out, docRoute{filepath.Base(f), row[1], p})
				}
				continue
			}
			cell := rowCell.FindStringSubmatch(line)
			if cell == nil {
				continue
			}
			var methods []string
			for _, span := range codeSpan.FindAllStringSubmatch(cell[1], -1) {
				if method.MatchString(span[1]) {
					methods = append(methods, span[1])
					continue
				}
				m := request.FindStringSubmatch(span[1])
				if m == nil {
					continue
				}
				for _, mt := range append(methods, m[1]) {
					out = append(out, docRoute{filepath.Base(f), mt, m[2]})
				}
				methods = nil
			}
		}
	}
	return out
}

// cellPaths are the paths of a table cell: "/a, /b/{id}[/{x}] `{body}`"
// names /a, /b/{id} and /b/{id}/{x}; an elided path (/a/...) names none.
func cellPaths(cell string) []string {
	var out []string
	for _, part := range strings.Split(strings.TrimSpace(cell), ", ") {
		part, _, _ = strings.Cut(strings.TrimSpace(part), " ")
		part, _, _ = strings.Cut(part, "?")
		if !strings.HasPrefix(part, "/") || strings.Contains(part, "...") {
			continue
		}
		base, opt, ok := strings.Cut(part, "[")
		out = append(out, base)
		if opt = strings.TrimSuffix(opt, "]"); ok && strings.HasPrefix(opt, "/") {
			out = append(out, base+opt)
		}
	}
	return out
}

func TestDocs_EveryRouteTheirTablesListIsRouted(t *testing.T) {
	table := tableServer(t).routeTable()
	listed := docRoutes(t)
	if len(listed) < 50 {
		t.Fatalf("only %d routes read from the docs' tables: the reading is broken", len(listed))
	}
	for _, d := range listed {
		if !servedBy(table, d.method, d.path) {
			t.Errorf("%s lists %s %s, which no route serves", d.file, d.method, d.path)
		}
	}
}

func TestREADME_ListsEveryOperatorRoute(t *testing.T) {
	var readme []route
	for _, d := range docRoutes(t) {
		if d.file == "README.md" {
			readme = append(readme, route{method: d.method, path: strings.ReplaceAll(strings.ReplaceAll(d.path, "{", ":"), "}", "")})
		}
	}
	for _, rt := range apiRoutes(tableServer(t)) {
		if rt.who == theOperator && !servedBy(readme, rt.method, specTemplate(rt.path)) {
			t.Errorf("README.md does not list the operator route %s %s", rt.method, rt.path)
		}
	}
}

// unkeyedPosts are the POST routes that take no X-Idempotency-Key, and
// why: they create nothing that a retry would make twice, or their effect
// is not a transaction of the store that a key's record could share.
var unkeyedPosts = map[string]string{
	"/operator/tokens/revoke":                  "revokes: a retry finds the token revoked",
	"/operator/orders/:order_id/cancel":        "a change of state that a retry finds made",
	"/my/questions/hidden":                     "hides: a retry finds the questions hidden",
	"/users/:user_id/questions_blacklist":      "adds to a set: a retry finds the user blocked",
	"/authorization":                           "anyone's: no caller to own a key, and the code is the browser's",
	"/oauth/token":                             "anyone's: OAuth's own rules (a code is used once)",
	"/operator/snapshots":                      "takes the state gate: its writes are not the request's transactions",
	"/operator/snapshots/:snapshot_id/restore": "replaces the state, records of keys included",
	"/operator/reset":                          "replaces the state, records of keys included",
	"/operator/requests/count":                 "reads the journal: changes nothing",
	"/operator/requests/find":                  "reads the journal: changes nothing",
	"/operator/applications/:app_id/deliveries/:delivery_id/redeliver": "its effect is a POST to the application, outside the store",
}

func TestRouteTable_EveryCreatingRouteTakesAnIdempotencyKey(t *testing.T) {
	for _, rt := range apiRoutes(tableServer(t)) {
		why, exempt := unkeyedPosts[rt.path]
		switch {
		case rt.method == "POST" && !exempt && !rt.idempotent:
			t.Errorf("POST %s takes no idempotency key: mark it keyed(), or say in unkeyedPosts why not", rt.path)
		case rt.method == "POST" && exempt && rt.idempotent:
			t.Errorf("POST %s is keyed, yet unkeyedPosts says: %s", rt.path, why)
		case rt.method == "PUT" && strings.Contains(rt.path, "/stock/type/") && !rt.idempotent:
			t.Errorf("PUT %s, a stock PUT, takes no idempotency key", rt.path)
		case rt.idempotent && rt.method != "POST" && !strings.Contains(rt.path, "/stock/type/"):
			t.Errorf("%s %s is keyed, but only creations and stock PUTs are", rt.method, rt.path)
		}
		if rt.idempotent && rt.who != aUser && rt.who != theOperator {
			t.Errorf("%s %s is keyed but its caller is %s: a key is its caller's", rt.method, rt.path, rt.who)
		}
	}
	for p := range unkeyedPosts {
		if !slices.ContainsFunc(tableServer(t).routeTable(), func(rt route) bool { return rt.method == "POST" && rt.path == p }) {
			t.Errorf("unkeyedPosts names POST %s, which is no route", p)
		}
	}
}

// keyedOperations are the operations of the OpenAPI document that declare
// the X-Idempotency-Key header.
func keyedOperations(t *testing.T) map[openapi.Operation]bool {
	b, err := openapi.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[openapi.Operation]bool{}
	for p, item := range doc.Paths {
		for m, raw := range item {
			var op struct {
				Parameters []map[string]any `json:"parameters"`
			}
			if json.Unmarshal(raw, &op) != nil {
				continue
			}
			for _, prm := range op.Parameters {
				if prm["$ref"] == "#/components/parameters/idempotency_key" {
					out[openapi.Operation{Method: strings.ToUpper(m), Path: p}] = true
				}
			}
		}
	}
	return out
}

func TestOpenAPI_TheIdempotencyKeyIsDeclaredOnExactlyTheKeyedRoutes(t *testing.T) {
	doc := keyedOperations(t)
	all, err := openapi.Operations()
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range apiRoutes(tableServer(t)) {
		// A route that serves static names is in the document under them
		// (POST /items/multiwarehouse), when not under its own path.
		for _, path := range append([]string{specTemplate(rt.path)}, rt.statics...) {
			op := openapi.Operation{Method: rt.method, Path: path}
			if !slices.Contains(all, op) {
				continue
			}
			if doc[op] != rt.idempotent {
				t.Errorf("%s %s: keyed %v in the route table, declares X-Idempotency-Key %v in the document", op.Method, op.Path, rt.idempotent, doc[op])
			}
		}
	}
}

func TestDocs_TheIdempotencyTableListsExactlyTheKeyedRoutes(t *testing.T) {
	listed := map[string]bool{}
	for _, d := range docRoutes(t) {
		if d.file == "idempotency.md" {
			listed[d.method+" "+d.path] = true
		}
	}
	for _, rt := range apiRoutes(tableServer(t)) {
		name := rt.method + " " + specTemplate(rt.path)
		if rt.idempotent != listed[name] && !slices.ContainsFunc(rt.statics, func(st string) bool { return listed[rt.method+" "+st] }) {
			t.Errorf("%s: keyed %v, listed in docs/idempotency.md %v", name, rt.idempotent, listed[name])
		}
	}
}
