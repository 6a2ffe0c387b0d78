// Package journal keeps the last requests a server answered, in memory and
// bounded, for tests that check what an application actually sent. An
// entry never holds a token or a secret: the HTTP server redacts the path,
// the query and, in a journal with bodies, the headers and the body
// before it adds the entry (internal/redact: the shapes of the engine's
// credentials, the values of credential names, the server's own secrets,
// the credentials the request presents and the tokens the accounts
// accept, in every encoding); RedactQuery applies the shapes and names to
// a query for callers outside the server.
//
// A journal belongs to one server process: with several servers on one
// database, each keeps the requests it answered.
package journal

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/marketplace/marketplace/faults"
	"github.com/marketplace/marketplace/internal/redact"
	"github.com/marketplace/marketplace/paging"
	"github.com/marketplace/marketplace/stubs"
)

// DefaultSize is the number of requests a server keeps unless told
// otherwise.
const DefaultSize = 1000

// Entry is one request.
type Entry struct {
	// ID numbers the requests of this journal, from 1.
	ID int64 `json:"id"`
	// Time is when the request arrived, by the engine's clock.
	Time   time.Time `json:"time"`
	Method string    `json:"method"`
	Path   string    `json:"path"`
	// Path is the request path with every token replaced by Redacted.
	// Query is the query string with every token and secret replaced by
	// Redacted.
	Query string `json:"query"`
	// Route is the route template (spec style); empty when no route
	// matched.
	Route  string `json:"route"`
	Status int    `json:"status"`
	// LatencyMS is how long the answer took, in milliseconds of real time.
	LatencyMS float64 `json:"latency_ms"`
	// UserID and ApplicationID are the caller's, when known.
	UserID        *int64 `json:"user_id"`
	ApplicationID *int64 `json:"application_id"`
	// FaultID is the fault rule that acted on the request, if one did.
	FaultID *int64 `json:"fault_id,omitempty"`
	// StubID is the stub mapping that answered the request, if one did.
	StubID string `json:"stub_id,omitempty"`
	// Forwarded says that the upstream (the real API) answered the
	// request, forwarded to it (docs/recording.md).
	Forwarded bool `json:"forwarded,omitempty"`
	// Headers and Body are kept by a journal with bodies (NewWithBodies):
	// the request's headers and body, their credentials, tokens and
	// secrets redacted, within the journal's bound per entry.
	Headers map[string][]string `json:"headers,omitempty"`
	Body    string              `json:"body,omitempty"`
	// Truncated says that Headers and Body were cut to the bound.
	Truncated bool `json:"truncated,omitempty"`
}

// size is what the entry holds beyond its fixed fields: what a journal
// with bodies bounds.
func (e *Entry) size() int64 {
	n := len(e.Body)
	for k, vs := range e.Headers {
		n += len(k)
		for _, v := range vs {
			n += len(v)
		}
	}
	return int64(n)
}

// Query selects entries; zero fields select everything.
type Query struct {
	Method string
	// Route is a route template; parameter names do not matter.
	Route  string
	Status int
	UserID int64
	Offset int
	Limit  int
}

// Journal is a ring of the last Size entries. It is safe for concurrent use.
//
// Every request of a server adds an entry, so Add takes no lock that other
// requests take: it draws the entry's id from an atomic counter and writes
// the entry into the id's slot of the ring under the slot's own lock,
// which only a reader of that slot, or a writer a whole ring later, takes
// too. A reader skips a slot whose entry is not the id it expects (not
// written yet, or already written over).
type Journal struct {
	slots  []slot // ring of size; id n goes to slot (n-1) % size
	lastID atomic.Int64
	// cleared is the last id that Clear forgot; entries up to it are not
	// listed.
	cleared atomic.Int64
	size    int
	// entryBytes bounds each entry's headers and body; 0: none are kept.
	entryBytes int
	// held is what the entries' headers and bodies hold now.
	held atomic.Int64
}

// Bodies bound what a journal keeps of request headers and bodies.
type Bodies struct {
	// PerEntry bounds one entry's headers and body, in bytes (0:
	// DefaultEntryBytes).
	PerEntry int
	// Total bounds every entry's together, in bytes (0: DefaultTotalBytes);
	// each entry then gets at most Total divided by the journal's size.
	Total int64
}

// Defaults of Bodies.
const (
	DefaultEntryBytes = 16 << 10
	DefaultTotalBytes = 32 << 20
)

// NewWithBodies returns a journal of the last size requests that keeps
// their headers and bodies too, within b's bounds.
func NewWithBodies(size int, b Bodies) *Journal {
	j := New(size)
	if b.PerEntry <= 0 {
		b.PerEntry = DefaultEntryBytes
	}
	if b.Total <= 0 {
		b.Total = DefaultTotalBytes
	}
	if j.size > 0 {
		j.entryBytes = int(min(int64(b.PerEntry), b.Total/int64(j.size)))
	}
	return j
}

// EntryBytes is the bound of one entry's headers and body; 0 when the
// journal keeps none.
func (j *Journal) EntryBytes() int { return j.entryBytes }

// KeepsBodies reports whether the journal keeps headers and bodies.
func (j *Journal) KeepsBodies() bool { return j.Enabled() && j.entryBytes > 0 }

// HeldBytes is what the kept entries' headers and bodies hold: never more
// than the journal's size times EntryBytes.
func (j *Journal) HeldBytes() int64 { return j.held.Load() }

type slot struct {
	mu sync.Mutex
	e  Entry
}

// New returns a journal of the last size requests; size 0 keeps none.
func New(size int) *Journal {
	if size < 0 {
		size = 0
	}
	return &Journal{size: size, slots: make([]slot, size)}
}

// Size is the number of entries the journal keeps.
func (j *Journal) Size() int { return j.size }

// Enabled reports whether the journal keeps anything.
func (j *Journal) Enabled() bool { return j != nil && j.size > 0 }

// Add keeps e, forgetting the oldest entry when the journal is full, and
// returns the id it gave e (0 when the journal keeps nothing).
func (j *Journal) Add(e Entry) int64 {
	if !j.Enabled() {
		return 0
	}
	if j.entryBytes == 0 {
		e.Headers, e.Body, e.Truncated = nil, "", false
	} else {
		j.bound(&e)
	}
	e.ID = j.lastID.Add(1)
	s := &j.slots[(e.ID-1)%int64(j.size)]
	s.mu.Lock()
	// A writer a whole ring ahead may have been quicker: the newer stays.
	if s.e.ID < e.ID {
		if j.entryBytes > 0 {
			j.held.Add(e.size() - s.e.size())
		}
		s.e = e
	}
	s.mu.Unlock()
	return e.ID
}

// bound cuts e's headers, then its body, to the bound of an entry: the
// headers first, in name order, as far as they fit whole.
func (j *Journal) bound(e *Entry) {
	budget := j.entryBytes
	if len(e.Headers) > 0 {
		names := make([]string, 0, len(e.Headers))
		for k := range e.Headers {
			names = append(names, k)
		}
		slices.Sort(names)
		kept := make(map[string][]string, len(names))
		for _, k := range names {
			n := len(k)
			for _, v := range e.Headers[k] {
				n += len(v)
			}
			if n > budget {
				e.Truncated = true
				continue
			}
			budget -= n
			kept[k] = e.Headers[k]
		}
		e.Headers = kept
	}
	if len(e.Body) > budget {
		e.Body = strings.ToValidUTF8(e.Body[:budget], "")
		e.Truncated = true
	}
}

// request is the entry as a stub pattern matches it.
func (e *Entry) request() *stubs.Request {
	return &stubs.Request{Method: e.Method, Path: e.Path, RawQuery: e.Query, Header: e.Headers, Body: []byte(e.Body)}
}

// Find returns the entries kept that match p (a request pattern in
// WireMock's format), newest first. Headers and bodies are matched as
// kept: redacted, and only in a journal with bodies.
func (j *Journal) Find(p *stubs.Pattern) []Entry {
	out := []Entry{}
	if !j.Enabled() {
		return out
	}
	j.each(func(e Entry) bool {
		if p.Matches(e.request()) {
			out = append(out, e)
		}
		return true
	})
	return out
}

// Count returns how many entries kept match p, as Find does.
func (j *Journal) Count(p *stubs.Pattern) int {
	n := 0
	if !j.Enabled() {
		return 0
	}
	j.each(func(e Entry) bool {
		if p.Matches(e.request()) {
			n++
		}
		return true
	})
	return n
}

// each calls f with a copy of each entry kept, newest first, until f
// returns false.
func (j *Journal) each(f func(e Entry) bool) {
	last := j.lastID.Load()
	first := max(last-int64(j.size), j.cleared.Load()) + 1
	for id := last; id >= first; id-- {
		s := &j.slots[(id-1)%int64(j.size)]
		s.mu.Lock()
		e := s.e
		s.mu.Unlock()
		if e.ID != id {
			continue
		}
		if !f(e) {
			return
		}
	}
}

// List returns the entries that q selects, newest first, from q.Offset, at
// most q.Limit of them (all when 0), and how many q selects in all.
func (j *Journal) List(q Query) ([]Entry, int, error) {
	if err := paging.Check(q.Offset, q.Limit); err != nil {
		return nil, 0, err
	}
	out := []Entry{}
	if !j.Enabled() {
		return out, 0, nil
	}
	method := strings.ToUpper(q.Method)
	route := ""
	if q.Route != "" {
		route = faults.TemplateKey(q.Route)
	}
	total := 0
	j.each(func(e Entry) bool {
		if (method != "" && e.Method != method) || (route != "" && faults.TemplateKey(e.Route) != route) ||
			(q.Status != 0 && e.Status != q.Status) || (q.UserID != 0 && (e.UserID == nil || *e.UserID != q.UserID)) {
			return true
		}
		total++
		if total <= q.Offset || len(out) >= q.Limit {
			return true
		}
		out = append(out, e)
		return true
	})
	return out, total, nil
}

// Clear forgets every entry and returns how many there were; ids go on
// from where they were, so that a client never sees one id name two
// requests.
func (j *Journal) Clear() int {
	if !j.Enabled() {
		return 0
	}
	n := 0
	last := j.lastID.Load()
	j.each(func(e Entry) bool {
		if e.ID <= last {
			n++
		}
		return true
	})
	// Never back: two Clears at once forget up to the later one's last.
	for {
		c := j.cleared.Load()
		if c >= last || j.cleared.CompareAndSwap(c, last) {
			break
		}
	}
	return n
}

// Redacted replaces a token or a secret in a kept query, and in a kept
// path (see httpapi): the one form the server redacts with everywhere.
const Redacted = redact.Mark

// queryRedactor knows the token shapes alone; a server that knows its own
// secrets redacts with them too before it adds an entry.
var queryRedactor = redact.New()

// RedactQuery returns the raw query with the value of every parameter that
// may carry a token or a secret replaced by Redacted, the rest kept as it
// was sent, in its order: a parameter whose name says it carries one
// (access_token, client_secret, code, password, api_key, ...) or whose
// value holds a credential of a shape the engine issues or reads
// (APP_USR-, TG-, OPERATOR-, a JSON Web Token, a 64-digit hexadecimal
// secret, Bearer and Basic credentials), under whatever name it travels
// and however often it is escaped.
func RedactQuery(raw string) string { return queryRedactor.Query(raw) }
