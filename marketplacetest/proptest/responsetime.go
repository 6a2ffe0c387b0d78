package proptest

import (
	"time"
)

// Question is what the response-time model knows of a question: who
// asked about which item and when, and when it was answered (zero while
// unanswered). Only questions that count may be given: UNANSWERED,
// ANSWERED and CLOSED_UNANSWERED ones (docs/spec-decisions.md, "Response
// time and the manual clock": deleted, banned, disabled and under-review
// questions are left out).
type Question struct {
	ID       int64
	Buyer    int64
	Item     string
	Asked    time.Time
	Answered time.Time
}

// Figures are the response-time figures the model expects, in minutes.
// An Increase of nil is the JSON null of sales_percent_increase.
type Figures struct {
	Total                                    int64
	Weekend, WorkingHours, ExtraHours        int64
	WeekendIncrease                          *int64
	WorkingHoursIncrease, ExtraHoursIncrease *int64
}

// The constants of the specification's Limits table.
const (
	// Window is the response time window: the last 14 days of questions.
	Window = 14 * 24 * time.Hour
	// UnansweredCap is the cap of the time a question counts: 1 week.
	UnansweredCap = 7 * 24 * time.Hour
	// IncreaseThreshold is the response time (minutes) at or below which
	// sales_percent_increase is null.
	IncreaseThreshold = 60
)

// RefreshAt is the calculation time of the figures a read answers at now:
// the latest daily refresh at or before now. The specification says only
// that the data is refreshed once a day (Response time rules, 6); the
// marketplace refreshes at 03:00 in Buenos Aires, 06:00 UTC, for every
// site (docs/response-time.md, "The daily refresh"), and a scheduled
// refresh computes the figures as of its instant.
func RefreshAt(now time.Time) time.Time {
	u := now.UTC()
	r := time.Date(u.Year(), u.Month(), u.Day(), 6, 0, 0, 0, time.UTC)
	if r.After(u) {
		r = r.AddDate(0, 0, -1)
	}
	return r
}

// ResponseTimeAt computes the figures of a seller's questions as of the
// calculation time at, with the periods read in loc (the seller's site
// zone: America/Argentina/Buenos_Aires for MLA). ok is false when no
// question counts: the specification's 404 (Response time rules, 7).
//
// From the specification's "Response time rules" and "Limits":
//
//  1. values are minutes;
//  2. the last 14 days of questions, and only the first question a buyer
//     asked about an item;
//  3. an unanswered question counts as answered at the calculation time,
//     capped at 1 week;
//  4. total covers every question of the window, those from 00:00 to 09:00
//     on weekdays included, which belong to no period; the periods are
//     weekend, weekdays 09:00 to 18:00 and weekdays 18:00 to 24:00
//     ("Response time" resource);
//  5. sales_percent_increase only above 60 minutes, null otherwise.
//
// Where it is open, from docs/spec-decisions.md: the window is
// [at - 14 days, at], both ends included, of questions asked by at; the
// first question of a buyer about an item is the earliest in the window
// (ties: the lower id); the cap applies to late answers too; times are
// whole seconds and each figure is the mean rounded to the nearest minute,
// halves up; an empty period is 0 with a null increase; and the increase
// is 5 for each started hour beyond the first, at most 50.
func ResponseTimeAt(questions []Question, at time.Time, loc *time.Location) (f Figures, ok bool) {
	type key struct {
		buyer int64
		item  string
	}
	first := map[key]Question{}
	for _, q := range questions {
		if q.Asked.After(at) || q.Asked.Before(at.Add(-Window)) {
			continue
		}
		k := key{q.Buyer, q.Item}
		if f, seen := first[k]; seen && (f.Asked.Before(q.Asked) || (f.Asked.Equal(q.Asked) && f.ID < q.ID)) {
			continue
		}
		first[k] = q
	}
	if len(first) == 0 {
		return Figures{}, false
	}
	var sum, n [4]int64 // total, weekend, working hours, extra hours
	for _, q := range first {
		end := at
		if !q.Answered.IsZero() && !q.Answered.After(at) {
			end = q.Answered
		}
		d := min(end.Sub(q.Asked), UnansweredCap)
		secs := int64(d / time.Second)
		add := func(i int) { sum[i] += secs; n[i]++ }
		add(0)
		local := q.Asked.In(loc)
		switch wd, h := local.Weekday(), local.Hour(); {
		case wd == time.Saturday || wd == time.Sunday:
			add(1)
		case h >= 9 && h < 18:
			add(2)
		case h >= 18:
			add(3)
		}
	}
	minutes := func(i int) int64 {
		if n[i] == 0 {
			return 0
		}
		// sum/n seconds as minutes, halves up: floor(sum/(60n) + 1/2).
		return (sum[i] + 30*n[i]) / (60 * n[i])
	}
	f.Total, f.Weekend, f.WorkingHours, f.ExtraHours = minutes(0), minutes(1), minutes(2), minutes(3)
	f.WeekendIncrease = Increase(f.Weekend)
	f.WorkingHoursIncrease = Increase(f.WorkingHours)
	f.ExtraHoursIncrease = Increase(f.ExtraHours)
	return f, true
}

// Increase is the model's sales_percent_increase of a period whose
// response time is minutes: nil at or below IncreaseThreshold, else 5 for
// each started hour beyond the first, at most 50.
func Increase(minutes int64) *int64 {
	if minutes <= IncreaseThreshold {
		return nil
	}
	started := (minutes - IncreaseThreshold + 59) / 60
	v := min(5*started, 50)
	return &v
}
