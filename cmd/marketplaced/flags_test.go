package main

import (
	"io"
	"testing"
)

func TestFlags_Defaults(t *testing.T) {
	c, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.addr != "127.0.0.1:8080" || c.data != "./marketplace-data" || c.memory || c.demo || c.clockMode != "wall" || c.operatorToken != "" {
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
	if c.addr != "127.0.0.1:7777" {
		t.Fatalf("command line should win: %s", c.addr)
	}
	if c.operatorToken != "from-env-token" || !c.memory {
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
