package badger_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/badger"
)

// crashDirEnv names the folder the child process writes to; the child test
// does nothing unless it is set.
const crashDirEnv = "MARKETPLACE_STORAGE_CRASH_DIR"

var lastKey = []byte("last")

func crashKey(i int) []byte { return keycodec.New("crash").Int(int64(i)) }

// crashValue is mostly small, with a value bigger than Badger's value
// threshold now and then, so that both the LSM tree and the value log are
// written when the process dies.
func crashValue(i int) []byte {
	if i%25 == 0 {
		return bytes.Repeat([]byte{byte(i)}, 1<<20+512)
	}
	return fmt.Appendf(nil, "value %d", i)
}

// TestCrashChild is the child of TestCrash_EveryAcknowledgedWriteSurvivesSIGKILL:
// it writes until it is killed, printing each write after Update returned.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("runs only as the child of the crash test")
	}
	st, err := badger.Open(dir, badger.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(2)
	}
	next := 0
	err = st.View(context.Background(), func(tx storage.Tx) error {
		v, err := tx.Get(lastKey)
		if errors.Is(err, storage.ErrNotFound) {
			return nil
		}
		next = int(keycodec.Read(v).Int()) + 1
		return err
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "read last:", err)
		os.Exit(2)
	}
	seq, err := st.Sequence("crash")
	if err != nil {
		fmt.Fprintln(os.Stderr, "sequence:", err)
		os.Exit(2)
	}
	// The parent kills this process; the bound only stops a child whose
	// parent went away.
	for i := next; i < next+100000; i++ {
		id, err := seq.Next(context.Background())
		if err != nil {
			fmt.Fprintln(os.Stderr, "sequence:", err)
			os.Exit(2)
		}
		err = st.Update(context.Background(), func(tx storage.Tx) error {
			if err := tx.Set(crashKey(i), crashValue(i)); err != nil {
				return err
			}
			return tx.Set(lastKey, keycodec.Raw().Int(int64(i)))
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "update:", err)
			os.Exit(2)
		}
		fmt.Printf("ack %d %d\n", i, id)
	}
	os.Exit(3)
}

// runCrashChild starts a child writing to dir, kills it with SIGKILL once it
// has acknowledged killAfter writes, and returns every write it acknowledged
// and the sequence ids it handed out with them.
func runCrashChild(t *testing.T, dir string, killAfter int) (acked []int, ids []uint64) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// A child that hangs instead of writing would hang the test with it.
	guard := time.AfterFunc(time.Minute, func() { _ = cmd.Process.Kill() })
	defer guard.Stop()
	sc := bufio.NewScanner(out)
	killed := false
	for sc.Scan() {
		line := sc.Text()
		n, ok := strings.CutPrefix(line, "ack ")
		if !ok {
			continue // the test framework's own output
		}
		write, id, _ := strings.Cut(n, " ")
		i, err := strconv.Atoi(write)
		if err != nil {
			t.Fatalf("child printed %q", line)
		}
		seqID, err := strconv.ParseUint(id, 10, 64)
		if err != nil {
			t.Fatalf("child printed %q", line)
		}
		acked = append(acked, i)
		ids = append(ids, seqID)
		if len(acked) == killAfter && !killed {
			// Lines already in the pipe are acknowledged writes too: keep
			// reading them after the kill.
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
	}
	err = cmd.Wait()
	if !killed {
		t.Fatalf("child ended before it was killed (%v), after %d writes; stderr:\n%s", err, len(acked), stderr.String())
	}
	return acked, ids
}

func TestCrash_EveryAcknowledgedWriteSurvivesSIGKILLAndNoSequenceIDRepeats(t *testing.T) {
	if os.Getenv(crashDirEnv) != "" {
		t.Skip("already the child")
	}
	dir := t.TempDir()
	var acked []int
	handedOut := map[uint64]bool{}
	// Two crashes in a row: the second child starts from a folder that was
	// itself recovered from a kill.
	for round, killAfter := range []int{150, 100} {
		got, ids := runCrashChild(t, dir, killAfter)
		if len(got) < killAfter {
			t.Fatalf("round %d: only %d writes acknowledged", round, len(got))
		}
		acked = append(acked, got...)
		for _, id := range ids {
			if handedOut[id] {
				t.Fatalf("round %d: sequence id %d handed out again after a kill", round, id)
			}
			handedOut[id] = true
		}

		st, err := badger.Open(dir, badger.Options{})
		if err != nil {
			t.Fatalf("round %d: reopen after the kill: %v", round, err)
		}
		var last int
		present := map[int]bool{}
		err = st.View(context.Background(), func(tx storage.Tx) error {
			v, err := tx.Get(lastKey)
			if err != nil {
				return fmt.Errorf("last: %w", err)
			}
			last = int(keycodec.Read(v).Int())
			it := tx.Iterate(storage.Prefix(keycodec.New("crash")))
			defer it.Close()
			for ; it.Valid(); it.Next() {
				r := keycodec.Read(it.Key())
				r.Str()
				i := int(r.Int())
				v, err := it.Value()
				if err != nil {
					return err
				}
				if !bytes.Equal(v, crashValue(i)) {
					return fmt.Errorf("key %d holds %d wrong bytes", i, len(v))
				}
				present[i] = true
			}
			return nil
		})
		if cerr := st.Close(); cerr != nil && err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		for _, i := range acked {
			if !present[i] {
				t.Fatalf("round %d: acknowledged write %d is missing after the kill", round, i)
			}
		}
		// Each Update wrote its key and "last" together: both or neither.
		if len(present) != last+1 || !present[last] {
			t.Fatalf("round %d: last = %d but %d keys present", round, last, len(present))
		}
		t.Logf("round %d: %d writes acknowledged in all, %d found (last %d)", round, len(acked), len(present), last)
		if last < acked[len(acked)-1] {
			t.Fatalf("round %d: last = %d, before the last acknowledged write %d", round, last, acked[len(acked)-1])
		}
	}
}
