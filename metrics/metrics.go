// Package metrics keeps the server's Prometheus metrics: requests by route,
// storage transactions by backend, notification deliveries, response-time
// refreshes, and gauges read at scrape time. The domain packages and the
// storage backends do not import it: they report through small hooks
// (the backends' observer, see ObserveStorage; notify.Options.OnAttempt;
// responsetime.Service.ObserveRefresh) that this package implements.
package metrics

import (
	"errors"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/marketplace/marketplace/internal/storeobs"
)

// Metrics is one registry of the server's metrics. Its methods are safe for
// concurrent use.
type Metrics struct {
	reg       *prometheus.Registry
	requests  *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	txs       *prometheus.CounterVec
	conflicts *prometheus.CounterVec
	retries   *prometheus.CounterVec
	attempts  *prometheus.CounterVec
	refresh   prometheus.Histogram
}

// New returns metrics registered in a registry of their own, with the Go
// runtime's and the process's collectors.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "marketplace_http_requests_total",
			Help: "HTTP requests answered, by route template, method and status.",
		}, []string{"route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "marketplace_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by route template and method.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"route", "method"}),
		txs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "marketplace_storage_transactions_total",
			Help: "Storage transactions, by backend, kind (view, update) and result (ok, error).",
		}, []string{"backend", "kind", "result"}),
		conflicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "marketplace_storage_conflicts_total",
			Help: "Update attempts that hit a conflict, by backend.",
		}, []string{"backend"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "marketplace_storage_retries_total",
			Help: "Update attempts run again after a conflict, by backend.",
		}, []string{"backend"}),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "marketplace_notification_attempts_total",
			Help: "Notification POSTs, by result (acknowledged, refused, failed).",
		}, []string{"result"}),
		refresh: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "marketplace_response_time_refresh_duration_seconds",
			Help:    "Duration of the response-time refreshes.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
		}),
	}
	m.reg.MustRegister(m.requests, m.latency, m.txs, m.conflicts, m.retries, m.attempts, m.refresh,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Gauge registers a gauge named name whose value f gives at each scrape;
// a name already registered is left as it is (several servers over one
// Metrics).
func (m *Metrics) Gauge(name, help string, f func() float64) {
	err := m.reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f))
	var are prometheus.AlreadyRegisteredError
	if err != nil && !errors.As(err, &are) {
		panic(err)
	}
}

// Route is the request metrics of one route and method, bound once when
// the route is registered so that a request costs no label lookup.
type Route struct {
	m             *Metrics
	route, method string
	latency       prometheus.Observer
	// byStatus holds the counter of each status seen, by status-100.
	byStatus [500]atomic.Pointer[counter]
}

type counter struct{ c prometheus.Counter }

// Route returns the metrics of route (a template such as
// /items/:item_id) and method. Nil Metrics give a nil Route, on which
// Observe does nothing.
func (m *Metrics) Route(method, route string) *Route {
	if m == nil {
		return nil
	}
	return &Route{m: m, route: route, method: method, latency: m.latency.WithLabelValues(route, method)}
}

// Observe counts one answer with status, which took d.
func (r *Route) Observe(status int, d time.Duration) {
	if r == nil {
		return
	}
	r.latency.Observe(d.Seconds())
	if status < 100 || status >= 600 {
		status = 599
	}
	slot := &r.byStatus[status-100]
	c := slot.Load()
	if c == nil {
		c = &counter{r.m.requests.WithLabelValues(r.route, r.method, strconv.Itoa(status))}
		slot.Store(c)
	}
	c.c.Inc()
}

// ObserveStorage makes m count the transactions, conflicts and retries of
// every storage backend of the process, until stop is called. The backends
// report to one observer per process (they are opened by code that knows
// nothing of metrics), so the last Metrics to observe wins.
func (m *Metrics) ObserveStorage() (stop func()) {
	storeobs.SetObserver(&storageObserver{m: m})
	return func() { storeobs.SetObserver(nil) }
}

// backends are the backends whose counters are bound once; another name
// is counted through a label lookup.
var backends = [...]string{"memory", "badger", "postgres"}

// storageObserver binds the counters of each backend, kind and result on
// first use: a transaction costs no label lookup.
type storageObserver struct {
	m *Metrics
	// txs is by backend, write, failed; conflicts and retries by backend.
	txs       [len(backends)][2][2]atomic.Pointer[counter]
	conflicts [len(backends)]atomic.Pointer[counter]
	retries   [len(backends)]atomic.Pointer[counter]
}

func backendIndex(name string) int {
	for i, b := range backends {
		if b == name {
			return i
		}
	}
	return -1
}

func bound(slot *atomic.Pointer[counter], vec *prometheus.CounterVec, labels ...string) prometheus.Counter {
	c := slot.Load()
	if c == nil {
		c = &counter{vec.WithLabelValues(labels...)}
		slot.Store(c)
	}
	return c.c
}

func (o *storageObserver) Transaction(backend string, write bool, err error) {
	kind, result := "view", "ok"
	w, f := 0, 0
	if write {
		kind, w = "update", 1
	}
	if err != nil {
		result, f = "error", 1
	}
	i := backendIndex(backend)
	if i < 0 {
		o.m.txs.WithLabelValues(backend, kind, result).Inc()
		return
	}
	bound(&o.txs[i][w][f], o.m.txs, backend, kind, result).Inc()
}

func (o *storageObserver) Conflict(backend string) {
	if i := backendIndex(backend); i >= 0 {
		bound(&o.conflicts[i], o.m.conflicts, backend).Inc()
		return
	}
	o.m.conflicts.WithLabelValues(backend).Inc()
}

func (o *storageObserver) Retry(backend string) {
	if i := backendIndex(backend); i >= 0 {
		bound(&o.retries[i], o.m.retries, backend).Inc()
		return
	}
	o.m.retries.WithLabelValues(backend).Inc()
}

// NotificationAttempt counts one notification POST by its result, for
// notify.Options.OnAttempt.
func (m *Metrics) NotificationAttempt(result string) { m.attempts.WithLabelValues(result).Inc() }

// RefreshStarted times one response-time refresh, for
// responsetime.Service.ObserveRefresh.
func (m *Metrics) RefreshStarted() (done func()) {
	start := time.Now()
	return func() { m.refresh.Observe(time.Since(start).Seconds()) }
}
