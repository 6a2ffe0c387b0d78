package main

import (
	"testing"
	"time"
)

func TestResultPlus_RateAndCPUAreOverBothTurns(t *testing.T) {
	a := result{ok: 100, elapsed: time.Second, cpu: 300 * time.Microsecond, rate: 100}
	b := result{ok: 300, failed: 2, first: "POST /operator/orders: 400", elapsed: time.Second, cpu: 100 * time.Microsecond, rate: 300}
	sum := result{}.plus(a).plus(b)
	if sum.ok != 400 || sum.failed != 2 || sum.elapsed != 2*time.Second {
		t.Fatalf("sum %+v: want 400 ok, 2 failed over 2s", sum)
	}
	if sum.rate != 200 {
		t.Errorf("rate %.1f: want 400 requests over 2s, 200/s", sum.rate)
	}
	if sum.cpu != 150*time.Microsecond {
		t.Errorf("cpu %s: want (100×300µs + 300×100µs) / 400 = 150µs", sum.cpu)
	}
	if sum.first != b.first {
		t.Errorf("first failure %q: want the first turn's that failed, %q", sum.first, b.first)
	}
}
