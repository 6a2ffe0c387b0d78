// Package journal keeps the last requests a server answered, in memory and
// bounded, for tests that check what an application actually sent. An
// entry never holds a token or a secret: the query is redacted before it is
// kept (RedactQuery), and headers and bodies are not kept at all.
//
// A journal belongs to one server process: with several servers on one
// database, each keeps the requests it answered.
package journal

import (
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/marketplace/marketplace/faults"
	"github.com/marketplace/marketplace/paging"
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
type Journal struct {
	mu      sync.Mutex
	entries []Entry // ring of cap size
	next    int     // where the next entry goes
	lastID  int64
	size    int
}

// New returns a journal of the last size requests; size 0 keeps none.
func New(size int) *Journal {
	if size < 0 {
		size = 0
	}
	return &Journal{size: size, entries: make([]Entry, 0, min(size, 64))}
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
	j.mu.Lock()
	defer j.mu.Unlock()
	j.lastID++
	e.ID = j.lastID
	if len(j.entries) < j.size {
		j.entries = append(j.entries, e)
		j.next = len(j.entries) % j.size
		return e.ID
	}
	j.entries[j.next] = e
	j.next = (j.next + 1) % j.size
	return e.ID
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
	j.mu.Lock()
	defer j.mu.Unlock()
	total := 0
	n := len(j.entries)
	for i := range n {
		// Newest first: the entry before next, going back round the ring.
		e := &j.entries[(j.next-1-i+2*n)%n]
		if (method != "" && e.Method != method) || (route != "" && faults.TemplateKey(e.Route) != route) ||
			(q.Status != 0 && e.Status != q.Status) || (q.UserID != 0 && (e.UserID == nil || *e.UserID != q.UserID)) {
			continue
		}
		total++
		if total <= q.Offset || len(out) >= q.Limit {
			continue
		}
		out = append(out, *e)
	}
	return out, total, nil
}

// Clear forgets every entry and returns how many there were; ids go on
// from where they were, so that a client never sees one id name two
// requests.
func (j *Journal) Clear() int {
	if !j.Enabled() {
		return 0
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	n := len(j.entries)
	j.entries = j.entries[:0]
	j.next = 0
	return n
}

// Redacted replaces a token or a secret in a kept query.
const Redacted = "REDACTED"

// secretParams are the query parameters that carry tokens, codes and
// secrets in the public API's OAuth and in the older SDKs.
var secretParams = []string{"access_token", "refresh_token", "client_secret", "code", "code_verifier",
	"password", "id_token", "client_assertion", "token", "secret", "api_key", "apikey"}

// tokenPrefixes start the values of the API's tokens and codes, which are
// redacted under whatever name they travel.
var tokenPrefixes = []string{"APP_USR-", "TG-", "OPERATOR-"}

// RedactQuery returns the raw query with the value of every parameter that
// may carry a token or a secret replaced by Redacted, the rest kept as it
// was sent, in its order.
func RedactQuery(raw string) string {
	if raw == "" {
		return ""
	}
	parts := strings.Split(raw, "&")
	for i, p := range parts {
		k, v, hasValue := strings.Cut(p, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		value, err := url.QueryUnescape(v)
		if err != nil {
			value = v
		}
		if hasValue && (isSecretName(name) || looksLikeToken(value)) {
			parts[i] = k + "=" + Redacted
		}
	}
	return strings.Join(parts, "&")
}

func isSecretName(name string) bool {
	name = strings.ToLower(name)
	for _, s := range secretParams {
		if name == s {
			return true
		}
	}
	return strings.Contains(name, "token") || strings.Contains(name, "secret") || strings.Contains(name, "password")
}

func looksLikeToken(v string) bool {
	for _, p := range tokenPrefixes {
		if len(v) >= len(p) && strings.EqualFold(v[:len(p)], p) {
			return true
		}
	}
	return false
}
