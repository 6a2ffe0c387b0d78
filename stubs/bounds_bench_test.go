package stubs_test

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/marketplace/marketplace/internal/teststore"
	"github.com/marketplace/marketplace/stubs"
)

// BenchmarkAnswer_Adversarial is the work of one request against the
// adversarial mappings, each alone, on each of the worst bodies: every one
// must stop at the bound.
func BenchmarkAnswer_Adversarial(b *testing.B) {
	for i, m := range adversarial {
		s := stubs.New(teststore.New(b))
		for range 20 {
			mustCreateTB(b, s, m)
		}
		for j, body := range adversarialBodies() {
			base := post(body)
			base.RawQuery = "q=" + strings.Repeat("a", 60000)
			base.Header = map[string][]string{"X-A": {strings.Repeat("a", 60000)}}
			b.Run(fmt.Sprintf("mapping%d/body%d", i, j), func(b *testing.B) {
				var work int64
				cpu := cpuTime()
				for b.Loop() {
					r := &stubs.Request{Method: base.Method, Path: base.Path, RawQuery: base.RawQuery, Header: base.Header, Body: base.Body}
					if _, _, err := s.Answer(context.Background(), r, false, nil); err != nil {
						b.Fatal(err)
					}
					work = r.Work()
				}
				used := cpuTime() - cpu
				b.ReportMetric(float64(work), "steps")
				b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/op")
				if work > 0 {
					b.ReportMetric(float64(used.Nanoseconds())/float64(b.N)/float64(work), "cpu-ns/step")
				}
			})
		}
	}
}

// cpuTime is the CPU time the process has used, which a machine shared
// with other work disturbs less than the time that passed.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
