package responsetime

import (
	"fmt"
	"time"
)

// The daily refresh runs at 03:00 in Buenos Aires (06:00 UTC; Argentina keeps
// no daylight saving time), which is between 00:00 and 03:00 in every site's
// zone: the quietest hours of all the sites, and one instant for all of them,
// so that every seller's figures come from the same calculation time.
const (
	RefreshHour = 3
	refreshZone = "America/Argentina/Buenos_Aires"
)

var refreshLoc = mustLoadLocation(refreshZone)

func mustLoadLocation(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(fmt.Sprintf("load %s: %v", name, err))
	}
	return loc
}

// LatestScheduledRefresh returns the latest scheduled refresh instant at or
// before t.
func LatestScheduledRefresh(t time.Time) time.Time {
	l := t.In(refreshLoc)
	s := time.Date(l.Year(), l.Month(), l.Day(), RefreshHour, 0, 0, 0, refreshLoc)
	if s.After(t) {
		s = time.Date(l.Year(), l.Month(), l.Day()-1, RefreshHour, 0, 0, 0, refreshLoc)
	}
	return s.UTC()
}

// NextScheduledRefresh returns the first scheduled refresh instant after t.
func NextScheduledRefresh(t time.Time) time.Time {
	s := LatestScheduledRefresh(t).In(refreshLoc)
	return time.Date(s.Year(), s.Month(), s.Day()+1, RefreshHour, 0, 0, 0, refreshLoc).UTC()
}
