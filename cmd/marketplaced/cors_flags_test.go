package main

import (
	"errors"
	"io"
	"slices"
	"testing"
)

func TestFlags_CORSOriginIsOffByDefaultRepeatableAndCommaSeparatedInTheEnvironment(t *testing.T) {
	c, err := parseFlags(nil, io.Discard)
	if err != nil || len(c.CORSOrigins) != 0 {
		t.Fatalf("default: %v %v", c.CORSOrigins, err)
	}
	c, err = parseFlags([]string{"-cors-origin", "https://app.example.com", "-cors-origin", "http://localhost:5173"}, io.Discard)
	if err != nil || !slices.Equal(c.CORSOrigins, []string{"https://app.example.com", "http://localhost:5173"}) {
		t.Fatalf("repeated flag: %v %v", c.CORSOrigins, err)
	}
	t.Setenv("MARKETPLACE_CORS_ORIGIN", "https://a.example, https://b.example")
	c, err = parseFlags(nil, io.Discard)
	if err != nil || !slices.Equal(c.CORSOrigins, []string{"https://a.example", "https://b.example"}) {
		t.Fatalf("environment: %v %v", c.CORSOrigins, err)
	}
	c, err = parseFlags([]string{"-cors-origin", "*"}, io.Discard)
	if err != nil || !slices.Equal(c.CORSOrigins, []string{"*"}) {
		t.Fatalf("the command line should replace the environment's origins: %v %v", c.CORSOrigins, err)
	}
}

func TestFlags_CORSOriginWithAPathOrNoSchemeIsAUsageError(t *testing.T) {
	for _, o := range []string{"app.example.com", "https://app.example.com/", "https://app.example.com/path", "ftp://x.example", ""} {
		_, err := parseFlags([]string{"-cors-origin", o}, io.Discard)
		if err == nil || !errors.As(err, new(usageError)) {
			t.Fatalf("%q: %v", o, err)
		}
	}
}
