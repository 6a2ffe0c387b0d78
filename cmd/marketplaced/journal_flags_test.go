package main

import (
	"io"
	"testing"
)

func TestFlags_JournalAndFaultSeed(t *testing.T) {
	c, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Journal != 1000 || c.FaultSeed != 0 {
		t.Fatalf("defaults: journal %d, fault seed %d", c.Journal, c.FaultSeed)
	}
	t.Setenv("MARKETPLACE_JOURNAL", "0")
	t.Setenv("MARKETPLACE_FAULT_SEED", "42")
	c, err = parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Journal != 0 || c.FaultSeed != 42 {
		t.Fatalf("environment ignored: journal %d, fault seed %d", c.Journal, c.FaultSeed)
	}
	for _, args := range [][]string{{"-journal", "-1"}, {"-fault-seed", "-3"}, {"-journal", "many"}} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}
