package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/marketplace/marketplace"
)

// runImport implements `marketplaced import [flags] FILE`: it upserts the
// records of a reference document into the data folder or the PostgreSQL
// database and exits. "-" reads standard input.
func runImport(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	c, rest, err := parseCommandFlags("import", args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if len(rest) != 1 {
		return usagef("usage: marketplaced import [-data DIR | -postgres URL] FILE")
	}
	if c.Memory {
		return usagef("import: -memory would import into a store that ends with the command; use -data or -postgres")
	}
	var in io.Reader = stdin
	if rest[0] != "-" {
		f, err := os.Open(rest[0])
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		defer f.Close()
		in = f
	}
	m, err := openMarketplace(ctx, c, marketplace.Options{})
	if err != nil {
		return err
	}
	defer m.Close()
	res, err := m.ImportReferenceJSON(ctx, in)
	if err != nil {
		return fmt.Errorf("import %s: %w", rest[0], err)
	}
	fmt.Fprintf(stdout, "imported %d records into %s\n", res.Total, storeLocation(c))
	kinds := make([]string, 0, len(res.Imported))
	for kind := range res.Imported {
		kinds = append(kinds, kind)
	}
	sort.Strings(kinds)
	for _, kind := range kinds {
		fmt.Fprintf(stdout, "  %s: %d\n", kind, res.Imported[kind])
	}
	return nil
}
