package fees

import (
	"regexp"
	"testing"

	"pgregory.net/rapid"
)

// isCategoryOf is the pattern category ids were first checked with.
func TestIsCategoryOf_IsThePatternSiteIDThenDigits(t *testing.T) {
	pattern := regexp.MustCompile(`^([A-Z]{3})[0-9]{1,12}$`)
	rapid.Check(t, func(t *rapid.T) {
		site := rapid.SampledFrom([]string{"MLA", "MLB", "ML", "mla", "MLAA", "M1A"}).Draw(t, "site")
		id := rapid.OneOf(
			rapid.StringMatching(`[A-Za-z]{2,4}[0-9]{0,14}[a\n]?`),
			rapid.Custom(func(t *rapid.T) string { return site + jsonText(t, "rest") }),
			rapid.String(),
		).Draw(t, "id")
		m := pattern.FindStringSubmatch(id)
		if want := m != nil && m[1] == site; isCategoryOf(site, id) != want {
			t.Fatalf("isCategoryOf(%q, %q) = %v, want %v", site, id, !want, want)
		}
	})
}
