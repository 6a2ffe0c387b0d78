// Package textcheck holds the one rule on the characters of text that
// people read: question and answer texts, nicknames and names, item
// titles, store descriptions, application names. Every domain package that
// stores such a field checks it here, so that the rule and its messages are
// the same everywhere (docs/spec-decisions.md, "Text people read").
//
// Refused, in every such field:
//   - control characters (C0, DEL, C1, and the line and paragraph
//     separators U+2028 and U+2029), except line feed and tab in the texts
//     that may have lines (Lines): they reach logs, terminals and other
//     people's screens, where they move the cursor or end a line;
//   - the bidirectional embeddings, overrides and isolates (U+202A to
//     U+202E, U+2066 to U+2069), which make a text read differently from the
//     order of its characters (a price or a phone number shown backwards);
//   - a text whose every character is a space or invisible (zero-width
//     space, joiners, word joiner, BOM, soft hyphen, fillers, variation
//     selectors), which looks empty to its reader but is not empty to a
//     rule that only trims spaces.
//
// Invisible characters inside a text that has visible ones are kept: the
// joiners are part of emoji sequences and of some scripts.
package textcheck

import (
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/marketplace/marketplace/errs"
)

// Cause codes of the refusals, one per rule.
const (
	CodeControl       = "text.control_character"
	CodeBidi          = "text.bidi_control"
	CodeInvisibleOnly = "text.invisible_only"
)

// Line checks the value of a one-line field: no control character at all.
// It returns nil or an Invalid error naming field, with one cause. Errors:
// Invalid.
func Line(field, s string) error { return check(field, s, false) }

// Lines checks the value of a field that may have several lines: line feed
// and tab are allowed, every other control character is not. Errors:
// Invalid.
func Lines(field, s string) error { return check(field, s, true) }

func check(field, s string, lines bool) error {
	// A text of spaces alone is left to the field's own rule on empty
	// values, which may allow it or trim it: only a text with an invisible
	// character that is not a space, and nothing visible, is refused here.
	visible, invisible := false, false
	pos := 0
	for i := 0; i < len(s); {
		pos++
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c == '\n' || c == '\t':
				if !lines {
					return errControl(field, rune(c), pos)
				}
			case c < 0x20 || c == 0x7f:
				return errControl(field, rune(c), pos)
			case c == ' ':
			default:
				visible = true
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case IsControl(r):
			return errControl(field, r, pos)
		case IsBidiControl(r):
			return errs.Invalidf("The field [%s] must not contain bidirectional control characters", field).
				WithCauses(errs.Cause{Code: CodeBidi, Message: fmt.Sprintf("%U at character %d", r, pos)})
		case unicode.IsSpace(r):
		case IsInvisible(r):
			invisible = true
		default:
			visible = true
		}
	}
	if invisible && !visible {
		return errs.Invalidf("The field [%s] must have visible characters", field).
			WithCauses(errs.Cause{Code: CodeInvisibleOnly, Message: "Every character is a space or an invisible character"})
	}
	return nil
}

func errControl(field string, r rune, pos int) error {
	return errs.Invalidf("The field [%s] must not contain control characters", field).
		WithCauses(errs.Cause{Code: CodeControl, Message: fmt.Sprintf("%U at character %d", r, pos)})
}

// IsControl reports whether r is a control character: C0, DEL, C1, or the
// line and paragraph separators.
func IsControl(r rune) bool { return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' }

// IsBidiControl reports whether r is a bidirectional embedding, override or
// isolate (U+202A to U+202E, U+2066 to U+2069). The marks (U+200E, U+200F,
// U+061C) are not: they change no order on their own and are written in
// right-to-left text.
func IsBidiControl(r rune) bool {
	return (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069')
}

// fillers are characters that render as blank space without being spaces
// or format characters: the Hangul fillers and the blank Braille pattern.
var fillers = []rune{'\u115f', '\u1160', '\u3164', '\uffa0', '\u2800'}

// IsInvisible reports whether r shows nothing on its own: a space, a
// format character (zero-width space, joiners, word joiner, BOM, soft
// hyphen, the bidirectional marks), a default-ignorable code point, a
// variation selector or a filler.
func IsInvisible(r rune) bool {
	if r < utf8.RuneSelf {
		return r == ' ' || r == '\t' || r == '\n'
	}
	if unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) ||
		unicode.Is(unicode.Variation_Selector, r) {
		return true
	}
	for _, f := range fillers {
		if r == f {
			return true
		}
	}
	return false
}
