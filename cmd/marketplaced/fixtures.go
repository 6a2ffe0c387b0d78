package main

import (
	"context"
	"fmt"
	"io"
	"os"

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
	fmt.Fprintf(stdout, "fixtures %s: %d users, %d stores, %d items, %d questions, %d orders, %d applications\n",
		path, len(res.Users), len(res.Stores), len(res.Items), len(res.Questions), len(res.Orders), len(res.Applications))
	return nil
}
