package notify

import (
	"time"
)

// outboxCursor is where the loop reads the outbox from. Event numbers are
// drawn inside the change's transaction, so an event may commit a little
// after a later-numbered one: the cursor (floor) trails the highest number
// fanned out by outboxGrace, and a sweep reads from the start every
// sweepEvery. Reading from the start every time would walk over every event
// already fanned out and deleted but not yet compacted away (Badger keeps
// their tombstones), which cost more than the delivery itself.
type outboxCursor struct {
	floor       uint64    // reads start at this number
	seen        uint64    // the highest number fanned out
	candidate   uint64    // the next floor, once candidateAt is outboxGrace old
	candidateAt time.Time // real time
	resume      uint64    // after a full batch, the next read starts here
	sweep       bool      // the next read is a sweep
	sweptAt     time.Time // real time of the last sweep
	fullAt      time.Time // real time of the last sweep from the outbox's start
	// marks are the numbers seen at past sweeps (each the first number not
	// yet fanned out then), oldest first: a sweep starts at the newest one
	// at least sweepLag old.
	marks []outboxMark
}

type outboxMark struct {
	at   time.Time
	next uint64
}

// A sweep reads the outbox from the first number not yet fanned out
// sweepLag ago, not from its start: fanned-out events are deleted, and on
// Badger a deleted key stays until compaction while a read walks through
// every one of them, so a read from the start costs as much as the history
// of the outbox (a million events: most of a core). An event whose
// transaction commits more than sweepLag after a later-numbered one was
// fanned out is found by the sweep from the start, every fullSweepEvery.
const (
	sweepLag       = 10 * time.Second
	fullSweepEvery = 5 * time.Minute
)

// outboxGrace is how long, in real time, an event may take to commit after a
// later-numbered one was fanned out and still be read from the cursor; one
// that takes longer waits for the next sweep.
const outboxGrace = 100 * time.Millisecond

// start returns the number the next read of the outbox starts at. drawn,
// for a sweep, is a number just drawn from the outbox sequence (0 if none
// could be).
func (c *outboxCursor) start(real time.Time, drawn uint64) uint64 {
	if c.sweep {
		c.sweep, c.resume = false, 0
		return c.sweepStart(real, drawn)
	}
	if c.resume > 0 {
		from := c.resume
		c.resume = 0
		return from
	}
	if real.Sub(c.candidateAt) >= outboxGrace {
		c.floor, c.candidate, c.candidateAt = c.candidate, c.seen+1, real
	}
	return c.floor
}

// sweepStart returns where a sweep starts, and notes where the sweeps
// sweepLag later may start: the first number not yet fanned out, or drawn
// if that is higher (every event numbered below drawn was drawn before
// now). An event that commits within sweepLag of the fan-out of a
// later-numbered one, or of its number's drawing, is at or above the mark
// noted then.
func (c *outboxCursor) sweepStart(real time.Time, drawn uint64) uint64 {
	from := uint64(0)
	// The newest mark at least sweepLag old; the oldest one while none is.
	for len(c.marks) > 1 && real.Sub(c.marks[1].at) >= sweepLag {
		c.marks = c.marks[1:]
	}
	if len(c.marks) > 0 {
		from = c.marks[0].next
	}
	c.marks = append(c.marks, outboxMark{at: real, next: max(c.seen+1, drawn)})
	if drawn > 0 {
		// The reads between sweeps need not go below it either (a read from
		// number 1 of a store that fanned out a million events before this
		// process began walks all their tombstones): what commits below it
		// later is the sweeps' to find, as any late event.
		c.seen = max(c.seen, drawn-1)
	}
	if c.fullAt.IsZero() || real.Sub(c.fullAt) >= fullSweepEvery {
		c.fullAt = real
		return 0
	}
	return from
}

// saw notes that events up to number hi were fanned out.
func (c *outboxCursor) saw(hi uint64) { c.seen = max(c.seen, hi) }
