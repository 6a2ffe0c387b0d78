package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/pgtest"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/badger"
	"github.com/marketplace/marketplace/storage/postgres"
	"github.com/marketplace/marketplace/storage/schema"
)

// goldenFolder writes a store of an older binary (testdata/schema at the
// repository's root) into a new data folder.
func goldenFolder(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	st, err := badger.Open(dir, badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	writeGolden(t, st)
	return dir
}

// goldenDatabase writes the same store into a new PostgreSQL database and
// returns its URL.
func goldenDatabase(t *testing.T) string {
	t.Helper()
	url := pgtest.NewDatabase(t)
	st, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	writeGolden(t, st)
	return url
}

func writeGolden(t *testing.T, st storage.Store) {
	t.Helper()
	b, err := os.ReadFile("../../testdata/schema/48e1fd1-then-5e40b6e.dump")
	if err != nil {
		t.Fatal(err)
	}
	err = st.Update(context.Background(), func(tx storage.Tx) error {
		for line := range strings.Lines(string(b)) {
			if line[0] == '#' {
				continue
			}
			kh, vh, _ := strings.Cut(strings.TrimSpace(line), " ")
			k, _ := hex.DecodeString(kh)
			v, _ := hex.DecodeString(vh)
			if err := tx.Set(k, v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func folderVersion(t *testing.T, dir string) (int, bool) {
	t.Helper()
	st, err := badger.Open(dir, badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	v, ok, err := schema.Version(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	return v, ok
}

func TestMigrateCommand_DryRunPrintsEachPendingMigrationAndChangesNothing(t *testing.T) {
	dir := goldenFolder(t)
	var out bytes.Buffer
	if err := runMigrate(context.Background(), []string{"-dry-run", "-data", dir}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1+marketplace.SchemaVersion || !strings.Contains(lines[0], "schema version 0") {
		t.Fatalf("dry run printed:\n%s", out.String())
	}
	for _, l := range lines[1:] {
		if !strings.Contains(l, "would write") || !strings.Contains(l, "would delete") {
			t.Fatalf("line %q does not say what the migration would do", l)
		}
	}
	if _, ok := folderVersion(t, dir); ok {
		t.Fatal("the dry run stamped a version")
	}
}

func TestMigrateCommand_MigratesTheFolderAndASecondRunHasNothingToDo(t *testing.T) {
	dir := goldenFolder(t)
	var out bytes.Buffer
	if err := runMigrate(context.Background(), []string{"-data", dir}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "wrote") {
		t.Fatalf("migrate printed:\n%s", out.String())
	}
	if v, _ := folderVersion(t, dir); v != marketplace.SchemaVersion {
		t.Fatalf("version %d after migrate; want %d", v, marketplace.SchemaVersion)
	}
	out.Reset()
	if err := runMigrate(context.Background(), []string{"-data", dir, "-dry-run"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "nothing to do") {
		t.Fatalf("second run printed:\n%s", out.String())
	}
}

func TestMigrateCommand_MigratesAPostgresDatabase(t *testing.T) {
	url := goldenDatabase(t)
	version := func() int {
		t.Helper()
		st, err := postgres.Open(context.Background(), url, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		v, _, err := schema.Version(context.Background(), st)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	var out bytes.Buffer
	if err := runMigrate(context.Background(), []string{"-dry-run", "-postgres", url}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "would write") || version() != 0 {
		t.Fatalf("dry run printed:\n%s\nand left version %d", out.String(), version())
	}
	if !strings.HasPrefix(out.String(), "postgres://postgres@127.0.0.1:") {
		t.Fatalf("the report does not name the database:\n%s", out.String())
	}
	out.Reset()
	if err := runMigrate(context.Background(), []string{"-postgres", url}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if v := version(); v != marketplace.SchemaVersion {
		t.Fatalf("version %d after migrate; want %d; printed:\n%s", v, marketplace.SchemaVersion, out.String())
	}
}

func TestServer_StoreNewerThanBinaryExitsWithBothVersions(t *testing.T) {
	dir := t.TempDir()
	st, err := badger.Open(dir, badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = st.Update(context.Background(), func(tx storage.Tx) error {
		return tx.Set(schema.VersionKey(), keycodec.Raw().Uint(uint64(marketplace.SchemaVersion+1)))
	})
	if err != nil || st.Close() != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"-data", dir, "-addr", "127.0.0.1:0"}, {"-data", dir}} {
		run := run
		if len(args) == 2 {
			run = func(ctx context.Context, a []string, o, e io.Writer) error { return runMigrate(ctx, a, o, e) }
		}
		err := run(context.Background(), args, io.Discard, io.Discard)
		if err == nil {
			t.Fatalf("%v: a store newer than the binary was opened", args)
		}
		for _, want := range []string{"schema version " + strconv.Itoa(marketplace.SchemaVersion+1), "version " + strconv.Itoa(marketplace.SchemaVersion)} {
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("%v: message %q lacks %q", args, err, want)
			}
		}
	}
}
