package marketplace

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"
	"unicode/utf8"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/internal/refimport"
	"github.com/marketplace/marketplace/storage"
)

// keptPrefixes are the namespaces that a reset and a restore leave as they
// are: reference data (catalog, fees, geography and their imports), the
// store's own keys (schema version, sequences, leases, the shared manual
// clock) and the snapshots. Every other key is the marketplace's state, so
// that a namespace added later is state unless it is listed here. Sorted.
var keptPrefixes = []string{"cat/", "fees/", "geo/", "ref/", "snap/", "sys/"}

// keptSequences are the sequences of reference data, which a reset and a
// restore leave where they are.
var keptSequences = []string{refimport.Sequence}

// stateRanges returns the key ranges of the state: everything between the
// kept prefixes.
func stateRanges() []storage.Range {
	var out []storage.Range
	var start []byte
	for _, p := range keptPrefixes {
		out = append(out, storage.Range{Start: start, End: []byte(p)})
		start = storage.PrefixEnd([]byte(p))
	}
	return append(out, storage.Range{Start: start})
}

// Snapshot describes a saved copy of the marketplace's state.
type Snapshot struct {
	ID      int64     `json:"id"`
	Name    string    `json:"name"`
	Created time.Time `json:"created"`
}

// snapshotRecord is a snapshot's metadata as stored, written after its data
// so that a snapshot cut short by a crash is never listed.
type snapshotRecord struct {
	Snapshot
	Sequences map[string]uint64 `json:"sequences"`
}

// Key layout of the snapshots:
//
//	snap/last                  -> the last snapshot id (uint64)
//	snap/meta/<id>             -> snapshotRecord (JSON)
//	snap/data/<id><state key>  -> the state key's value at the snapshot
func snapshotLastKey() []byte            { return keycodec.New("snap/last") }
func snapshotMetaPrefix() []byte         { return keycodec.New("snap/meta") }
func snapshotMetaKey(id int64) []byte    { return keycodec.Key(snapshotMetaPrefix()).Int(id) }
func snapshotDataPrefix(id int64) []byte { return keycodec.New("snap/data").Int(id) }

// MaxSnapshotName bounds a snapshot's name, in characters.
const MaxSnapshotName = 200

// ResetOptions configure Reset.
type ResetOptions struct {
	// Demo recreates the demo accounts (EnsureDemo) after the reset.
	Demo bool
	// Clock, when not zero, sets the engine's manual clock to this time,
	// earlier or later, as part of the reset: a replayed case then starts
	// at the same instant every time. A manual clock otherwise never moves
	// back; here it may, because the state that remembers times (the
	// latest refresh, retries, expiries, questions and answers) is cleared
	// in the same hold, so nothing is left that saw the later time. A
	// later time is a forward move like any other, made once the state is
	// in place (what it crosses runs).
	Clock time.Time
}

// Enter holds the engine's state still until the returned function is
// called: Reset, the restore of a snapshot and the other replacements of
// the state wait for every holder to leave, and holders that enter
// meanwhile wait for them to end, so that everything between Enter and its
// leave sees either the state before or the state after, never a mix. The
// HTTP server enters for every request. The services take the gate
// themselves for each of their transactions, so an embedder needs Enter
// only to see one state over several transactions (a read, then another,
// or a call that opens several). Enter costs an atomic operation. Never
// call Reset, CreateSnapshot, RestoreSnapshot, DeleteSnapshot or
// LoadFixtures while holding it, nor Enter again.
func (m *Marketplace) Enter() (leave func()) {
	m.gate.enterHolder()
	return m.gate.leaveHolderFunc()
}

// OnStateReplaced registers fn to run after every Reset and restore, once
// the new state is in place and before any request sees it: for caches of
// stored state kept in memory.
func (m *Marketplace) OnStateReplaced(fn func(ctx context.Context)) {
	m.hookMu.Lock()
	defer m.hookMu.Unlock()
	m.replacedHooks = append(m.replacedHooks, fn)
}

// replaceState runs replace with every request held out and the
// background delivery of notifications stopped, then the hooks, then
// starts the delivery again: no notification of the state replaced is
// sent afterwards, since its deliveries are gone with it.
func (m *Marketplace) replaceState(ctx context.Context, replace func(context.Context) error) error {
	// Paused first: the delivery loop records its last deliveries through
	// the services, which the gate would hold.
	resume := m.pauseBackground()
	defer resume()
	ctx = m.gate.lock(ctx)
	defer m.gate.unlock()
	if err := replace(ctx); err != nil {
		return err
	}
	m.hookMu.Lock()
	hooks := slices.Clone(m.replacedHooks)
	m.hookMu.Unlock()
	for _, h := range hooks {
		h(ctx)
	}
	return nil
}

// clearState deletes every state key and sets the sequences of the state
// to next (the sequences of reference data stay where they are).
func (m *Marketplace) clearState(ctx context.Context, next map[string]uint64) error {
	current, err := storage.SequenceStates(ctx, m.store)
	if err != nil {
		return fmt.Errorf("read sequences: %w", err)
	}
	rewind := map[string]uint64{}
	for name, n := range next {
		rewind[name] = n
	}
	for _, name := range keptSequences {
		delete(rewind, name)
		if n, ok := current[name]; ok {
			rewind[name] = n
		}
	}
	for _, r := range stateRanges() {
		if err := kv.DeleteRange(ctx, m.store, r); err != nil {
			return fmt.Errorf("delete state: %w", err)
		}
	}
	if err := storage.RewindSequences(ctx, m.store, rewind); err != nil {
		return fmt.Errorf("rewind sequences: %w", err)
	}
	return nil
}

// Reset removes every user, token, store, item, question, blacklist,
// application, delivery and whatever else is state, and starts every id
// sequence again from its first value; reference data, the clock and the
// snapshots stay. With opts.Demo the demo accounts are created again;
// with opts.Clock the manual clock is set to that time.
// Errors: Conflict when opts.Clock is set on an engine whose clock is not
// manual, or moves it back on a store that other engines use (their
// clocks would stay ahead); the storage's.
func (m *Marketplace) Reset(ctx context.Context, opts ResetOptions) error {
	if !opts.Clock.IsZero() {
		if err := m.checkClockReset(opts.Clock); err != nil {
			return err
		}
	}
	err := m.replaceState(ctx, func(ctx context.Context) error {
		if err := m.clearState(ctx, nil); err != nil {
			return err
		}
		if !opts.Clock.IsZero() {
			if err := m.rewindClock(ctx, opts.Clock); err != nil {
				return err
			}
		}
		if opts.Demo {
			_, err := m.EnsureDemo(ctx)
			return err
		}
		return nil
	})
	if err != nil {
		return errs.Internalf(err, "Reset failed")
	}
	if !opts.Clock.IsZero() {
		return m.forwardClock(opts.Clock)
	}
	return nil
}

// CreateSnapshot saves a copy of the whole state (every record, token and
// version, the pending notifications and the position of every id
// sequence) under name, which may be empty. The snapshot is stored with the
// data, so it survives a Reset and, on Badger and PostgreSQL, a restart.
// Errors: Invalid for a name longer than MaxSnapshotName characters or not
// UTF-8; the storage's.
func (m *Marketplace) CreateSnapshot(ctx context.Context, name string) (Snapshot, error) {
	if !utf8.ValidString(name) || utf8.RuneCountInString(name) > MaxSnapshotName {
		return Snapshot{}, errs.Invalidf("Invalid name: it must be UTF-8 text of at most %d characters", MaxSnapshotName)
	}
	var snap Snapshot
	// Nothing is replaced, but the copy must be of one moment: the same
	// gate keeps writers out while it is read.
	err := m.replaceStateQuiet(ctx, func(ctx context.Context) error {
		var id int64
		err := m.store.Update(ctx, func(tx storage.Tx) error {
			b, err := tx.Get(snapshotLastKey())
			switch {
			case errors.Is(err, storage.ErrNotFound):
				id = 1
			case err != nil:
				return err
			case len(b) != 8:
				return fmt.Errorf("snapshot counter: corrupt")
			default:
				id = int64(binary.BigEndian.Uint64(b)) + 1
			}
			return tx.Set(snapshotLastKey(), binary.BigEndian.AppendUint64(nil, uint64(id)))
		})
		if err != nil {
			return err
		}
		seqs, err := m.copyState(ctx, id)
		if err != nil {
			return err
		}
		snap = Snapshot{ID: id, Name: name, Created: m.Clock.Now().UTC()}
		rec, err := json.Marshal(snapshotRecord{Snapshot: snap, Sequences: seqs})
		if err != nil {
			return err
		}
		return m.store.Update(ctx, func(tx storage.Tx) error { return tx.Set(snapshotMetaKey(id), rec) })
	})
	if err != nil {
		return Snapshot{}, errs.Internalf(err, "Snapshot failed")
	}
	return snap, nil
}

// replaceStateQuiet holds requests and background work out like
// replaceState, without running the hooks.
func (m *Marketplace) replaceStateQuiet(ctx context.Context, fn func(context.Context) error) error {
	resume := m.pauseBackground()
	defer resume()
	ctx = m.gate.lock(ctx)
	defer m.gate.unlock()
	return fn(ctx)
}

// Snapshots lists the snapshots, oldest first. Errors: the storage's.
func (m *Marketplace) Snapshots(ctx context.Context) ([]Snapshot, error) {
	out := []Snapshot{}
	err := m.store.View(ctx, func(tx storage.Tx) error {
		it := tx.Iterate(storage.Prefix(snapshotMetaPrefix()))
		defer it.Close()
		for ; it.Valid(); it.Next() {
			v, err := it.Value()
			if err != nil {
				return err
			}
			var rec snapshotRecord
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("snapshot %q: %w", it.Key(), err)
			}
			out = append(out, rec.Snapshot)
		}
		return nil
	})
	if err != nil {
		return nil, errs.Internalf(err, "List snapshots failed")
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func (m *Marketplace) snapshot(ctx context.Context, id int64) (snapshotRecord, error) {
	var rec snapshotRecord
	err := m.store.View(ctx, func(tx storage.Tx) error {
		v, err := tx.Get(snapshotMetaKey(id))
		if err != nil {
			return err
		}
		return json.Unmarshal(v, &rec)
	})
	if errors.Is(err, storage.ErrNotFound) {
		return rec, errs.NotFoundf("Snapshot %d not found", id)
	}
	if err != nil {
		return rec, errs.Internalf(err, "Read snapshot failed")
	}
	return rec, nil
}

// RestoreSnapshot replaces the whole state by the one saved in snapshot id:
// what was created since is gone, what was changed or deleted is back as it
// was, and the id sequences go on from where they were at the snapshot. The
// snapshot stays, to be restored again. Errors: NotFound for an unknown id;
// the storage's.
func (m *Marketplace) RestoreSnapshot(ctx context.Context, id int64) error {
	return m.restoreState(ctx, id, nil)
}

// restoreState puts snapshot id's state in place and then, still holding
// the state, runs then when it is not nil.
func (m *Marketplace) restoreState(ctx context.Context, id int64, then func(context.Context) error) error {
	var notFound error
	err := m.replaceState(ctx, func(ctx context.Context) error {
		// Read under the gate, so that a deletion cannot come between.
		rec, err := m.snapshot(ctx, id)
		if errs.Is(err, errs.NotFound) {
			notFound = err
			return nil
		}
		if err != nil {
			return err
		}
		if err := m.putState(ctx, id, rec.Sequences); err != nil {
			return err
		}
		if then != nil {
			return then(ctx)
		}
		return nil
	})
	if notFound != nil {
		return notFound
	}
	if err != nil {
		return errs.Internalf(err, "Restore failed")
	}
	return nil
}

// DeleteSnapshot deletes snapshot id. Errors: NotFound for an unknown id;
// the storage's.
func (m *Marketplace) DeleteSnapshot(ctx context.Context, id int64) error {
	// Not while a restore copies from it.
	ctx = m.gate.lock(ctx)
	defer m.gate.unlock()
	if _, err := m.snapshot(ctx, id); err != nil {
		return err
	}
	// The metadata goes first: a deletion cut short leaves data that no
	// snapshot lists, never a listed snapshot with part of its data.
	err := m.store.Update(ctx, func(tx storage.Tx) error { return tx.Delete(snapshotMetaKey(id)) })
	if err == nil {
		err = kv.DeleteRange(ctx, m.store, storage.Prefix(snapshotDataPrefix(id)))
	}
	if err != nil {
		return errs.Internalf(err, "Delete snapshot failed")
	}
	return nil
}

// copyState copies the state into the data of snapshot id and returns the
// positions of the state's sequences.
func (m *Marketplace) copyState(ctx context.Context, id int64) (map[string]uint64, error) {
	seqs, err := storage.SequenceStates(ctx, m.store)
	if err != nil {
		return nil, err
	}
	for _, n := range keptSequences {
		delete(seqs, n)
	}
	dst := snapshotDataPrefix(id)
	for _, r := range stateRanges() {
		err := kv.CopyRange(ctx, m.store, r, func(k []byte) []byte {
			return append(append(make([]byte, 0, len(dst)+len(k)), dst...), k...)
		})
		if err != nil {
			return nil, err
		}
	}
	return seqs, nil
}

// putState replaces the state by the data of snapshot id and sets the
// sequences to seqs.
func (m *Marketplace) putState(ctx context.Context, id int64, seqs map[string]uint64) error {
	if err := m.clearState(ctx, seqs); err != nil {
		return err
	}
	src := snapshotDataPrefix(id)
	return kv.CopyRange(ctx, m.store, storage.Prefix(src), func(k []byte) []byte {
		return bytes.Clone(k[len(src):])
	})
}
