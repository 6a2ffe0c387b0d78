// Package responsetime keeps the sellers' response times to questions: the
// rules of the figure (Compute) and the daily refresh that stores every
// seller's figures (Service). It reads questions through SampleSource, which
// the questions service implements; questions knows nothing of it.
package responsetime

import (
	"time"

	"github.com/marketplace/marketplace/questions"
)

// Response time rules, as the spec's Limits table gives them.
const (
	// ResponseTimeWindow is how far back the questions of a response time
	// go: the last 14 days before the calculation.
	ResponseTimeWindow = 14 * 24 * time.Hour
	// ResponseTimeCap is the most one question can count: a week. It
	// applies to unanswered questions (the spec's rule) and also to late
	// answers, so that answering an old question never raises a figure.
	ResponseTimeCap = 7 * 24 * time.Hour
	// SalesIncreaseThreshold is the response time, in minutes, above which a
	// period carries a sales_percent_increase.
	SalesIncreaseThreshold = 60
)

// Question statuses that take a question out of the response time: it was
// removed by the seller or by moderation, or frozen for review, so it is no
// longer a question the seller can answer.
var responseTimeExcluded = map[string]bool{
	"DELETED":      true,
	"BANNED":       true,
	"DISABLED":     true,
	"UNDER_REVIEW": true,
}

// ResponseTime is a seller's response time, the spec's Response time object.
type ResponseTime struct {
	UserID               int64       `json:"user_id"`
	Total                TotalPeriod `json:"total"`
	Weekend              Period      `json:"weekend"`
	WeekdaysWorkingHours Period      `json:"weekdays_working_hours"`
	WeekdaysExtraHours   Period      `json:"weekdays_extra_hours"`
}

// TotalPeriod is the response time over every question of the window.
type TotalPeriod struct {
	// ResponseTime is the average, in minutes.
	ResponseTime int64 `json:"response_time"`
}

// Period is the response time over the questions asked in one part of the
// week. A period with no questions has response time 0.
type Period struct {
	// ResponseTime is the average, in minutes.
	ResponseTime int64 `json:"response_time"`
	// SalesPercentIncrease is the projected sales increase, in percent, if
	// the seller answered in under an hour; nil unless ResponseTime is above
	// SalesIncreaseThreshold.
	SalesPercentIncrease *int64 `json:"sales_percent_increase"`
}

// period numbers index the sums of Compute.
const (
	periodNone    = iota // Monday to Friday, 00:00 to 09:00: total only
	periodWeekend        // Saturday and Sunday, all day
	periodWorking        // Monday to Friday, 09:00 to 18:00
	periodExtra          // Monday to Friday, 18:00 to 24:00
	periodCount
)

// periodOf returns the period of a question asked at t, read in loc.
func periodOf(t time.Time, loc *time.Location) int {
	t = t.In(loc)
	switch wd := t.Weekday(); {
	case wd == time.Saturday || wd == time.Sunday:
		return periodWeekend
	case t.Hour() >= 18:
		return periodExtra
	case t.Hour() >= 9:
		return periodWorking
	default:
		return periodNone
	}
}

// buyerItem identifies a buyer's questions on one item.
type buyerItem struct {
	buyer int64
	item  string
}

// Compute computes sellerID's response time at now from the
// seller's questions; loc is the seller's site time zone, in which the
// periods are read. It reports false when no question counts (none in the
// window, or only excluded ones), which the API answers with a 404.
//
// A question counts when it was asked in [now-14 days, now], its status is
// not DELETED, BANNED, DISABLED or UNDER_REVIEW, and it is the first counted
// question its buyer asked about its item. It counts the time from asking to
// its answer, or to now when it has no answer by now, in whole seconds,
// capped at one week. Each figure is the mean in minutes, rounded to the
// nearest minute with halves up.
func Compute(sellerID int64, samples []questions.Sample, now time.Time, loc *time.Location) (ResponseTime, bool) {
	if loc == nil {
		loc = time.UTC
	}
	since := now.Add(-ResponseTimeWindow)
	// first maps each buyer and item to the index of its earliest counted
	// question; ties on the asking time go to the lower question id.
	first := make(map[buyerItem]int, len(samples))
	for i := range samples {
		s := &samples[i]
		if s.Asked.Before(since) || s.Asked.After(now) || responseTimeExcluded[s.Status] {
			continue
		}
		k := buyerItem{s.BuyerID, s.ItemID}
		j, seen := first[k]
		if !seen || s.Asked.Before(samples[j].Asked) ||
			(s.Asked.Equal(samples[j].Asked) && s.QuestionID < samples[j].QuestionID) {
			first[k] = i
		}
	}
	if len(first) == 0 {
		return ResponseTime{}, false
	}
	var sum, n [periodCount]int64
	for _, i := range first {
		s := &samples[i]
		secs := countedSeconds(*s, now)
		p := periodOf(s.Asked, loc)
		sum[p] += secs
		n[p]++
	}
	var all, count int64
	for p := range sum {
		all += sum[p]
		count += n[p]
	}
	return ResponseTime{
		UserID:               sellerID,
		Total:                TotalPeriod{ResponseTime: meanMinutes(all, count)},
		Weekend:              newPeriod(meanMinutes(sum[periodWeekend], n[periodWeekend])),
		WeekdaysWorkingHours: newPeriod(meanMinutes(sum[periodWorking], n[periodWorking])),
		WeekdaysExtraHours:   newPeriod(meanMinutes(sum[periodExtra], n[periodExtra])),
	}, true
}

// countedSeconds is the time question s counts at now, in whole seconds.
func countedSeconds(s questions.Sample, now time.Time) int64 {
	end := now
	if !s.Answered.IsZero() && !s.Answered.After(now) {
		end = s.Answered
	}
	d := end.Sub(s.Asked)
	if d < 0 {
		// An answer stamped before its question can only come from a
		// clock set by hand; it counts as immediate.
		d = 0
	}
	if d > ResponseTimeCap {
		d = ResponseTimeCap
	}
	return int64(d / time.Second)
}

// meanMinutes is sum seconds over n questions in minutes, rounded half up;
// 0 when n is 0. Integer arithmetic keeps it exact: round(x) =
// floor(x + 1/2) with x = sum / 60n.
func meanMinutes(sum, n int64) int64 {
	if n == 0 {
		return 0
	}
	return (2*sum + 60*n) / (120 * n)
}

func newPeriod(minutes int64) Period {
	return Period{ResponseTime: minutes, SalesPercentIncrease: SalesPercentIncrease(minutes)}
}

// SalesPercentIncrease is the projected sales increase, in percent, if a
// seller whose response time is minutes answered in under an hour: nil at
// or below SalesIncreaseThreshold, else 5 for each started hour beyond the
// first, at most 50. The spec gives no formula; this model is documented in
// docs/response-time.md and is monotone: a slower seller never sees a
// smaller projected increase.
func SalesPercentIncrease(minutes int64) *int64 {
	if minutes <= SalesIncreaseThreshold {
		return nil
	}
	hours := (minutes - SalesIncreaseThreshold + 59) / 60
	p := min(5*hours, 50)
	return &p
}
