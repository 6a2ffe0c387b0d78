package responsetime_test

import (
	"fmt"
	"math"
	"time"

	"testing"

	"pgregory.net/rapid"

	"github.com/marketplace/marketplace/questions"
	"github.com/marketplace/marketplace/responsetime"
)

// naiveFigures is the reference's answer: each figure in minutes (total,
// weekend, working hours, extra hours), the sales increases of the three
// periods (-1 for null), and the counted times of each, in minutes.
type naiveFigures struct {
	ok      bool
	figures figures
	sales   [3]int64
	counted [4][]float64
}

// naiveResponseTime is a deliberately plain reading of the rules: quadratic,
// floating point, no maps, each rule written out as the spec and
// docs/response-time.md state it.
func naiveResponseTime(samples []questions.Sample, now time.Time, loc *time.Location) naiveFigures {
	counts := func(s questions.Sample) bool {
		inWindow := !s.Asked.Before(now.Add(-14*24*time.Hour)) && !s.Asked.After(now)
		excluded := s.Status == "DELETED" || s.Status == "BANNED" || s.Status == "DISABLED" || s.Status == "UNDER_REVIEW"
		return inWindow && !excluded
	}
	var out naiveFigures
	for i, s := range samples {
		if !counts(s) {
			continue
		}
		first := true
		for j, o := range samples {
			if j == i || !counts(o) || o.BuyerID != s.BuyerID || o.ItemID != s.ItemID {
				continue
			}
			if o.Asked.Before(s.Asked) || (o.Asked.Equal(s.Asked) && o.QuestionID < s.QuestionID) {
				first = false
			}
		}
		if !first {
			continue
		}
		end := now
		if !s.Answered.IsZero() && !s.Answered.After(now) {
			end = s.Answered
		}
		secs := math.Floor(end.Sub(s.Asked).Seconds())
		secs = math.Max(0, math.Min(secs, 7*24*3600))
		minutes := secs / 60
		out.counted[0] = append(out.counted[0], minutes)
		local := s.Asked.In(loc)
		switch {
		case local.Weekday() == time.Saturday || local.Weekday() == time.Sunday:
			out.counted[1] = append(out.counted[1], minutes)
		case local.Hour() >= 9 && local.Hour() < 18:
			out.counted[2] = append(out.counted[2], minutes)
		case local.Hour() >= 18:
			out.counted[3] = append(out.counted[3], minutes)
		}
	}
	out.ok = len(out.counted[0]) > 0
	for p, values := range out.counted {
		if len(values) == 0 {
			continue
		}
		sum := 0.0
		for _, v := range values {
			// Each counted time is whole seconds: v*60 gives them back
			// only up to the float's error, which can tip a mean of
			// exactly half a minute below the rounding line.
			sum += math.Round(v * 60)
		}
		out.figures[p] = int64(math.Floor(sum/float64(60*len(values)) + 0.5))
	}
	for p := 1; p < 4; p++ {
		out.sales[p-1] = -1
		if m := out.figures[p]; m > 60 {
			out.sales[p-1] = int64(math.Min(50, 5*math.Ceil(float64(m-60)/60)))
		}
	}
	return out
}

func salesOf(rt responsetime.ResponseTime) [3]int64 {
	var out [3]int64
	for i, p := range []responsetime.Period{rt.Weekend, rt.WeekdaysWorkingHours, rt.WeekdaysExtraHours} {
		out[i] = -1
		if p.SalesPercentIncrease != nil {
			out[i] = *p.SalesPercentIncrease
		}
	}
	return out
}

var sampleStatuses = []string{"ANSWERED", "UNANSWERED", "CLOSED_UNANSWERED", "UNDER_REVIEW", "BANNED", "DELETED", "DISABLED"}

// drawSamples draws the questions of one seller around now: some after now,
// some before the window, few buyers and items so that repeated questions
// are common, and asking times on a coarse grid now and then so that ties
// occur.
func drawSamples(t *rapid.T, now time.Time) []questions.Sample {
	n := rapid.IntRange(0, 30).Draw(t, "questions")
	out := make([]questions.Sample, n)
	for i := range out {
		var back time.Duration
		if rapid.Bool().Draw(t, fmt.Sprintf("coarse%d", i)) {
			back = time.Duration(rapid.IntRange(-48, 16*48).Draw(t, fmt.Sprintf("halfHoursBack%d", i))) * 30 * time.Minute
		} else {
			back = time.Duration(rapid.Int64Range(-86400, 16*86400).Draw(t, fmt.Sprintf("secondsBack%d", i))) * time.Second
		}
		s := questions.Sample{
			QuestionID: int64(i + 1),
			SellerID:   1,
			BuyerID:    int64(rapid.IntRange(1, 3).Draw(t, fmt.Sprintf("buyer%d", i))),
			ItemID:     rapid.SampledFrom([]string{"MLA1", "MLA2"}).Draw(t, fmt.Sprintf("item%d", i)),
			Status:     rapid.SampledFrom(sampleStatuses).Draw(t, fmt.Sprintf("status%d", i)),
			Asked:      now.Add(-back),
		}
		if rapid.Bool().Draw(t, fmt.Sprintf("answered%d", i)) {
			// Whole-minute waits make means that end in exactly half a
			// minute, where the rounding rule shows.
			unit := rapid.SampledFrom([]time.Duration{time.Millisecond, time.Minute}).Draw(t, fmt.Sprintf("waitUnit%d", i))
			wait := time.Duration(rapid.Int64Range(0, int64(10*24*time.Hour/unit)).Draw(t, fmt.Sprintf("wait%d", i))) * unit
			s.Answered = s.Asked.Add(wait)
		}
		out[i] = s
	}
	return out
}

func TestResponseTime_MatchesNaiveReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		now := rtNow.Add(time.Duration(rapid.IntRange(0, 7*24*60).Draw(t, "nowMinutes")) * time.Minute)
		loc := rapid.SampledFrom([]*time.Location{ba, time.UTC, mustLoc("America/Mexico_City")}).Draw(t, "zone")
		samples := drawSamples(t, now)
		rt, ok := responsetime.Compute(1, samples, now, loc)
		want := naiveResponseTime(samples, now, loc)
		if ok != want.ok {
			t.Fatalf("ok = %v, reference %v", ok, want.ok)
		}
		if !ok {
			return
		}
		if figuresOf(rt) != want.figures {
			t.Fatalf("figures = %v, reference %v", figuresOf(rt), want.figures)
		}
		if salesOf(rt) != want.sales {
			t.Fatalf("sales increases = %v, reference %v", salesOf(rt), want.sales)
		}
	})
}

func TestResponseTime_EachFigureLiesBetweenTheSmallestAndLargestCountedTimes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		now := rtNow
		samples := drawSamples(t, now)
		rt, ok := responsetime.Compute(1, samples, now, ba)
		if !ok {
			t.Skip("no counted question")
		}
		ref := naiveResponseTime(samples, now, ba)
		got := figuresOf(rt)
		for p, values := range ref.counted {
			if len(values) == 0 {
				if got[p] != 0 {
					t.Fatalf("figure %d = %d for an empty period, want 0", p, got[p])
				}
				continue
			}
			lo, hi := values[0], values[0]
			for _, v := range values {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
			// Rounding is monotone, so the rounded mean lies between the
			// rounded extremes.
			if float64(got[p]) < math.Floor(lo+0.5) || float64(got[p]) > math.Floor(hi+0.5) {
				t.Fatalf("figure %d = %d outside [%v, %v]", p, got[p], lo, hi)
			}
		}
	})
}

func TestResponseTime_AnsweringAQuestionEarlierNeverRaisesAFigure(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		now := rtNow
		samples := drawSamples(t, now)
		if len(samples) == 0 {
			t.Skip("no question")
		}
		before, ok := responsetime.Compute(1, samples, now, ba)
		if !ok {
			t.Skip("no counted question")
		}
		k := rapid.IntRange(0, len(samples)-1).Draw(t, "question")
		s := samples[k]
		if s.Asked.After(now) {
			t.Skip("question asked after now")
		}
		end := now
		if !s.Answered.IsZero() && s.Answered.Before(now) {
			end = s.Answered
		}
		span := end.Sub(s.Asked)
		earlier := time.Duration(rapid.Float64Range(0, 1).Draw(t, "fraction") * float64(span))
		changed := append([]questions.Sample(nil), samples...)
		changed[k].Answered = s.Asked.Add(earlier)
		if changed[k].Status == "UNANSWERED" {
			changed[k].Status = "ANSWERED"
		}
		after, _ := responsetime.Compute(1, changed, now, ba)
		b, a := figuresOf(before), figuresOf(after)
		for p := range b {
			if a[p] > b[p] {
				t.Fatalf("answering question %d earlier raised figure %d from %d to %d", s.QuestionID, p, b[p], a[p])
			}
		}
	})
}

func TestResponseTime_SalesIncreaseIsNullExactlyWhenResponseTimeIsAtMost60(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rt, ok := responsetime.Compute(1, drawSamples(t, rtNow), rtNow, ba)
		if !ok {
			t.Skip("no counted question")
		}
		for name, p := range map[string]responsetime.Period{"weekend": rt.Weekend, "working": rt.WeekdaysWorkingHours, "extra": rt.WeekdaysExtraHours} {
			if (p.SalesPercentIncrease == nil) != (p.ResponseTime <= 60) {
				t.Fatalf("%s: response_time %d with sales_percent_increase %v", name, p.ResponseTime, p.SalesPercentIncrease)
			}
		}
	})
}
