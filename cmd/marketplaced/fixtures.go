package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/fixtures"
)

// loadFixturesFile loads the fixtures document in path (-fixtures) and
// prints how many records of each kind it declares.
func loadFixturesFile(ctx context.Context, m *marketplace.Marketplace, path string, stdout io.Writer) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("-fixtures: %w", err)
	}
	d, err := fixtures.Parse(b)
	if err != nil {
		return fmt.Errorf("-fixtures %s: %w", path, err)
	}
	res, err := m.LoadFixtures(ctx, d)
	if err != nil {
		return fmt.Errorf("-fixtures %s: %w", path, err)
	}
	fmt.Fprintf(stdout, "fixtures %s: %s, %s, %s, %s, %s, %s, %s\n", path,
		count(len(res.Users), "user"), count(len(res.Stores), "store"), count(len(res.Items), "item"),
		count(len(res.Questions), "question"), count(len(res.Orders), "order"), count(len(res.Applications), "application"),
		count(len(res.Stubs), "stub"))
	return nil
}

// loadStubs loads the stub mappings of path (-stubs): a file, or every
// .json file of a folder, in name order.
func loadStubs(ctx context.Context, m *marketplace.Marketplace, path string, stdout io.Writer) error {
	files := []string{path}
	if st, err := os.Stat(path); err != nil {
		return fmt.Errorf("-stubs: %w", err)
	} else if st.IsDir() {
		files, err = filepath.Glob(filepath.Join(path, "*.json"))
		if err != nil {
			return fmt.Errorf("-stubs: %w", err)
		}
		sort.Strings(files)
	}
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("-stubs: %w", err)
		}
		k, err := m.Stubs.Load(ctx, b)
		if err != nil {
			return fmt.Errorf("-stubs %s: %w", f, err)
		}
		n += k
	}
	fmt.Fprintf(stdout, "stubs %s: %s\n", path, count(n, "mapping"))
	return nil
}

// count writes n and the noun, plural unless n is 1: "1 item", "0 items".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
