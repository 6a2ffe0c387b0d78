package reqlog_test

import (
	"bytes"
	"context"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/internal/reqlog"
)

// slogLine is the request line as slog's own JSON handler writes it.
func slogLine(t *rapid.T, opts *slog.HandlerOptions, end time.Time, method, path, route string, status int, d time.Duration) string {
	var out bytes.Buffer
	rec := slog.NewRecord(end, slog.LevelInfo, "request", 0)
	rec.AddAttrs(slog.String("method", method), slog.String("path", path), slog.String("route", route),
		slog.Int("status", status), slog.String("duration", d.String()))
	if err := slog.NewJSONHandler(&out, opts).Handle(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestWriteRequest_WritesTheBytesOfSlogsJSONHandler(t *testing.T) {
	text := rapid.OneOf(rapid.String(), rapid.StringOf(rapid.RuneFrom([]rune{'"', '\\', '\n', '\r', '\t', '\b', '\f', 0, 0x1f, 0x7f, '<', '&', '\u2028', '\u2029', 'é', '/'})),
		rapid.Custom(func(t *rapid.T) string { return string(rapid.SliceOf(rapid.Byte()).Draw(t, "bytes")) }))
	rapid.Check(t, func(t *rapid.T) {
		var end time.Time
		if rapid.IntRange(0, 9).Draw(t, "zero time") > 0 {
			zone := time.FixedZone("z", rapid.IntRange(-12, 14).Draw(t, "offset")*3600)
			end = time.Unix(rapid.Int64Range(0, 1<<34).Draw(t, "sec"), rapid.Int64Range(0, 999999999).Draw(t, "nsec")).In(zone)
		}
		method, path, route := text.Draw(t, "method"), text.Draw(t, "path"), text.Draw(t, "route")
		status := rapid.IntRange(-1, 999).Draw(t, "status")
		d := time.Duration(rapid.Int64().Draw(t, "duration"))
		var out bytes.Buffer
		h := reqlog.New(&out, &slog.HandlerOptions{Level: slog.LevelInfo})
		if err := h.WriteRequest(context.Background(), end, 0, method, path, route, status, d); err != nil {
			t.Fatal(err)
		}
		if want := slogLine(t, nil, end, method, path, route, status, d); out.String() != want {
			t.Fatalf("wrote\n%q\nslog writes\n%q", out.String(), want)
		}
	})
}

func TestWriteRequest_GoesThroughSlogWhenTheOptionsChangeTheLine(t *testing.T) {
	end := time.Date(2026, 12, 8, 3, 4, 5, 6, time.UTC)
	opts := &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == "path" {
			a.Value = slog.StringValue("hidden")
		}
		return a
	}}
	var out bytes.Buffer
	if err := reqlog.New(&out, opts).WriteRequest(context.Background(), end, 0, "GET", "/users/1", "/users/:id", 200, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"path":"hidden"`) {
		t.Fatalf("the options were not applied: %s", out.String())
	}
}

func TestWriteRequest_WritesNothingBelowTheLevel(t *testing.T) {
	var out bytes.Buffer
	h := reqlog.New(&out, &slog.HandlerOptions{Level: slog.LevelWarn})
	if err := h.WriteRequest(context.Background(), time.Now(), 0, "GET", "/", "/", 200, 0); err != nil {
		t.Fatal(err)
	}
	if out.Len() != 0 {
		t.Fatalf("wrote %q at level warn", out.String())
	}
	if h.Enabled(context.Background(), slog.LevelInfo) {
		t.Fatal("info enabled at level warn")
	}
}

func TestHandler_OtherLinesAreSlogsAndLinesNeverInterleave(t *testing.T) {
	var out bytes.Buffer
	h := reqlog.New(&out, nil)
	logger := slog.New(h)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				if i%2 == 0 {
					_ = h.WriteRequest(context.Background(), time.Time{}, 0, "GET", "/items/MLA1", "/items/:id", 200, time.Microsecond)
				} else {
					logger.With("worker", i).Warn("slow", "n", 1)
				}
			}
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 1600 {
		t.Fatalf("%d lines; want 1600", len(lines))
	}
	slow := regexp.MustCompile(`^\{"time":"[^"]+","level":"WARN","msg":"slow","worker":[1357],"n":1\}$`)
	const request = `{"level":"INFO","msg":"request","method":"GET","path":"/items/MLA1","route":"/items/:id","status":200,"duration":"1µs"}`
	for _, l := range lines {
		if l != request && !slow.MatchString(l) {
			t.Fatalf("a broken line: %q", l)
		}
	}
}
