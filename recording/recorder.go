package recording

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/google/uuid"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/stubs"
)

// MaxMappings bounds the mappings one recorder keeps: a recording left
// running with repeats on would otherwise grow without end. Exchanges
// beyond it are not recorded.
const MaxMappings = 10000

// Options configures a Recorder.
type Options struct {
	// Dir, when set, is the folder each mapping is written to, one file a
	// mapping, as soon as it is recorded; -stubs DIR loads it back.
	Dir string
	// Repeats keeps every answer of a distinct request, in order, as a
	// sequence of mappings each limited to the times it was given;
	// without it, a distinct request is recorded once, with its first
	// answer.
	Repeats bool
	// Filter, when set, records only the requests it matches (their
	// secrets redacted).
	Filter *stubs.Pattern
}

// Recorder turns entries into stub mappings: one distinct request (one
// request pattern) is one mapping, or, with Options.Repeats, one sequence.
// It is safe for concurrent use.
type Recorder struct {
	opts Options

	mu     sync.Mutex
	groups map[string]*group
	order  []*group
	count  int
}

// group is one distinct request and its answers, in order.
type group struct {
	key      string // the request pattern, which the ids derive from
	name     string
	request  []byte
	emulated bool
	answers  []answer
}

// answer is one answer of a sequence and how many times in a row it was
// given.
type answer struct {
	response []byte
	times    int64
}

// NewRecorder returns a recorder; with a Dir, the folder is made if it
// does not exist. Errors: Invalid (a Dir that cannot be made).
func NewRecorder(o Options) (*Recorder, error) {
	if o.Dir != "" {
		if err := os.MkdirAll(o.Dir, 0o755); err != nil {
			return nil, errs.Invalidf("Cannot record into %s: %v", o.Dir, err)
		}
	}
	return &Recorder{opts: o, groups: map[string]*group{}}, nil
}

// Add records an entry: a new distinct request becomes a mapping; a
// request already recorded changes nothing, unless Repeats is on, where an
// answer that differs from the last one given extends its sequence. With a
// Dir, the mappings that changed are written at once. It reports whether
// the entry was recorded; an answer whose status a stub cannot give (one
// outside 200 to 599) is not. Errors: Conflict (the recorder holds
// MaxMappings), Internal (a file that cannot be written).
func (r *Recorder) Add(e Entry) (bool, error) {
	if r.opts.Filter != nil && !e.Matches(r.opts.Filter) {
		return false, nil
	}
	if e.status < 200 || e.status > 599 {
		return false, nil // not an answer a stub gives (package stubs)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	key := string(e.request)
	g, ok := r.groups[key]
	switch {
	case !ok:
		if r.count >= MaxMappings {
			return false, errs.Conflictf("The recording holds %d mappings, its bound: %s is not recorded", MaxMappings, e.name)
		}
		g = &group{key: key, name: e.name, request: e.request, emulated: e.emulated}
		g.answers = []answer{{response: e.response, times: 1}}
		r.groups[key] = g
		r.order = append(r.order, g)
		r.count++
		return true, r.write(g, 0)
	case !r.opts.Repeats:
		return false, nil
	case bytes.Equal(g.answers[len(g.answers)-1].response, e.response):
		// The same answer again: the last of a sequence answers every
		// later request, so nothing is written.
		g.answers[len(g.answers)-1].times++
		return true, nil
	default:
		if r.count >= MaxMappings {
			return false, errs.Conflictf("The recording holds %d mappings, its bound: %s is not recorded", MaxMappings, e.name)
		}
		g.answers = append(g.answers, answer{response: e.response, times: 1})
		r.count++
		// The answer before gains its times and a sequence priority; the
		// first of a sequence keeps its id, so its file is replaced.
		from := len(g.answers) - 2
		return true, r.write(g, from)
	}
}

// Mappings returns the mappings recorded, in the order their requests
// were first seen, each sequence in its order; none is an empty list.
func (r *Recorder) Mappings() []json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]json.RawMessage, 0, r.count)
	for _, g := range r.order {
		for i := range g.answers {
			out = append(out, g.mapping(i))
		}
	}
	return out
}

// Len returns how many mappings the recorder holds.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.count
}

// mappingDoc is a stub mapping as recorded, its fields in WireMock's
// order.
type mappingDoc struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	Priority    int             `json:"priority,omitempty"`
	Request     json.RawMessage `json:"request"`
	Response    json.RawMessage `json:"response"`
	Marketplace extension       `json:"marketplace"`
}

// extension is the mapping's marketplace part: a recorded answer is
// public, since a replay's caller holds a token of the real API that the
// engine does not know; it overrides the route that emulates its request,
// since it stands for the real API's answer; and in a sequence, each
// answer but the last is given the times it was given.
type extension struct {
	Override bool  `json:"override,omitempty"`
	Public   bool  `json:"public"`
	Times    int64 `json:"times,omitempty"`
}

// mapping returns the i-th mapping of g's sequence. A sequence is tried
// in its order (priorities from stubs.DefaultPriority up), each answer but
// the last spent after its times; the last answers every request after
// them, as the real API last did.
func (g *group) mapping(i int) json.RawMessage {
	m := mappingDoc{ID: g.id(i), Name: g.name, Request: g.request, Response: g.answers[i].response,
		Marketplace: extension{Override: g.emulated, Public: true}}
	if len(g.answers) > 1 {
		m.Priority = stubs.DefaultPriority + i
		if i < len(g.answers)-1 {
			m.Marketplace.Times = g.answers[i].times
		}
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		panic(err) // built from encoded JSON only
	}
	return b
}

// id is the UUID of the i-th mapping of g: derived from the request
// pattern, so that recording the same request again, in another run,
// replaces its mapping and its file rather than adding a second.
func (g *group) id(i int) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, fmt.Appendf(nil, "marketplace-recording:%d:%s", i, g.key)).String()
}

// write writes g's mappings from the from-th on, when the recorder has a
// Dir.
func (r *Recorder) write(g *group, from int) error {
	if r.opts.Dir == "" {
		return nil
	}
	for i := from; i < len(g.answers); i++ {
		if err := writeFile(filepath.Join(r.opts.Dir, g.fileName(i)), g.mapping(i)); err != nil {
			return errs.Internalf(err, "write recording %s", g.name)
		}
	}
	return nil
}

// fileName names the i-th mapping's file: its method and path, readable,
// and the start of its id, unique.
func (g *group) fileName(i int) string {
	var b strings.Builder
	for _, c := range []byte(strings.ToLower(g.name)) {
		if b.Len() >= 60 {
			break
		}
		switch {
		case 'a' <= c && c <= 'z' || '0' <= c && c <= '9':
			b.WriteByte(c)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	return strings.TrimSuffix(b.String(), "-") + "-" + g.id(i)[:8] + ".json"
}

// writeFile replaces path with data whole: a reader (a server loading the
// folder) never finds half a mapping.
func writeFile(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".recording-*")
	if err != nil {
		return err
	}
	_, err = f.Write(append(data, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}
