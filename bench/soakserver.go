package main

// The soak's server: marketplaced run as a process of its own, and what the
// soak reads of it and of the machine every minute (its CPU time and memory
// from /proc, its Go heap from /metrics, the host's steal from /proc/stat).

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// soakServer is the marketplaced process of the soak.
type soakServer struct {
	cmd   *exec.Cmd
	base  string
	pprof string // its net/http/pprof address, where the soak profiles it
	dir   string
}

func startSoakServer(withPprof bool) *soakServer {
	dir, err := os.MkdirTemp("", "marketplace-soak-")
	if err != nil {
		fatalf("%v", err)
	}
	atCleanup(func() { _ = os.RemoveAll(dir) })
	bin := filepath.Join(dir, "marketplaced")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/marketplaced").CombinedOutput(); err != nil {
		fatalf("build marketplaced (run the soak from the module's root): %v\n%s", err, out)
	}
	logFile, err := os.Create(filepath.Join(dir, "stderr.log"))
	if err != nil {
		fatalf("%v", err)
	}
	args := []string{"-addr", "127.0.0.1:0", "-data", filepath.Join(dir, "data"), "-operator-token", soakOperator}
	if withPprof {
		args = append(args, "-pprof", "127.0.0.1:0")
	}
	cmd := exec.Command(bin, args...)
	cmd.Stderr = logFile
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		fatalf("%v", err)
	}
	if err := cmd.Start(); err != nil {
		fatalf("start marketplaced: %v", err)
	}
	s := &soakServer{cmd: cmd, dir: dir}
	atCleanup(s.stop)
	listening, pprofOn := make(chan string, 1), make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if addr, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				listening <- addr
			}
			if addr, ok := strings.CutPrefix(sc.Text(), "pprof on "); ok {
				pprofOn <- addr
			}
		}
	}()
	started := time.After(60 * time.Second)
	for s.base == "" || (withPprof && s.pprof == "") {
		select {
		case addr := <-listening:
			s.base = "http://" + strings.TrimPrefix(addr, "http://")
		case addr := <-pprofOn:
			s.pprof = addr
		case <-started:
			fatalf("marketplaced did not start within a minute; its log: %s", filepath.Join(dir, "stderr.log"))
		}
	}
	return s
}

// profileMinutes writes a CPU profile of the server's seconds 30 to 50 of
// every minute into dir (minute-01.pprof, ...), until ctx ends: set beside
// each other, the first and the last minute's say where a cost that grows
// with the store goes.
func (s *soakServer) profileMinutes(ctx context.Context, dir string, start time.Time) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fatalf("%v", err)
	}
	hc := &http.Client{Timeout: time.Minute}
	for minute := 1; ; minute++ {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(start.Add(time.Duration(minute-1)*time.Minute + 30*time.Second))):
		}
		res, err := hc.Get(s.pprof + "/debug/pprof/profile?seconds=20")
		if err != nil {
			fmt.Fprintf(os.Stderr, "soak: profile of minute %d: %v\n", minute, err)
			continue
		}
		b, err := io.ReadAll(res.Body)
		_ = res.Body.Close()
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, fmt.Sprintf("minute-%02d.pprof", minute)), b, 0o644)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "soak: profile of minute %d: %v\n", minute, err)
		}
	}
}

// stop ends the server as its operator would (SIGTERM), and kills it if it
// has not stopped within stopTimeout.
func (s *soakServer) stop() {
	if s.cmd.Process == nil || s.cmd.ProcessState != nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(stopTimeout):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

// rss is the server's resident memory, from /proc (0 where there is none):
// all of it, and the part that is not a file's (RssAnon). Badger maps its
// tables into memory, and the pages of them that reads touch count in the
// RSS until the kernel wants them back, so the RSS grows with the store
// where the anonymous part, the process's own, need not.
func (s *soakServer) rss() (total, anon int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0, 0
	}
	kib := func(v string) int64 {
		n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		return n << 10
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			total = kib(v)
		}
		if v, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			anon = kib(v)
		}
	}
	return total, anon
}

// cpu is the CPU time the server has used, from /proc (user and system;
// 0 where there is none): on a machine shared with other work the rates
// follow the machine, the CPU per request follows the server.
func (s *soakServer) cpu() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// The fields after the command's name, which ends at the last ")":
	// utime and stime are the 12th and 13th, in clock ticks (100 a second).
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+st) * 10 * time.Millisecond
}

// machineTicks is the machine's CPU time from /proc/stat, in clock ticks:
// all of it, and what the hypervisor took for others (steal). Zero where
// there is none.
type machineTicks struct{ total, steal int64 }

func readMachineTicks() machineTicks {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return machineTicks{}
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return machineTicks{}
	}
	var t machineTicks
	for i, v := range f[1:] {
		n, _ := strconv.ParseInt(v, 10, 64)
		t.total += n
		if i == 7 {
			t.steal = n
		}
	}
	return t
}

// stealShare is the share of the machine's CPU taken by its host between
// two readings: a minute whose rates fall with a high steal fell with the
// machine, not the server.
func stealShare(from, to machineTicks) float64 {
	if to.total <= from.total {
		return 0
	}
	return float64(to.steal-from.steal) / float64(to.total-from.total)
}

// heap is the server's Go heap in use, from its /metrics.
func (s *soakServer) heap(hc *http.Client) int64 {
	res, err := hc.Get(s.base + "/metrics")
	if err != nil {
		return 0
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_memstats_heap_inuse_bytes "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return int64(f)
		}
	}
	return 0
}
