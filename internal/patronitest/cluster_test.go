// Package patronitest runs marketplaced servers on a PostgreSQL cluster
// that Patroni manages (three nodes on one etcd, synchronous mode), kills
// and switches its primary under load, and checks what docs/scale-out.md
// ("High availability with Patroni") promises. The cluster's configuration
// is the document's own.
//
// It needs Debian's patroni and etcd-server and the PostgreSQL server
// binaries; without them the tests are skipped, except under CI=true,
// where they fail. When the tests run as root, Patroni, PostgreSQL and etcd
// run as the user postgres (initdb refuses root). The nodes' logs are
// shown when a test fails, and always with PATRONITEST_LOGS=1.
package patronitest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/marketplace/marketplace/internal/docrun"
	"github.com/marketplace/marketplace/internal/pgtest/pgserver"
)

// doc is the document whose Patroni configuration the cluster runs.
const doc = "../../docs/scale-out.md"

// The values of the document's configuration of its first node that each
// node of a test replaces with its own.
const (
	docName    = "node1"
	docREST    = "127.0.0.1:8008"
	docPG      = "127.0.0.1:5433"
	docEtcd    = "127.0.0.1:2379"
	docDataDir = "/var/lib/postgresql/ha/"
	docBinDir  = "/usr/lib/postgresql/15/bin"
	docSockets = "unix_socket_directories: /var/run/postgresql"
	// The passwords of the document's configuration and of the role it
	// creates for the servers.
	docSuperPassword = "postgres-secret"
	docAppRole       = "marketplace"
	docAppPassword   = "marketplace-secret"
)

// dirPrefix starts the name of each cluster's temporary folder, which
// holds ownerFile: the process that started it.
const (
	dirPrefix = "patronitest-"
	ownerFile = "owner.pid"
)

// cluster is a three-node Patroni cluster on one etcd, in a temporary
// folder, on free loopback ports.
type cluster struct {
	t          *testing.T
	dir        string
	patroni    string
	patronictl string
	runAs      *syscall.Credential
	etcdPort   int
	etcd       *exec.Cmd
	nodes      [3]*node
}

// node is one member of the cluster.
type node struct {
	name     string
	pgPort   int
	restPort int
	config   string
	data     string
	cmd      *exec.Cmd
	log      string
}

// tools finds the programs a cluster needs; the test is skipped when one is
// missing, or fails under CI=true.
func tools(t *testing.T) (patroni, patronictl, etcd, bin string) {
	t.Helper()
	var missing []string
	look := func(name string) string {
		p, err := exec.LookPath(name)
		if err != nil {
			missing = append(missing, name)
		}
		return p
	}
	patroni, patronictl, etcd = look("patroni"), look("patronictl"), look("etcd")
	if postgres, err := pgserver.Binary("postgres"); err == nil {
		bin = filepath.Dir(postgres)
	} else {
		missing = append(missing, "postgres")
	}
	if len(missing) > 0 {
		msg := fmt.Sprintf("patronitest: %s not installed (Debian: apt-get install patroni etcd-server postgresql)", strings.Join(missing, ", "))
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return patroni, patronictl, etcd, bin
}

// startCluster starts etcd and three Patroni nodes on the document's
// configuration and waits until they have a leader and a synchronous
// standby; the cluster is stopped and removed when the test ends.
func startCluster(t *testing.T) *cluster {
	t.Helper()
	patroni, patronictl, etcd, bin := tools(t)
	reapOrphans()
	c := &cluster{t: t, patroni: patroni, patronictl: patronictl}
	if os.Geteuid() == 0 {
		c.runAs = postgresUser(t)
	}
	dir, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		t.Fatal(err)
	}
	c.dir = dir
	t.Cleanup(c.destroy)
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		t.Fatal(err)
	}
	c.chown(dir)

	template := docConfig(t)
	if err := os.Mkdir(filepath.Join(dir, "sockets"), 0o755); err != nil {
		t.Fatal(err)
	}
	c.chown(filepath.Join(dir, "sockets"))
	c.etcdPort = freePort(t)
	for i := range c.nodes {
		n := &node{name: fmt.Sprintf("node%d", i+1), pgPort: freePort(t), restPort: freePort(t)}
		n.data = filepath.Join(dir, n.name)
		n.config = filepath.Join(dir, n.name+".yml")
		n.log = filepath.Join(dir, n.name+".log")
		cfg := strings.NewReplacer(
			"name: "+docName, "name: "+n.name,
			docREST, fmt.Sprintf("127.0.0.1:%d", n.restPort),
			docPG, fmt.Sprintf("127.0.0.1:%d", n.pgPort),
			docEtcd, fmt.Sprintf("127.0.0.1:%d", c.etcdPort),
			docDataDir+docName, n.data,
			docBinDir, bin,
			docSockets, "unix_socket_directories: "+filepath.Join(dir, "sockets"),
		).Replace(template)
		stale := false
		for _, v := range []string{docREST, docPG, docEtcd, docDataDir, docSockets} {
			stale = stale || strings.Contains(cfg, v)
		}
		if stale || !strings.Contains(cfg, "name: "+n.name) || !strings.Contains(cfg, n.data) {
			t.Fatalf("the configuration of %s in %s no longer has the node's name, ports and folders where this test replaces them:\n%s", docName, doc, template)
		}
		if err := os.WriteFile(n.config, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		c.chown(n.config)
		c.nodes[i] = n
	}

	peer := freePort(t)
	c.etcd = c.command(etcd, "--name", "etcd1", "--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", c.etcdURL(), "--advertise-client-urls", c.etcdURL(),
		"--listen-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", peer),
		"--initial-advertise-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", peer),
		"--initial-cluster", fmt.Sprintf("etcd1=http://127.0.0.1:%d", peer))
	c.start(c.etcd, filepath.Join(dir, "etcd.log"))
	c.waitFor("etcd to answer", 30*time.Second, func() bool {
		res, err := http.Get(c.etcdURL() + "/health")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
	for _, n := range c.nodes {
		n.cmd = c.command(patroni, n.config)
		c.start(n.cmd, n.log)
	}
	c.waitHealthy(120*time.Second, nil)
	c.createRole()
	return c
}

// docConfig returns the configuration of the document's first node.
func docConfig(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := docrun.Parse(string(b))
	if err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	for _, bl := range blocks {
		if bl.Kind == docrun.File && bl.Path == "patroni1.yml" {
			return bl.Text
		}
	}
	t.Fatalf("%s has no block marked <!-- file: patroni1.yml -->", doc)
	return ""
}

func (c *cluster) etcdURL() string { return fmt.Sprintf("http://127.0.0.1:%d", c.etcdPort) }

// command returns a command that runs as the user the cluster runs as.
func (c *cluster) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), "HOME="+c.dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: c.runAs}
	return cmd
}

func (c *cluster) start(cmd *exec.Cmd, log string) {
	c.t.Helper()
	f, err := os.Create(log)
	if err != nil {
		c.t.Fatal(err)
	}
	defer f.Close()
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		c.t.Fatalf("%s: %v", cmd.Path, err)
	}
	go func() { _ = cmd.Wait() }()
}

func (c *cluster) chown(path string) {
	if c.runAs != nil {
		if err := os.Chown(path, int(c.runAs.Uid), int(c.runAs.Gid)); err != nil {
			c.t.Fatal(err)
		}
	}
}

// waitFor polls cond every 100 ms until it holds, or fails the test after
// timeout with the nodes' logs.
func (c *cluster) waitFor(what string, timeout time.Duration, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			c.t.Fatalf("gave up waiting for %s after %v\n%s", what, timeout, c.logs())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// member is a node as Patroni's REST API lists it (GET /cluster).
type member struct {
	Name     string `json:"name"`
	Role     string `json:"role"`
	State    string `json:"state"`
	Port     int    `json:"port"`
	Timeline int    `json:"timeline"`
}

// members asks the first node that answers for the cluster's members.
func (c *cluster) members() ([]member, error) {
	client := http.Client{Timeout: time.Second}
	var errs []error
	for _, n := range c.nodes {
		res, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d/cluster", n.restPort))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var body struct {
			Members []member `json:"members"`
		}
		err = json.NewDecoder(res.Body).Decode(&body)
		res.Body.Close()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		return body.Members, nil
	}
	return nil, errors.Join(errs...)
}

// healthy reports a leader that runs, a synchronous standby and a third
// member that replicates: a cluster that can fail over without a loss.
func healthy(ms []member) (leader string, ok bool) {
	roles := map[string]int{}
	for _, m := range ms {
		if m.State != "running" && m.State != "streaming" {
			return "", false
		}
		roles[m.Role]++
		if m.Role == "leader" || m.Role == "master" || m.Role == "primary" {
			leader = m.Name
		}
	}
	return leader, len(ms) == 3 && leader != "" && roles["sync_standby"] == 1
}

// waitHealthy waits until the cluster is healthy, led by another node than
// unlike (if not nil), and returns its leader.
func (c *cluster) waitHealthy(timeout time.Duration, unlike *node) *node {
	c.t.Helper()
	var leader string
	what := "a leader, a synchronous standby and a replica"
	if unlike != nil {
		what += ", the leader not " + unlike.name
	}
	c.waitFor(what, timeout, func() bool {
		ms, err := c.members()
		if err != nil {
			return false
		}
		var ok bool
		leader, ok = healthy(ms)
		return ok && (unlike == nil || leader != unlike.name)
	})
	return c.node(leader)
}

func (c *cluster) node(name string) *node {
	for _, n := range c.nodes {
		if n.name == name {
			return n
		}
	}
	c.t.Fatalf("no node %q", name)
	return nil
}

// leader returns the node that Patroni names the leader now.
func (c *cluster) leader() *node {
	c.t.Helper()
	ms, err := c.members()
	if err != nil {
		c.t.Fatal(err)
	}
	for _, m := range ms {
		if m.Role == "leader" || m.Role == "master" || m.Role == "primary" {
			return c.node(m.Name)
		}
	}
	c.t.Fatalf("no leader among %v", ms)
	return nil
}

// postmaster returns the process id of n's postmaster, which Patroni
// starts detached from itself: from its postmaster.pid.
func (n *node) postmaster() (int, error) {
	b, err := os.ReadFile(filepath.Join(n.data, "postmaster.pid"))
	if err != nil {
		return 0, err
	}
	first, _, _ := strings.Cut(string(b), "\n")
	return strconv.Atoi(strings.TrimSpace(first))
}

// killPrimary kills the leader's postmaster with SIGKILL and returns the
// node.
func (c *cluster) killPrimary() *node {
	c.t.Helper()
	n := c.leader()
	pid, err := n.postmaster()
	if err != nil {
		c.t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		c.t.Fatalf("kill -9 %d (the postmaster of %s): %v", pid, n.name, err)
	}
	return n
}

// switchover moves the leadership to the synchronous standby, as an
// operator would, and returns patronictl's output.
func (c *cluster) switchover() string {
	c.t.Helper()
	cmd := exec.Command(c.patronictl, "-c", c.nodes[0].config, "switchover", "--force")
	cmd.Env = append(os.Environ(), "HOME="+c.dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		c.t.Fatalf("patronictl switchover: %v\n%s\n%s", err, out, c.logs())
	}
	return string(out)
}

// superURL is the URL of the superuser on n's PostgreSQL.
func (c *cluster) superURL(n *node, database string) string {
	return fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/%s?sslmode=disable", docSuperPassword, n.pgPort, database)
}

// createRole creates the servers' role and database, as the document does
// with psql.
func (c *cluster) createRole() {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.superURL(c.leader(), "postgres"))
	if err != nil {
		c.t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, sql := range []string{
		"CREATE ROLE " + docAppRole + " LOGIN PASSWORD '" + docAppPassword + "'",
		"CREATE DATABASE marketplace OWNER " + docAppRole,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			c.t.Fatalf("%s: %v", sql, err)
		}
	}
	c.waitDatabaseOnEveryNode(ctx)
}

// waitDatabaseOnEveryNode waits until every standby has replayed the
// CREATE DATABASE. A synchronous commit waits for the standby's flush, not
// its replay, and the third node is asynchronous; pgx gives up on a
// multi-host URL at the first host that answers "database does not exist"
// rather than trying the next, so a server started too early would not
// start.
func (c *cluster) waitDatabaseOnEveryNode(ctx context.Context) {
	c.t.Helper()
	for _, n := range c.nodes {
		if n == nil {
			continue
		}
		url := fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/marketplace?sslmode=disable", docAppRole, docAppPassword, n.pgPort)
		for {
			conn, err := pgx.Connect(ctx, url)
			if err == nil {
				conn.Close(ctx)
				break
			}
			if ctx.Err() != nil {
				c.t.Fatalf("%s never had the database: %v", n.name, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// URL is the servers' multi-host URL: pgx tries the hosts in turn and
// keeps the one that takes writes.
func (c *cluster) URL() string {
	hosts := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		hosts[i] = fmt.Sprintf("127.0.0.1:%d", n.pgPort)
	}
	return fmt.Sprintf("postgres://%s:%s@%s/marketplace?sslmode=disable&target_session_attrs=read-write",
		docAppRole, docAppPassword, strings.Join(hosts, ","))
}

func (c *cluster) fullLogs() string {
	var b strings.Builder
	for _, n := range c.nodes {
		if n == nil {
			continue
		}
		out, _ := os.ReadFile(n.log)
		for _, l := range strings.Split(string(out), "\n") {
			if !strings.Contains(l, "no action") {
				fmt.Fprintf(&b, "%s: %s\n", n.name, l)
			}
		}
	}
	return b.String()
}

func (c *cluster) logs() string {
	var b strings.Builder
	for _, n := range c.nodes {
		if n == nil {
			continue
		}
		out, _ := os.ReadFile(n.log)
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		// Patroni says "no action" every loop: the lines around a
		// failure are what tells.
		var kept []string
		for _, l := range lines {
			if !strings.Contains(l, "no action") {
				kept = append(kept, l)
			}
		}
		fmt.Fprintf(&b, "--- %s (%s):\n%s\n", n.name, n.log, strings.Join(kept[max(0, len(kept)-40):], "\n"))
	}
	return b.String()
}

// destroy stops Patroni first, so that it starts no PostgreSQL again, then
// each postmaster by its postmaster.pid, etcd, and removes the folder.
func (c *cluster) destroy() {
	for _, n := range c.nodes {
		if n != nil && n.cmd != nil && n.cmd.Process != nil {
			_ = syscall.Kill(-n.cmd.Process.Pid, syscall.SIGKILL)
		}
	}
	var wg sync.WaitGroup
	for _, n := range c.nodes {
		if n == nil {
			continue
		}
		if pid, err := n.postmaster(); err == nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				stopPostmaster(pid)
			}()
		}
	}
	wg.Wait()
	if c.etcd != nil && c.etcd.Process != nil {
		_ = syscall.Kill(-c.etcd.Process.Pid, syscall.SIGKILL)
	}
	if c.t.Failed() || os.Getenv("PATRONITEST_LOGS") != "" {
		c.t.Log(c.fullLogs())
	}
	_ = os.RemoveAll(c.dir)
}

// stopPostmaster asks a postmaster for an immediate shutdown (SIGQUIT),
// which ends its backends too, and kills it after 10 s.
func stopPostmaster(pid int) {
	if syscall.Kill(pid, syscall.SIGQUIT) != nil {
		return
	}
	for range 100 {
		if syscall.Kill(pid, 0) != nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

// reapOrphans kills what the clusters of test processes that died (a
// timeout, a kill) left running, and removes their folders: every process
// whose command line names the folder (Patroni, etcd, the postmasters;
// the backends end with their postmaster).
func reapOrphans() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue
		}
		owner, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || owner == os.Getpid() || alive(owner) {
			continue
		}
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, p := range procs {
			cmdline, err := os.ReadFile(p)
			if err != nil || !strings.Contains(string(cmdline), dir+"/") {
				continue
			}
			if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		_ = os.RemoveAll(dir)
	}
}

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func postgresUser(t *testing.T) *syscall.Credential {
	t.Helper()
	u, err := user.Lookup("postgres")
	if err != nil {
		t.Fatalf("running as root, PostgreSQL must run as the user postgres: %v", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
