package storage

import "context"

// Opener opens a store for an engine that then owns it and closes it:
// badger.Dir("./data"), postgres.URL("postgres://..."). It keeps the
// embedder's choice of backend a value, so that marketplace.Open links only
// the backend the program names (a memory-only program links neither Badger
// nor pgx).
type Opener interface {
	// Open opens the store; the caller closes it.
	Open(ctx context.Context) (Store, error)
}

// Shared is implemented by a Store that several processes (servers) may
// have open at once, each writing through its own connection: what another
// process writes reaches this one only when it reads again. storage/postgres
// is one; a store of one process (memory, Badger) sees every write as it is
// made and needs no polling.
type Shared interface {
	// SharedByProcesses reports whether other processes may write to the
	// store while this one runs.
	SharedByProcesses() bool
}

// IsShared reports whether st declares that several processes may write to
// it at once (Shared), so the engine polls for their writes.
func IsShared(st Store) bool {
	s, ok := st.(Shared)
	return ok && s.SharedByProcesses()
}
