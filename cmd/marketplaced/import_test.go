package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/pgtest"
	"github.com/marketplace/marketplace/storage/badger"
	"github.com/marketplace/marketplace/storage/postgres"
)

const importDoc = `{"records": [
  {"kind": "currency", "data": {"id": "XTS", "description": "Test coin", "symbol": "T$", "decimal_places": 2}},
  {"kind": "listing_type", "data": {"site_id": "MLU", "id": "silver", "name": "Plata", "exposure": "mid", "duration_days": 30}},
  {"kind": "fee_rule", "data": {"site_id": "MLU", "listing_type_id": "silver", "meli_percentage_fee": 9}}
]}`

func TestImport_RecordsOfAFileAreInTheDataFolder(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(t.TempDir(), "records.json")
	if err := os.WriteFile(file, []byte(importDoc), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := runImport(context.Background(), []string{"-data", dir, file}, nil, &out, io.Discard); err != nil {
		t.Fatalf("import: %v", err)
	}
	if want := "imported 3 records into " + dir + "\n  currency: 1\n  fee_rule: 1\n  listing_type: 1\n"; out.String() != want {
		t.Fatalf("output %q, want %q", out.String(), want)
	}
	m, err := marketplace.Open(context.Background(), badger.Dir(dir), marketplace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	c, err := m.Geo.Currency(context.Background(), "XTS")
	if err != nil || c.Symbol != "T$" {
		t.Fatalf("imported currency: %+v %v", c, err)
	}
}

func TestImport_RecordsOfAFileAreInThePostgresDatabase(t *testing.T) {
	url := pgtest.NewDatabase(t)
	var out bytes.Buffer
	if err := runImport(context.Background(), []string{"-postgres", url, "-"}, strings.NewReader(importDoc), &out, io.Discard); err != nil {
		t.Fatalf("import: %v", err)
	}
	if !strings.HasPrefix(out.String(), "imported 3 records into postgres://postgres@127.0.0.1:") {
		t.Fatalf("output %q", out.String())
	}
	m, err := marketplace.Open(context.Background(), postgres.URL(url), marketplace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if c, err := m.Geo.Currency(context.Background(), "XTS"); err != nil || c.Symbol != "T$" {
		t.Fatalf("imported currency: %+v %v", c, err)
	}
}

func TestImport_DashReadsTheDocumentFromStdin(t *testing.T) {
	dir := t.TempDir()
	if err := runImport(context.Background(), []string{"-data", dir, "-"}, strings.NewReader(importDoc), io.Discard, io.Discard); err != nil {
		t.Fatalf("import: %v", err)
	}
}

func TestImport_BadRecordWritesNothing(t *testing.T) {
	dir := t.TempDir()
	doc := strings.Replace(importDoc, `"meli_percentage_fee": 9`, `"meli_percentage_fee": -9`, 1)
	err := runImport(context.Background(), []string{"-data", dir, "-"}, strings.NewReader(doc), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "Record 2 (fee_rule): Invalid meli_percentage_fee: -9. It must not be negative") {
		t.Fatalf("err = %v", err)
	}
	m, err := marketplace.Open(context.Background(), badger.Dir(dir), marketplace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, err := m.Geo.Currency(context.Background(), "XTS"); !errs.Is(err, errs.NotFound) {
		t.Fatalf("currency of a failed import is there: %v", err)
	}
}

func TestImport_UsageErrors(t *testing.T) {
	for _, args := range [][]string{{}, {"a.json", "b.json"}, {"-memory", "a.json"}, {"-data", t.TempDir(), filepath.Join(t.TempDir(), "missing.json")}} {
		if err := runImport(context.Background(), args, nil, io.Discard, io.Discard); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}
