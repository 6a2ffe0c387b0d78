package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/storage/schema"
)

// runMigrate implements `marketplaced migrate [-dry-run] [flags]`: it brings
// the data folder or the PostgreSQL database to this binary's schema version
// and exits, printing each
// migration run; with -dry-run it prints each pending migration and how many
// keys it would write and delete, and changes nothing. It takes the
// server's storage flags.
func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	dryRun := false
	rest := args[:0:0]
	// -dry-run belongs to this subcommand only, not to the server's flags.
	for _, a := range args {
		name, val, hasVal := strings.Cut(strings.TrimPrefix(a, "-"), "=")
		if name != "dry-run" && name != "-dry-run" {
			rest = append(rest, a)
			continue
		}
		dryRun = true
		if hasVal {
			var err error
			if dryRun, err = strconv.ParseBool(val); err != nil {
				return usagef("-dry-run: %w", err)
			}
		}
	}
	c, extra, err := parseCommandFlags("migrate", rest, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if len(extra) > 0 {
		return usagef("usage: marketplaced migrate [-dry-run] [-data DIR | -postgres URL]")
	}
	if c.Memory {
		return usagef("migrate: -memory holds no data to migrate; use -data or -postgres")
	}
	st, err := openStore(ctx, c)
	if err != nil {
		return err
	}
	defer st.Close()
	opts := marketplace.MigrateOptions{Logger: slog.New(slog.NewTextHandler(stderr, nil))}
	var rep schema.Report
	if dryRun {
		rep, err = marketplace.PlanMigration(ctx, st, opts)
	} else {
		rep, err = marketplace.Migrate(ctx, st, opts)
	}
	printReport(stdout, storeLocation(c), rep, dryRun)
	return err
}

func printReport(w io.Writer, where string, rep schema.Report, dryRun bool) {
	would := func(done, planned string) string {
		if dryRun {
			return planned
		}
		return done
	}
	switch {
	case rep.Stamped:
		fmt.Fprintf(w, "%s: new store, %s schema version %d\n", where, would("stamped with", "would be stamped with"), rep.To)
		return
	case rep.From == rep.To:
		fmt.Fprintf(w, "%s: at schema version %d, nothing to do\n", where, rep.To)
		return
	}
	fmt.Fprintf(w, "%s: schema version %d, this binary's %d\n", where, rep.From, rep.To)
	for _, s := range rep.Steps {
		resumed := ""
		if s.Resumed {
			resumed = " (resumed)"
		}
		fmt.Fprintf(w, "  %d %s%s: %s %d keys, %s %d\n", s.Version, s.Name, resumed,
			would("wrote", "would write"), s.Written, would("deleted", "would delete"), s.Deleted)
	}
}
