package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
)

func TestFlags_Defaults(t *testing.T) {
	c, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:8080" || c.Data != "./marketplace-data" || c.Memory || c.Demo || c.Clock != "wall" || c.OperatorToken != "" {
		t.Fatalf("defaults: %+v", c)
	}
}

func TestFlags_EnvironmentSetsFlagsAndTheCommandLineWins(t *testing.T) {
	t.Setenv("MARKETPLACE_ADDR", "127.0.0.1:9999")
	t.Setenv("MARKETPLACE_OPERATOR_TOKEN", "from-env-token")
	t.Setenv("MARKETPLACE_MEMORY", "true")
	c, err := parseFlags([]string{"-addr", "127.0.0.1:7777"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:7777" {
		t.Fatalf("command line should win: %s", c.Addr)
	}
	if c.OperatorToken != "from-env-token" || !c.Memory {
		t.Fatalf("environment ignored: %+v", c)
	}
}

func TestFlags_RejectsBadValues(t *testing.T) {
	for _, args := range [][]string{{"-clock", "sundial"}, {"-nope"}, {"stray"}} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Fatalf("%v: no error", args)
		}
	}
	t.Setenv("MARKETPLACE_MEMORY", "maybe")
	if _, err := parseFlags(nil, io.Discard); err == nil {
		t.Fatal("bad environment value accepted")
	}
}

func TestFlags_PostgresBesideAnExplicitDataFolderOrMemoryIsAUsageError(t *testing.T) {
	const url = "postgres://app@db.example:5432/market"
	cases := []struct {
		name string
		args []string
		env  map[string]string
	}{
		{"DataFlag", []string{"-postgres", url, "-data", "./elsewhere"}, nil},
		{"DataFlagWithItsDefaultValue", []string{"-postgres", url, "-data", "./marketplace-data"}, nil},
		{"MemoryFlag", []string{"-postgres", url, "-memory"}, nil},
		{"DataFromTheEnvironment", []string{"-postgres", url}, map[string]string{"MARKETPLACE_DATA": "/srv/data"}},
		{"MemoryFromTheEnvironment", []string{"-postgres", url}, map[string]string{"MARKETPLACE_MEMORY": "true"}},
		{"PostgresFromTheEnvironment", []string{"-data", "./elsewhere"}, map[string]string{"MARKETPLACE_POSTGRES": url}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			_, err := parseFlags(c.args, io.Discard)
			if !errors.As(err, new(usageError)) || !strings.Contains(err.Error(), "-postgres cannot be combined with -") {
				t.Fatalf("err = %v; want a usage error about -postgres", err)
			}
		})
	}
	for _, args := range [][]string{{"import", "-postgres", url, "-data", "d", "f.json"}, {"migrate", "-postgres", url, "-memory"}} {
		var err error
		if args[0] == "import" {
			err = runImport(context.Background(), args[1:], nil, io.Discard, io.Discard)
		} else {
			err = runMigrate(context.Background(), args[1:], io.Discard, io.Discard)
		}
		if !errors.As(err, new(usageError)) {
			t.Errorf("%v: err = %v; want a usage error", args, err)
		}
	}
}

func TestFlags_PostgresAloneKeepsTheDefaultDataFolderUnused(t *testing.T) {
	c, err := parseFlags([]string{"-postgres", "postgres://app@db.example/market", "-memory=false"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Postgres != "postgres://app@db.example/market" || storageName(c) != "postgres:postgres://app@db.example:5432/market" {
		t.Fatalf("postgres %q, storage %q", c.Postgres, storageName(c))
	}
	t.Setenv("MARKETPLACE_POSTGRES", "postgres://env@db.example/market")
	if c, err = parseFlags(nil, io.Discard); err != nil || c.Postgres != "postgres://env@db.example/market" {
		t.Fatalf("MARKETPLACE_POSTGRES: %q %v", c.Postgres, err)
	}
	if c, err = parseFlags([]string{"-postgres", "postgres://flag@db.example/market"}, io.Discard); err != nil || c.Postgres != "postgres://flag@db.example/market" {
		t.Fatalf("the command line should win: %q %v", c.Postgres, err)
	}
}

func TestFlags_ErrorsOfTheCommandLineAreUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"-clock", "sundial"}, {"-nope"}, {"stray"}, {"-notification-timeout", "0"}} {
		if _, err := parseFlags(args, io.Discard); !errors.As(err, new(usageError)) {
			t.Errorf("%v: err = %v; want a usage error (exit status 2)", args, err)
		}
	}
	if err := run(context.Background(), []string{"-memory", "-log-level", "loud"}, io.Discard, io.Discard); !errors.As(err, new(usageError)) {
		t.Errorf("-log-level loud: err = %v; want a usage error", err)
	}
}

func TestStorageName_NeverShowsThePassword(t *testing.T) {
	cases := []struct{ url, want string }{
		{"postgres://app:s3cret@db.example:6432/market?sslmode=disable", "postgres:postgres://app@db.example:6432/market"},
		{"postgresql://app@db.example/market?password=s3cret", "postgres:postgres://app@db.example:5432/market"},
		{"host=db.example port=6432 user=app password=s3cret dbname=market", "postgres:postgres://app@db.example:6432/market"},
		{"host=/var/run/postgresql user=app password='s3 cret' dbname=market", "postgres:postgres://app@/market?host=%2Fvar%2Frun%2Fpostgresql"},
		{"postgres://app:s3cret@[::1", "postgres:(unreadable URL)"},
	}
	for _, c := range cases {
		got := storageName(Config{Postgres: c.url})
		if strings.Contains(got, "s3") || got != c.want {
			t.Errorf("%s: %q; want %q", c.url, got, c.want)
		}
	}
}

func TestFlags_UnreadablePostgresURLIsAUsageErrorThatMasksThePassword(t *testing.T) {
	for _, url := range []string{"postgres://app:s3cret@[::1/market", "host=db password=s3cret port=abc"} {
		_, err := parseFlags([]string{"-postgres", url}, io.Discard)
		if !errors.As(err, new(usageError)) || !strings.Contains(err.Error(), "-postgres: ") || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: err = %v; want a usage error without the password", url, err)
		}
	}
}

func TestFlags_EveryFlagSaysWhatItsEnvironmentVariableAccepts(t *testing.T) {
	var c Config
	fs := newFlags(&c, &originList{origins: &c.CORSOrigins}, io.Discard)
	fs.VisitAll(func(f *flag.Flag) {
		if fs.accepts[f.Name] == "" {
			t.Errorf("-%s was declared without saying what it accepts", f.Name)
		}
	})
}
