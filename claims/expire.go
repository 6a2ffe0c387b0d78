package claims

import (
	"context"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/storage"
)

// expireBatch is how many due claims Expire lists at once; each is then
// changed in a transaction of its own, so that a sweep of many claims
// never conflicts with the players' changes as a whole.
const expireBatch = 100

// Expire writes the timed changes due by the clock's now (a respondent
// who let its mandatory message pass: the claim goes to dispute; a return
// left unreviewed: the buyer is refunded), with their notifications and
// their orders' changes, and returns how many claims it changed. Reads
// derive those changes anyway (so a claim never waits for Expire to say
// what it is), and the next change of a claim writes them; Expire is what
// makes them happen when nobody touches the claim: the engine should call
// it when a manual clock moves, and periodically on the wall clock. It
// reads only the claims due (an index by due date).
func (s *Service) Expire(ctx context.Context) (int, error) {
	now := s.clock.Now()
	end := keycodec.Key(duePrefix()).Int(now.UnixMilli() + 1)
	done := 0
	for {
		type due struct{ ms, id int64 }
		var batch []due
		err := s.store.View(ctx, func(tx storage.Tx) error {
			it := tx.Iterate(storage.Range{Start: duePrefix(), End: end})
			defer it.Close()
			for ; it.Valid() && len(batch) < expireBatch; it.Next() {
				rd := keycodec.Read(it.Key()[len(duePrefix()):])
				ms, id := rd.Int(), rd.Int()
				if err := rd.Err(); err != nil {
					return err
				}
				batch = append(batch, due{ms, id})
			}
			return nil
		})
		if err != nil || len(batch) == 0 {
			return done, err
		}
		for _, d := range batch {
			err := s.store.Update(ctx, func(tx storage.Tx) error {
				r, err := getRecord(tx, d.id)
				if errs.Is(err, errs.NotFound) {
					return tx.Delete(dueKey(d.ms, d.id))
				}
				if err != nil {
					return err
				}
				if err := s.apply(ctx, tx, &r, now, nil); err != nil {
					return err
				}
				// An entry the record no longer names (a change that
				// raced the sweep) goes too, so that the sweep ends.
				if r.DueMs != d.ms {
					return tx.Delete(dueKey(d.ms, d.id))
				}
				return nil
			})
			if err != nil {
				return done, err
			}
			done++
		}
	}
}

// anyDue reports, in tx, whether some claim has a timed change due by
// nowMs that Expire has not written.
func anyDue(tx storage.Tx, nowMs int64) bool {
	it := tx.Iterate(storage.Range{Start: duePrefix(), End: keycodec.Key(duePrefix()).Int(nowMs + 1)})
	defer it.Close()
	return it.Valid()
}
