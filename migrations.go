package marketplace

import (
	"context"
	"fmt"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/internal/refimport"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/questions"
	"github.com/marketplace/marketplace/sales"
	"github.com/marketplace/marketplace/stock"
	"github.com/marketplace/marketplace/storage"
	"github.com/marketplace/marketplace/storage/schema"
)

// Migrations is the schema of the store, in order: a store's schema version
// is the number of them it has had, and SchemaVersion, this binary's, is
// their count. Each domain package keeps the code of its own migrations
// (migrate.go), frozen once released. To change how data is laid out,
// append a migration; never edit or reorder a released one.
func Migrations() []schema.Migration {
	return []schema.Migration{
		accounts.RecordsMigration(),             // 1
		questions.RecordsMigration(),            // 2
		stock.RecordsMigration(),                // 3
		questions.OrderIndexesMigration(),       // 4
		stock.SearchIndexMigration(),            // 5
		idCountersMigration(),                   // 6
		notify.OutboxMigration(),                // 7
		stock.SearchFoldMigration(),             // 8
		questions.StatusOrderIndexesMigration(), // 9
		questions.ClassIndexesMigration(),       // 10
		stock.SellerIndexMigration(),            // 11
		stock.SellerSortMigration(),             // 12
		questions.AskerListsMigration(),         // 13
		questions.TallyShardsMigration(),        // 14
		sales.RecordsMigration(),                // 15
	}
}

// SchemaVersion is the schema version this binary reads and writes.
var SchemaVersion = len(Migrations())

// idCountersMigration carries the id counters that were keys written in
// every new record's transaction over to the store's sequences.
func idCountersMigration() schema.Migration {
	return schema.CarryCounters("ids: the counters acc/seq/*, stk/seq/*, q/seq, ntf/seq/outbox and ref/import/seq carried over to sequences and deleted",
		legacyCounters())
}

func legacyCounters() []schema.LegacyCounter {
	var out []schema.LegacyCounter
	out = append(out, accounts.LegacyCounters()...)
	out = append(out, stock.LegacyCounters()...)
	out = append(out, questions.LegacyCounters()...)
	out = append(out, notify.LegacyCounters()...)
	out = append(out, refimport.LegacyCounters()...)
	return out
}

// MigrateOptions configure Migrate.
type MigrateOptions = schema.Options

// Migrate brings store to this binary's schema version (see Migrations):
// a new, empty store is stamped with it, an older one has every migration it
// lacks run, resuming one that an earlier run left in its middle. A store
// newer than the binary is refused with a *schema.TooNewError and not
// changed. New and Open call it before anything else reads the store.
func Migrate(ctx context.Context, store storage.Store, opts MigrateOptions) (schema.Report, error) {
	rep, err := schema.Migrate(ctx, store, Migrations(), opts)
	if err != nil {
		return rep, fmt.Errorf("marketplace: %w", err)
	}
	return rep, nil
}

// PlanMigration is the dry run of Migrate: it reports the pending
// migrations and how many keys each would write and delete, and changes
// nothing.
func PlanMigration(ctx context.Context, store storage.Store, opts MigrateOptions) (schema.Report, error) {
	rep, err := schema.Plan(ctx, store, Migrations(), opts)
	if err != nil {
		return rep, fmt.Errorf("marketplace: %w", err)
	}
	return rep, nil
}
