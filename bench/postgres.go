package main

// The PostgreSQL phases of the write benchmark:
//
//   - pg: 64 clients POST /questions against one server on a PostgreSQL
//     database, then against two servers (two engines, each with its own
//     pool and HTTP server, the clients split between them) on the same
//     database, beside pgbench's simple-update transactions (pgbench -N)
//     run by as many clients against that database, before and after;
//   - pgread: GET /questions/{id} on a server on PostgreSQL beside the same
//     route on the memory backend.
//
// Without -postgres, the database is on a throwaway server (initdb in a
// temporary folder, fsync on), removed at the end. For each load the phase
// prints what the servers asked of PostgreSQL: round trips by kind and the
// time spent waiting for each, and the time spent waiting for a pooled
// connection; on the throwaway server, also the CPU time the server used.

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/marketplace/marketplace/internal/pgtest/pgserver"
	"github.com/marketplace/marketplace/storage/memory"
	"github.com/marketplace/marketplace/storage/postgres"
)

// pgTarget is the database the PostgreSQL phases run on.
type pgTarget struct {
	url     string
	server  *pgserver.Server // the throwaway server; nil with -postgres
	pgbench string           // the pgbench of the server's installation
}

// postgresTarget returns the database of the PostgreSQL phases, starting
// the throwaway server on first use when -postgres is not given.
func (b *writeBench) postgresTarget() *pgTarget {
	if b.pg != nil {
		return b.pg
	}
	p := &pgTarget{url: b.cfg.postgres}
	var err error
	if p.pgbench, err = pgserver.Binary("pgbench"); err != nil {
		fatalf("%v", err)
	}
	if p.url == "" {
		start := time.Now()
		if p.server, err = pgserver.Start(); err != nil {
			fatalf("start PostgreSQL: %v", err)
		}
		atCleanup(p.server.Destroy)
		if p.url, err = p.server.CreateDatabase("bench"); err != nil {
			fatalf("%v", err)
		}
		fmt.Printf("PostgreSQL: throwaway server in %s, port %d, started in %s\n",
			p.server.Dir(), p.server.Port(), time.Since(start).Round(time.Millisecond))
	}
	fmt.Printf("PostgreSQL: %s; pgbench %s\n", p.describe(), p.pgbench)
	b.pg = p
	return p
}

// describe returns the server's version and the settings that bound a
// commit's cost.
func (p *pgTarget) describe() string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, p.url)
	if err != nil {
		fatalf("connect to PostgreSQL: %v", err)
	}
	defer c.Close(context.Background())
	var parts []string
	for _, q := range []string{"server_version", "fsync", "synchronous_commit", "wal_sync_method", "commit_delay", "shared_buffers", "max_connections"} {
		var v string
		if err := c.QueryRow(ctx, "SELECT current_setting($1)", q).Scan(&v); err != nil {
			fatalf("PostgreSQL setting %s: %v", q, err)
		}
		parts = append(parts, q+"="+v)
	}
	return strings.Join(parts, " ")
}

// libpqURL returns the database URL without pgx's own parameters, which
// libpq programs refuse.
func (p *pgTarget) libpqURL() string {
	u, err := url.Parse(p.url)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		// A keyword/value string.
		var kept []string
		for _, f := range strings.Fields(p.url) {
			if !strings.HasPrefix(f, "pool_") {
				kept = append(kept, f)
			}
		}
		return strings.Join(kept, " ")
	}
	q := u.Query()
	for k := range q {
		if strings.HasPrefix(k, "pool_") {
			q.Del(k)
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

var tpsLine = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)

// pgbenchInit creates pgbench's tables (scale 1: 100,000 accounts).
func (p *pgTarget) pgbenchInit() {
	if out, err := exec.Command(p.pgbench, "-i", "-q", p.libpqURL()).CombinedOutput(); err != nil {
		fatalf("pgbench -i: %v\n%s", err, out)
	}
}

// pgbenchRun runs pgbench's simple-update transaction (-N: an UPDATE of
// one account, a SELECT, an INSERT into history) from clients connections
// on 2 threads for -duration, prints the CPU time that pgbench and the
// server used per transaction, and returns the transactions per second.
func (b *writeBench) pgbenchRun(p *pgTarget, when string) float64 {
	secs := max(1, int(b.cfg.duration.Round(time.Second)/time.Second))
	args := []string{"-c", strconv.Itoa(b.cfg.clients), "-j", "2", "-N", "-T", strconv.Itoa(secs), p.libpqURL()}
	cmd := exec.Command(p.pgbench, args...)
	s0 := p.serverCPU()
	out, err := cmd.CombinedOutput()
	if err != nil {
		fatalf("pgbench %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	m := tpsLine.FindSubmatch(out)
	if m == nil {
		fatalf("pgbench printed no tps:\n%s", out)
	}
	tps, _ := strconv.ParseFloat(string(m[1]), 64)
	n := tps * float64(secs)
	var client, server time.Duration
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && n > 0 {
		client = time.Duration(float64(ru.Utime.Nano()+ru.Stime.Nano()) / n)
	}
	if s0 >= 0 && n > 0 {
		server = time.Duration(float64(p.serverCPU()-s0) / n)
	}
	fmt.Printf("pgbench %s: %.0f transactions/s; CPU per transaction: pgbench %s, server %s\n",
		when, tps, client.Round(time.Microsecond), cpuString(server))
	return tps
}

// cpuString prints a CPU time per request, or "-" when it is not known.
func cpuString(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return d.Round(time.Microsecond).String()
}

// clockTick is the unit of the CPU times in /proc (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// serverCPU returns the CPU time used so far by the throwaway server: its
// postmaster, the processes that serve connections, and those of them that
// have ended (counted in the postmaster's children time once reaped); -1
// when it cannot be read (-postgres, or no /proc).
func (p *pgTarget) serverCPU() time.Duration {
	if p.server == nil {
		return -1
	}
	pid, err := p.server.PID()
	if err != nil {
		return -1
	}
	fields := func(pid string) []string {
		b, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
		if err != nil {
			return nil
		}
		// The command name, in parentheses, may hold spaces.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			return nil
		}
		return strings.Fields(string(b[i+1:]))
	}
	// After the name: state, ppid, ..., utime (11), stime, cutime, cstime.
	ticks := func(f []string, from, to int) int64 {
		var n int64
		for i := from; i <= to && i < len(f); i++ {
			v, _ := strconv.ParseInt(f[i], 10, 64)
			n += v
		}
		return n
	}
	postmaster := strconv.Itoa(pid)
	f := fields(postmaster)
	if f == nil {
		return -1
	}
	total := ticks(f, 11, 14)
	procs, _ := os.ReadDir("/proc")
	for _, e := range procs {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		if f := fields(e.Name()); len(f) > 1 && f[1] == postmaster {
			total += ticks(f, 11, 12)
		}
	}
	return time.Duration(total) * clockTick
}

// openPostgres opens a store on the database with the pool size of
// -pg-conns, traced by t.
func (b *writeBench) openPostgres(p *pgTarget, t *pgTrace) *postgres.Store {
	cfg, err := pgxpool.ParseConfig(p.url)
	if err != nil {
		fatalf("-postgres: %v", err)
	}
	cfg.ConnConfig.Tracer = t
	// Connections open before the load, not during it: 64 backends
	// starting at once on a loaded machine can take more than the
	// backend's connect timeout, which fails requests.
	cfg.MinConns = b.poolSize(p)
	st, err := postgres.OpenConfig(context.Background(), cfg, postgres.Options{MaxConns: int32(b.cfg.pgConns)})
	if err != nil {
		fatalf("%v", err)
	}
	return st
}

// poolSize returns the pool size a store opened by openPostgres has.
func (b *writeBench) poolSize(p *pgTarget) int32 {
	if b.cfg.pgConns > 0 {
		return int32(b.cfg.pgConns)
	}
	cfg, err := pgxpool.ParseConfig(p.url)
	if err != nil {
		fatalf("-postgres: %v", err)
	}
	return cfg.MaxConns
}

// askPostgres is the pg phase.
func (b *writeBench) askPostgres() []row {
	p := b.postgresTarget()
	p.pgbenchInit()
	fmt.Printf("pg: each server's pool holds %d connections (-pg-conns), plus 2 for id sequences\n", b.poolSize(p))
	before := b.pgbenchRun(p, "before")

	var rows []row
	for _, run := range []struct {
		shape   askShape
		servers int
		target  float64
	}{{askMany, 1, 0.70}, {askMany, 2, 0.70}, {askOne, 1, 0.50}} {
		servers := run.servers
		name := fmt.Sprintf("ask, PostgreSQL, %s, %d server(s)", run.shape.label(b.cfg.clients), servers)
		t := newPGTrace()
		var engines []*engine
		var urls []string
		for range servers {
			e := b.start(b.openPostgres(p, t))
			engines = append(engines, e)
			urls = append(urls, e.srv.URL)
		}
		t.waitConnected(int64(servers) * int64(b.poolSize(p)))
		w := run.shape.world(context.Background(), engines[0].m, b.cfg.clients, 5)
		// One ask through each engine first, alone: an engine's first ask
		// loads the site's time zone in a View nested in the ask's Update
		// (questions.Service.zone), which on a pool that concurrent first
		// asks have filled waits for ever.
		for _, e := range engines {
			askOnce(e, w)
		}
		idle := t.idle()
		conflicts := func() (n uint64) {
			for _, e := range engines {
				n += e.conflicts()
			}
			return n
		}
		c0 := conflicts()
		t0, s0 := t.snapshot(), p.serverCPU()
		// Not checked: asks that gave up after their retries are part of
		// what this phase measures, and show in the table.
		r := b.askLoadOn(urls, w, b.cfg.duration)
		fmt.Printf("%s: %s\n", name, r)
		t1, s1 := t.snapshot(), p.serverCPU()
		retries := conflicts() - c0
		for _, e := range engines {
			e.stop()
		}
		server := time.Duration(-1)
		if s0 >= 0 && r.ok > 0 {
			server = (s1 - s0) / time.Duration(r.ok)
		}
		fmt.Printf("%s: CPU per ask: bench process (clients, servers, engines) %s, PostgreSQL %s\n",
			name, r.cpu.Round(time.Microsecond), cpuString(server))
		fmt.Printf("%s: background work while idle: %.0f round trips/s\n", name, idle)
		fmt.Print(t1.minus(t0).report(name, "ask", r.ok))
		label := fmt.Sprintf("POST /questions, %s (PostgreSQL, %d server", run.shape.label(b.cfg.clients), servers)
		if servers > 1 {
			label += "s"
		}
		c := perRequest(retries, r.ok)
		if r.failed > 0 {
			c += fmt.Sprintf(" (%d asks failed)", r.failed)
		}
		rows = append(rows, row{name: label + ") / pgbench -N", full: r.rate, target: run.target, conflicts: c})
	}
	after := b.pgbenchRun(p, "after")
	base := (before + after) / 2
	fmt.Printf("pgbench -N: %.0f and %.0f transactions/s (before, after); mean %.0f\n", before, after, base)
	for i := range rows {
		rows[i].base = base
	}
	return rows
}

// readPostgres is the pgread phase: GET /questions/{id} on PostgreSQL and
// on the memory backend.
func (b *writeBench) readPostgres() row {
	p := b.postgresTarget()
	fmt.Printf("pgread: %d clients; the server's pool holds %d connections (-pg-conns)\n", b.cfg.readClients, b.poolSize(p))
	t := newPGTrace()
	pg := b.start(b.openPostgres(p, t))
	defer pg.stop()
	t.waitConnected(int64(b.poolSize(p)))
	mem := b.start(memory.New())
	defer mem.stop()
	var rates [2]result
	for i, e := range []*engine{pg, mem} {
		path, token := questionToRead(e)
		name := "GET /questions/{id}, PostgreSQL"
		if e == mem {
			name = "GET /questions/{id}, memory"
		}
		t0, s0 := t.snapshot(), p.serverCPU()
		rates[i] = checked(name, readLoad(e.srv.URL+path, token, b.cfg.duration, b.cfg.readClients))
		if e == pg {
			t1, s1 := t.snapshot(), p.serverCPU()
			if s0 >= 0 && rates[i].ok > 0 {
				fmt.Printf("%s: PostgreSQL's CPU per request %s\n", name, cpuString((s1-s0)/time.Duration(rates[i].ok)))
			}
			fmt.Print(t1.minus(t0).report(name, "GET", rates[i].ok))
		}
	}
	return row{name: "GET /questions/{id} (PostgreSQL / memory)", full: rates[0].rate, base: rates[1].rate, conflicts: "-"}
}

// askOnce asks one question through e's API, as the first client.
func askOnce(e *engine, w askWorld) {
	hc := &http.Client{Timeout: requestTimeout}
	defer hc.CloseIdleConnections()
	if _, _, err := send(hc, askRequest(e.srv.URL, w.Tokens[0], w.Items[0], 0), http.StatusCreated); err != nil {
		fatalf("%v", err)
	}
}

// questionToRead asks a question through e's API and returns its path and
// the token of the buyer who asked it.
func questionToRead(e *engine) (path, token string) {
	w := newAskWorld(context.Background(), e.m, 1)
	hc := &http.Client{Timeout: requestTimeout}
	defer hc.CloseIdleConnections()
	_, body, err := send(hc, askRequest(e.srv.URL, w.Tokens[0], w.Items[0], 0), http.StatusCreated)
	if err != nil {
		fatalf("%v", err)
	}
	var q struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(body, &q); err != nil || q.ID == 0 {
		fatalf("ask: no question id in %s", body)
	}
	return fmt.Sprintf("/questions/%d", q.ID), w.Tokens[0]
}

// pgTrace counts, for the stores of one load, the round trips to
// PostgreSQL by kind and the time spent waiting for each, and the time
// spent waiting for a pooled connection. A pgx batch is one round trip:
// the backend sends BEGIN with the first statement, and the writes with
// COMMIT.
type pgTrace struct {
	mu    sync.Mutex
	kinds map[string]traced
	// keys counts the keys read and written, by kind of transaction and
	// namespace (the key's first part): what a transaction's predicate
	// locks and writes fall on.
	keys map[keyUse]int64
	// inUpdate tells, for each connection, whether its transaction is an
	// Update (SERIALIZABLE, whose reads take predicate locks) or a View.
	inUpdate map[*pgx.Conn]bool
	// poolNames names each pool by its size, which tells the sequences'
	// pool from the transactions' one.
	poolNames map[*pgxpool.Pool]string
	// connected counts the connections opened.
	connected atomic.Int64
}

// keyUse is a kind of access to keys: in an Update or a View, a read that
// found the key or not, a scan from it, or a write; and the keys'
// namespace.
type keyUse struct {
	update    bool
	what      string
	namespace string
}

func (u keyUse) String() string {
	tx := "View"
	if u.update {
		tx = "Update"
	}
	return fmt.Sprintf("%-6s %-13s %s", tx, u.what, u.namespace)
}

// traced is what a pgTrace noted of one kind.
type traced struct {
	n    int64
	wait time.Duration
	// roundTrip is false for the waits for a pooled connection.
	roundTrip bool
}

var (
	_ pgx.BatchTracer       = (*pgTrace)(nil)
	_ pgx.QueryTracer       = (*pgTrace)(nil)
	_ pgx.PrepareTracer     = (*pgTrace)(nil)
	_ pgxpool.AcquireTracer = (*pgTrace)(nil)
	_ pgx.ConnectTracer     = (*pgTrace)(nil)
)

func newPGTrace() *pgTrace {
	return &pgTrace{kinds: map[string]traced{}, keys: map[keyUse]int64{}, inUpdate: map[*pgx.Conn]bool{},
		poolNames: map[*pgxpool.Pool]string{}}
}

// traceStart is the context key of the start of a traced call, and its kind.
type traceStart struct{}

type started struct {
	at   time.Time
	kind string
}

func (t *pgTrace) begin(ctx context.Context, kind string) context.Context {
	return context.WithValue(ctx, traceStart{}, started{at: time.Now(), kind: kind})
}

func (t *pgTrace) end(ctx context.Context, roundTrip bool) {
	s, ok := ctx.Value(traceStart{}).(started)
	if !ok {
		return
	}
	d := time.Since(s.at)
	t.mu.Lock()
	k := t.kinds[s.kind]
	k.n++
	k.wait += d
	k.roundTrip = roundTrip
	t.kinds[s.kind] = k
	t.mu.Unlock()
}

// statementKind names a statement of the backend by what it does.
func statementKind(sql string) string {
	switch {
	case strings.HasPrefix(sql, "BEGIN"):
		return "BEGIN"
	case sql == "COMMIT", sql == "ROLLBACK":
		return sql
	case strings.HasPrefix(sql, "INSERT INTO kv "), strings.HasPrefix(sql, "DELETE FROM kv "):
		return "write"
	case strings.HasPrefix(sql, "SELECT v FROM kv WHERE k = "):
		return "get"
	case strings.HasPrefix(sql, "SELECT k, v FROM kv "):
		return "scan"
	case strings.HasPrefix(sql, "SELECT nextval("):
		return "nextval"
	}
	if len(sql) > 40 {
		sql = sql[:40] + "..."
	}
	return sql
}

func (t *pgTrace) TraceBatchStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	if q := data.Batch.QueuedQueries; len(q) > 0 && strings.HasPrefix(q[0].SQL, "BEGIN") {
		t.mu.Lock()
		t.inUpdate[conn] = strings.Contains(q[0].SQL, "SERIALIZABLE")
		t.mu.Unlock()
	}
	var parts []string
	for _, q := range data.Batch.QueuedQueries {
		if k := statementKind(q.SQL); len(parts) == 0 || parts[len(parts)-1] != k {
			parts = append(parts, k)
		}
	}
	return t.begin(ctx, strings.Join(parts, "+"))
}

func (t *pgTrace) TraceBatchQuery(_ context.Context, conn *pgx.Conn, data pgx.TraceBatchQueryData) {
	var keys [][]byte
	var what string
	switch kind := statementKind(data.SQL); kind {
	case "get":
		keys = argKeys(data.Args)
		what = "get (missing)"
		if data.CommandTag.RowsAffected() > 0 {
			what = "get (found)"
		}
	case "scan", "write":
		keys, what = argKeys(data.Args), kind
	default:
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	update := t.inUpdate[conn]
	for _, k := range keys {
		t.keys[keyUse{update: update, what: what, namespace: namespace(k)}]++
	}
}

// argKeys returns the keys among the first argument of a statement of the
// backend: one key, or an array of them.
func argKeys(args []any) [][]byte {
	if len(args) == 0 {
		return nil
	}
	switch a := args[0].(type) {
	case []byte:
		return [][]byte{a}
	case [][]byte:
		return a
	}
	return nil
}

// namespace returns a key's first part (keycodec.New), or its first
// bytes.
func namespace(k []byte) string {
	if i := slices.Index(k, 0); i >= 0 {
		return string(k[:i])
	}
	return fmt.Sprintf("%.16q", k)
}

func (t *pgTrace) TraceBatchEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchEndData) {
	t.end(ctx, true)
}

func (t *pgTrace) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	return t.begin(ctx, statementKind(data.SQL))
}

func (t *pgTrace) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	t.end(ctx, true)
}

func (t *pgTrace) TracePrepareStart(ctx context.Context, _ *pgx.Conn, data pgx.TracePrepareStartData) context.Context {
	return t.begin(ctx, "prepare "+statementKind(data.SQL))
}

func (t *pgTrace) TracePrepareEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareEndData) {
	t.end(ctx, true)
}

func (t *pgTrace) TraceAcquireStart(ctx context.Context, pool *pgxpool.Pool, _ pgxpool.TraceAcquireStartData) context.Context {
	t.mu.Lock()
	name, ok := t.poolNames[pool]
	if !ok {
		name = fmt.Sprintf("wait for a connection of a pool of %d", pool.Config().MaxConns)
		t.poolNames[pool] = name
	}
	t.mu.Unlock()
	return t.begin(ctx, name)
}

func (t *pgTrace) TraceAcquireEnd(ctx context.Context, _ *pgxpool.Pool, _ pgxpool.TraceAcquireEndData) {
	t.end(ctx, false)
}

func (t *pgTrace) TraceConnectStart(ctx context.Context, _ pgx.TraceConnectStartData) context.Context {
	return ctx
}

func (t *pgTrace) TraceConnectEnd(_ context.Context, data pgx.TraceConnectEndData) {
	if data.Err == nil {
		t.connected.Add(1)
	}
}

// waitConnected waits until n connections have been opened, for at most
// a minute.
func (t *pgTrace) waitConnected(n int64) {
	start := time.Now()
	for t.connected.Load() < n {
		if time.Since(start) > time.Minute {
			fmt.Printf("only %d of %d connections opened after a minute; measuring anyway\n", t.connected.Load(), n)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// traceCounts is a copy of what a pgTrace noted.
type traceCounts struct {
	kinds map[string]traced
	keys  map[keyUse]int64
}

func (t *pgTrace) snapshot() traceCounts {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := traceCounts{kinds: map[string]traced{}, keys: map[keyUse]int64{}}
	maps.Copy(c.kinds, t.kinds)
	maps.Copy(c.keys, t.keys)
	return c
}

// idle returns the round trips per second of the stores' background work
// (notification polls, leases) over one second without requests.
func (t *pgTrace) idle() float64 {
	const d = time.Second
	t0 := t.snapshot()
	time.Sleep(d)
	var n int64
	for _, v := range t.snapshot().minus(t0).kinds {
		if v.roundTrip {
			n += v.n
		}
	}
	return float64(n) / d.Seconds()
}

func (c traceCounts) minus(before traceCounts) traceCounts {
	d := traceCounts{kinds: map[string]traced{}, keys: map[keyUse]int64{}}
	for k, v := range c.kinds {
		b := before.kinds[k]
		if v.n > b.n {
			d.kinds[k] = traced{n: v.n - b.n, wait: v.wait - b.wait, roundTrip: v.roundTrip}
		}
	}
	for k, n := range c.keys {
		if n > before.keys[k] {
			d.keys[k] = n - before.keys[k]
		}
	}
	return d
}

// report prints the round trips per request and the keys read and written
// per request.
func (c traceCounts) report(name, request string, requests int64) string {
	if requests == 0 {
		return ""
	}
	keys := slices.Collect(maps.Keys(c.keys))
	slices.SortFunc(keys, func(a, b keyUse) int {
		return cmp.Or(cmp.Compare(c.keys[b], c.keys[a]), strings.Compare(a.String(), b.String()))
	})
	s := c.tripReport(name, request, requests)
	s += fmt.Sprintf("%s: keys per %s, by transaction and namespace:\n", name, request)
	for _, k := range keys {
		if n := float64(c.keys[k]) / float64(requests); n >= 0.01 {
			s += fmt.Sprintf("    %6.2f  %s\n", n, k)
		}
	}
	return s
}

// tripReport prints the round trips per request by kind, with the mean
// time each took, most frequent first, then the waits for a connection.
func (c traceCounts) tripReport(name, request string, requests int64) string {
	byKind := c.kinds
	kinds := slices.Collect(maps.Keys(byKind))
	slices.SortFunc(kinds, func(a, b string) int {
		if byKind[a].roundTrip != byKind[b].roundTrip {
			if byKind[a].roundTrip {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(byKind[b].n, byKind[a].n), strings.Compare(a, b))
	})
	var sb strings.Builder
	var trips int64
	var wait time.Duration
	for _, k := range kinds {
		if byKind[k].roundTrip {
			trips += byKind[k].n
			wait += byKind[k].wait
		}
	}
	per := float64(requests)
	fmt.Fprintf(&sb, "%s: %.2f round trips to PostgreSQL per %s, %s of waiting for them per %s (background work included):\n",
		name, float64(trips)/per, request, (wait / time.Duration(requests)).Round(time.Microsecond), request)
	for _, k := range kinds {
		v := byKind[k]
		fmt.Fprintf(&sb, "    %6.2f per %s  %9s each  %s\n", float64(v.n)/per, request,
			(v.wait / time.Duration(v.n)).Round(time.Microsecond), k)
	}
	return sb.String()
}

// readLoad sends GETs of url from n clients for d: the load of the read
// benchmark (drive), counting failures and CPU as the write loads do.
func readLoad(url, token string, d time.Duration, n int) result {
	return load(n, d, func(_ int, hc *http.Client) error {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		_, _, err := send(hc, req, http.StatusOK)
		return err
	})
}
