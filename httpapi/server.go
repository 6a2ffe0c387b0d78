// Package httpapi adapts HTTP to the marketplace engine: routes, token
// authentication, JSON in and out, and the mapping of domain errors to
// statuses. It holds no rules; every decision is made by a domain service.
package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/faults"
	"github.com/marketplace/marketplace/httpapi/openapi"
	"github.com/marketplace/marketplace/internal/redact"
	"github.com/marketplace/marketplace/journal"
	"github.com/marketplace/marketplace/metrics"
	"github.com/marketplace/marketplace/recording"
)

// Config configures a Server.
type Config struct {
	// OperatorToken authorizes the /operator routes. Empty disables them.
	OperatorToken string
	// Logger receives one line per request; nil discards.
	Logger *slog.Logger
	// ManualClock lets the operator read and move the clock. Left nil, it
	// is the engine's own clock when that is a manual one (clock.Manual),
	// so a manual clock is given once, to the engine.
	ManualClock ManualClock
	// Journal keeps the last requests for GET /operator/requests; nil
	// means a journal of journal.DefaultSize, journal.New(0) keeps none.
	Journal *journal.Journal
	// CORSOrigins are the origins whose browser apps may call the API ("*"
	// for any; see CheckCORSOrigin). Empty turns CORS off: no CORS headers,
	// and OPTIONS answers only the path's methods.
	CORSOrigins []string
	// Metrics, when set, counts every request by route template, method
	// and status, and is served at GET /metrics unless MetricsOwnAddress
	// says that it is served on a listener of its own.
	Metrics           *metrics.Metrics
	MetricsOwnAddress bool
	// ValidateRequests refuses, with 400 bad_request, a request that breaks
	// the OpenAPI document (docs/openapi.md).
	ValidateRequests bool
	// RequestTimeout bounds the work of each request of the API (0: the
	// DefaultRequestTimeout; negative: no bound). A request that runs out
	// of it stops where it is, its transaction committing nothing, and is
	// answered 503 request_timeout. The operator's routes are not bound:
	// a fixture load or a restore may take longer, and only the operator
	// can start one.
	RequestTimeout time.Duration
	// ConcurrentSearches caps the searches (the question, order, seller
	// item and site searches) that run at once; the others wait for a
	// slot, within their RequestTimeout. A search reads more than any
	// write, so that a flood of searches takes at most these slots' share
	// of the machine and of the database, and writes keep the rest. 0: the
	// DefaultConcurrentSearches; negative: no cap.
	ConcurrentSearches int
	// CheckResponse, when set, is told of every answer that breaks the
	// OpenAPI document, with the route, the status and the validator's
	// findings: tests set it to t.Error. Answers of fault rules, whose
	// bodies the operator writes, are not checked.
	CheckResponse func(problem string)
	// Upstream, when set, is the base URL of the real API: a public
	// request that no route and no stub answers is forwarded to it and
	// its answer relayed (docs/recording.md); UpstreamAll forwards every
	// public request, emulated or not. UpstreamTimeout bounds an exchange
	// (0: DefaultUpstreamTimeout) and UpstreamMaxBytes its answer (0:
	// DefaultUpstreamMaxBytes).
	Upstream         *url.URL
	UpstreamAll      bool
	UpstreamTimeout  time.Duration
	UpstreamMaxBytes int64
	// Record, when set, records every forwarded exchange (-record);
	// RecordRepeats is the default of the operator's recordings: every
	// answer of a request, in order, rather than the first.
	Record        *recording.Recorder
	RecordRepeats bool
}

// DefaultRequestTimeout is the default of Config.RequestTimeout: every page
// of the API is read in milliseconds, so only a request that has gone wrong
// (a database that stalls, a read that should have been bounded) meets it.
const DefaultRequestTimeout = 10 * time.Second

// DefaultConcurrentSearches is the default of Config.ConcurrentSearches:
// one per two CPUs, at least one, so that searches never take more than
// half of the machine from writes. (Two servers of two CPUs each on one
// PostgreSQL database, with two searches each, let six looping searchers
// quadruple the asks' p99; with one each, 1.8 times: docs/benchmarks.md.)
func DefaultConcurrentSearches() int { return max(1, runtime.GOMAXPROCS(0)/2) }

// ManualClock is the part of clock.Manual the operator routes use.
type ManualClock interface {
	Now() time.Time
	Set(time.Time) error
}

// Server serves the marketplace API over HTTP.
type Server struct {
	m       *marketplace.Marketplace
	cfg     Config
	logger  *slog.Logger
	router  *httprouter.Router
	handler http.Handler
	// registered is every route in registration order, for Routes.
	registered []Route
	// dispatchers serve the routes mounted under a catch-all (route.via).
	dispatchers map[string]*dispatcher
	journal     *journal.Journal
	// routeKeys holds the route template of every route that fault rules
	// may name, its parameter names dropped (faults.TemplateKey).
	routeKeys map[string]bool
	cors      *corsPolicy
	// requestTimeout is Config.RequestTimeout resolved: 0 is no bound.
	requestTimeout time.Duration
	// searchSlots holds a token per search running; nil: no cap.
	searchSlots chan struct{}
	// validator checks requests (ValidateRequests) and answers
	// (CheckResponse) against the OpenAPI document; nil when neither is on.
	validator *openapi.Validator
	// unmatched counts the answers of no route (404, 405, OPTIONS).
	unmatched *metrics.Route
	// redact takes tokens and the operator token out of the log, the
	// journal and error messages.
	redact *redact.Redactor
	// knownTokenCheck is knownToken as a func value, made once: a method
	// value made per request would cost an allocation each time.
	knownTokenCheck func(context.Context, string) (bool, error)
	// sleep waits between the pieces of a trickled answer; tests replace
	// it to see the pacing without waiting.
	sleep func(context.Context, time.Duration) error
	// up forwards to the real API and records (upstream.go).
	up *upstream
}

// New returns a server over m.
func New(m *marketplace.Marketplace, cfg Config) *Server {
	if cfg.ManualClock == nil {
		if mc, ok := m.Clock.(ManualClock); ok {
			cfg.ManualClock = mc
		}
	}
	s := &Server{m: m, cfg: cfg, logger: cfg.Logger, journal: cfg.Journal, routeKeys: map[string]bool{},
		cors: newCORSPolicy(cfg.CORSOrigins), redact: redact.New(cfg.OperatorToken), sleep: sleepCtx}
	s.knownTokenCheck = s.knownToken
	if s.journal == nil {
		s.journal = journal.New(journal.DefaultSize)
	}
	s.up = newUpstream(cfg, s.journal)
	switch {
	case cfg.ConcurrentSearches == 0:
		s.searchSlots = make(chan struct{}, DefaultConcurrentSearches())
	case cfg.ConcurrentSearches > 0:
		s.searchSlots = make(chan struct{}, cfg.ConcurrentSearches)
	}
	switch {
	case cfg.RequestTimeout == 0:
		s.requestTimeout = DefaultRequestTimeout
	case cfg.RequestTimeout > 0:
		s.requestTimeout = cfg.RequestTimeout
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if cfg.ValidateRequests || cfg.CheckResponse != nil {
		v, err := documentValidator()
		if err != nil {
			// The document is embedded and checked by the tests: a
			// failure here is a build that should never have shipped.
			panic(err)
		}
		s.validator = v
	}
	s.unmatched = cfg.Metrics.Route("OTHER", "unmatched")
	s.registerGauges()
	r := httprouter.New()
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.HandleMethodNotAllowed = true
	r.NotFound = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		s.logged(w, req, "", journaledPath(req.URL.Path), s.unmatched, func(w http.ResponseWriter) {
			if s.serveUnrouted(w.(*statusRecorder), req) {
				return
			}
			s.writeError(w, req, &httpError{status: http.StatusNotFound, code: "not_found",
				message: fmt.Sprintf("Resource %s %s not found", req.Method, req.URL.Path)})
		})
	})
	r.MethodNotAllowed = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		s.logged(w, req, "", journaledPath(req.URL.Path), s.unmatched, func(w http.ResponseWriter) {
			if s.serveUnrouted(w.(*statusRecorder), req) {
				return
			}
			s.writeError(w, req, &httpError{status: http.StatusMethodNotAllowed, code: "method_not_allowed",
				message: fmt.Sprintf("Method %s not allowed on %s", req.Method, req.URL.Path)})
		})
	})
	// The router answers OPTIONS itself with an empty body and no
	// Content-Type; every answer of the API is JSON, so the methods of the
	// path (already in the Allow header) are also the body. A CORS preflight
	// from an allowed origin gets the CORS answer instead.
	r.GlobalOPTIONS = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		s.logged(w, req, "", journaledPath(req.URL.Path), s.unmatched, func(w http.ResponseWriter) {
			if s.isPreflight(req) {
				writePreflight(w, req)
				return
			}
			s.writeJSON(w, http.StatusOK, map[string][]string{"allow": strings.Split(w.Header().Get("Allow"), ", ")})
		})
	})
	r.PanicHandler = func(w http.ResponseWriter, req *http.Request, v any) {
		s.logger.Error("panic serving request", "method", req.Method, "path", s.redact.Path(req.URL.Path), "panic", v)
		s.writeError(w, req, &httpError{status: http.StatusInternalServerError, code: "internal_error", message: "Internal server error"})
	}
	s.router = r
	for _, rt := range s.routeTable() {
		s.handle(rt)
	}
	s.mountDispatchers()
	s.handler = r
	if s.cors != nil {
		s.handler = s.withCORS(r)
	}
	return s
}

// ServeHTTP serves one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// handlerFunc is a route handler; a returned error is answered with
// writeError.
type handlerFunc func(w http.ResponseWriter, r *http.Request, p httprouter.Params) error

// authedFunc is a handler that knows its caller (0 when anonymous on an
// optional-auth route).
type authedFunc func(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error

// handle registers rt on the router, with the stages its row asks for.
func (s *Server) handle(rt route) {
	if rt.bare != nil {
		s.router.Handle(rt.method, rt.path, rt.bare)
		return
	}
	s.registered = append(s.registered, Route{Method: rt.method, Path: rt.path})
	path, tmpl, statics := rt.path, specTemplate(rt.path), rt.statics
	if rt.faulted {
		s.routeKeys[faults.TemplateKey(tmpl)] = true
		for _, st := range statics {
			s.routeKeys[faults.TemplateKey(st)] = true
		}
	}
	e := boundedIDs(rt.endpoint)
	if rt.idempotent {
		e = s.keyedEndpoint(e)
	}
	h := s.authorize(e)
	rm := s.cfg.Metrics.Route(rt.method, rt.metric)
	gated, faulted, journaled, who := rt.gated, rt.faulted, rt.journaled, rt.who
	public := publicRoute(rt)
	bounded := s.requestTimeout > 0 && rt.who != theOperator
	searches := rt.searches
	if s.searchSlots == nil {
		searches = nil
	}
	s.mount(rt, func(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
		s.logged(w, r, path, journaled, rm, func(w http.ResponseWriter) {
			rec := w.(*statusRecorder)
			rec.route = requestTemplate(tmpl, statics, r.URL.Path)
			// Before the gate: an upstream's answer, however slow, holds
			// no reset back.
			if public {
				if t := s.forwardsAll(); t != nil {
					s.forward(rec, r, t, true)
					return
				}
			}
			if gated {
				defer s.enterState()()
			}
			if s.cfg.ManualClock != nil {
				// Another server on the store may have moved the shared
				// manual clock; a failure here is the request's own to
				// meet, with the storage's error.
				_ = s.m.SyncClock(r.Context())
			}
			if faulted && s.m.Faults.Active() && s.fault(rec, r) {
				return
			}
			// One atomic load when no override stub exists (stubs.go).
			if s.m.Stubs.HasOverride() && s.serveStub(rec, r, true, who) {
				return
			}
			// The bound starts after a fault rule's latency, which
			// stands for a slow network, not for the server's work.
			if bounded {
				ctx := withLazyDeadline(r.Context(), s.requestTimeout)
				defer ctx.stop()
				r = r.WithContext(ctx)
			}
			if len(searches) > 0 && slices.Contains(searches, rec.route) {
				select {
				case s.searchSlots <- struct{}{}:
					defer func() { <-s.searchSlots }()
				case <-r.Context().Done():
					s.writeError(w, r, r.Context().Err())
					return
				}
			}
			if err := h(w, r, p); err != nil {
				s.writeError(w, r, err)
			}
		})
	})
}

// statusRecorder remembers the status written, for the request log and for
// knowing whether a panic can still be answered.
type statusRecorder struct {
	http.ResponseWriter
	status int
	// route is the spec-style route template, for the journal; user and
	// app the caller's ids once known; fault the fault rule that acted.
	route     string
	user, app int64
	fault     int64
	// stub is the stub mapping that answered; forwarded says that the
	// upstream did.
	stub      string
	forwarded bool
	// closeConn closes the connection a wire fault took, once the request
	// is logged and journaled.
	closeConn func()
	// capture keeps the request body for a journal with bodies.
	capture *bodyCapture
	// body keeps what was written when answers are checked against the
	// OpenAPI document.
	body *bytes.Buffer
}

// Unwrap gives http.ResponseController the writer beneath, for the wire
// faults' Hijack (of rules and of stubs) and the trickle's Flush.
func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusRecorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusRecorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.body != nil {
		w.body.Write(b)
	}
	return w.ResponseWriter.Write(b)
}

// recorderPool saves an allocation per request: a recorder is handed to the
// handler only for the length of the call, which keeps no reference to it.
var recorderPool = sync.Pool{New: func() any { return new(statusRecorder) }}

func (s *Server) logged(w http.ResponseWriter, r *http.Request, route string, journaled bool, rm *metrics.Route, serve func(http.ResponseWriter)) {
	// The log line costs allocations (its attributes); a discarding logger
	// should not pay for them, nor for reading the clock.
	logOn := s.logger.Enabled(r.Context(), slog.LevelInfo)
	journalOn := journaled && s.journal.Enabled()
	var start time.Time
	var at time.Time
	if logOn || journalOn || rm != nil {
		start = time.Now()
	}
	if journalOn {
		// On the wall clock the arrival is the start: one clock read less.
		if _, wall := s.m.Clock.(clock.Wall); wall {
			at = start
		} else {
			at = s.m.Clock.Now()
		}
	}
	rec := recorderPool.Get().(*statusRecorder)
	*rec = statusRecorder{ResponseWriter: w}
	if s.cfg.CheckResponse != nil {
		rec.body = new(bytes.Buffer)
	}
	if journalOn && s.journal.KeepsBodies() && r.Body != nil && r.Body != http.NoBody {
		rec.capture = &bodyCapture{ReadCloser: r.Body, limit: s.journal.EntryBytes()}
		r.Body = rec.capture
	}
	defer func() {
		v := recover()
		if v == http.ErrAbortHandler {
			// An answer aborted on purpose (a wire fault on a connection
			// that cannot be taken) is journaled as it is, then aborted.
			defer panic(v)
		} else if v != nil {
			s.logger.Error("panic serving request", "method", r.Method, "path", s.redact.Path(r.URL.Path), "panic", v)
			if rec.status == 0 {
				s.writeError(rec, r, &httpError{status: http.StatusInternalServerError, code: "internal_error", message: "Internal server error"})
			}
		}
		var elapsed time.Duration
		if logOn || journalOn || rm != nil {
			elapsed = time.Since(start)
		}
		if rm != nil {
			rm.Observe(rec.status, elapsed)
		}
		if rec.body != nil && rec.fault == 0 && rec.stub == "" && !rec.forwarded {
			s.checkResponse(r, rec)
		}
		if logOn || journalOn {
			red := s.requestRedactor(r)
			if logOn {
				// The path without the query, which may carry a token, and
				// with any token written into it redacted; the duration as
				// text with its unit ("1.52ms").
				s.logRequest(r.Context(), r.Method, loggedPath(keptPath(red, r, rec)), route, rec.status, start.Add(elapsed), elapsed)
			}
			if journalOn {
				s.record(r, rec, red, at, elapsed)
			}
		}
		if rec.closeConn != nil {
			rec.closeConn()
		}
		*rec = statusRecorder{}
		recorderPool.Put(rec)
	}()
	if s.cfg.ValidateRequests && s.refuseInvalid(rec, r) {
		return
	}
	serve(rec)
}

var (
	validatorOnce   sync.Once
	sharedValidator *openapi.Validator
	validatorErr    error
)

// documentValidator returns the validator of the embedded document, built
// once per process: building it compiles every schema of the document,
// which costs far more than a server's other set-up, and the validator is
// safe for concurrent use.
func documentValidator() (*openapi.Validator, error) {
	validatorOnce.Do(func() { sharedValidator, validatorErr = openapi.NewValidator() })
	return sharedValidator, validatorErr
}
