package recording

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/stubs"
)

// ParseTarget reads the base URL of an upstream: an absolute http or https
// URL, with a path the forwarded paths go under, and no query, fragment or
// user information (a credential in a URL ends up in logs). Errors:
// Invalid.
func ParseTarget(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return nil, errs.Invalidf("The upstream %q is not a URL: %v", s, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, errs.Invalidf("The upstream %q must be an http or https URL", s)
	case u.Host == "":
		return nil, errs.Invalidf("The upstream %q has no host", s)
	case u.User != nil:
		return nil, errs.Invalidf("The upstream URL cannot hold a user or a password")
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return nil, errs.Invalidf("The upstream %q cannot have a query or a fragment", s)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = strings.TrimSuffix(u.RawPath, "/")
	return u, nil
}

// Status is the state of the operator's recording, in WireMock's words.
type Status string

// The states of a recording.
const (
	NeverStarted Status = "NeverStarted"
	Recording    Status = "Recording"
	Stopped      Status = "Stopped"
)

// Spec is what the operator asks of a recording (POST
// /operator/recordings/start) or a snapshot (POST
// /operator/recordings/snapshot), in WireMock's names.
type Spec struct {
	// Target is targetBaseUrl: where a recording forwards; nil leaves it
	// to the server's own upstream. A snapshot has none.
	Target *url.URL
	// Filter is filters: the requests recorded; nil records all.
	Filter *stubs.Pattern
	// Persist (persist, true unless said) adds the mappings to the stubs
	// when the recording stops or the snapshot is taken.
	Persist bool
	// Repeats is repeatsAsScenarios: each answer of a request in order
	// (Options.Repeats); nil leaves it to the server's setting.
	Repeats *bool
	// UpstreamAll (marketplace.upstreamAll) forwards, while recording,
	// every public request, emulated or not, as -upstream-all does.
	UpstreamAll bool
}

// ParseStart reads the body of POST /operator/recordings/start. Every
// field is checked: an unknown name or a wrong value is an Invalid error
// naming it. Errors: Invalid.
func ParseStart(data []byte) (Spec, error) { return parseSpec(data, true) }

// ParseSnapshot reads the body of POST /operator/recordings/snapshot
// (empty: every exchange, persisted). Errors: Invalid.
func ParseSnapshot(data []byte) (Spec, error) { return parseSpec(data, false) }

func parseSpec(data []byte, start bool) (Spec, error) {
	spec := Spec{Persist: true}
	if len(strings.TrimSpace(string(data))) == 0 {
		return spec, nil
	}
	allowed := []string{"filters", "persist", "repeatsAsScenarios", "marketplace"}
	if start {
		allowed = append(allowed, "targetBaseUrl")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil || obj == nil {
		return spec, invalidField("body", "it must be a JSON object")
	}
	names := make([]string, 0, len(obj))
	for k := range obj {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if !slices.Contains(allowed, k) {
			return spec, invalidField(k, "it is not a field this server knows: "+strings.Join(allowed, ", "))
		}
	}
	if v, ok := obj["targetBaseUrl"]; ok {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return spec, invalidField("targetBaseUrl", "it must be a URL")
		}
		u, err := ParseTarget(s)
		if err != nil {
			return spec, invalidField("targetBaseUrl", errs.As(err).Message)
		}
		spec.Target = u
	}
	if v, ok := obj["filters"]; ok {
		p, err := stubs.ParsePattern(v)
		if err != nil {
			return spec, invalidField("filters", errs.As(err).Message)
		}
		spec.Filter = p
	}
	if v, ok := obj["persist"]; ok {
		if err := json.Unmarshal(v, &spec.Persist); err != nil {
			return spec, invalidField("persist", "it must be true or false")
		}
	}
	if v, ok := obj["repeatsAsScenarios"]; ok {
		var b bool
		if err := json.Unmarshal(v, &b); err != nil {
			return spec, invalidField("repeatsAsScenarios", "it must be true or false")
		}
		spec.Repeats = &b
	}
	if v, ok := obj["marketplace"]; ok {
		var ext map[string]json.RawMessage
		if err := json.Unmarshal(v, &ext); err != nil || ext == nil {
			return spec, invalidField("marketplace", "it must be a JSON object")
		}
		for k, b := range ext {
			if k != "upstreamAll" {
				return spec, invalidField("marketplace."+k, "it is not a field this server knows: upstreamAll")
			}
			if err := json.Unmarshal(b, &spec.UpstreamAll); err != nil {
				return spec, invalidField("marketplace.upstreamAll", "it must be true or false")
			}
		}
	}
	return spec, nil
}

func invalidField(field, why string) error {
	return errs.Invalidf("Invalid recording field %s: %s", field, why)
}

// Session is the operator's recording: started with a Spec, it records
// every exchange the server forwards until it is stopped, which answers
// its mappings. One runs at a time. It is safe for concurrent use.
type Session struct {
	mu     sync.Mutex
	status Status
	spec   Spec
	rec    *Recorder
	// target is the recording's forwarding while it runs, read by every
	// request that may be forwarded without the lock.
	target atomic.Pointer[Forwarding]
}

// Forwarding is where a recording sends the requests it forwards.
type Forwarding struct {
	// Target is the recording's targetBaseUrl; nil: the server's upstream.
	Target *url.URL
	// All forwards every public request, emulated or not.
	All bool
}

// Status returns the recording's state.
func (s *Session) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.status == "" {
		return NeverStarted
	}
	return s.status
}

// Forwarding returns where the recording forwards while it runs, and
// false when none runs: one atomic load.
func (s *Session) Forwarding() (Forwarding, bool) {
	f := s.target.Load()
	if f == nil {
		return Forwarding{}, false
	}
	return *f, true
}

// Start starts a recording of spec; repeats is the server's setting,
// which spec's Repeats overrides. Errors: Conflict (one is running).
func (s *Session) Start(spec Spec, repeats bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.status == Recording {
		return errs.Conflictf("A recording is already running: stop it first (POST /operator/recordings/stop)")
	}
	if spec.Repeats != nil {
		repeats = *spec.Repeats
	}
	rec, err := NewRecorder(Options{Repeats: repeats, Filter: spec.Filter})
	if err != nil {
		return err
	}
	s.status, s.spec, s.rec = Recording, spec, rec
	s.target.Store(&Forwarding{Target: spec.Target, All: spec.UpstreamAll})
	return nil
}

// Add records e in the running recording, if one runs. Errors: those of
// Recorder.Add.
func (s *Session) Add(e Entry) error {
	s.mu.Lock()
	rec := s.rec
	s.mu.Unlock()
	if rec == nil {
		return nil
	}
	_, err := rec.Add(e)
	return err
}

// Stop stops the recording and returns its mappings and its spec.
// Errors: Conflict (none is running).
func (s *Session) Stop() ([]json.RawMessage, Spec, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.status != Recording {
		return nil, Spec{}, errs.Conflictf("No recording is running: start one first (POST /operator/recordings/start)")
	}
	s.target.Store(nil)
	mappings := s.rec.Mappings()
	s.status, s.rec = Stopped, nil
	return mappings, s.spec, nil
}

// Log keeps the last exchanges the server forwarded, as entries, for a
// snapshot: bounded in number and in bytes, the oldest dropped first. It
// is safe for concurrent use.
type Log struct {
	mu       sync.Mutex
	entries  []Entry
	bytes    int
	max      int
	maxBytes int
}

// NewLog returns a log of at most n entries holding at most maxBytes.
func NewLog(n, maxBytes int) *Log { return &Log{max: n, maxBytes: maxBytes} }

// Add keeps e, dropping the oldest entries beyond the bounds; an entry
// larger than the whole bound is not kept.
func (l *Log) Add(e Entry) {
	if l == nil || l.max <= 0 {
		return
	}
	size := e.size()
	if size > l.maxBytes {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, e)
	l.bytes += size
	drop := 0
	for len(l.entries)-drop > l.max || l.bytes > l.maxBytes {
		l.bytes -= l.entries[drop].size()
		l.entries[drop] = Entry{} // its bytes go now, not at the next copy
		drop++
	}
	l.entries = l.entries[drop:]
}

// Entries returns the entries kept, oldest first.
func (l *Log) Entries() []Entry {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.entries)
}

// Snapshot returns the mappings of the entries kept that spec's filter
// matches, as a recording of them would (repeats is the server's setting,
// which spec's Repeats overrides).
func (l *Log) Snapshot(spec Spec, repeats bool) []json.RawMessage {
	if spec.Repeats != nil {
		repeats = *spec.Repeats
	}
	rec := &Recorder{opts: Options{Repeats: repeats, Filter: spec.Filter}, groups: map[string]*group{}}
	for _, e := range l.Entries() {
		_, _ = rec.Add(e) // past MaxMappings, the rest is left out
	}
	return rec.Mappings()
}
