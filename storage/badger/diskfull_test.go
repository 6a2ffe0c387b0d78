//go:build linux

package badger_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/badger"
)

// diskFullDirEnv names the folder the child of the disk-full test writes to;
// the child test does nothing unless it is set.
const diskFullDirEnv = "MARKETPLACE_STORAGE_DISKFULL_DIR"

// The disk-full test's file system: large enough for Badger to go through
// several memtable flushes and a compaction of level 0 before the margin is
// reached (a fixed margin of 256 MiB alone then lets the compaction die of
// SIGBUS), with a filler file that the test deletes to give space back.
const (
	diskFullFSSize = 1280 << 20
	diskFullFiller = 64 << 20
	// diskFullWriters write at the same time, so that the space guard
	// admits concurrent commits.
	diskFullWriters = 4
	// diskFullKeys are written by each Update, diskFullValueSize bytes each
	// (few large entries keep the test quick under the race detector); one
	// value in diskFullBigEvery Updates is larger than Badger's value
	// threshold and goes to the value log.
	diskFullKeys      = 8
	diskFullValueSize = 32 << 10
	diskFullBigEvery  = 50
)

func diskFullKey(w, i, j int) []byte {
	return keycodec.New("full").Int(int64(w)).Int(int64(i)).Int(int64(j))
}

func diskFullValue(w, i, j int) []byte {
	n := diskFullValueSize
	if j == 0 && i%diskFullBigEvery == diskFullBigEvery-1 {
		n = 1<<20 + 4096
	}
	// Random bytes do not compress: the tables take as much room as the
	// logs, the worst case for the margin.
	var seed [32]byte
	copy(seed[:], diskFullKey(w, i, j))
	b := make([]byte, n)
	_, _ = rand.NewChaCha8(seed).Read(b)
	return b
}

// requireTmpfs mounts a tmpfs of size bytes on a new folder and unmounts it
// when the test ends. Mounting needs root: elsewhere the test is skipped,
// except under CI=true, where tests run as root and a skip would hide it.
func requireTmpfs(t *testing.T, size int) string {
	t.Helper()
	ci := os.Getenv("CI") == "true"
	if os.Geteuid() != 0 {
		if ci {
			t.Fatal("needs root to mount a tmpfs, and CI runs tests as root")
		}
		t.Skip("needs root to mount a small tmpfs (runs under CI)")
	}
	if testing.Short() && !ci {
		t.Skip("fills a tmpfs of more than 1 GiB; not with -short")
	}
	dir := t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput()
	if err != nil {
		if ci {
			t.Fatalf("mount a tmpfs: %v: %s", err, out)
		}
		t.Skipf("cannot mount a tmpfs here (%v: %s)", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("unmount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

func freeBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * st.Bsize
}

// TestDiskFullChild is the child of
// TestDiskFull_WritesAreRefusedReadsGoOnNothingIsLostAndWritesResumeOnceSpaceReturns.
// Its writers fill the store until every one of them is refused, then it
// reads, waits for the parent to free space, and fills the store again.
// Every Update is printed after it returned ("ack W I").
func TestDiskFullChild(t *testing.T) {
	dir := os.Getenv(diskFullDirEnv)
	if dir == "" {
		t.Skip("runs only as the child of the disk-full test")
	}
	fail := func(format string, args ...any) {
		fmt.Printf("error "+format+"\n", args...)
		os.Exit(4)
	}
	st, err := badger.Open(filepath.Join(dir, "data"), badger.Options{})
	if err != nil {
		fail("open: %v", err)
	}
	ctx := context.Background()
	var out sync.Mutex
	next := make([]int, diskFullWriters)
	// fill runs the writers until each one is refused for want of space.
	fill := func() {
		var wg sync.WaitGroup
		for w := range diskFullWriters {
			wg.Go(func() {
				for ; ; next[w]++ {
					i := next[w]
					err := st.Update(ctx, func(tx storage.Tx) error {
						for j := range diskFullKeys {
							if err := tx.Set(diskFullKey(w, i, j), diskFullValue(w, i, j)); err != nil {
								return err
							}
						}
						return nil
					})
					if errors.Is(err, storage.ErrNoSpace) {
						return
					}
					if err != nil {
						fail("writer %d, update %d: %v", w, i, err)
					}
					out.Lock()
					fmt.Printf("ack %d %d\n", w, i)
					out.Unlock()
				}
			})
		}
		wg.Wait()
	}
	in := bufio.NewScanner(os.Stdin)
	for round := range 2 {
		fill()
		// Reads go on.
		err := st.View(ctx, func(tx storage.Tx) error {
			v, err := tx.Get(diskFullKey(0, 0, 1))
			if err == nil && !bytes.Equal(v, diskFullValue(0, 0, 1)) {
				err = errors.New("wrong value")
			}
			return err
		})
		if err != nil {
			fail("read once refused: %v", err)
		}
		fmt.Printf("refused %d\n", round)
		if round == 1 {
			break
		}
		// The parent frees space; the store notices by itself.
		if !in.Scan() {
			fail("parent went away")
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			i := next[0]
			err := st.Update(ctx, func(tx storage.Tx) error {
				return tx.Set(diskFullKey(0, i, 0), diskFullValue(0, i, 0))
			})
			if err == nil {
				// One key only: the parent finds the rest missing, so
				// this Update is not reported as a full one.
				next[0]++
				fmt.Println("accepted")
				break
			}
			if !errors.Is(err, storage.ErrNoSpace) || time.Now().After(deadline) {
				fail("after space was freed: %v", err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if err := st.Close(); err != nil {
		fail("close: %v", err)
	}
	fmt.Println("closed")
	os.Exit(0)
}

// TestDiskFull_WritesAreRefusedReadsGoOnNothingIsLostAndWritesResumeOnceSpaceReturns
// fills a small tmpfs through a store opened with the default options, in a
// child process. Without the margin, Badger dies of SIGBUS in its mapped
// write-ahead log when the file system is full. With it, every writer gets
// storage.ErrNoSpace, reads go on, the child takes writes again once the
// test deletes a filler file, fills the space again and closes cleanly, and
// every acknowledged write is there after reopening.
func TestDiskFull_WritesAreRefusedReadsGoOnNothingIsLostAndWritesResumeOnceSpaceReturns(t *testing.T) {
	if os.Getenv(diskFullDirEnv) != "" {
		t.Skip("already the child")
	}
	fs := requireTmpfs(t, diskFullFSSize)
	filler := filepath.Join(fs, "filler")
	if err := os.WriteFile(filler, bytes.Repeat([]byte{1}, diskFullFiller), 0o600); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^TestDiskFullChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), diskFullDirEnv+"="+fs)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	guard := time.AfterFunc(3*time.Minute, func() { _ = cmd.Process.Kill() })
	defer guard.Stop()

	acked := map[[2]int]bool{}
	var lines []string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "ack "):
			f := strings.Fields(line)
			w, _ := strconv.Atoi(f[1])
			i, _ := strconv.Atoi(f[2])
			acked[[2]int{w, i}] = true
		case strings.HasPrefix(line, "refused "):
			t.Logf("%s after %d Updates, %v; %d MiB free", line, len(acked), time.Since(start).Round(time.Millisecond), freeBytes(t, fs)>>20)
			if line == "refused 0" {
				if err := os.Remove(filler); err != nil {
					t.Fatal(err)
				}
				if _, err := io.WriteString(stdin, "freed\n"); err != nil {
					t.Fatal(err)
				}
			}
			lines = append(lines, line)
		case line == "accepted" || line == "closed" || strings.HasPrefix(line, "error "):
			lines = append(lines, line)
		}
	}
	err = cmd.Wait()
	want := []string{"refused 0", "accepted", "refused 1", "closed"}
	if err != nil || strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Fatalf("child: %v; said %q, want %q; stderr:\n%s", err, lines, want, stderr.String())
	}

	st, err := badger.Open(filepath.Join(fs, "data"), badger.Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}

	defer st.Close()
	// The fill went through memtable flushes and compactions, each of which
	// writes new tables through memory maps.
	var levels []string
	deeper := false
	for _, l := range st.DB().Levels() {
		if l.NumTables > 0 {
			levels = append(levels, fmt.Sprintf("L%d: %d tables, %d MiB", l.Level, l.NumTables, l.Size>>20))
			deeper = deeper || l.Level > 0
		}
	}
	t.Logf("after reopening: %s", strings.Join(levels, "; "))
	if !deeper {
		t.Errorf("no table left level 0: the fill never went through a compaction")
	}
	err = st.View(context.Background(), func(tx storage.Tx) error {
		for wi := range acked {
			for j := range diskFullKeys {
				v, err := tx.Get(diskFullKey(wi[0], wi[1], j))
				if err != nil {
					return fmt.Errorf("acknowledged write %v, key %d: %w", wi, j, err)
				}
				if !bytes.Equal(v, diskFullValue(wi[0], wi[1], j)) {
					return fmt.Errorf("acknowledged write %v, key %d: wrong value", wi, j)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d acknowledged Updates, all found after reopening", len(acked))
}
