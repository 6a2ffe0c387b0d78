package stock

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Search folding: titles and queries become words the same way, so that a
// buyer finds "Niño" by typing "nino", "NIÑO" or a decomposed "nin\u0303o",
// "Škoda" by "skoda", and "Straße" by "strasse". A title's words are its
// runs of letters and digits after:
//  1. compatibility decomposition (NFKD), which splits letters from their
//     marks and turns ligatures and full-width forms into plain letters;
//  2. removal of the nonspacing marks (accents, tildes, cedillas, carons);
//  3. Unicode case folding;
//  4. baseLetters, for the letters that have no decomposition.
//
// The index holds folded words: a change here is a change of stored data,
// and needs a migration that rebuilds the index (migrate.go).

// baseLetters maps the letters that carry a stroke instead of a separate
// mark to the letter readers see in them.
var baseLetters = map[rune]rune{'ø': 'o', 'ł': 'l', 'đ': 'd', 'ħ': 'h', 'ŧ': 't', 'ı': 'i'}

// tokens splits s into folded words, in order, repeats kept.
func tokens(s string) []string {
	if !isASCII(s) {
		s = cases.Fold().String(norm.NFKD.String(s))
	}
	var out []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			out = append(out, b.String())
			b.Reset()
		}
	}
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Mn, r):
			// A mark joins its letter's word and leaves no trace.
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if r < utf8.RuneSelf {
				r = unicode.ToLower(r)
			} else if base, ok := baseLetters[r]; ok {
				r = base
			}
			b.WriteRune(r)
		default:
			flush()
		}
	}
	flush()
	return out
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
