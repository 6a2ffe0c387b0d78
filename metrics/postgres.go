package metrics

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// primaryFollower is a store that follows the primary it writes to
// (storage/postgres: a server with failover, docs/scale-out.md).
type primaryFollower interface {
	Failovers() uint64
	WithoutPrimary() time.Duration
}

// primary adds the failovers that store's connections saw and the time it
// found no primary, when the store follows a primary; other stores have
// neither.
func (m *Metrics) primary(store any) {
	p, ok := store.(primaryFollower)
	if !ok {
		return
	}
	m.counterFunc("marketplace_postgres_failovers_total",
		"Times the server's new connections to PostgreSQL found a different primary than before (a failover, a switchover or a restart).",
		func() float64 { return float64(p.Failovers()) })
	m.counterFunc("marketplace_postgres_seconds_without_primary_total",
		"Seconds in which the server found no PostgreSQL primary to answer it: from a failure to reach the database to the next statement answered.",
		func() float64 { return p.WithoutPrimary().Seconds() })
}

// counterFunc registers a counter named name whose value f gives at each
// scrape; a name already registered is left as it is, as for Gauge.
func (m *Metrics) counterFunc(name, help string, f func() float64) {
	err := m.reg.Register(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, f))
	var are prometheus.AlreadyRegisteredError
	if err != nil && !errors.As(err, &are) {
		panic(err)
	}
}
