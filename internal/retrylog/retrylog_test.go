package retrylog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/marketplace/marketplace/internal/retrylog"
	"github.com/marketplace/marketplace/storage"
)

// lines returns the log's lines as "LEVEL message".
func lines(t *testing.T, buf *bytes.Buffer) []string {
	t.Helper()
	var out []string
	dec := json.NewDecoder(buf)
	for dec.More() {
		var l struct{ Level, Msg string }
		if err := dec.Decode(&l); err != nil {
			t.Fatal(err)
		}
		out = append(out, l.Level+" "+l.Msg)
	}
	return out
}

func newLog() (*retrylog.Log, *bytes.Buffer) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	at := time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC)
	return retrylog.New(logger, "refresh", func() time.Time { at = at.Add(time.Second); return at }), &buf
}

var errDown = fmt.Errorf("%w: dial tcp 127.0.0.1:5432: connect: connection refused", storage.ErrUnavailable)

func TestReport_APassingOutageIsOneWarningAndItsEndOneInfo(t *testing.T) {
	l, buf := newLog()
	l.Report(nil)
	for range 5 {
		l.Report(errDown)
	}
	l.Report(nil)
	l.Report(nil)
	logged := buf.String()
	want := []string{"WARN refresh: the store is unavailable, retrying", "INFO refresh: working again"}
	if !strings.Contains(logged, `"failed_attempts":5`) {
		t.Fatalf("the end of the outage does not count its 5 failed attempts: %s", logged)
	}
	if got := lines(t, buf); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("log = %q; want %q", got, want)
	}
}

func TestReport_EachOutageIsReportedOnce(t *testing.T) {
	l, buf := newLog()
	l.Report(errDown)
	l.Report(errDown)
	l.Report(nil)
	l.Report(fmt.Errorf("read: %w", context.DeadlineExceeded))
	l.Report(nil)
	want := []string{"WARN refresh: the store is unavailable, retrying", "INFO refresh: working again",
		"WARN refresh: the store is unavailable, retrying", "INFO refresh: working again"}
	if got := lines(t, buf); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("log = %q; want %q", got, want)
	}
}

func TestReport_AFailureThatIsNoOutageIsAnErrorEachTime(t *testing.T) {
	l, buf := newLog()
	l.Report(errors.New("corrupt record"))
	l.Report(errors.New("corrupt record"))
	want := []string{"ERROR refresh", "ERROR refresh"}
	if got := lines(t, buf); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("log = %q; want %q", got, want)
	}
}

func TestGaveUp_IsAnErrorEvenForAnOutage(t *testing.T) {
	l, buf := newLog()
	l.Report(errDown)
	l.GaveUp(errDown)
	want := []string{"WARN refresh: the store is unavailable, retrying", "ERROR refresh: giving up"}
	if got := lines(t, buf); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("log = %q; want %q", got, want)
	}
}
