package main

import "testing"

func TestQuietEnds_FirstAndLastMinutesUnderTheStealLimit(t *testing.T) {
	steals := func(ss ...float64) []soakMinute {
		ms := make([]soakMinute, len(ss))
		for i, s := range ss {
			ms[i].steal = s
		}
		return ms
	}
	for _, c := range []struct {
		name        string
		minutes     []soakMinute
		first, last int
		ok          bool
	}{
		{"every minute quiet", steals(0, 0.01, 0.02), 0, 2, true},
		{"noisy ends", steals(0.4, 0.01, 0.2, 0.03, 0.3), 1, 3, true},
		{"a limit's worth is noisy", steals(0.05, 0, 0, 0.05), 1, 2, true},
		{"one quiet minute", steals(0.3, 0.01, 0.3), 0, 0, false},
		{"none quiet", steals(0.3, 0.3), 0, 0, false},
	} {
		first, last, ok := quietEnds(c.minutes)
		if ok != c.ok || (ok && (first != c.first || last != c.last)) {
			t.Errorf("%s: got %d, %d, %v; want %d, %d, %v", c.name, first, last, ok, c.first, c.last, c.ok)
		}
	}
}
