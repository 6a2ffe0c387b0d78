package main

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestFlags_UpstreamIsABaseURLAndUpstreamAllNeedsOne(t *testing.T) {
	clearEnvironment(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-upstream", "api.mercadolibre.com"}, "-upstream: "},
		{[]string{"-upstream", "https://user:pass@api.example"}, "-upstream: "},
		{[]string{"-upstream", "https://api.example/?x=1"}, "-upstream: "},
		{[]string{"-upstream-all"}, "-upstream-all needs -upstream"},
		{[]string{"-upstream", "https://api.example", "-upstream-timeout", "0s"}, "-upstream-timeout must be positive"},
	} {
		_, err := parseFlags(c.args, io.Discard)
		if !errors.As(err, new(usageError)) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v; want a usage error saying %q", c.args, err, c.want)
		}
	}
	t.Setenv("MARKETPLACE_UPSTREAM", "https://api.example/base/")
	t.Setenv("MARKETPLACE_UPSTREAM_ALL", "true")
	t.Setenv("MARKETPLACE_RECORD", "recorded")
	c, err := parseFlags([]string{"-record-repeats"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Upstream != "https://api.example/base/" || !c.UpstreamAll || c.Record != "recorded" || !c.RecordRepeats || c.UpstreamTimeout != 30*time.Second {
		t.Errorf("config = %+v; want the environment's upstream and recording, the default timeout", c)
	}
}
