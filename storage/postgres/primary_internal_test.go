package postgres

import "testing"

func TestPrimaryWatch_ALateConnectionToAReplacedPrimaryCountsNothing(t *testing.T) {
	var w primaryWatch
	w.reached("cluster/1") // the first connection: no failover
	w.reached("cluster/1")
	w.lost()
	w.reached("cluster/2") // the new primary
	if n, _ := w.counts(); n != 1 {
		t.Fatalf("%d failovers after one change of primary; want 1", n)
	}
	w.lost()
	// Made to the old primary before it went, reported after.
	w.reached("cluster/1")
	if n, _ := w.counts(); n != 1 {
		t.Fatalf("%d failovers after a late connection to the old primary; want still 1", n)
	}
	if !w.down.Load() {
		t.Fatal("a late connection to the old primary ended an outage")
	}
	w.reached("cluster/3")
	if n, _ := w.counts(); n != 2 || w.down.Load() {
		t.Fatalf("%d failovers, down %v after a third primary; want 2, up", n, w.down.Load())
	}
}

func TestPrimaryWatch_TheTimeWithoutAPrimaryOnlyGrows(t *testing.T) {
	var w primaryWatch
	w.reached("cluster/1")
	var last int64
	for range 3 {
		w.lost()
		_, during := w.counts()
		w.answered()
		_, after := w.counts()
		if int64(during) < last || after < during {
			t.Fatalf("without a primary: %v before, %v during an outage, %v after it; want a counter that only grows", last, during, after)
		}
		last = int64(after)
	}
	if last == 0 {
		t.Fatal("three outages counted no time")
	}
}
