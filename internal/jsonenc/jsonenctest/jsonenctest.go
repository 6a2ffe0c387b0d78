// Package jsonenctest draws the texts with which rapid tests compare the
// hand-written JSON encoders with encoding/json.
package jsonenctest

import (
	"strings"

	"pgregory.net/rapid"
)

// Text draws a string that exercises every escaping rule: control
// characters, quotes, HTML characters, invalid UTF-8, U+2028 and U+2029.
func Text(t *rapid.T, label string) string {
	parts := rapid.SliceOfN(rapid.OneOf(
		rapid.String(),
		rapid.SampledFrom([]string{"\"", "\\", "<", ">", "&", "\b", "\f", "\n", "\r", "\t", "\x00", "\x1f", "\x7f",
			"\u2028", "\u2029", "\xff", "\xe2\x80", "ñ", "😀", "\ufffd"}),
		rapid.Custom(func(t *rapid.T) string { return string(rapid.SliceOf(rapid.Byte()).Draw(t, "raw")) }),
	), 0, 6).Draw(t, label)
	return strings.Join(parts, "")
}
