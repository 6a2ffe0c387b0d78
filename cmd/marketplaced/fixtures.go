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
	fmt.Fprintf(stdout, "fixtures %s: %s, %s, %s, %s, %s, %s\n", path,
		count(len(res.Users), "user"), count(len(res.Stores), "store"), count(len(res.Items), "item"),
		count(len(res.Questions), "question"), count(len(res.Orders), "order"), count(len(res.Applications), "application"))
	return nil
}

// count writes n and the noun, plural unless n is 1: "1 item", "0 items".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
