package main

import (
	"slices"
	"testing"
	"time"
)

func TestParseRTTs_ReadsDurationsAndABareZero(t *testing.T) {
	got, err := parseRTTs("0, 0.5ms,1ms,250us")
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{0, 500 * time.Microsecond, time.Millisecond, 250 * time.Microsecond}
	if !slices.Equal(got, want) {
		t.Errorf("parseRTTs = %v; want %v", got, want)
	}
	for _, bad := range []string{"", "1", "-1ms", "0,fast"} {
		if _, err := parseRTTs(bad); err == nil {
			t.Errorf("parseRTTs(%q) took it", bad)
		}
	}
}
