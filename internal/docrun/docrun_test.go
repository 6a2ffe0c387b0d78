package docrun_test

import (
	"strings"
	"testing"

	"github.com/marketplace/marketplace/internal/docrun"
)

func TestParse_ShellBlockWithoutMarkerIsAnError(t *testing.T) {
	_, err := docrun.Parse("Text.\n\n```sh\ncurl -s $API/sites\n```\n")
	if err == nil || !strings.Contains(err.Error(), "line 3: a sh block without a marker") {
		t.Fatalf("err = %v, want the unmarked block named by its line", err)
	}
}

func TestParse_MarkersSayWhatToDoWithEachBlock(t *testing.T) {
	doc := strings.Join([]string{
		"<!-- runnable: server, postgres -->",
		"```sh",
		"marketplaced -postgres 'dbname=m'",
		"```",
		"```json",
		"{\"not\": \"shell\"}",
		"```",
		"<!-- not runnable: a browser step -->",
		"",
		"```bash",
		"open http://127.0.0.1:8080/console",
		"```",
		"<!-- file: testdata/a.json -->",
		"```json",
		"{}",
		"```",
		"<!-- runnable -->",
		"```sh",
		"curl -s $API/sites",
		"```",
	}, "\n")
	blocks, err := docrun.Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	want := []docrun.Block{
		{Line: 2, Kind: docrun.Server, Postgres: true, Text: "marketplaced -postgres 'dbname=m'\n"},
		{Line: 10, Kind: docrun.NotRunnable, Reason: "a browser step", Text: "open http://127.0.0.1:8080/console\n"},
		{Line: 14, Kind: docrun.File, Path: "testdata/a.json", Text: "{}\n"},
		{Line: 18, Kind: docrun.Script, Text: "curl -s $API/sites\n"},
	}
	if len(blocks) != len(want) {
		t.Fatalf("got %d blocks, want %d: %+v", len(blocks), len(want), blocks)
	}
	for i := range want {
		if blocks[i] != want[i] {
			t.Errorf("block %d = %+v, want %+v", i, blocks[i], want[i])
		}
	}
}

func TestParse_MarkerNotFollowedByAShellBlockIsAnError(t *testing.T) {
	for name, doc := range map[string]string{
		"text between": "<!-- runnable -->\nSome text.\n```sh\nls\n```\n",
		"not shell":    "<!-- runnable -->\n```go\nx := 1\n```\n",
		"at the end":   "<!-- runnable -->\n",
		"no reason":    "<!-- not runnable -->\n```sh\nls\n```\n",
		"unknown":      "<!-- runnable: sometimes -->\n```sh\nls\n```\n",
	} {
		if _, err := docrun.Parse(doc); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestInstrument_ChecksBecomeMarksAndContinueOnIndentedComments(t *testing.T) {
	text := "curl -s $API/a\n# => {\"a\":1,\n#     \"b\":2}\n# a plain comment\ncurl -s $API/b\n# => ok\n"
	got, checks := docrun.Instrument(text, 10, "mark")
	want := "curl -s $API/a\nmark 0\n# a plain comment\ncurl -s $API/b\nmark 1\n"
	if got != want {
		t.Errorf("script =\n%s\nwant\n%s", got, want)
	}
	if len(checks) != 2 || checks[0] != (docrun.Check{Line: 11, Want: `{"a":1,"b":2}`}) || checks[1] != (docrun.Check{Line: 15, Want: "ok"}) {
		t.Errorf("checks = %+v", checks)
	}
}

func TestMatches_EllipsisStandsForAnyTextAndTheOutputMustEndWithTheCheck(t *testing.T) {
	for _, tc := range []struct {
		got, want string
		ok        bool
	}{
		{`{"id":1,"name":"a"}`, `{"id":1,"name":"a"}`, true},
		{`{"id":1,"name":"a"}` + "\n", `{"id":1,...}`, true},
		{`{"id":1,"name":"a","t":"2026-01-01T00:00:00Z"}`, `{"id":1,...,"t":"…"}`, true},
		{`{"id":1,"name":"a"}`, `{"id":1,...,"name":"a"}`, true}, // ",...," may stand for no field
		{`earlier output{"id":2}`, `{"id":2}`, true},             // what came before the command
		{`{"id":2}`, `{"id":1,...}`, false},
		{`{"id":1,"name":"a"}`, `{"id":1}`, false},
		{`{"id":1}trailing`, `{"id":1}`, false},
		{`X-Version: 2` + "\r\n\r\n{}", `...X-Version: 1...`, false},
	} {
		if got := docrun.Matches(tc.got, tc.want); got != tc.ok {
			t.Errorf("Matches(%q, %q) = %v, want %v", tc.got, tc.want, got, tc.ok)
		}
	}
}

func TestPorts_LoopbackAddressesTakeTheRunsPorts(t *testing.T) {
	got := docrun.Ports("API=http://127.0.0.1:8080 localhost:9000 127.0.0.1:3000 example.com:8080",
		map[string]string{"8080": "41001", "9000": "41002"})
	want := "API=http://127.0.0.1:41001 localhost:41002 127.0.0.1:3000 example.com:8080"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestCommands_ServerBlockLinesJoinAndGoRunBecomesTheBinary(t *testing.T) {
	text := "createdb marketplace\n# in another shell:\ngo run ./cmd/marketplaced -demo \\\n  -addr 127.0.0.1:8081 &\nmarketplaced -memory   # a comment\n"
	got := docrun.Commands(text)
	want := []string{"createdb marketplace", "marketplaced -demo -addr 127.0.0.1:8081", "marketplaced -memory"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, want %q", got, want)
	}
	if docrun.IsServer(got[0]) || !docrun.IsServer(got[1]) || docrun.IsServer("marketplaced import x.json") {
		t.Error("IsServer: only marketplaced itself is a server")
	}
	if docrun.Addr(got[1]) != "127.0.0.1:8081" || docrun.Addr(got[2]) != "" {
		t.Error("Addr: the -addr of a command, or none")
	}
}
