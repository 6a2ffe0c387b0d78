package main

import "testing"

func TestFixturesSummary_OneIsSingularEveryOtherCountPlural(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "0 items"}, {1, "1 item"}, {2, "2 items"}, {11, "11 items"}} {
		if got := count(tc.n, "item"); got != tc.want {
			t.Errorf("count(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
