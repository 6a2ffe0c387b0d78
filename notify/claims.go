package notify

import (
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
)

// appState is the delivery loop's state for one application, under
// Service.mu.
type appState struct {
	// from is where the next scan of the application's due index starts:
	// every due key below it has been claimed, or was written by another
	// process (found by the next sweep). A due key this process writes below
	// it moves it back (noteDue). nil: the start of the range.
	from []byte
	// lowered is the Service's lowered count when from last moved back.
	lowered uint64
	// ready holds claimed deliveries waiting for a POST slot, oldest first.
	ready []job
	// posting counts the POSTs in flight to the application.
	posting int
}

// job is a claimed delivery and its application, as read after the claim.
type job struct {
	d   Delivery
	app Application
	// fan is the fan-out that writes d, when d is POSTed before it
	// committed; nil when d was read from the store.
	fan *fanOutBatch
}

// readyRounds is how many rounds of POSTs (Options.PerApplication each) an
// application's ready queue holds; a claim reads its due index again once
// fewer than one round waits.
const readyRounds = 4

// appState returns id's state, creating it. s.mu must be held.
func (s *Service) appState(id int64) *appState {
	st := s.apps[id]
	if st == nil {
		st = &appState{}
		s.apps[id] = st
	}
	return st
}

// noteDue moves app's cursor back to key, a due key this process just
// committed, when the cursor is past it. s.mu must be held.
func (s *Service) noteDue(app int64, key []byte) {
	st := s.apps[app]
	if st == nil || st.from == nil || bytes.Compare(key, st.from) >= 0 {
		return
	}
	s.lowered++
	st.from, st.lowered = key, s.lowered
}

// resetCursors makes the next reads start at the start of the outbox and of
// every due index, as when a loop starts.
func (s *Service) resetCursors() {
	s.sweptAt = s.wall.Now()
	s.outbox = outboxCursor{sweep: true, sweptAt: s.sweptAt}
	s.resetDueCursors()
	s.appended.Store(true)
	s.refill.Store(true)
}

func (s *Service) resetDueCursors() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.apps {
		st.from = nil
	}
}

// dropReady gives up the claims of the deliveries still in ready queues,
// when a loop ends: they stay due.
func (s *Service) dropReady() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.apps {
		for _, j := range st.ready {
			delete(s.claimed, j.d.ID)
		}
		st.ready = nil
	}
}

type claimedID struct {
	app int64
	id  uint64
}

// claim claims the deliveries due at now of every application whose ready
// queue holds less than a round of POSTs, up to readyRounds rounds, and
// queues them. Each application's due deliveries are read from its own
// range, from its cursor, so that a busy application never hides the
// others' and a claim costs no more than what it finds.
func (s *Service) claim(ctx context.Context, now time.Time) error {
	s.mu.Lock()
	lowered := s.lowered
	s.mu.Unlock()
	var got []claimedID
	err := s.store.View(ctx, func(tx storage.Tx) error {
		got = got[:0]
		var apps []int64
		it := tx.Iterate(storage.Prefix(appPrefix()))
		for ; it.Valid(); it.Next() {
			apps = append(apps, keycodec.Read(it.Key()[len(appPrefix()):]).Int())
		}
		it.Close()
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, app := range apps {
			st := s.appState(app)
			if len(st.ready) >= s.opts.PerApplication {
				continue
			}
			room := readyRounds*s.opts.PerApplication - len(st.ready)
			p := appDuePrefix(app)
			start, end := p, dueKeyBefore(app, now)
			if st.from != nil && bytes.Compare(st.from, start) > 0 {
				start = st.from
			}
			if bytes.Compare(start, end) >= 0 {
				continue
			}
			it := tx.Iterate(storage.Range{Start: start, End: end})
			var last []byte
			ended := true
			for ; it.Valid(); it.Next() {
				if room == 0 {
					ended = false
					break
				}
				k := it.Key()
				last = append(last[:0], k...)
				kr := keycodec.Read(k[len(p):])
				kr.Int()
				id := kr.Uint()
				if kr.Err() != nil || s.claimed[id] {
					continue
				}
				s.claimed[id] = true
				room--
				got = append(got, claimedID{app: app, id: id})
			}
			it.Close()
			if st.lowered > lowered {
				// Moved back to a key committed after this snapshot was
				// taken: the next scan starts there.
				continue
			}
			if ended {
				st.from = end
			} else if last != nil {
				st.from = append(last, 0)
			}
		}
		return nil
	})
	if err != nil {
		s.unclaim(got)
		return err
	}
	if len(got) == 0 {
		return nil
	}
	// Read the claimed deliveries in a snapshot taken after the claim: one
	// whose outcome was recorded after the scan's snapshot (a stale due key)
	// shows its new state here, and is not sent early.
	jobs := make([]job, 0, len(got))
	var drop []claimedID
	err = s.store.View(ctx, func(tx storage.Tx) error {
		jobs, drop = jobs[:0], drop[:0]
		apps := map[int64]Application{}
		for _, g := range got {
			var d Delivery
			err := kv.GetJSON(tx, deliveryKey(g.id), &d)
			if errors.Is(err, storage.ErrNotFound) || (err == nil && (d.State != StatePending || d.NextAttempt.After(now))) {
				drop = append(drop, g)
				continue
			}
			if err != nil {
				return err
			}
			app, ok := apps[g.app]
			if !ok {
				if app, err = getApp(tx, g.app); err != nil {
					return err
				}
				apps[g.app] = app
			}
			jobs = append(jobs, job{d: d, app: app})
		}
		return nil
	})
	if err != nil {
		s.unclaim(got)
		return err
	}
	s.unclaim(drop)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, j := range jobs {
		st := s.appState(j.app.ID)
		st.ready = append(st.ready, j)
	}
	return nil
}

// queueEarly claims and queues the deliveries of a fan-out about to commit
// whose notification id derives from their event, as far as their
// application's ready queue has room; the others are claimed from the due
// index once it has committed. It reports whether it queued any.
func (s *Service) queueEarly(plan []planned, fan *fanOutBatch) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stop == nil {
		// Process fans out and claims in turn: nothing to gain.
		return false
	}
	queued := false
	for _, p := range plan {
		if p.d.Event.ID == "" {
			continue
		}
		st := s.appState(p.app.ID)
		if len(st.ready) >= readyRounds*s.opts.PerApplication {
			continue
		}
		s.claimed[p.d.ID] = true
		st.ready = append(st.ready, job{d: p.d, app: p.app, fan: fan})
		queued = true
	}
	return queued
}

// unclaim gives up claims made by claim before their delivery was queued.
func (s *Service) unclaim(cs []claimedID) {
	if len(cs) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range cs {
		delete(s.claimed, c.id)
	}
}

// start starts a POST for each queued delivery that has a free slot, within
// the global and the per-application bounds, and returns how many it
// started. Applications are served in the map's random order, so that none
// takes the global slots first every time.
func (s *Service) start(ctx context.Context, rec *recorder) int {
	var jobs []job
	s.mu.Lock()
	for _, st := range s.apps {
		for len(st.ready) > 0 && st.posting < s.opts.PerApplication && s.posting < s.opts.Concurrency {
			j := st.ready[0]
			st.ready[0] = job{}
			st.ready = st.ready[1:]
			if j.fan.failed() {
				// The event is still in the outbox.
				delete(s.claimed, j.d.ID)
				continue
			}
			jobs = append(jobs, j)
			st.posting++
			s.posting++
		}
	}
	s.mu.Unlock()
	for _, j := range jobs {
		s.workers.Add(1)
		go func() {
			defer s.workers.Done()
			o, ok := s.send(ctx, j)
			if ok {
				rec.in <- o
			}
			s.mu.Lock()
			st := s.apps[j.app.ID]
			st.posting--
			s.posting--
			if !ok {
				delete(s.claimed, j.d.ID)
			}
			low := len(st.ready) < s.opts.PerApplication
			s.mu.Unlock()
			if low {
				s.Wake()
			} else {
				s.wakeStart()
			}
		}()
	}
	return len(jobs)
}
