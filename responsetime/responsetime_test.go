package responsetime_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/questions"
	"github.com/marketplace/marketplace/responsetime"
)

var ba = mustLoc("America/Argentina/Buenos_Aires")

func mustLoc(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

// baTime is a time in Buenos Aires in 2026. 2 March 2026 is a Monday and 28
// February a Saturday.
func baTime(month time.Month, day, hour, minute int) time.Time {
	return time.Date(2026, month, day, hour, minute, 0, 0, ba)
}

// rtNow is the calculation time of the rule tests: Wednesday 4 March 2026,
// 12:00 in Buenos Aires.
var rtNow = baTime(time.March, 4, 12, 0)

// sample is a question by buyer on item asked at asked and answered after
// wait (0: unanswered).
func sample(id, buyer int64, item string, asked time.Time, wait time.Duration) questions.Sample {
	s := questions.Sample{QuestionID: id, SellerID: 1, BuyerID: buyer, ItemID: item, Status: "UNANSWERED", Asked: asked}
	if wait > 0 {
		s.Status = "ANSWERED"
		s.Answered = asked.Add(wait)
	}
	return s
}

// figures is (total, weekend, working hours, extra hours) in minutes.
type figures [4]int64

func figuresOf(rt responsetime.ResponseTime) figures {
	return figures{rt.Total.ResponseTime, rt.Weekend.ResponseTime, rt.WeekdaysWorkingHours.ResponseTime, rt.WeekdaysExtraHours.ResponseTime}
}

func mustCompute(t *testing.T, samples []questions.Sample, now time.Time) responsetime.ResponseTime {
	t.Helper()
	rt, ok := responsetime.Compute(1, samples, now, ba)
	if !ok {
		t.Fatalf("no response time for %d samples", len(samples))
	}
	if rt.UserID != 1 {
		t.Fatalf("user_id = %d, want 1", rt.UserID)
	}
	return rt
}

func TestResponseTime_SaturdayQuestionAnswered45MinutesLaterCountsInWeekend(t *testing.T) {
	is := is.New(t)
	rt := mustCompute(t, []questions.Sample{
		sample(1, 10, "MLA1", baTime(time.February, 28, 10, 0), 45*time.Minute),
	}, rtNow)
	is.Equal(figuresOf(rt), figures{45, 45, 0, 0})
	is.Equal(rt.Weekend.SalesPercentIncrease, nil) // 45 is not above 60
}

func TestResponseTime_UnansweredQuestionCountsUntilNowAndOneDayMoreNextDay(t *testing.T) {
	is := is.New(t)
	// Asked Saturday 28 February 12:00, four days before rtNow.
	s := []questions.Sample{sample(1, 10, "MLA1", baTime(time.February, 28, 12, 0), 0)}
	is.Equal(figuresOf(mustCompute(t, s, rtNow)), figures{4 * 1440, 4 * 1440, 0, 0})
	is.Equal(figuresOf(mustCompute(t, s, rtNow.Add(24*time.Hour))), figures{5 * 1440, 5 * 1440, 0, 0})
}

func TestResponseTime_UnansweredQuestionIsCappedAtOneWeek(t *testing.T) {
	is := is.New(t)
	// Asked Monday 23 February 12:00 (working hours), nine days before rtNow.
	s := []questions.Sample{sample(1, 10, "MLA1", baTime(time.February, 23, 12, 0), 0)}
	is.Equal(figuresOf(mustCompute(t, s, rtNow)), figures{10080, 0, 10080, 0})
	// Exactly one week counts one week; a day later still one week.
	s = []questions.Sample{sample(1, 10, "MLA1", baTime(time.February, 25, 12, 0), 0)}
	is.Equal(figuresOf(mustCompute(t, s, rtNow)), figures{10080, 0, 10080, 0})
	is.Equal(figuresOf(mustCompute(t, s, rtNow.Add(24*time.Hour))), figures{10080, 0, 10080, 0})
}

func TestResponseTime_LateAnswerIsCappedAtOneWeekLikeAnUnansweredQuestion(t *testing.T) {
	is := is.New(t)
	asked := baTime(time.February, 20, 12, 0) // Friday, working hours
	answered := []questions.Sample{sample(1, 10, "MLA1", asked, 9*24*time.Hour)}
	open := []questions.Sample{sample(1, 10, "MLA1", asked, 0)}
	is.Equal(figuresOf(mustCompute(t, answered, rtNow)), figures{10080, 0, 10080, 0})
	is.Equal(figuresOf(mustCompute(t, answered, rtNow)), figuresOf(mustCompute(t, open, rtNow)))
}

func TestResponseTime_BuyersSecondQuestionOnSameItemIsIgnored(t *testing.T) {
	is := is.New(t)
	monday := baTime(time.March, 2, 10, 0)
	rt := mustCompute(t, []questions.Sample{
		sample(2, 10, "MLA1", monday.Add(time.Hour), 100*time.Minute), // second question: ignored
		sample(1, 10, "MLA1", monday, 10*time.Minute),                 // first question of buyer 10 on MLA1
		sample(3, 10, "MLA2", monday, 20*time.Minute),                 // same buyer, other item: counts
		sample(4, 11, "MLA1", monday, 30*time.Minute),                 // other buyer, same item: counts
	}, rtNow)
	is.Equal(figuresOf(rt), figures{20, 0, 20, 0}) // (10 + 20 + 30) / 3
}

func TestResponseTime_FirstQuestionTieOnAskingTimeGoesToLowerQuestionID(t *testing.T) {
	is := is.New(t)
	monday := baTime(time.March, 2, 10, 0)
	rt := mustCompute(t, []questions.Sample{
		sample(9, 10, "MLA1", monday, 100*time.Minute),
		sample(8, 10, "MLA1", monday, 10*time.Minute),
	}, rtNow)
	is.Equal(figuresOf(rt), figures{10, 0, 10, 0})
}

func TestResponseTime_OnlyQuestionsOfTheLast14DaysCount(t *testing.T) {
	is := is.New(t)
	edge := rtNow.Add(-14 * 24 * time.Hour) // Wednesday 18 February 12:00
	inside := sample(1, 10, "MLA1", edge, 30*time.Minute)
	outside := sample(2, 11, "MLA1", edge.Add(-time.Second), 90*time.Minute)
	is.Equal(figuresOf(mustCompute(t, []questions.Sample{inside, outside}, rtNow)), figures{30, 0, 30, 0})
	_, ok := responsetime.Compute(1, []questions.Sample{outside}, rtNow, ba)
	is.True(!ok) // a seller with questions only before the window has no response time
}

func TestResponseTime_WindowBoundaryLetsAnOlderFirstQuestionFallOut(t *testing.T) {
	is := is.New(t)
	// The buyer's first question on the item is older than the window; the
	// second one, inside the window, is the first the window holds.
	edge := rtNow.Add(-14 * 24 * time.Hour)
	rt := mustCompute(t, []questions.Sample{
		sample(1, 10, "MLA1", edge.Add(-time.Hour), 10*time.Minute),
		sample(2, 10, "MLA1", edge.Add(time.Hour), 40*time.Minute),
	}, rtNow)
	is.Equal(figuresOf(rt), figures{40, 0, 40, 0})
}

func TestResponseTime_TuesdayThreeAMQuestionCountsInTotalOnly(t *testing.T) {
	is := is.New(t)
	rt := mustCompute(t, []questions.Sample{
		sample(1, 10, "MLA1", baTime(time.March, 3, 3, 0), 30*time.Minute),  // Tuesday 03:00
		sample(2, 11, "MLA1", baTime(time.March, 3, 10, 0), 90*time.Minute), // Tuesday 10:00
	}, rtNow)
	is.Equal(figuresOf(rt), figures{60, 0, 90, 0})
	is.Equal(*rt.WeekdaysWorkingHours.SalesPercentIncrease, int64(5))
}

func TestResponseTime_PeriodsAreReadInTheSellersSiteTimeZone(t *testing.T) {
	is := is.New(t)
	// 11:00 UTC on a Wednesday is 08:00 in Buenos Aires (no period) and
	// 11:00 in UTC (working hours).
	asked := time.Date(2026, 3, 4, 11, 0, 0, 0, time.UTC)
	s := []questions.Sample{sample(1, 10, "MLA1", asked, 20*time.Minute)}
	inBA, _ := responsetime.Compute(1, s, rtNow, ba)
	inUTC, _ := responsetime.Compute(1, s, rtNow, time.UTC)
	is.Equal(figuresOf(inBA), figures{20, 0, 0, 0})
	is.Equal(figuresOf(inUTC), figures{20, 0, 20, 0})
}

func TestResponseTime_PeriodBoundaries(t *testing.T) {
	sec := time.Second
	cases := []struct {
		name  string
		asked time.Time
		want  figures // a 10-minute answer
	}{
		{"Monday 00:00 is no period", baTime(time.March, 2, 0, 0), figures{10, 0, 0, 0}},
		{"Monday 08:59:59 is no period", baTime(time.March, 2, 9, 0).Add(-sec), figures{10, 0, 0, 0}},
		{"Monday 09:00 is working hours", baTime(time.March, 2, 9, 0), figures{10, 0, 10, 0}},
		{"Monday 17:59:59 is working hours", baTime(time.March, 2, 18, 0).Add(-sec), figures{10, 0, 10, 0}},
		{"Monday 18:00 is extra hours", baTime(time.March, 2, 18, 0), figures{10, 0, 0, 10}},
		{"Friday 23:59:59 is extra hours", baTime(time.February, 28, 0, 0).Add(-sec), figures{10, 0, 0, 10}},
		{"Saturday 00:00 is weekend", baTime(time.February, 28, 0, 0), figures{10, 10, 0, 0}},
		{"Sunday 12:00 is weekend", baTime(time.March, 1, 12, 0), figures{10, 10, 0, 0}},
		{"Sunday 23:59:59 is weekend", baTime(time.March, 2, 0, 0).Add(-sec), figures{10, 10, 0, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rt := mustCompute(t, []questions.Sample{sample(1, 10, "MLA1", c.asked, 10*time.Minute)}, rtNow)
			if got := figuresOf(rt); got != c.want {
				t.Fatalf("figures = %v, want %v", got, c.want)
			}
		})
	}
}

func TestResponseTime_PeriodAtExactly60MinutesHasNullSalesIncrease(t *testing.T) {
	is := is.New(t)
	sat := baTime(time.February, 28, 10, 0)
	rt := mustCompute(t, []questions.Sample{sample(1, 10, "MLA1", sat, 60*time.Minute)}, rtNow)
	is.Equal(rt.Weekend.ResponseTime, int64(60))
	is.Equal(rt.Weekend.SalesPercentIncrease, nil)
	rt = mustCompute(t, []questions.Sample{sample(1, 10, "MLA1", sat, 61*time.Minute)}, rtNow)
	is.Equal(rt.Weekend.ResponseTime, int64(61))
	is.Equal(*rt.Weekend.SalesPercentIncrease, int64(5))
}

func TestResponseTime_EmptyPeriodShowsZeroAndNullSalesIncrease(t *testing.T) {
	is := is.New(t)
	rt := mustCompute(t, []questions.Sample{sample(1, 10, "MLA1", baTime(time.February, 28, 10, 0), 3*time.Hour)}, rtNow)
	b, err := json.Marshal(rt)
	is.NoErr(err)
	is.Equal(string(b), `{"user_id":1,"total":{"response_time":180},`+
		`"weekend":{"response_time":180,"sales_percent_increase":10},`+
		`"weekdays_working_hours":{"response_time":0,"sales_percent_increase":null},`+
		`"weekdays_extra_hours":{"response_time":0,"sales_percent_increase":null}}`)
}

func TestResponseTime_FiguresAreRoundedToTheNearestMinuteHalvesUp(t *testing.T) {
	cases := []struct {
		name  string
		waits []time.Duration
		want  int64
	}{
		{"89 seconds is 1 minute", []time.Duration{89 * time.Second}, 1},
		{"90 seconds is 2 minutes", []time.Duration{90 * time.Second}, 2},
		{"mean of 1 and 2 minutes is 2", []time.Duration{time.Minute, 2 * time.Minute}, 2},
		{"mean of 1, 1 and 2 minutes is 1", []time.Duration{time.Minute, time.Minute, 2 * time.Minute}, 1},
		{"sub-second parts are dropped", []time.Duration{90*time.Second - time.Millisecond}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var s []questions.Sample
			for i, w := range c.waits {
				s = append(s, sample(int64(i+1), int64(10+i), "MLA1", baTime(time.March, 2, 10, 0), w))
			}
			if got := mustCompute(t, s, rtNow).Total.ResponseTime; got != c.want {
				t.Fatalf("total = %d, want %d", got, c.want)
			}
		})
	}
}

func TestResponseTime_DeletedBannedDisabledAndUnderReviewQuestionsDoNotCount(t *testing.T) {
	is := is.New(t)
	monday := baTime(time.March, 2, 10, 0)
	for _, status := range []string{"DELETED", "BANNED", "DISABLED", "UNDER_REVIEW"} {
		excluded := sample(1, 10, "MLA1", monday, 0)
		excluded.Status = status
		_, ok := responsetime.Compute(1, []questions.Sample{excluded}, rtNow, ba)
		is.True(!ok) // only an excluded question: no response time
		// The buyer's next question on the item is then the first that counts.
		second := sample(2, 10, "MLA1", monday.Add(time.Hour), 25*time.Minute)
		is.Equal(figuresOf(mustCompute(t, []questions.Sample{excluded, second}, rtNow)), figures{25, 0, 25, 0})
	}
	for _, status := range []string{"ANSWERED", "UNANSWERED", "CLOSED_UNANSWERED"} {
		s := sample(1, 10, "MLA1", monday, 0)
		s.Status = status
		is.Equal(mustCompute(t, []questions.Sample{s}, rtNow).Total.ResponseTime, int64(2*1440+120)) // Monday 10:00 to Wednesday 12:00
	}
}

func TestResponseTime_AnswerAfterTheCalculationTimeCountsAsUnanswered(t *testing.T) {
	is := is.New(t)
	s := sample(1, 10, "MLA1", rtNow.Add(-2*time.Hour), 5*time.Hour)
	is.Equal(mustCompute(t, []questions.Sample{s}, rtNow).Total.ResponseTime, int64(120))
}

func TestResponseTime_QuestionAskedAfterTheCalculationTimeDoesNotCount(t *testing.T) {
	is := is.New(t)
	_, ok := responsetime.Compute(1, []questions.Sample{sample(1, 10, "MLA1", rtNow.Add(time.Second), time.Minute)}, rtNow, ba)
	is.True(!ok)
}

func TestResponseTime_NoQuestionsMeansNoResponseTime(t *testing.T) {
	_, ok := responsetime.Compute(1, nil, rtNow, ba)
	if ok {
		t.Fatal("a seller without questions has a response time")
	}
}

func TestSalesPercentIncrease_ModelIsFivePercentPerStartedHourAboveTheFirstUpTo50(t *testing.T) {
	cases := []struct {
		minutes int64
		want    int64 // -1: null
	}{
		{0, -1}, {59, -1}, {60, -1}, {61, 5}, {120, 5}, {121, 10}, {180, 10}, {181, 15},
		{600, 45}, {601, 50}, {660, 50}, {10080, 50},
	}
	for _, c := range cases {
		got := responsetime.SalesPercentIncrease(c.minutes)
		switch {
		case c.want < 0 && got != nil:
			t.Errorf("SalesPercentIncrease(%d) = %d, want null", c.minutes, *got)
		case c.want >= 0 && (got == nil || *got != c.want):
			t.Errorf("SalesPercentIncrease(%d) = %v, want %d", c.minutes, got, c.want)
		}
	}
}

func TestSalesPercentIncrease_IsMonotoneAndNullExactlyUpTo60(t *testing.T) {
	prev := int64(0)
	for m := int64(0); m <= 10080; m++ {
		p := responsetime.SalesPercentIncrease(m)
		if (p == nil) != (m <= 60) {
			t.Fatalf("SalesPercentIncrease(%d) = %v: null must be exactly m <= 60", m, p)
		}
		if p != nil {
			if *p < prev || *p <= 0 {
				t.Fatalf("SalesPercentIncrease(%d) = %d after %d: not monotone and positive", m, *p, prev)
			}
			prev = *p
		}
	}
}
