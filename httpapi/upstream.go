package httpapi

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/marketplace/marketplace/journal"
	"github.com/marketplace/marketplace/recording"
)

// DefaultUpstreamTimeout is the default of Config.UpstreamTimeout: the
// real API answers in far less, and a forwarded request should fail
// within the server's own write timeout.
const DefaultUpstreamTimeout = 30 * time.Second

// DefaultUpstreamMaxBytes is the default of Config.UpstreamMaxBytes: the
// largest answer of the public API (a page of a search) is far smaller.
const DefaultUpstreamMaxBytes = 32 << 20

// logBytes bounds what the log of forwarded exchanges (for a snapshot)
// holds, beside its count, which is the journal's.
const logBytes = 32 << 20

// upstream is the server's forwarding to the real API and its recording
// (docs/recording.md).
type upstream struct {
	// base is Config.Upstream; all is Config.UpstreamAll.
	base *url.URL
	all  bool
	// client forwards: it follows no redirect (a 3xx is relayed as it
	// came) and bounds each exchange by Config.UpstreamTimeout.
	client   *http.Client
	timeout  time.Duration
	maxBytes int64
	// record is Config.Record: every forwarded exchange, into a folder.
	record *recording.Recorder
	// session is the operator's recording; log the exchanges forwarded
	// lately, for a snapshot (nil unless the journal keeps bodies).
	session recording.Session
	log     *recording.Log
}

func newUpstream(cfg Config, jnl *journal.Journal) *upstream {
	u := &upstream{base: cfg.Upstream, all: cfg.UpstreamAll, timeout: cfg.UpstreamTimeout,
		maxBytes: cfg.UpstreamMaxBytes, record: cfg.Record}
	if u.timeout <= 0 {
		u.timeout = DefaultUpstreamTimeout
	}
	if u.maxBytes <= 0 {
		u.maxBytes = DefaultUpstreamMaxBytes
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	// Every request of a test run goes to one host: keep as many
	// connections to it as there are callers.
	t.MaxIdleConnsPerHost = 256
	u.client = &http.Client{Transport: t, Timeout: u.timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	// A snapshot draws on the exchanges the journal keeps with their
	// bodies, as WireMock's draws on its journal: capturing every
	// forwarded exchange costs a forwarding server about 40% of its rate
	// against a local upstream (BenchmarkForward), which only a journal of
	// bodies already pays.
	if jnl.KeepsBodies() {
		u.log = recording.NewLog(jnl.Size(), logBytes)
	}
	return u
}

// target is where a request is forwarded, nil for nowhere, and whether
// every public request is: the operator's recording's while it runs,
// else the server's own. It costs an atomic load.
func (u *upstream) target() (*url.URL, bool) {
	if f, ok := u.session.Forwarding(); ok {
		t := f.Target
		if t == nil {
			t = u.base
		}
		return t, f.All || u.all
	}
	return u.base, u.all
}

// publicPath reports whether a request to path, which no route of the
// table serves with its method, is the public API's: the operator's
// routes, the console and the server's own (health, version, metrics, its
// OpenAPI document) never are, and are never forwarded.
func publicPath(path string) bool {
	for _, own := range []string{"/operator", "/console"} {
		if path == own || strings.HasPrefix(path, own+"/") {
			return false
		}
	}
	return path != "/favicon.ico" && !slices.Contains(opsPaths, path)
}

// publicRoute reports whether rt is a route of the public API, which
// -upstream-all forwards.
func publicRoute(rt route) bool {
	return rt.bare == nil && rt.who != theOperator && publicPath(specTemplate(rt.path))
}

// serveUnrouted answers a request that no route serves with its method:
// forwarded when every public request is, else by a stub, else forwarded
// when an upstream is set. It reports whether r was answered.
func (s *Server) serveUnrouted(rec *statusRecorder, r *http.Request) bool {
	t, all := s.up.target()
	forward := t != nil && publicPath(r.URL.Path)
	if forward && all {
		s.forward(rec, r, t, false)
		return true
	}
	if s.serveStub(rec, r, false, aUser) {
		return true
	}
	if forward {
		s.forward(rec, r, t, false)
		return true
	}
	return false
}

// forwardsAll returns where a request of an emulated public route is
// forwarded, or nil when the route answers it.
func (s *Server) forwardsAll() *url.URL {
	if t, all := s.up.target(); all {
		return t
	}
	return nil
}

// forward sends r to the upstream target, under its path, with its
// query, headers (Authorization included; not the hop-by-hop ones) and
// body, and relays the answer as it came: its status, its headers but the
// hop-by-hop ones, its body. An upstream that cannot be reached, that
// takes longer than the bound or whose answer is larger than the bound is
// answered 502 in the error shape. emulated says that a route of the
// engine serves r, for its recording.
func (s *Server) forward(rec *statusRecorder, r *http.Request, target *url.URL, emulated bool) {
	var body []byte
	if r.Body != nil && r.Body != http.NoBody {
		b, err := readBody(r)
		if err != nil {
			s.writeError(rec, r, err)
			return
		}
		body = b
	}
	u := *target
	u.Path = strings.TrimSuffix(target.Path, "/") + r.URL.Path
	u.RawPath = strings.TrimSuffix(target.EscapedPath(), "/") + r.URL.EscapedPath()
	u.RawQuery = r.URL.RawQuery
	req, err := http.NewRequestWithContext(r.Context(), r.Method, u.String(), nil)
	if err != nil {
		s.writeError(rec, r, upstreamFailed(target, err, s.up.timeout))
		return
	}
	req.Header = recording.ForwardHeader(r.Header)
	if len(body) > 0 {
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.ContentLength = int64(len(body))
	}
	// Forwarded, whatever comes back: a 502 is the upstream's failure,
	// not an answer of the route, and the journal says where it went.
	rec.forwarded = true
	resp, err := s.up.client.Do(req)
	if err != nil {
		if r.Context().Err() != nil {
			return // the caller is gone: no one reads an answer
		}
		s.writeError(rec, r, upstreamFailed(target, err, s.up.timeout))
		return
	}
	defer resp.Body.Close()
	// The whole answer before any of it is relayed: one that breaks off or
	// outgrows the bound is then still answered 502, not cut.
	b, err := io.ReadAll(io.LimitReader(resp.Body, s.up.maxBytes+1))
	if err != nil {
		if r.Context().Err() != nil {
			return
		}
		s.writeError(rec, r, upstreamFailed(target, err, s.up.timeout))
		return
	}
	if int64(len(b)) > s.up.maxBytes {
		s.writeError(rec, r, &httpError{status: http.StatusBadGateway, code: "bad_gateway",
			message: fmt.Sprintf("The upstream %s answered more than %d bytes, the bound of a forwarded answer", origin(target), s.up.maxBytes)})
		return
	}
	h := rec.Header()
	recording.RelayHeader(h, resp.Header)
	switch {
	case r.Method == http.MethodHead:
		if resp.ContentLength >= 0 {
			h.Set("Content-Length", strconv.FormatInt(resp.ContentLength, 10))
		}
	case resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusNotModified:
		h.Set("Content-Length", strconv.Itoa(len(b)))
	}
	rec.WriteHeader(resp.StatusCode)
	_, _ = rec.Write(b)
	s.keep(r, body, resp, b, emulated)
}

// keep records a forwarded exchange where it is asked for: the -record
// folder, the operator's recording, the log of a snapshot. Capture takes
// its secrets out first; a recording that fails is logged, the answer
// already given.
func (s *Server) keep(r *http.Request, body []byte, resp *http.Response, answer []byte, emulated bool) {
	if s.up.record == nil && s.up.log == nil && s.up.session.Status() != recording.Recording {
		return
	}
	e := recording.Capture(recording.Exchange{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery,
		RequestHeader: r.Header, RequestBody: body, Status: resp.StatusCode, ResponseHeader: resp.Header,
		ResponseBody: answer, Emulated: emulated}, s.cfg.OperatorToken)
	s.up.log.Add(e)
	if err := s.up.session.Add(e); err != nil {
		s.logger.Warn("recording", "name", e.Name(), "err", err)
	}
	if s.up.record != nil {
		if _, err := s.up.record.Add(e); err != nil {
			s.logger.Warn("recording", "name", e.Name(), "err", err)
		}
	}
}

// origin is the scheme and host of u, as an error message names an
// upstream: its path says nothing of what failed.
func origin(u *url.URL) string { return u.Scheme + "://" + u.Host }

// upstreamFailed is the 502 of an upstream that did not answer. The
// message says why without the URL of the request, whose query may carry
// a token.
func upstreamFailed(target *url.URL, err error, timeout time.Duration) error {
	why := err.Error()
	var ue *url.Error
	if errors.As(err, &ue) {
		why = ue.Err.Error()
	}
	var te interface{ Timeout() bool }
	if errors.As(err, &te) && te.Timeout() {
		why = fmt.Sprintf("no answer within %s", timeout)
	}
	return &httpError{status: http.StatusBadGateway, code: "bad_gateway",
		message: fmt.Sprintf("The upstream %s failed: %s", origin(target), why)}
}
