package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/marketplace/marketplace/httpapi"
	"github.com/marketplace/marketplace/journal"
)

// BenchmarkStubs measures what stubs cost an emulated GET (GET
// /users/:user_id) and what a stubbed answer costs beside it. Run the
// none/100stubs pair alternately and take the medians:
//
//	go test -run '^$' -bench 'BenchmarkStubs/(none|100stubs)$' -count 5 ./httpapi/
//
// With no override stub, stubs are read only on a miss: 100 ordinary
// stubs loaded should cost an emulated GET one atomic load.
func BenchmarkStubs(b *testing.B) {
	ts := newTestServer(b)
	u := ts.mustUser("MLA", "normal")
	path := fmt.Sprintf("/users/%d", u.ID)
	empty := newTestServer(b)
	eu := empty.mustUser("MLA", "normal")
	epath := fmt.Sprintf("/users/%d", eu.ID)
	for i := range 100 {
		if _, err := ts.m.Stubs.Create(context.Background(), []byte(fmt.Sprintf(
			`{"request":{"method":"GET","urlPathTemplate":"/payments%d/{id}","headers":{"X-Never":{"absent":true}}},"response":{"status":200,"jsonBody":{"id":"{{request.path.id}}"},"transformers":["response-template"]}}`, i))); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("none", func(b *testing.B) { withCPU(b, func() { benchServe(b, empty.handler, "GET", epath, eu.Token) }) })
	b.Run("100stubs", func(b *testing.B) { withCPU(b, func() { benchServe(b, ts.handler, "GET", path, u.Token) }) })
	// The last stub made is the first of equal priority tried, the first
	// made the last: the stubbed answer pays the walk of all 100.
	b.Run("stubbed", func(b *testing.B) { withCPU(b, func() { benchServe(b, ts.handler, "GET", "/payments0/7", u.Token) }) })
}

// withCPU runs the benchmark body and reports the process's CPU time per
// operation beside the time that passed.
func withCPU(b *testing.B, run func()) {
	cpu := cpuTime()
	run()
	b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// BenchmarkStubsWorst is the worst a request can cost the stubs within
// their bounds (docs/stubs.md), beside an emulated GET in the same run: a
// public stub whose JSONPath filters every node of a 64 KiB body under a
// descendant segment, and one that writes every node back as JSON for a
// nested matcher, tried by an anonymous POST that no stub answers. cpu-ns/op
// is the process's CPU time per request, which a shared machine disturbs
// less than the time that passed:
//
//	go test -run '^$' -bench 'BenchmarkStubsWorst' -count 5 ./httpapi/
func BenchmarkStubsWorst(b *testing.B) {
	ts := newTestServer(b)
	u := ts.mustUser("MLA", "normal")
	path := fmt.Sprintf("/users/%d", u.ID)
	for _, m := range []string{
		`{"request":{"method":"POST","urlPath":"/v1/worst","bodyPatterns":[{"matchesJsonPath":"$[*,*,*,*,*,*,*,*]..[?@.a.b.c.d.e.f.g.h == 1 && @[0][1][2][3] != 'x' && $.a.b.c.d.e.f.g.h == null && length(@[1]) > 0]"}]},"response":{"status":200},"marketplace":{"public":true}}`,
		`{"request":{"method":"POST","urlPath":"/v1/worst","bodyPatterns":[{"matchesJsonPath":{"expression":"$..*","equalTo":"x"}}]},"response":{"status":200},"marketplace":{"public":true}}`,
	} {
		if _, err := ts.m.Stubs.Create(context.Background(), []byte(m)); err != nil {
			b.Fatal(err)
		}
	}
	var wide strings.Builder
	wide.WriteString("[")
	for wide.Len() < 64<<10-16 {
		wide.WriteString("[1,2],")
	}
	wide.WriteString("[1,2]]")
	body := wide.String()
	b.Run("emulatedGET", func(b *testing.B) { withCPU(b, func() { benchServe(b, ts.handler, "GET", path, u.Token) }) })
	b.Run("worst", func(b *testing.B) {
		b.ReportAllocs()
		cpu := cpuTime()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				req := httptest.NewRequest("POST", "/v1/worst", strings.NewReader(body))
				rec := httptest.NewRecorder()
				ts.handler.ServeHTTP(rec, req)
				if rec.Code != http.StatusNotFound {
					b.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
			}
		})
		b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
	})
}

// cpuTime is the CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestJournalWithBodies_MemoryStaysWithinItsBoundUnder100000Requests sends
// 100,000 requests with large bodies and headers through a journal that
// keeps them, and checks that what it holds never passes its bound.
func TestJournalWithBodies_MemoryStaysWithinItsBoundUnder100000Requests(t *testing.T) {
	ts := newTestServer(t)
	j := journal.NewWithBodies(1000, journal.Bodies{PerEntry: 4096, Total: 1 << 20})
	h := httpapi.New(ts.m, httpapi.Config{OperatorToken: testOperatorToken, Journal: j})
	ts.handler = h
	bound := int64(j.Size()) * int64(j.EntryBytes())
	if bound > 1<<20 || j.EntryBytes() != (1<<20)/1000 {
		t.Fatalf("bound per entry %d, total %d: the total must bound the entries", j.EntryBytes(), bound)
	}
	body := make([]byte, 8192)
	for i := range body {
		body[i] = 'a' + byte(i%26)
	}
	for i := range 100_000 {
		ts.do("POST", fmt.Sprintf("/nowhere/%d", i), "", string(body), "X-Big", string(body[:2000]))
		if i%10_000 == 0 && j.HeldBytes() > bound {
			t.Fatalf("after %d requests the journal holds %d bytes, bound %d", i+1, j.HeldBytes(), bound)
		}
	}
	if held := j.HeldBytes(); held > bound || held < bound/2 {
		t.Fatalf("the journal holds %d bytes, bound %d", held, bound)
	}
	entries, _, _ := j.List(journal.Query{Limit: 1000})
	if len(entries) != 1000 || !entries[0].Truncated || len(entries[0].Body) > j.EntryBytes() {
		t.Fatalf("entries %d, newest truncated %v, body %d", len(entries), entries[0].Truncated, len(entries[0].Body))
	}
}
