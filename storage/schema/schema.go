// Package schema versions the data of a whole store and upgrades it by
// ordered, resumable migrations, on any backend of the storage contract.
//
// The store's schema version is one number in a meta key (VersionKey): the
// count of migrations of the list it has had. A binary knows its list, so its
// version is len(list). On open, Migrate runs every migration the store has
// not had, in order; a store whose version is above the binary's is refused
// with a *TooNewError and must not be served; a new, empty store is stamped
// with the binary's version without running anything.
//
// A migration runs in chunks: each chunk is one Update that handles a bounded
// number of records and, in the same transaction, records where the next
// chunk starts (the cursor) or, with the last chunk, the new version. A crash
// or a failed chunk loses nothing: the next Migrate resumes at the cursor of
// the last committed chunk, and the result is the same as an uninterrupted
// run.
//
// Plan is the dry run: it runs the pending migrations' chunks over read-only
// transactions whose writes are counted and dropped, and reports how many
// keys each would write and delete.
package schema

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"

	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/storage"
)

// VersionKey holds the store's schema version, 8 bytes big-endian. It is in
// the store's own namespace ("sys"), beside the sequences.
func VersionKey() []byte { return keycodec.New("sys/schema") }

// progressKey holds the migration under way: the version it leads to (8
// bytes big-endian) followed by its cursor.
func progressKey() []byte { return keycodec.Key(VersionKey()).Str("progress") }

// DefaultChunkSize is how many records a chunk handles when Options leave it
// unset: far below what one Badger transaction holds even when a record
// brings a dozen index keys with it.
const DefaultChunkSize = 500

// Migration is one step of the schema, from the version before it to its
// own (its position in the list, counted from 1).
//
// Migration code is frozen once released: it keeps its own copies of the
// decoders and key names it needs rather than call the domain's current
// ones, which later versions may change.
type Migration struct {
	// Name says what the migration does, for logs and the dry run.
	Name string
	// Start, when set, runs outside any transaction each time the
	// migration starts or resumes, before its next chunk: for the changes
	// the contract makes outside transactions, such as advancing a
	// sequence. It must be idempotent. The dry run does not call it.
	Start func(ctx context.Context, st storage.Store) error
	// Chunk handles at most limit records in tx, starting at cursor (nil
	// for the first chunk), and returns the cursor of the next chunk, or
	// done. It must move forward by its cursor alone, never by finding
	// what it has not rewritten yet: the dry run drops its writes. Phases
	// builds a Chunk from passes over key ranges.
	Chunk func(ctx context.Context, tx storage.Tx, cursor []byte, limit int) (next []byte, done bool, err error)
}

// Options configure Migrate and Plan.
type Options struct {
	// ChunkSize is the most records a chunk handles; 0 means
	// DefaultChunkSize.
	ChunkSize int
	// Logger receives a line per migration run; nil discards them.
	Logger *slog.Logger
}

func (o Options) chunkSize() int {
	if o.ChunkSize <= 0 {
		return DefaultChunkSize
	}
	return o.ChunkSize
}

func (o Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

// Step is what a migration did, or would do (Plan).
type Step struct {
	Version int
	Name    string
	// Written and Deleted count the keys the migration's chunks set and
	// the existing keys they deleted.
	Written, Deleted int
	// Chunks is the number of chunks run.
	Chunks int
	// Resumed is set when the migration had been started before and went
	// on from its stored cursor.
	Resumed bool
}

// Report is the outcome of Migrate or Plan.
type Report struct {
	// From is the store's version before, To the binary's.
	From, To int
	// Stamped is set when the store was new and empty: it was (or, in a
	// dry run, would be) given version To without running anything.
	Stamped bool
	// Steps are the migrations run (or pending), in order.
	Steps []Step
}

// TooNewError refuses a store written by a newer binary: its schema version
// is above the binary's, so this binary does not know how its data is laid
// out.
type TooNewError struct {
	Store, Binary int
}

// Error names both schema versions and the version of binary the store needs.
func (e *TooNewError) Error() string {
	return fmt.Sprintf("the store has schema version %d, newer than this binary's version %d: "+
		"it was written by a newer marketplace and is not opened; use a binary with schema version %d or later",
		e.Store, e.Binary, e.Store)
}

// Version returns the store's schema version, and whether it has one at
// all: a store without one is either new (empty) or was written before
// schema versions, which is version 0.
func Version(ctx context.Context, st storage.Store) (version int, ok bool, err error) {
	err = st.View(ctx, func(tx storage.Tx) error {
		version, ok, err = readVersion(tx)
		return err
	})
	return version, ok, err
}

func readVersion(tx storage.Tx) (int, bool, error) {
	b, err := tx.Get(VersionKey())
	if errors.Is(err, storage.ErrNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	if len(b) != 8 {
		return 0, false, fmt.Errorf("schema: corrupt version (%d bytes)", len(b))
	}
	return int(binary.BigEndian.Uint64(b)), true, nil
}

func setVersion(tx storage.Tx, v int) error {
	return tx.Set(VersionKey(), binary.BigEndian.AppendUint64(nil, uint64(v)))
}

// readProgress returns the cursor of migration version v when it is under
// way, and whether it is.
func readProgress(tx storage.Tx, v int) ([]byte, bool, error) {
	b, err := tx.Get(progressKey())
	if errors.Is(err, storage.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if len(b) < 8 {
		return nil, false, fmt.Errorf("schema: corrupt progress (%d bytes)", len(b))
	}
	if got := int(binary.BigEndian.Uint64(b)); got != v {
		return nil, false, fmt.Errorf("schema: progress of migration %d found while migration %d is next", got, v)
	}
	return b[8:], true, nil
}

func setProgress(tx storage.Tx, v int, cursor []byte) error {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(cursor)), uint64(v))
	return tx.Set(progressKey(), append(b, cursor...))
}

// isEmpty reports whether the store holds nothing outside the "sys"
// namespace (where sequences may already live).
func isEmpty(tx storage.Tx) bool {
	sys := []byte("sys/")
	it := tx.Iterate(storage.Range{End: sys})
	defer it.Close()
	if it.Valid() {
		return false
	}
	after := tx.Iterate(storage.Range{Start: storage.PrefixEnd(sys)})
	defer after.Close()
	return !after.Valid()
}

// state reads what Migrate and Plan start from: the version, stamping a new
// store when stamp is set.
func state(ctx context.Context, st storage.Store, binaryVersion int, stamp bool) (from int, stamped bool, err error) {
	read := func(tx storage.Tx) error {
		v, ok, err := readVersion(tx)
		if err != nil {
			return err
		}
		from, stamped = v, false
		if !ok && isEmpty(tx) {
			from, stamped = binaryVersion, true
			if stamp {
				return setVersion(tx, binaryVersion)
			}
		}
		return nil
	}
	if stamp {
		err = st.Update(ctx, read)
	} else {
		err = st.View(ctx, read)
	}
	if err != nil {
		return 0, false, fmt.Errorf("schema: read version: %w", err)
	}
	if from > binaryVersion {
		return from, false, &TooNewError{Store: from, Binary: binaryVersion}
	}
	return from, stamped, nil
}

// Migrate brings st to the version of list (len(list)): a new, empty store
// is stamped with it; an older one has every migration it lacks run in
// order, each resumed from its stored cursor if an earlier run stopped in
// its middle. A store newer than list is refused with a *TooNewError and
// left as it is. On an error, or when ctx ends (Migrate then returns ctx's
// error), the chunks committed so far stay, and the next Migrate resumes
// after them.
//
// Servers that open the store at the same moment may run Migrate together:
// every chunk reads the version and the cursor in its own transaction, so
// each chunk is committed once, by one of them, and a migration finished by
// another is skipped. Nothing else may write to st while Migrate runs (an
// older binary still serving the store, say).
func Migrate(ctx context.Context, st storage.Store, list []Migration, opts Options) (Report, error) {
	rep := Report{To: len(list)}
	from, stamped, err := state(ctx, st, len(list), true)
	rep.From, rep.Stamped = from, stamped
	if err != nil || stamped {
		return rep, err
	}
	log := opts.logger()
	for v := from + 1; v <= len(list); v++ {
		step, err := run(ctx, st, v, list[v-1], opts.chunkSize())
		rep.Steps = append(rep.Steps, step)
		if err != nil {
			return rep, fmt.Errorf("schema: migration %d (%s): %w", v, list[v-1].Name, err)
		}
		log.Info("schema migration done", "version", v, "name", step.Name, "written", step.Written,
			"deleted", step.Deleted, "chunks", step.Chunks, "resumed", step.Resumed)
	}
	return rep, nil
}

// run runs migration v to its end, chunk by chunk. Each chunk reads the
// version and the cursor in its own transaction, so that it continues
// exactly where the last committed chunk stopped.
func run(ctx context.Context, st storage.Store, v int, m Migration, limit int) (Step, error) {
	step := Step{Version: v, Name: m.Name}
	doneElsewhere := false
	err := st.View(ctx, func(tx storage.Tx) error {
		cur, _, err := readVersion(tx)
		if err != nil {
			return err
		}
		if cur >= v {
			// Another server opening the store at the same moment ran it
			// (and may be under way with the next one).
			doneElsewhere = true
			return nil
		}
		_, under, err := readProgress(tx, v)
		step.Resumed = under
		return err
	})
	if err != nil || doneElsewhere {
		return step, err
	}
	if m.Start != nil {
		if err := m.Start(ctx, st); err != nil {
			return step, err
		}
	}
	for finished := false; !finished; {
		// A backend need not check ctx itself: the migration stops
		// between chunks, where the next run resumes it.
		if err := ctx.Err(); err != nil {
			return step, err
		}
		var written, deleted int
		err := st.Update(ctx, func(tx storage.Tx) error {
			finished = false
			cur, _, err := readVersion(tx)
			if err != nil {
				return err
			}
			if cur >= v {
				finished = true // another run finished it
				return nil
			}
			if cur != v-1 {
				return fmt.Errorf("store at version %d while migration %d runs", cur, v)
			}
			cursor, _, err := readProgress(tx, v)
			if err != nil {
				return err
			}
			ctr := &countTx{Tx: tx}
			next, done, err := m.Chunk(ctx, ctr, cursor, limit)
			if err != nil {
				return err
			}
			written, deleted = ctr.written, ctr.deleted
			if done {
				finished = true
				if err := tx.Delete(progressKey()); err != nil {
					return err
				}
				return setVersion(tx, v)
			}
			if bytes.Equal(next, cursor) {
				return errors.New("chunk made no progress")
			}
			return setProgress(tx, v, next)
		})
		if err != nil {
			return step, err
		}
		step.Chunks++
		step.Written += written
		step.Deleted += deleted
	}
	return step, nil
}

// Plan is the dry run of Migrate: it changes nothing and reports what
// Migrate would do. Each pending migration's chunks run over read-only
// transactions whose writes are counted and dropped (a chunk reads its own
// writes through Get, not through iterators), starting from the stored
// cursor of a migration under way. A pending migration is counted on the
// store as it is now, without the changes of the migrations before it.
func Plan(ctx context.Context, st storage.Store, list []Migration, opts Options) (Report, error) {
	rep := Report{To: len(list)}
	from, stamped, err := state(ctx, st, len(list), false)
	rep.From, rep.Stamped = from, stamped
	if err != nil || stamped {
		return rep, err
	}
	for v := from + 1; v <= len(list); v++ {
		m := list[v-1]
		step := Step{Version: v, Name: m.Name}
		var cursor []byte
		for done := false; !done; {
			err := st.View(ctx, func(tx storage.Tx) error {
				if step.Chunks == 0 && v == from+1 {
					// Only the first pending migration can be under way.
					c, under, err := readProgress(tx, v)
					if err != nil {
						return err
					}
					cursor, step.Resumed = c, under
				}
				dry := &dryTx{Tx: tx, pending: map[string][]byte{}}
				next, d, err := m.Chunk(ctx, dry, cursor, opts.chunkSize())
				if err != nil {
					return err
				}
				if !d && bytes.Equal(next, cursor) {
					return errors.New("chunk made no progress")
				}
				step.Written += dry.written
				step.Deleted += dry.deleted
				cursor, done = next, d
				return nil
			})
			if err != nil {
				rep.Steps = append(rep.Steps, step)
				return rep, fmt.Errorf("schema: dry run of migration %d (%s): %w", v, m.Name, err)
			}
			step.Chunks++
		}
		rep.Steps = append(rep.Steps, step)
	}
	return rep, nil
}

// countTx counts the keys a chunk sets and the existing keys it deletes.
type countTx struct {
	storage.Tx
	written, deleted int
}

func (t *countTx) Set(key, value []byte) error {
	if err := t.Tx.Set(key, value); err != nil {
		return err
	}
	t.written++
	return nil
}

func (t *countTx) Delete(key []byte) error {
	if _, err := t.Tx.Get(key); errors.Is(err, storage.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	if err := t.Tx.Delete(key); err != nil {
		return err
	}
	t.deleted++
	return nil
}

// dryTx runs a chunk over a read-only transaction: Set and Delete are
// counted and kept in memory, where Get sees them; iterators see the store
// as it is.
type dryTx struct {
	storage.Tx
	pending          map[string][]byte // nil value: deleted
	written, deleted int
}

func (t *dryTx) Get(key []byte) ([]byte, error) {
	if v, ok := t.pending[string(key)]; ok {
		if v == nil {
			return nil, storage.ErrNotFound
		}
		return append([]byte(nil), v...), nil
	}
	return t.Tx.Get(key)
}

func (t *dryTx) Set(key, value []byte) error {
	if len(key) == 0 {
		return storage.ErrEmptyKey
	}
	t.pending[string(key)] = append(make([]byte, 0, len(value)), value...)
	t.written++
	return nil
}

func (t *dryTx) Delete(key []byte) error {
	if _, err := t.Get(key); errors.Is(err, storage.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	t.pending[string(key)] = nil
	t.deleted++
	return nil
}
